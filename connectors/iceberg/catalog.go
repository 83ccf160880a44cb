package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue" // registers the glue catalog type
	_ "github.com/apache/iceberg-go/catalog/rest" // registers the rest catalog type
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses
	_ "github.com/jackc/pgx/v5/stdlib"             // database/sql driver "pgx": SQL catalogs in PostgreSQL
	_ "modernc.org/sqlite"                         // database/sql driver "sqlite": SQL catalogs in SQLite (no cgo)
)

// sqlTarget resolves a SQL catalog's uri to a database/sql driver, its
// data source name and iceberg-go's dialect. It takes the forms other
// Iceberg clients use for the same catalog, so one setting can be copied
// between them: pyiceberg's SQLAlchemy URLs (sqlite:////abs/path.db,
// postgresql+psycopg2://user:pw@host/db), Java JdbcCatalog's JDBC URLs
// (jdbc:sqlite:/abs/path.db, jdbc:postgresql://host/db), and plain
// postgres:// URLs.
func sqlTarget(uri string) (driver, dsn string, dialect sqlcat.SupportedDialect, err error) {
	u := strings.TrimPrefix(uri, "jdbc:")
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok {
		return "", "", "", fmt.Errorf("iceberg: SQL catalog uri %q has no scheme (sqlite:///path.db or postgresql://host/db)", uri)
	}
	scheme, _, _ = strings.Cut(scheme, "+") // SQLAlchemy's dialect+driver
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		path := rest
		switch {
		case strings.HasPrefix(path, "///"): // sqlite:////abs -> /abs; sqlite:///rel -> rel
			path = path[3:]
		case strings.HasPrefix(path, "//"):
			path = path[2:]
		}
		if path == "" {
			return "", "", "", fmt.Errorf("iceberg: SQL catalog uri %q names no database file", uri)
		}
		// Several processes (tasks, readers) share the file: wait for its
		// lock rather than fail at once.
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return "sqlite", "file:" + path + sep + "_pragma=busy_timeout(30000)&_txlock=immediate", sqlcat.SQLite, nil
	case "postgresql", "postgres":
		pu, err := url.Parse("postgres:" + rest)
		if err != nil {
			return "", "", "", fmt.Errorf("iceberg: SQL catalog uri %q: %w", redactURI(uri), err)
		}
		return "pgx", pu.String(), sqlcat.Postgres, nil
	}
	return "", "", "", fmt.Errorf("iceberg: SQL catalog uri %q: unsupported database %q (sqlite, postgresql)", redactURI(uri), scheme)
}

// redactURI is uri with the password of its user information, if any,
// replaced by xxxxx (url.URL.Redacted), for errors and logs. A JDBC uri
// keeps its "jdbc:" prefix; one that does not parse is shown as its scheme
// alone, since where its password is cannot be known.
func redactURI(uri string) string {
	rest, jdbc := strings.CutPrefix(uri, "jdbc:")
	u, err := url.Parse(rest)
	if err != nil {
		scheme, _, _ := strings.Cut(rest, ":")
		return scheme + ":(unparseable uri)"
	}
	if jdbc {
		return "jdbc:" + u.Redacted()
	}
	return u.Redacted()
}

// openCatalog opens the catalog the iceberg.catalog.* properties describe:
// type rest (Polaris, Nessie, Lakekeeper, Unity, Tabular and every REST
// catalog), sql (SQLite or PostgreSQL, the tables of Java's JdbcCatalog
// and pyiceberg's SqlCatalog) or glue. Warehouse locations are s3://
// (s3.endpoint, s3.access-key-id, s3.secret-access-key, s3.region) or
// file:// or a local path. release frees what the catalog holds (a SQL
// catalog's database connections).
func openCatalog(ctx context.Context, name string, props map[string]string) (cat catalog.Catalog, release func(), err error) {
	p := iceberg.Properties{}
	for k, v := range props {
		p[k] = v
	}
	typ := strings.ToLower(p["type"])
	switch typ {
	case "sql", "jdbc":
		driver, dsn, dialect, err := sqlTarget(p["uri"])
		if err != nil {
			return nil, nil, err
		}
		// Java JdbcCatalog's jdbc.user and jdbc.password (Apache's sink:
		// iceberg.catalog.jdbc.user, .jdbc.password) replace the uri's.
		if dialect == sqlcat.Postgres && (p["jdbc.user"] != "" || p["jdbc.password"] != "") {
			u, _ := url.Parse(dsn)
			user, pass := u.User.Username(), ""
			if pw, ok := u.User.Password(); ok {
				pass = pw
			}
			if v := p["jdbc.user"]; v != "" {
				user = v
			}
			if v := p["jdbc.password"]; v != "" {
				pass = v
			}
			u.User = url.UserPassword(user, pass)
			dsn = u.String()
		}
		delete(p, "jdbc.user")
		delete(p, "jdbc.password")
		where := redactURI(p["uri"])
		if p["warehouse"] == "" {
			return nil, nil, fmt.Errorf("iceberg: a SQL catalog needs iceberg.catalog.warehouse")
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("iceberg: open SQL catalog: %w", err)
		}
		if dialect == sqlcat.SQLite {
			db.SetMaxOpenConns(1) // SQLite has one writer; queue here rather than in busy waits
		}
		if err := db.PingContext(ctx); err != nil {
			_ = db.Close()
			return nil, nil, fmt.Errorf("iceberg: SQL catalog %s: %w", where, err)
		}
		delete(p, "uri")
		sc, err := sqlcat.NewCatalog(name, db, dialect, p)
		if err != nil {
			_ = db.Close()
			return nil, nil, fmt.Errorf("iceberg: SQL catalog: %w", err)
		}
		return sc, func() { _ = db.Close() }, nil
	case "rest", "glue":
		c, err := catalog.Load(ctx, name, p)
		if err != nil {
			return nil, nil, fmt.Errorf("iceberg: %s catalog: %w", typ, err)
		}
		return c, func() {
			if cl, ok := c.(interface{ Close() error }); ok {
				_ = cl.Close()
			}
		}, nil
	case "":
		return nil, nil, fmt.Errorf("iceberg: iceberg.catalog.type is not set (rest, sql or glue)")
	}
	return nil, nil, fmt.Errorf("iceberg: unsupported catalog type %q (rest, sql or glue; hive and hadoop are not supported)", typ)
}

package iceberg

import (
	"context"
	"strings"
	"testing"

	sqlcat "github.com/apache/iceberg-go/catalog/sql"
)

func TestSQLTarget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		uri, driver, dsnPrefix string
		dialect                sqlcat.SupportedDialect
	}{
		{"sqlite:////var/lib/lake/catalog.db", "sqlite", "file:/var/lib/lake/catalog.db?", sqlcat.SQLite},
		{"sqlite:///catalog.db", "sqlite", "file:catalog.db?", sqlcat.SQLite},
		{"jdbc:sqlite:/tmp/c.db", "sqlite", "file:/tmp/c.db?", sqlcat.SQLite},
		{"postgresql+psycopg2://u:p@db:5432/cat", "pgx", "postgres://u:p@db:5432/cat", sqlcat.Postgres},
		{"jdbc:postgresql://db/cat?sslmode=disable", "pgx", "postgres://db/cat?sslmode=disable", sqlcat.Postgres},
	}
	for _, c := range cases {
		driver, dsn, dialect, err := sqlTarget(c.uri)
		if err != nil || driver != c.driver || !strings.HasPrefix(dsn, c.dsnPrefix) || dialect != c.dialect {
			t.Errorf("%s: %s %s %s %v; want %s %s… %s", c.uri, driver, dsn, dialect, err, c.driver, c.dsnPrefix, c.dialect)
		}
	}
	for _, bad := range []string{"", "catalog.db", "mysql://x/y", "sqlite://"} {
		if _, _, _, err := sqlTarget(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestOpenCatalogTypes: Glue is configured without a call to AWS (it is
// exercised only against AWS, which tests here cannot reach); hive and an
// unset type are refused with what to set.
func TestOpenCatalogTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, release, err := openCatalog(ctx, "iceberg", map[string]string{"type": "glue", "glue.region": "eu-west-1",
		"glue.access-key-id": "AKIA0000", "glue.secret-access-key": "x", "warehouse": "s3://lake/wh"})
	if err != nil {
		t.Fatalf("glue: %v", err)
	}
	if cat.CatalogType() != "glue" {
		t.Errorf("glue: catalog type %s", cat.CatalogType())
	}
	release()
	for props, want := range map[*map[string]string]string{
		{"type": "hive"}: "unsupported catalog type", {}: "iceberg.catalog.type is not set",
		{"type": "sql", "uri": "sqlite:///x.db"}: "warehouse",
	} {
		if _, _, err := openCatalog(ctx, "iceberg", *props); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", *props, err, want)
		}
	}
}

// TestCatalogErrorsHidePasswords: a SQL catalog that cannot be reached is
// named in the error without the password of its uri or of jdbc.password.
func TestCatalogErrorsHidePasswords(t *testing.T) {
	for _, props := range []map[string]string{
		{"type": "sql", "uri": "postgresql://cat:uri-secret-pw@127.0.0.1:1/cat", "warehouse": "file:///tmp/w"},
		{"type": "sql", "uri": "jdbc:postgresql://127.0.0.1:1/cat", "jdbc.user": "cat", "jdbc.password": "uri-secret-pw", "warehouse": "file:///tmp/w"},
		{"type": "sql", "uri": "mysql://cat:uri-secret-pw@127.0.0.1:1/cat", "warehouse": "file:///tmp/w"},
	} {
		_, _, err := openCatalog(context.Background(), "iceberg", props)
		if err == nil {
			t.Fatalf("%v: opened", props)
		}
		if strings.Contains(err.Error(), "uri-secret-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	for in, want := range map[string]string{
		"postgresql://u:pw@h:5432/db?x=1": "postgresql://u:xxxxx@h:5432/db?x=1",
		"postgresql://u@h/db":             "postgresql://u@h/db",
		"postgresql://h/db?a=b@c":         "postgresql://h/db?a=b@c",
		"sqlite:////tmp/c.db":             "sqlite:////tmp/c.db",
		"jdbc:postgresql://u:pw@h/db":     "jdbc:postgresql://u:xxxxx@h/db",
		"postgresql://u:p%zz@h/db":        "postgresql:(unparseable uri)",
	} {
		if got := redactURI(in); got != want {
			t.Errorf("redactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

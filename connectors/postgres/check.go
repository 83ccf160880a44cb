package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-dev/tributary/sdk"
)

// check is the connector's live validation: it connects and explains,
// each on its key, what would stop the connector. It only reads: a failed
// validation creates nothing.
func check(ctx context.Context, cfg Config) error {
	conn, err := pgx.Connect(ctx, cfg.connString(false))
	if err != nil {
		return connectError(&cfg, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf(format, args...)})
	}

	var walLevel string
	var version int
	var super, replication, createDB, standby, feedback bool
	err = conn.QueryRow(ctx, `SELECT current_setting('wal_level'), current_setting('server_version_num')::int,
			pg_is_in_recovery(), current_setting('hot_standby_feedback')::bool,
			r.rolsuper, r.rolreplication OR EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'rds_replication' AND pg_has_role(r.oid, g.oid, 'member')),
			has_database_privilege(current_database(), 'CREATE')
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&walLevel, &version, &standby, &feedback, &super, &replication, &createDB)
	if err != nil {
		return fmt.Errorf("postgres: read server settings: %w", err)
	}
	if version < 100000 {
		add("database.hostname", "PostgreSQL %d.%d is too old: pgoutput needs PostgreSQL 10 or later", version/10000, version%10000/100)
	}
	if walLevel != "logical" {
		add("database.hostname", "the server's wal_level is %s; change data capture needs wal_level=logical (ALTER SYSTEM SET wal_level = logical, then restart the server)", walLevel)
	}
	if standby {
		for _, p := range standbyProblems(&cfg, version, feedback) {
			errs = append(errs, p)
		}
	}
	if !replication && !super {
		add("database.user", "user %s has no REPLICATION privilege (ALTER ROLE %s WITH REPLICATION, or GRANT rds_replication on Amazon RDS)", cfg.User, pgx.Identifier{cfg.User}.Sanitize())
	}

	f, err := newFilters(&cfg)
	if err != nil {
		return err
	}
	cat := newCatalog(&cfg, f, slog.New(slog.DiscardHandler))
	var pubExists, pubAll bool
	err = conn.QueryRow(ctx, `SELECT count(*) > 0, coalesce(bool_or(puballtables), false) FROM pg_publication WHERE pubname = $1`, cfg.PublicationName).Scan(&pubExists, &pubAll)
	if err != nil {
		return fmt.Errorf("postgres: read publication: %w", err)
	}
	var tables []tableID
	switch {
	case pubExists:
		if tables, err = cat.publishedTables(ctx, conn); err != nil {
			return err
		}
	case cfg.PublicationAutocreate == "disabled":
		add("publication.name", "publication %s does not exist and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION %s FOR TABLE ...) or set publication.autocreate.mode",
			cfg.PublicationName, pgx.Identifier{cfg.PublicationName}.Sanitize())
	case cfg.PublicationAutocreate == "all_tables" && !super:
		add("publication.autocreate.mode", "creating publication %s FOR ALL TABLES needs a superuser, and %s is not one: create the publication, or use publication.autocreate.mode=filtered",
			cfg.PublicationName, cfg.User)
	case (cfg.PublicationAutocreate == "filtered" || cfg.PublicationAutocreate == "no_tables") && !createDB && !super:
		add("publication.autocreate.mode", "creating publication %s needs the CREATE privilege on database %s, which %s lacks", cfg.PublicationName, cfg.DBName, cfg.User)
	}
	if pubExists && cfg.PublicationAutocreate == "filtered" {
		// The task sets the publication to the filtered tables when it
		// starts (a table added to table.include.list joins it).
		more, err := cat.filteredTables(ctx, conn)
		if err != nil {
			return err
		}
		for _, id := range more {
			if !slices.Contains(tables, id) {
				tables = append(tables, id)
			}
		}
	}
	if !pubExists {
		if tables, err = cat.filteredTables(ctx, conn); err != nil {
			return err
		}
		if cfg.PublicationAutocreate == "no_tables" {
			tables = nil
		}
	}
	// Each literal entry of table.include.list must name a table.
	for _, p := range cfg.TableInclude {
		p = strings.TrimSpace(p)
		if p == "" || regexp.QuoteMeta(p) != strings.ReplaceAll(p, `.`, `\.`) {
			continue // a pattern, not a name
		}
		if !includes(tables, p) {
			if pubExists {
				add("table.include.list", "table %s does not exist or is not in publication %s", p, cfg.PublicationName)
			} else {
				add("table.include.list", "table %s does not exist", p)
			}
		}
	}
	if len(tables) == 0 && len(cfg.TableInclude) == 0 && pubExists && !pubAll {
		add("publication.name", "publication %s holds no table the filters select", cfg.PublicationName)
	}
	for _, id := range tables {
		var canRead, hasPK bool
		var ident string
		err := conn.QueryRow(ctx, `SELECT has_table_privilege(c.oid, 'SELECT'), c.relreplident,
				EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
			id.schema, id.name).Scan(&canRead, &ident, &hasPK)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("postgres: read table %s: %w", id, err)
		}
		if !canRead {
			add("table.include.list", "user %s cannot read table %s (GRANT SELECT ON %s TO %s)", cfg.User, id, id.quoted(), pgx.Identifier{cfg.User}.Sanitize())
		}
		if !hasPK && ident == "d" {
			add("table.include.list", "table %s has no primary key and REPLICA IDENTITY DEFAULT: its updates and deletes fail on the server once it is published; add a primary key or ALTER TABLE %s REPLICA IDENTITY FULL", id, id.quoted())
		}
		if ident == "n" {
			add("table.include.list", "table %s has REPLICA IDENTITY NOTHING: its updates and deletes cannot be captured; ALTER TABLE %s REPLICA IDENTITY DEFAULT (with a primary key) or FULL", id, id.quoted())
		}
	}
	slot, err := readSlot(ctx, conn, cfg.SlotName)
	if err != nil {
		return err
	}
	if slot.exists && slot.plugin != "pgoutput" {
		add("slot.name", "replication slot %s exists with plugin %s, not pgoutput: choose another slot.name or drop it (SELECT pg_drop_replication_slot('%s'))", cfg.SlotName, slot.plugin, cfg.SlotName)
	}
	if slot.exists && slot.database != cfg.DBName {
		add("slot.name", "replication slot %s belongs to database %s: choose another slot.name", cfg.SlotName, slot.database)
	}
	if !slot.exists {
		var used, limit int
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_replication_slots), current_setting('max_replication_slots')::int`).Scan(&used, &limit); err == nil && used >= limit {
			add("slot.name", "the server has no free replication slot (max_replication_slots=%d, all used)", limit)
		}
	}
	return errors.Join(errs...)
}

func includes(ids []tableID, name string) bool {
	for _, id := range ids {
		if strings.EqualFold(id.String(), name) {
			return true
		}
	}
	return false
}

// connectError attaches a connection failure to the key that explains it.
func connectError(cfg *Config, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return sdk.FieldError{Key: "database.password", Message: fmt.Sprintf("cannot log in as %s: %s", cfg.User, pgErr.Message)}
		case "3D000":
			return sdk.FieldError{Key: "database.dbname", Message: pgErr.Message}
		}
		return sdk.FieldError{Key: "database.hostname", Message: fmt.Sprintf("cannot connect to %s:%d: %s", cfg.Hostname, cfg.Port, pgErr.Message)}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "failed to connect") {
		msg = msg[i+2:]
	}
	return sdk.FieldError{Key: "database.hostname", Message: fmt.Sprintf("cannot connect to %s:%d: %s", cfg.Hostname, cfg.Port, msg)}
}

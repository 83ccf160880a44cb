package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/integration/harness"
)

// pgConn opens a superuser connection, closed in t.Cleanup.
func pgConn(t testing.TB, pg *harness.Postgres) *pgx.Conn {
	t.Helper()
	conn, err := pg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgSeq names the objects of each Postgres test uniquely.
var pgSeq atomic.Int64

// pgConnectorConfig returns a Debezium-style configuration of the Postgres
// source for pg, capturing tables (schema.table, comma-separated) through a
// filtered publication and a slot of its own, named after id.
func pgConnectorConfig(pg *harness.Postgres, id, tables string) map[string]string {
	return map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                 "pgoutput", // Debezium's default is decoderbufs
		"database.hostname":           pg.Host,
		"database.port":               strconv.Itoa(pg.Port),
		"database.user":               pg.User,
		"database.password":           pg.Password,
		"database.dbname":             pg.Database,
		"database.sslmode":            "disable",
		"topic.prefix":                id,
		"table.include.list":          tables,
		"slot.name":                   "slot_" + id,
		"publication.name":            "pub_" + id,
		"publication.autocreate.mode": "filtered",
	}
}

// pgID returns a fresh lower-case identifier for a test's objects.
func pgID(prefix string) string { return fmt.Sprintf("%s%d", prefix, pgSeq.Add(1)) }

// pgScalar runs a query returning one value, as text.
func pgScalar(t testing.TB, pg *harness.Postgres, sql string) string {
	t.Helper()
	conn, err := pg.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var s *string
	if err := conn.QueryRow(t.Context(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if s == nil {
		return ""
	}
	return *s
}

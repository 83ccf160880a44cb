package integration

import (
	"fmt"
	"testing"

	"github.com/tributary-dev/tributary/connectors/postgres"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

// TestPostgresAcceptance runs the SDK's acceptance kit against the Postgres
// source on a real server: each test table gets its own slot (created
// before the rows are inserted, snapshot.mode=no_data) so the records are
// streamed changes whose offsets the kit's resume check can follow.
func TestPostgresAcceptance(t *testing.T) {
	// Not parallel: sdktest's leak check counts every goroutine of the
	// process, so no other test may run beside it.
	pg := harness.StartPostgresT(t)
	sdktest.RunSource(t, sdktest.SourceDriver{
		Connector: postgres.Connector(),
		Config: func(t *testing.T) map[string]string {
			id := pgID("acc")
			// The publication must exist before the slot: pgoutput reads it
			// as of each change's position.
			pg.Exec(t, fmt.Sprintf(`CREATE TABLE %s (id serial PRIMARY KEY, name text NOT NULL, n int); CREATE PUBLICATION pub_%s FOR TABLE %s`, id, id, id))
			pg.Exec(t, fmt.Sprintf(`SELECT pg_create_logical_replication_slot('slot_%s', 'pgoutput')`, id))
			cfg := pgConnectorConfig(pg, id, "public."+id)
			cfg["snapshot.mode"] = "no_data"
			return cfg
		},
		Seed: func(t *testing.T, cfg map[string]string, n int) {
			table := cfg["table.include.list"]
			pg.Exec(t, fmt.Sprintf(`INSERT INTO %s (name, n) SELECT 'row ' || i, i FROM generate_series(1, %d) i`, table, n))
		},
		// Not Deterministic: an event's ts_ms is when it was read.
	})
}

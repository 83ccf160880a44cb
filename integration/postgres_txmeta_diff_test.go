package integration

import (
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestPostgresDebeziumTransactionMetadataDiff runs Debezium 3.6.1 and
// Tributary side by side with provide.transaction.metadata=true and
// requires the same events: BEGIN and END on cdc.transaction (END with the
// count per table, tables listed in Debezium's order) and the transaction
// block of every change event, over transactions of one and several
// tables, deletes with tombstones and a key change.
func TestPostgresDebeziumTransactionMetadataDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE orders (id int PRIMARY KEY, total int NOT NULL);
		CREATE TABLE lines (order_id int, n int, qty int NOT NULL, PRIMARY KEY (order_id, n));
		CREATE TABLE audit (id serial PRIMARY KEY, what text)`)
	dbzBroker := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, dbzBroker)
	ourBootstrap, ours, _, _ := startWorker(t, "pgtxdiff", nil)
	cfg := func(slot string) map[string]string {
		c := pgConnectorConfig(pg, "cdc", "public.orders,public.lines,public.audit")
		c["slot.name"] = slot
		c["publication.name"] = slot + "_pub"
		c["tasks.max"] = "1"
		c["snapshot.mode"] = "no_data"
		c["provide.transaction.metadata"] = "true"
		return c
	}
	dbz := rest{t, kc.URL()}
	dbz.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("dbz")}, 201)
	ours.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("trib")}, 201)
	dbz.waitState("pg", "RUNNING", 1)
	ours.waitState("pg", "RUNNING", 1)
	topics := []string{"cdc.transaction", "cdc.public.orders", "cdc.public.lines", "cdc.public.audit"}
	dbzEvents := newEventReader(t, dbzBroker, topics...)
	ourEvents := newEventReader(t, ourBootstrap, topics...)
	dbzEvents.diag, ourEvents.diag = dbz.statusOf("pg"), ours.statusOf("pg")
	// Both stream before the workload (each slot starts where it was
	// created: a marker transaction both must see).
	time.Sleep(3 * time.Second)
	pg.Exec(t, `INSERT INTO audit (what) VALUES ('start')`)
	dbzEvents.until(3*time.Minute, "Debezium's marker", func(es []cdcEvent) bool { return len(es) >= 3 })
	ourEvents.until(time.Minute, "Tributary's marker", func(es []cdcEvent) bool { return len(es) >= 3 })
	pg.Exec(t, `BEGIN;
		INSERT INTO orders VALUES (1, 10);
		INSERT INTO lines VALUES (1, 1, 2), (1, 2, 3);
		INSERT INTO audit (what) VALUES ('order 1');
		COMMIT;
		BEGIN;
		UPDATE lines SET qty = 5 WHERE order_id = 1 AND n = 2;
		DELETE FROM lines WHERE order_id = 1 AND n = 1;
		UPDATE orders SET id = 2 WHERE id = 1;
		COMMIT;
		INSERT INTO audit (what) VALUES ('alone')`)
	// BEGIN+END per transaction (3 more), 4+3 data events plus the key
	// change's extra create and two tombstones, one event alone.
	const total = 3 + 2*3 + 4 + 4 + 2 + 1
	dbzEvents.until(2*time.Minute, "Debezium's events", func(es []cdcEvent) bool { return len(es) >= total })
	ourEvents.until(time.Minute, "Tributary's events", func(es []cdcEvent) bool { return len(es) >= total })
	time.Sleep(2 * time.Second)
	dbzEvents.until(time.Second, "", func([]cdcEvent) bool { return true })
	ourEvents.until(time.Second, "", func([]cdcEvent) bool { return true })

	got := sameEventsAsDebezium(t, topics, dbzEvents.got, ourEvents.got)
	t.Logf("%d events equal to Debezium's, %d on cdc.transaction; the END of the two-table transaction: %s",
		len(ourEvents.got), len(got["cdc.transaction"]), eventPart(got["cdc.transaction"][3], "value"))
}

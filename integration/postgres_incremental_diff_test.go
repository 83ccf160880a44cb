package integration

import (
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestPostgresDebeziumIncrementalDiff runs Debezium 3.6.1's PostgreSQL
// connector on Kafka Connect 4.4 and Tributary's side by side (their own
// slots and publications, one signal table), sends one execute-snapshot
// signal through the signal table, and requires the same events from both:
// keys and values, schemas and payloads, source.snapshot=incremental, apart
// from processing times and the position fields of read events.
func TestPostgresDebeziumIncrementalDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), tags text[]);
		INSERT INTO items SELECT i, 'item ' || i, i * 1.25, ARRAY['t' || (i % 3)] FROM generate_series(1, 2500) i;
		CREATE TABLE pairs (a int, b text, v int NOT NULL, PRIMARY KEY (b, a));
		INSERT INTO pairs SELECT i % 50, 'k' || (i / 50), i FROM generate_series(1, 700) i;
		CREATE TABLE untouched (id int PRIMARY KEY);
		INSERT INTO untouched VALUES (1), (2)`)

	dbzBroker := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, dbzBroker)
	ourBootstrap, ours, _, _ := startWorker(t, "pgincrdiff", nil)
	cfg := func(slot string) map[string]string {
		c := pgIncrementalConfig(pg, "cdc", "public.items,public.pairs,public.untouched")
		c["slot.name"] = slot
		c["publication.name"] = slot + "_pub"
		c["incremental.snapshot.chunk.size"] = "300"
		c["tasks.max"] = "1"
		return c
	}
	dbz := rest{t, kc.URL()}
	dbz.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("dbz")}, 201)
	ours.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("trib")}, 201)
	dbz.waitState("pg", "RUNNING", 1)
	ours.waitState("pg", "RUNNING", 1)

	topics := []string{"cdc.public.items", "cdc.public.pairs", "cdc.public.untouched"}
	dbzEvents := newEventReader(t, dbzBroker, topics...)
	ourEvents := newEventReader(t, ourBootstrap, topics...)
	dbzEvents.diag, ourEvents.diag = dbz.statusOf("pg"), ours.statusOf("pg")
	// Both stream before the signal.
	pg.Exec(t, "UPDATE items SET name = 'first' WHERE id = 1")
	dbzEvents.until(3*time.Minute, "Debezium's first change", func(es []cdcEvent) bool { return len(es) >= 1 })
	ourEvents.until(time.Minute, "Tributary's first change", func(es []cdcEvent) bool { return len(es) >= 1 })

	signal(t, pg, "ad-hoc-1", "execute-snapshot", `{"data-collections": ["public\\.(items|pairs)"], "type": "incremental"}`)
	const total = 1 + 2500 + 700
	dbzEvents.until(3*time.Minute, "Debezium's incremental snapshot", func(es []cdcEvent) bool { return len(es) >= total })
	ourEvents.until(time.Minute, "Tributary's incremental snapshot", func(es []cdcEvent) bool { return len(es) >= total })
	// A change after the snapshot, then anything extra would show.
	pg.Exec(t, "DELETE FROM pairs WHERE a = 1 AND b = 'k0'")
	dbzEvents.until(time.Minute, "Debezium's last change", func(es []cdcEvent) bool { return len(es) >= total+2 })
	ourEvents.until(time.Minute, "Tributary's last change", func(es []cdcEvent) bool { return len(es) >= total+2 })
	time.Sleep(2 * time.Second)
	dbzEvents.until(time.Second, "", func([]cdcEvent) bool { return true })
	ourEvents.until(time.Second, "", func([]cdcEvent) bool { return true })

	sameEventsAsDebezium(t, topics, dbzEvents.got, ourEvents.got)
	reads := 0
	for _, e := range ourEvents.got {
		if e.op() == "r" {
			if src, _ := e.value["source"].(map[string]any); src["snapshot"] != "incremental" {
				t.Fatalf("read event with source.snapshot %v", src["snapshot"])
			}
			reads++
		}
	}
	t.Logf("%d events (%d incremental reads) equal to Debezium's", len(ourEvents.got), reads)
}

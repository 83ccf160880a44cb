package integration

import (
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestPostgresDebeziumColumnsDiff runs Debezium 3.6.1 and Tributary side by
// side with Debezium's column transformations (mask, truncate, hash v1 and
// v2, source types by column and by type) and message.key.columns, over a
// snapshot and changes, and requires the same events: Debezium's own
// output is the golden of every masked, truncated and hashed value.
func TestPostgresDebeziumColumnsDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE people (id int PRIMARY KEY, email varchar(100), name text, code char(8), phone varchar(20),
			note text, short varchar(10), amount numeric(10,2), born date, score int4);
		CREATE TABLE keyed (a int PRIMARY KEY, b text NOT NULL, c int NOT NULL, v text);
		INSERT INTO people VALUES
			(1, 'ann@example.com', 'Annabelle', 'AB12', '+1 555 0100', 'note one', 'abcdefghij', 12.5, '1990-01-02', 7),
			(2, 'bo@example.com', 'Bo', 'C', NULL, NULL, NULL, NULL, NULL, NULL),
			(3, 'ünïcödé@example.com', 'Zoë Ångström-Łukasiewicz', 'Ωμέγα', '☎ 12', 'ƒ 𝄞 clef', 'ü', -0.01, '2000-02-29', -1);
		INSERT INTO keyed VALUES (1, 'x', 10, 'one'), (2, 'y', 20, 'two')`)

	dbzBroker := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, dbzBroker)
	ourBootstrap, ours, _, _ := startWorker(t, "pgcoldiff", nil)
	cfg := func(slot string) map[string]string {
		c := pgConnectorConfig(pg, "cdc", "public.people,public.keyed")
		c["slot.name"] = slot
		c["publication.name"] = slot + "_pub"
		c["tasks.max"] = "1"
		c["column.mask.with.5.chars"] = "public.people.phone"
		c["column.truncate.to.4.chars"] = "public.people.name,public.people.short"
		c["column.truncate.to.20.chars"] = "public.people.short"
		c["column.mask.hash.SHA-256.with.salt.CzQMA0cB5K"] = "public.people.email,public.people.code"
		c["column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K"] = "public.people.note"
		c["column.propagate.source.type"] = "public.people.amount,public.people.born"
		c["datatype.propagate.source.type"] = `.+\.int4,.+\.bpchar`
		c["message.key.columns"] = "public.keyed:b,c"
		return c
	}
	dbz := rest{t, kc.URL()}
	dbz.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("dbz")}, 201)
	ours.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("trib")}, 201)

	topics := []string{"cdc.public.people", "cdc.public.keyed"}
	dbzEvents := newEventReader(t, dbzBroker, topics...)
	ourEvents := newEventReader(t, ourBootstrap, topics...)
	dbzEvents.diag, ourEvents.diag = dbz.statusOf("pg"), ours.statusOf("pg")
	const snapshot = 5
	dbzEvents.until(3*time.Minute, "Debezium's snapshot", func(es []cdcEvent) bool { return len(es) >= snapshot })
	ourEvents.until(time.Minute, "Tributary's snapshot", func(es []cdcEvent) bool { return len(es) >= snapshot })
	pg.Exec(t, `INSERT INTO people VALUES (4, 'new@example.com', 'Newcomer', 'NEW', '000', 'n', 'short', 1, '2024-01-01', 4);
		UPDATE people SET name = 'Bob the builder', phone = '12345678', note = 'changed' WHERE id = 2;
		INSERT INTO keyed VALUES (3, 'z', 30, 'three');
		UPDATE keyed SET v = 'uno' WHERE a = 1`)
	const total = snapshot + 4
	dbzEvents.until(2*time.Minute, "Debezium's changes", func(es []cdcEvent) bool { return len(es) >= total })
	ourEvents.until(time.Minute, "Tributary's changes", func(es []cdcEvent) bool { return len(es) >= total })
	time.Sleep(2 * time.Second)
	dbzEvents.until(time.Second, "", func([]cdcEvent) bool { return true })
	ourEvents.until(time.Second, "", func([]cdcEvent) bool { return true })

	got := sameEventsAsDebezium(t, topics, dbzEvents.got, ourEvents.got)
	t.Logf("%d events equal to Debezium's; for example:\n%s\n%s", len(ourEvents.got), eventPart(got["cdc.public.people"][2], "value"), eventPart(got["cdc.public.people"][0], "value schema"))
}

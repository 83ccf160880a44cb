package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestPostgresDebeziumBlockingDiff runs Debezium 3.6.1's PostgreSQL connector
// on Kafka Connect 4.4 and Tributary's side by side, as
// TestPostgresDebeziumIncrementalDiff does, sends one execute-snapshot signal
// of type blocking (with an additional condition, a SELECT statement) through
// the signal table,
// and commits changes to rows outside the condition while the snapshot runs.
// Both must produce the same events (keys and values, schemas and payloads,
// source.snapshot first/true/last, op r) apart from timing and position
// fields: the reads in one unbroken run, the stream's changes after them,
// none lost.
func TestPostgresDebeziumBlockingDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, signalTableSQL)
	const rows, read, changes = 20000, 15000, 20
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), tags text[]);
		INSERT INTO items SELECT i, 'item ' || i, i * 1.25, ARRAY['t' || (i %% 3)] FROM generate_series(1, %d) i;
		CREATE TABLE nokey (a int NOT NULL, b text);
		ALTER TABLE nokey REPLICA IDENTITY FULL;
		INSERT INTO nokey SELECT i, 'b' || i FROM generate_series(1, 300) i;
		CREATE TABLE untouched (id int PRIMARY KEY);
		INSERT INTO untouched VALUES (1), (2)`, rows))

	dbzBroker := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, dbzBroker)
	ourBootstrap, ours, w, _ := startWorker(t, "pgblockdiff", nil)
	cfg := func(slot string) map[string]string {
		c := pgIncrementalConfig(pg, "cdc", "public.items,public.nokey,public.untouched")
		c["slot.name"] = slot
		c["publication.name"] = slot + "_pub"
		c["tasks.max"] = "1"
		return c
	}
	dbz := rest{t, kc.URL()}
	dbz.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("dbz")}, 201)
	ours.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg("trib")}, 201)
	dbz.waitState("pg", "RUNNING", 1)
	ours.waitState("pg", "RUNNING", 1)

	topics := []string{"cdc.public.items", "cdc.public.nokey", "cdc.public.untouched"}
	dbzEvents := newEventReader(t, dbzBroker, topics...)
	ourEvents := newEventReader(t, ourBootstrap, topics...)
	dbzEvents.diag = func() string { return dbz.statusOf("pg")() + "\n" + snapshotLogLines(kc.LogPath()) }
	ourEvents.diag = func() string { return ours.statusOf("pg")() + "\n" + harnessTail(w.LogPath()) }
	// Both stream before the signal.
	pg.Exec(t, "UPDATE items SET name = 'first' WHERE id = 1")
	dbzEvents.until(3*time.Minute, "Debezium's first change", func(es []cdcEvent) bool { return len(es) >= 1 })
	ourEvents.until(time.Minute, "Tributary's first change", func(es []cdcEvent) bool { return len(es) >= 1 })

	// A blocking snapshot's filter is a whole SELECT statement, as
	// Debezium's snapshot.select.statement.overrides (a bare condition
	// fails Debezium's snapshot: "syntax error at or near" its first word).
	// A table without a primary key is read in the statement's order.
	signal(t, pg, "block-1", "execute-snapshot", fmt.Sprintf(`{"data-collections": ["public.items", "public.nokey"], "type": "blocking",
		"additional-conditions": [{"data-collection": "public.items", "filter": "SELECT * FROM public.items WHERE id <= %d ORDER BY id"},
			{"data-collection": "public.nokey", "filter": "SELECT * FROM public.nokey WHERE a %% 3 = 0 ORDER BY a DESC"}]}`, read))
	// Changes to rows the snapshot does not read, committed while it runs:
	// the stream holds them until the snapshot ends. They are committed once
	// both have sent a read: Debezium pauses its stream on another thread
	// after taking the signal, so a change committed at once could still
	// come out before its reads (seen in CI).
	dbzEvents.until(3*time.Minute, "Debezium's blocking snapshot to start", func(es []cdcEvent) bool { return len(es) >= 2 })
	ourEvents.until(time.Minute, "Tributary's blocking snapshot to start", func(es []cdcEvent) bool { return len(es) >= 2 })
	conn := pgConn(t, pg)
	for i := range changes {
		if _, err := conn.Exec(t.Context(), "UPDATE items SET price = -1 WHERE id = $1", read+1+i); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	const nokeyReads = 100
	const total = 1 + read + changes + nokeyReads
	dbzEvents.until(3*time.Minute, "Debezium's blocking snapshot and the changes", func(es []cdcEvent) bool { return len(es) >= total })
	ourEvents.until(time.Minute, "Tributary's blocking snapshot and the changes", func(es []cdcEvent) bool { return len(es) >= total })
	time.Sleep(2 * time.Second)
	dbzEvents.until(time.Second, "", func([]cdcEvent) bool { return true })
	ourEvents.until(time.Second, "", func([]cdcEvent) bool { return true })

	byTopic := sameEventsAsDebezium(t, topics, dbzEvents.got, ourEvents.got)
	// The shape both share: on items, the change before, the reads in one
	// run, then every change committed during the snapshot; nokey's rows in
	// the statement's order; first and last mark the snapshot's ends.
	es, nk := byTopic["cdc.public.items"], byTopic["cdc.public.nokey"]
	if len(es) != 1+read+changes || len(nk) != nokeyReads {
		t.Fatalf("%d events of items, %d of nokey; want %d and %d", len(es), len(nk), 1+read+changes, nokeyReads)
	}
	for i, e := range nk {
		if a, _ := e.row("after")["a"].(json.Number).Int64(); e.op() != "r" || a != int64(300-3*i) {
			t.Fatalf("nokey event %d: op %s, a %d", i, e.op(), a)
		}
	}
	marker := func(e cdcEvent) string {
		src, _ := e.value["source"].(map[string]any)
		return fmt.Sprint(src["snapshot"])
	}
	for i, e := range es {
		read := i >= 1 && i <= read
		if want := map[bool]string{true: "r", false: "u"}[read]; e.op() != want || (marker(e) == "false") == read {
			t.Fatalf("items event %d: op %s source.snapshot %s, want op %s", i, e.op(), marker(e), want)
		}
	}
	if m1, m2 := marker(es[1]), marker(nk[len(nk)-1]); m1 != "first" || m2 != "last" {
		t.Errorf("source.snapshot of the first read %v and of the last %v, want first and last", m1, m2)
	}
	t.Logf("%d events equal to Debezium's: %d + %d blocking-snapshot reads, then the %d changes held during it", len(ourEvents.got), read, nokeyReads, changes)
}

// snapshotLogLines returns the lines of a Kafka Connect worker's log about
// signals and snapshots, and its warnings and errors.
func snapshotLogLines(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "WARN") || strings.Contains(l, "ERROR") || strings.Contains(l, "ignal") || strings.Contains(l, "napshot") || strings.Contains(l, "treaming") {
			out = append(out, l)
		}
	}
	if len(out) > 80 {
		out = out[len(out)-80:]
	}
	return strings.Join(out, "\n")
}

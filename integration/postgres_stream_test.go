package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/connectors/postgres"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// openTask opens a Postgres source task in process, closed in t.Cleanup.
func openTask(t *testing.T, cfg map[string]string) sdk.SourceTask {
	t.Helper()
	task, err := postgres.Connector().(sdk.SourcePlugin).NewSourceTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Open(context.Background(), &taskCtx{t: t}); err != nil {
		task.Close(context.Background())
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { task.Close(context.Background()) })
	return task
}

// streamedEvent renders a record for comparison: topic, key, the value
// without the envelope's ts_ms (the time it was read) and the offset.
func streamedEvent(r sdk.SourceRecord) string {
	val := "null"
	if v, ok := r.Value.(*schema.Struct); ok {
		val = fmt.Sprint(v.Get("op"), " before=", v.Get("before"), " after=", v.Get("after"), " source=", v.Get("source"))
	}
	off := r.Offset
	keys := slices.Sorted(maps.Keys(off))
	s := fmt.Sprintf("%s key=%v value=%s offset=", r.Topic, r.Key, val)
	for _, k := range keys {
		s += fmt.Sprintf("%s:%v,", k, off[k])
	}
	return s
}

// pollUntil polls task until a record satisfies last, and returns the
// records so far.
func pollUntil(t *testing.T, task sdk.SourceTask, within time.Duration, last func(sdk.SourceRecord) bool) []sdk.SourceRecord {
	t.Helper()
	var got []sdk.SourceRecord
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		recs, err := task.Poll(ctx, 1000)
		cancel()
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		for _, r := range recs {
			got = append(got, r)
			if last(r) {
				return got
			}
		}
	}
	t.Fatalf("%d records after %v and no end marker", len(got), within)
	return nil
}

// recordID is the id in a record's key ("" without one).
func recordID(r sdk.SourceRecord) string {
	k, ok := r.Key.(*schema.Struct)
	if !ok {
		return ""
	}
	return fmt.Sprint(k.Get("id"))
}

func recordOp(r sdk.SourceRecord) string {
	v, ok := r.Value.(*schema.Struct)
	if !ok {
		return "tombstone"
	}
	return fmt.Sprint(v.Get("op"))
}

// TestPostgresStreamedTransactions runs one workload of transactions
// larger than logical_decoding_work_mem (64kB here) past three tasks on
// the same server: protocol 2 with streaming (the default), the same with
// a buffer so small that the transactions spill to files, and protocol 1
// (pgoutput.streaming=false). The server really streams for the first two
// (pg_stat_replication_slots.stream_txns) and not for the third; all three
// give the same events with the same sources and offsets, and those are
// the expected ones in commit order: a large committed transaction whole,
// an aborted one not at all, a rolled-back savepoint's rows left out, and
// two interleaved large transactions each whole, in their commit order.
func TestPostgresStreamedTransactions(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t, harness.WithPostgresSetting("logical_decoding_work_mem", "64kB"))
	pg.Exec(t, `CREATE TABLE big (id int PRIMARY KEY, n int NOT NULL, v text NOT NULL)`)
	variants := []struct {
		name     string
		settings map[string]string
		streams  bool
	}{
		{"streaming", nil, true},
		{"spilling", map[string]string{"pgoutput.stream.buffer.bytes": "50000"}, true},
		{"protocol1", map[string]string{"pgoutput.streaming": "false"}, false},
	}
	tasks := make([]sdk.SourceTask, len(variants))
	slots := make([]string, len(variants))
	for i, v := range variants {
		id := pgID("strm")
		cfg := pgConnectorConfig(pg, id, "public.big")
		cfg["topic.prefix"] = "strm" // the same topics, sources and offsets for all
		cfg["snapshot.mode"] = "no_data"
		maps.Copy(cfg, v.settings)
		tasks[i] = openTask(t, cfg)
		slots[i] = cfg["slot.name"]
	}

	ctx := context.Background()
	x, y, z := pgConn(t, pg), pgConn(t, pg), pgConn(t, pg)
	run := func(conn *pgx.Conn, sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	ins := func(from, to int) string {
		return fmt.Sprintf(`INSERT INTO big SELECT i, i, repeat('x', 100) || i FROM generate_series(%d, %d) i`, from, to)
	}
	var want []string // op:id in commit order
	add := func(op string, from, to int) {
		for i := from; i <= to; i++ {
			want = append(want, op+":"+strconv.Itoa(i))
			if op == "d" {
				want = append(want, "tombstone:"+strconv.Itoa(i))
			}
		}
	}
	// A large committed transaction: inserts, updates, deletes.
	run(x, "BEGIN")
	run(x, ins(1, 3000))
	run(x, `UPDATE big SET n = n + 1 WHERE id <= 1000`)
	run(x, `DELETE FROM big WHERE id BETWEEN 2001 AND 2500`)
	run(x, "COMMIT")
	add("c", 1, 3000)
	add("u", 1, 1000)
	add("d", 2001, 2500)
	// A large aborted transaction.
	run(x, "BEGIN")
	run(x, ins(10001, 13000))
	run(x, "ROLLBACK")
	// A large transaction with a rolled-back savepoint (itself large, and
	// with a nested one), and a released one.
	run(x, "BEGIN")
	run(x, ins(20001, 22000))
	run(x, "SAVEPOINT a")
	run(x, ins(22001, 25000))
	run(x, "SAVEPOINT b")
	run(x, ins(25001, 25010))
	run(x, "ROLLBACK TO SAVEPOINT a")
	run(x, "SAVEPOINT c")
	run(x, ins(26001, 27000))
	run(x, "RELEASE SAVEPOINT c")
	run(x, ins(27001, 28000))
	run(x, "COMMIT")
	add("c", 20001, 22000)
	add("c", 26001, 28000)
	// Two large transactions interleaved, small ones committing between.
	run(x, "BEGIN")
	run(y, "BEGIN")
	for i := range 6 {
		run(x, ins(30001+500*i, 30500+500*i))
		run(y, ins(40001+500*i, 40500+500*i))
		run(z, ins(50001+i, 50001+i))
		add("c", 50001+i, 50001+i)
	}
	run(y, "COMMIT")
	run(x, "COMMIT")
	add("c", 40001, 43000)
	add("c", 30001, 33000)
	// A large transaction that alters the table midway: the server sends
	// the new Relation inside the stream, and the rows after the ALTER
	// carry the new column (streamed, spilled or not).
	run(x, "BEGIN")
	run(x, ins(60001, 62000))
	run(x, `ALTER TABLE big ADD COLUMN w text`)
	run(x, `INSERT INTO big SELECT i, i, 'x', 'w' || i FROM generate_series(62001, 64000) i`)
	run(x, "COMMIT")
	add("c", 60001, 64000)
	run(z, ins(99999, 99999)) // the end marker
	add("c", 99999, 99999)

	var rendered [][]string
	for i, task := range tasks {
		recs := pollUntil(t, task, 2*time.Minute, func(r sdk.SourceRecord) bool { return recordID(r) == "99999" })
		var got []string
		var events []string
		for _, r := range recs {
			got = append(got, recordOp(r)+":"+recordID(r))
			events = append(events, streamedEvent(r))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d events, want %d; first difference at %d", variants[i].name, len(got), len(want), firstDiff(got, want))
		}
		for _, r := range recs {
			v, ok := r.Value.(*schema.Struct) // not a tombstone
			if !ok {
				continue
			}
			after, _ := v.Get("after").(*schema.Struct)
			switch id := recordID(r); {
			case id == "60001" && after.Schema().Field("w") != nil:
				t.Errorf("%s: row 60001, before the ALTER, has column w: %v", variants[i].name, after)
			case id == "62001" && (after.Schema().Field("w") == nil || after.Get("w") != "w62001"):
				t.Errorf("%s: row 62001, after the ALTER, lacks w = w62001: %v", variants[i].name, after)
			}
		}
		rendered = append(rendered, events)
	}
	for i := 1; i < len(rendered); i++ {
		if d := firstDiff(rendered[i], rendered[0]); d >= 0 {
			t.Fatalf("%s and %s differ at event %d:\n%s\n%s", variants[i].name, variants[0].name, d, rendered[i][d], rendered[0][d])
		}
	}
	// The server streamed the transactions to the first two only.
	for i, v := range variants {
		var streamed string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			streamed = pgScalar(t, pg, fmt.Sprintf(`SELECT stream_txns::text FROM pg_stat_replication_slots WHERE slot_name = '%s'`, slots[i]))
			if !v.streams || streamed != "0" && streamed != "" {
				break
			}
		}
		if v.streams && (streamed == "0" || streamed == "") || !v.streams && streamed != "0" && streamed != "" {
			t.Errorf("%s: the server streamed %q transactions", v.name, streamed)
		}
		t.Logf("%s: %d events, %s transactions streamed by the server", v.name, len(rendered[i]), streamed)
	}
}

// firstDiff is the first index where a and b differ, or -1.
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestPostgresKill9StreamedTransaction SIGKILLs the worker twice around
// transactions the server streams while in progress
// (logical_decoding_work_mem 64kB): once when part of an open transaction
// is buffered in the task, once while a committed large transaction is
// being emitted. Each time the slot's confirmed_flush_lsn is not ahead of
// the committed offsets, and after restarts every row has its create
// event.
func TestPostgresKill9StreamedTransaction(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t, harness.WithPostgresSetting("logical_decoding_work_mem", "64kB"))
	id := pgID("skill")
	slot := "slot_" + id
	pg.Exec(t, `CREATE TABLE big (id int PRIMARY KEY, v text NOT NULL)`)
	group := "pgskill"
	bootstrap, r, w, restart := startWorker(t, group, map[string]string{"offset.flush.interval.ms": "300"})
	cfg := pgConnectorConfig(pg, id, "public.big")
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	ow := newOffsetWatcher(t, bootstrap, group+"-offsets", "pg", id)
	checkSlot := func(when string) {
		flush := slotFlushLSN(t, pg, slot)
		ow.catchUp()
		if c := ow.committedLSN(); flush > c && c != 0 {
			t.Errorf("%s: the slot confirmed %d but the committed offsets only reach %d", when, flush, c)
		}
	}
	streamed := func() int {
		n, _ := strconv.Atoi(pgScalar(t, pg, fmt.Sprintf(`SELECT stream_txns::text FROM pg_stat_replication_slots WHERE slot_name = '%s'`, slot)))
		return n
	}
	ctx := context.Background()
	conn := pgConn(t, pg)
	run := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	ins := func(from, to int) string {
		return fmt.Sprintf(`INSERT INTO big SELECT i, repeat('y', 100) || i FROM generate_series(%d, %d) i`, from, to)
	}
	er := newEventReader(t, bootstrap, id+".public.big")
	er.diag = r.statusOf("pg")

	// 1: kill while an open transaction's first part is buffered.
	run(ins(1, 100)) // a small one first, so that offsets exist
	er.until(60*time.Second, "the first rows", func(es []cdcEvent) bool { return len(es) >= 100 })
	// Once they are committed: without a committed offset the restarted
	// task would rightly start afresh, with a snapshot (reads, not
	// creates), which happened in CI when the kill came 260 ms after the
	// stream began (offsets are flushed every 300 ms).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ow.catchUp(); ow.committedLSN() != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no offset of the stream committed after 30s")
		}
	}
	run("BEGIN")
	run(ins(101, 5000))
	for deadline := time.Now().Add(30 * time.Second); streamed() == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server streamed nothing of the open transaction")
		}
	}
	checkSlot("before the first kill")
	w.Kill()
	t.Logf("worker SIGKILL with part of an open transaction buffered (%d events read)", len(er.got))
	run(ins(5001, 10000))
	run("COMMIT")
	checkSlot("after the first kill")
	w = restart()
	r = rest{t, w.URL()}
	er.diag = r.statusOf("pg")

	// 2: kill while a committed large transaction is emitted.
	run("BEGIN")
	run(ins(10001, 40000))
	run("COMMIT")
	n0 := len(er.got)
	er.until(90*time.Second, "the last transaction's first events", func(es []cdcEvent) bool {
		for _, e := range es[n0:] {
			if n, _ := strconv.Atoi(fmt.Sprint(e.key["id"])); n > 10000 {
				return true
			}
		}
		return false
	})
	checkSlot("before the second kill")
	w.Kill()
	t.Logf("worker SIGKILL while a committed streamed transaction was emitted (%d events read)", len(er.got))
	checkSlot("after the second kill")
	w = restart()
	r = rest{t, w.URL()}
	er.diag = r.statusOf("pg")
	run(ins(99999, 99999))

	seen := map[string]bool{}
	done := 0
	const total = 40000 + 1
	events := er.until(3*time.Minute, "every row", func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			if e.op() == "c" {
				seen[keyString(e.key)] = true
			}
		}
		done = len(es)
		return len(seen) >= total
	})
	for i := 1; i <= 40000; i++ {
		if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
			t.Fatalf("row %d has no create event after the kills", i)
		}
	}
	checkSlot("at the end")
	t.Logf("no change lost: %d rows, %d events (%d duplicates), %d transactions streamed by the server", total, len(events), len(events)-total, streamed())
}

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/integration/harness"
)

// Incremental snapshots and signals of the Postgres source, against a real
// PostgreSQL and a real worker process.

// signalTableSQL creates Debezium's signal table.
const signalTableSQL = `CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))`

// pgIncrementalConfig is pgConnectorConfig streaming only (the tables are
// read by incremental snapshots), with the signal table.
func pgIncrementalConfig(pg *harness.Postgres, id, tables string) map[string]string {
	cfg := pgConnectorConfig(pg, id, tables)
	cfg["snapshot.mode"] = "no_data"
	cfg["signal.data.collection"] = "public.debezium_signal"
	return cfg
}

// logContains reports whether the worker's log holds s.
func logContains(path, s string) bool {
	b, _ := os.ReadFile(path)
	return strings.Contains(string(b), s)
}

// replay is a topic's events applied by key: the id column to the row's v
// column (as JSON text), deletes removing it.
type replay struct {
	rows  map[int64]string
	reads map[int64]int // incremental snapshot reads per id
	done  int           // events applied
}

func newReplay() *replay { return &replay{rows: map[int64]string{}, reads: map[int64]int{}} }

// apply applies the events of topic not applied yet.
func (r *replay) apply(t *testing.T, es []cdcEvent, topic string) {
	t.Helper()
	for _, e := range es[r.done:] {
		if e.topic != topic || e.value == nil {
			continue
		}
		id, err := e.key["id"].(json.Number).Int64()
		if err != nil {
			t.Fatalf("key %v: %v", e.key, err)
		}
		switch e.op() {
		case "r":
			src, _ := e.value["source"].(map[string]any)
			if src["snapshot"] != "incremental" {
				t.Fatalf("read event with source.snapshot %v, want incremental", src["snapshot"])
			}
			r.reads[id]++
			r.rows[id] = fmt.Sprint(e.row("after")["v"])
		case "c", "u":
			r.rows[id] = fmt.Sprint(e.row("after")["v"])
		case "d":
			delete(r.rows, id)
		}
	}
	r.done = len(es)
}

// dbRows reads id → v of a table.
func dbRows(t *testing.T, pg *harness.Postgres, table string) map[int64]string {
	t.Helper()
	return connRows(t, pgConn(t, pg), table)
}

// connRows reads id → v of a table through conn.
func connRows(t *testing.T, conn *pgx.Conn, table string) map[int64]string {
	t.Helper()
	rows, err := conn.Query(t.Context(), "SELECT id, v::text FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameReplayedRows compares the replayed rows with the table's, reporting the
// first differences.
func sameReplayedRows(t *testing.T, got, want map[int64]string) {
	t.Helper()
	bad := 0
	for id, v := range want {
		if g, ok := got[id]; !ok || g != v {
			if bad < 10 {
				t.Errorf("id %d: topic has %q (present %v), table has %q", id, g, ok, v)
			}
			bad++
		}
	}
	for id, v := range got {
		if _, ok := want[id]; !ok {
			if bad < 10 {
				t.Errorf("id %d: in the topic (%q), deleted from the table", id, v)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d rows differ between the topic replayed by key and the table (%d rows)", bad, len(want))
	}
}

// signal inserts a signal into the signal table.
func signal(t *testing.T, pg *harness.Postgres, id, typ, data string) {
	t.Helper()
	conn := pgConn(t, pg)
	if _, err := conn.Exec(t.Context(), "INSERT INTO debezium_signal VALUES ($1, $2, $3)", id, typ, data); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresIncrementalSnapshotSource snapshots a table through a signal
// of the source channel: every row arrives as a read event with
// source.snapshot=incremental; the watermarks are in the signal table's
// topic; malformed signals are logged and change nothing; log, pause and
// resume act.
func TestPostgresIncrementalSnapshotSource(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("incr")
	const rows = 5000
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE a (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO a SELECT i, i * 10 FROM generate_series(1, %d) i`, rows))
	bootstrap, r, w, _ := startWorker(t, "pgincr", nil)
	cfg := pgIncrementalConfig(pg, id, "public.a")
	cfg["incremental.snapshot.chunk.size"] = "700"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.a"
	er := newEventReader(t, bootstrap, topic, id+".public.debezium_signal")
	er.diag = func() string { return harnessTail(w.LogPath()) }
	// The stream runs (a change arrives) before any signal.
	pg.Exec(t, "UPDATE a SET v = -1 WHERE id = 1")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })

	// Malformed signals: a clear line in the log each, nothing snapshotted.
	signal(t, pg, "bad-1", "execute-snapshot", `{"data-collections": "public.a"}`)
	signal(t, pg, "bad-2", "execute-snapshot", `{"data-collections": ["public.a"], "type": "sideways"}`)
	signal(t, pg, "bad-3", "explode", `{}`)
	signal(t, pg, "bad-4", "execute-snapshot", `not json`)
	signal(t, pg, "log-1", "log", `{"message": "hello from the signal table"}`)
	for deadline := time.Now().Add(time.Minute); !logContains(w.LogPath(), "hello from the signal table"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log signal did not reach the log\n%s", harnessTail(w.LogPath()))
		}
	}
	for _, want := range []string{"data-collections must be an array of strings", `snapshot type \"sideways\" is neither`, `type \"explode\" is not a signal`, "not a JSON object of a signal"} {
		if !logContains(w.LogPath(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	for _, e := range er.got {
		if e.op() == "r" {
			t.Fatalf("a malformed signal started a snapshot: %v", e.value)
		}
	}

	signal(t, pg, "ad-hoc-1", "execute-snapshot", `{"data-collections": ["public\\.a"], "type": "incremental"}`)
	rp := newReplay()
	er.until(2*time.Minute, fmt.Sprintf("%d read events", rows), func(es []cdcEvent) bool {
		rp.apply(t, es, topic)
		return len(rp.reads) >= rows
	})
	sameReplayedRows(t, rp.rows, dbRows(t, pg, "a"))
	// The watermarks went through the signal table's topic, as
	// Debezium's do.
	var open, closed int
	for _, e := range er.got {
		if e.topic == id+".public.debezium_signal" && e.op() == "c" {
			switch e.row("after")["type"] {
			case "snapshot-window-open":
				open++
			case "snapshot-window-close":
				closed++
			}
		}
	}
	if open < rows/700 || closed < rows/700 {
		t.Errorf("%d open and %d close watermarks for %d chunks", open, closed, rows/700+1)
	}
	dups := 0
	for _, n := range rp.reads {
		dups += n - 1
	}
	t.Logf("%d rows read by the incremental snapshot (%d twice), %d windows", len(rp.reads), dups, closed)
	if !logContains(w.LogPath(), "incremental snapshot completed") {
		t.Error("the log does not say the incremental snapshot completed")
	}
}

// TestPostgresIncrementalSnapshotUnderLoad snapshots a 200k-row table
// while 50k changes stream into it (updates and deletes of rows the
// snapshot has and has not reached, inserts inside and beyond its key
// range): the topic replayed by key equals the table at the end, so no
// row's final state comes from a stale read.
func TestPostgresIncrementalSnapshotUnderLoad(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("incrload")
	const rows, changes = 200000, 50000
	pg.Exec(t, signalTableSQL)
	// Even ids: the odd ones inside the range are free for inserts.
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE big (id bigint PRIMARY KEY, v bigint NOT NULL, pad text NOT NULL);
		INSERT INTO big SELECT 2 * i, i, repeat('p', 40) FROM generate_series(1, %d) i; ANALYZE big`, rows))
	bootstrap, r, w, _ := startWorker(t, "pgincrload", nil)
	cfg := pgIncrementalConfig(pg, id, "public.big")
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.big"
	er := newEventReader(t, bootstrap, topic)
	er.diag = func() string { return harnessTail(w.LogPath()) }
	pg.Exec(t, "UPDATE big SET v = v + 1 WHERE id = 2")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })

	signal(t, pg, "load-1", "execute-snapshot", `{"data-collections": ["public.big"]}`)
	start := time.Now()
	// The workload, two connections, transactions of 10 changes: updates
	// (70%), deletes (15%), inserts of odd ids and of ids past the end
	// (15%), spread over the whole key range.
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := pgConn(t, pg)
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			next := int64(2*rows + 2 + g)
			for tx := 0; tx < changes/20; tx++ {
				var b strings.Builder
				b.WriteString("BEGIN;")
				for range 10 {
					k := 2 * (1 + rng.Int64N(rows))
					switch p := rng.IntN(100); {
					case p < 70:
						fmt.Fprintf(&b, "UPDATE big SET v = v + 1000000 WHERE id = %d;", k)
					case p < 85:
						fmt.Fprintf(&b, "DELETE FROM big WHERE id = %d;", k)
					case p < 93:
						fmt.Fprintf(&b, "INSERT INTO big VALUES (%d, %d, 'new') ON CONFLICT (id) DO UPDATE SET v = big.v + 7;", k+1, tx)
					default:
						fmt.Fprintf(&b, "INSERT INTO big VALUES (%d, %d, 'tail');", next, tx)
						next += 2
					}
				}
				b.WriteString("COMMIT;")
				if _, err := conn.Exec(context.Background(), b.String()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				done += 10
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	loadTime := time.Since(start)
	// The end: the snapshot completed and the stream caught up with a
	// last change.
	for deadline := time.Now().Add(5 * time.Minute); !logContains(w.LogPath(), "incremental snapshot completed"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the incremental snapshot did not complete\n%s", harnessTail(w.LogPath()))
		}
	}
	snapTime := time.Since(start)
	pg.Exec(t, "INSERT INTO big VALUES (1, -1, 'last')")
	rp := newReplay()
	er.until(5*time.Minute, "the last change", func(es []cdcEvent) bool {
		rp.apply(t, es, topic)
		_, ok := rp.rows[1]
		return ok
	})
	want := dbRows(t, pg, "big")
	sameReplayedRows(t, rp.rows, want)
	dups := 0
	for _, n := range rp.reads {
		dups += n - 1
	}
	t.Logf("%d changes in %v beside an incremental snapshot of %d rows that took %v (%.0f rows/s); %d rows read (%d twice), %d events, final table %d rows",
		done, loadTime.Round(time.Millisecond), rows, snapTime.Round(time.Millisecond), float64(rows)/snapTime.Seconds(), len(rp.reads), dups, len(er.got), len(want))
	if len(rp.reads) < rows/2 {
		t.Errorf("only %d rows came from the snapshot", len(rp.reads))
	}
}

// TestPostgresIncrementalSnapshotKill9 SIGKILLs the worker in the middle
// of an incremental snapshot: the restarted task reads on from the chunk
// after the last row whose offset was committed, not from the start, and
// every row arrives.
func TestPostgresIncrementalSnapshotKill9(t *testing.T) {
	t.Parallel()
	incrementalKill9(t, false)
}

// TestPostgresIncrementalSnapshotReadOnlyKill9 is the same with
// read.only=true (no watermarks; the signal through the file channel).
func TestPostgresIncrementalSnapshotReadOnlyKill9(t *testing.T) {
	t.Parallel()
	incrementalKill9(t, true)
}

func incrementalKill9(t *testing.T, readOnly bool) {
	pg := harness.StartPostgresT(t)
	id := pgID("incrkill")
	const rows = 200000
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE big (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO big SELECT i, i FROM generate_series(1, %d) i; ANALYZE big`, rows))
	group := "pgincrkill-" + id
	bootstrap, r, w, restart := startWorker(t, group, map[string]string{"offset.flush.interval.ms": "300"})
	cfg := pgIncrementalConfig(pg, id, "public.big")
	cfg["incremental.snapshot.chunk.size"] = "256"
	signalFile := filepath.Join(t.TempDir(), "signals.txt")
	if readOnly {
		cfg["read.only"] = "true"
		cfg["signal.enabled.channels"] = "file"
		cfg["signal.file"] = signalFile
		cfg["signal.poll.interval.ms"] = "100"
		delete(cfg, "signal.data.collection")
	}
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.big"
	er := newEventReader(t, bootstrap, topic)
	pg.Exec(t, "UPDATE big SET v = -2 WHERE id = 2")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })
	ow := newOffsetWatcher(t, bootstrap, group+"-offsets", "pg", id)
	if readOnly {
		if err := os.WriteFile(signalFile, []byte(`{"id":"kill-1","type":"execute-snapshot","data":{"data-collections":["public.big"]}}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		signal(t, pg, "kill-1", "execute-snapshot", `{"data-collections": ["public.big"]}`)
	}
	// The kill comes as soon as an offset inside the snapshot is
	// committed.
	var key string
	for deadline := time.Now().Add(time.Minute); key == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no offset inside the incremental snapshot was committed\n%s", harnessTail(w.LogPath()))
		}
		ow.catchUp()
		key, _ = ow.latest["incremental_snapshot_primary_key"].(string)
	}
	w.Kill()
	if logContains(w.LogPath(), "incremental snapshot completed") {
		t.Fatal("the incremental snapshot completed before the kill")
	}
	rp := newReplay()
	t.Logf("worker SIGKILL with the offsets committed up to key %s", key)
	pg.Exec(t, "UPDATE big SET v = -3 WHERE id = 3; DELETE FROM big WHERE id = 199999")
	w = restart()
	er.diag = func() string { return harnessTail(w.LogPath()) }
	er.until(3*time.Minute, "every row", func(es []cdcEvent) bool {
		rp.apply(t, es, topic)
		return len(rp.reads) >= rows-1 && rp.rows[3] == "-3"
	})
	for deadline := time.Now().Add(time.Minute); !logContains(w.LogPath(), "incremental snapshot completed"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the incremental snapshot did not complete after the restart\n%s", harnessTail(w.LogPath()))
		}
	}
	pg.Exec(t, "INSERT INTO big VALUES (0, 0)")
	er.until(time.Minute, "the last change", func(es []cdcEvent) bool {
		rp.apply(t, es, topic)
		_, ok := rp.rows[0]
		return ok
	})
	sameReplayedRows(t, rp.rows, dbRows(t, pg, "big"))
	if !logContains(w.LogPath(), "incremental snapshot in progress: reading the chunk after the last row sent") {
		b, _ := os.ReadFile(w.LogPath())
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "incremental") || strings.Contains(l, "offset") {
				t.Log(l)
			}
		}
		t.Error("the restarted task does not say it resumed the incremental snapshot")
	}
	again := 0
	for _, n := range rp.reads {
		again += n - 1
	}
	// What was read before the kill and not committed is read again; the
	// rest is not.
	var k []string
	if err := json.Unmarshal([]byte(key), &k); err != nil || len(k) != 1 {
		t.Fatalf("committed key %q", key)
	}
	committed, _ := strconv.ParseInt(k[0], 10, 64)
	for id, n := range rp.reads {
		if n > 1 && id <= committed {
			t.Fatalf("row %d, at or before the committed key %d, was read again: the snapshot did not resume after it", id, committed)
		}
	}
	if again > rows/4 {
		t.Errorf("%d rows read twice: the snapshot did not resume at its chunk", again)
	}
	t.Logf("resumed after key %s: %d rows read twice (those sent but not committed before the kill)", k[0], again)
}

// TestPostgresSignalChannels sends signals through the kafka and file
// channels, and snapshots a table added to table.include.list at runtime
// alone (publication.autocreate.mode=filtered adds it to the publication).
func TestPostgresSignalChannels(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("sigch")
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, `CREATE TABLE a (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO a SELECT i, i FROM generate_series(1, 3000) i;
		CREATE TABLE b (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO b SELECT i, -i FROM generate_series(1, 2000) i`)
	bootstrap, r, w, _ := startWorker(t, "pgsigch", nil)
	signalFile := filepath.Join(t.TempDir(), "signals.txt")
	cfg := pgIncrementalConfig(pg, id, "public.a")
	cfg["signal.enabled.channels"] = "source,kafka,file"
	cfg["signal.kafka.bootstrap.servers"] = bootstrap
	cfg["signal.kafka.groupId"] = "signals-" + id
	cfg["signal.file"] = signalFile
	cfg["signal.poll.interval.ms"] = "200"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	er := newEventReader(t, bootstrap, id+".public.a", id+".public.b")
	er.diag = func() string { return harnessTail(w.LogPath()) }
	pg.Exec(t, "UPDATE a SET v = 0 WHERE id = 1")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })

	// kafka: a signal for another connector is skipped; ours snapshots a.
	cl := newClient(t, bootstrap)
	if _, err := kadm.NewClient(cl).CreateTopic(t.Context(), 1, 1, nil, id+"-signal"); err != nil {
		t.Fatal(err)
	}
	produce := func(key, value string) {
		t.Helper()
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: id + "-signal", Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("someone-else", `{"type":"execute-snapshot","data":{"data-collections":["public.a"]}}`)
	produce(id, `{"type":"log","data":{"message":"hello through kafka"}}`)
	produce(id, `{"type":"execute-snapshot","data":{"data-collections":["public.a"],"type":"INCREMENTAL"}}`)
	ra := newReplay()
	er.until(2*time.Minute, "table a read", func(es []cdcEvent) bool {
		ra.apply(t, es, id+".public.a")
		return len(ra.reads) >= 3000
	})
	if !logContains(w.LogPath(), "hello through kafka") || !logContains(w.LogPath(), "its key is not this connector") {
		t.Errorf("the kafka channel's log signal or skipped record is not in the log")
	}

	// A table added at runtime: b joins table.include.list; the
	// publication follows; a file signal snapshots b alone.
	cfg["table.include.list"] = "public.a,public.b"
	r.must("PUT", "/connectors/pg/config", cfg, 200)
	for deadline := time.Now().Add(time.Minute); pgScalar(t, pg, fmt.Sprintf(
		`SELECT count(*)::text FROM pg_publication_tables WHERE pubname = 'pub_%s' AND tablename = 'b'`, id)) != "1"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("table b did not join the publication\n%s", harnessTail(w.LogPath()))
		}
	}
	r.waitState("pg", "RUNNING", 1)
	pg.Exec(t, "UPDATE b SET v = 100 WHERE id = 1")
	readsOfA := len(ra.reads)
	line := `{"id":"file-1","type":"execute-snapshot","data":{"data-collections":["public.b"],"type":"incremental"}}` + "\n" +
		`{"id":"file-bad","type":"execute-snapshot","data":{"data-collections":[42]}}` + "\n"
	if err := os.WriteFile(signalFile, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	rb := newReplay()
	er.until(2*time.Minute, "table b read", func(es []cdcEvent) bool {
		rb.apply(t, es, id+".public.b")
		return len(rb.reads) >= 2000
	})
	ra.apply(t, er.got, id+".public.a")
	for k, n := range ra.reads {
		if n > 1 {
			t.Fatalf("table a was read again (id %d) when only b was asked for", k)
		}
	}
	if len(ra.reads) != readsOfA {
		t.Fatalf("table a: %d rows read, %d before b's snapshot", len(ra.reads), readsOfA)
	}
	sameReplayedRows(t, rb.rows, dbRows(t, pg, "b"))
	if !logContains(w.LogPath(), "data-collections must be an array of strings") {
		t.Error("the malformed file signal is not in the log")
	}
	if b, _ := os.ReadFile(signalFile); len(b) != 0 {
		t.Errorf("the signal file was not emptied: %q", b)
	}
}

// waitLog waits until the worker's log holds s.
func waitLog(t *testing.T, w *harness.WorkerProcess, s string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !logContains(w.LogPath(), s); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker's log does not say %q\n%s", s, harnessTail(w.LogPath()))
		}
	}
}

// TestPostgresIncrementalSnapshotReadOnly snapshots with read.only=true
// (no signal table: the signal comes through the file channel, nothing is
// written to the database) while changes stream in: the topic replayed by
// key equals the table.
func TestPostgresIncrementalSnapshotReadOnly(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("incrro")
	const rows, changes = 50000, 10000
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE big (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO big SELECT 2 * i, i FROM generate_series(1, %d) i; ANALYZE big`, rows))
	bootstrap, r, w, _ := startWorker(t, "pgincrro", nil)
	signalFile := filepath.Join(t.TempDir(), "signals.txt")
	cfg := pgConnectorConfig(pg, id, "public.big")
	cfg["snapshot.mode"] = "no_data"
	cfg["read.only"] = "true"
	cfg["signal.enabled.channels"] = "file"
	cfg["signal.file"] = signalFile
	cfg["signal.poll.interval.ms"] = "100"
	cfg["incremental.snapshot.chunk.size"] = "500"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.big"
	er := newEventReader(t, bootstrap, topic)
	er.diag = func() string { return harnessTail(w.LogPath()) }
	pg.Exec(t, "UPDATE big SET v = v + 1 WHERE id = 2")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })
	if err := os.WriteFile(signalFile, []byte(`{"id":"ro-1","type":"execute-snapshot","data":{"data-collections":["public.big"]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := pgConn(t, pg)
	rng := rand.New(rand.NewPCG(7, 7))
	for tx := 0; tx < changes/10; tx++ {
		var b strings.Builder
		b.WriteString("BEGIN;")
		for range 10 {
			k := 2 * (1 + rng.Int64N(rows))
			switch p := rng.IntN(10); {
			case p < 7:
				fmt.Fprintf(&b, "UPDATE big SET v = v + 1000000 WHERE id = %d;", k)
			case p < 9:
				fmt.Fprintf(&b, "DELETE FROM big WHERE id = %d;", k)
			default:
				fmt.Fprintf(&b, "INSERT INTO big VALUES (%d, %d) ON CONFLICT (id) DO UPDATE SET v = big.v + 7;", k+1, tx)
			}
		}
		b.WriteString("COMMIT;")
		if _, err := conn.Exec(t.Context(), b.String()); err != nil {
			t.Fatal(err)
		}
	}
	waitLog(t, w, "incremental snapshot completed")
	pg.Exec(t, "INSERT INTO big VALUES (1, -1)")
	rp := newReplay()
	er.until(3*time.Minute, "the last change", func(es []cdcEvent) bool {
		rp.apply(t, es, topic)
		_, ok := rp.rows[1]
		return ok
	})
	sameReplayedRows(t, rp.rows, dbRows(t, pg, "big"))
	if n := pgScalar(t, pg, "SELECT count(*)::text FROM pg_stat_user_tables WHERE relname = 'debezium_signal'"); n != "0" {
		t.Errorf("a signal table exists")
	}
	t.Logf("read.only: %d rows read, %d events", len(rp.reads), len(er.got))
}

// TestPostgresIncrementalSnapshotControl: additional-conditions select the
// rows; the insert_delete watermarks leave the signal table empty; pause
// stops the chunks, resume goes on, stop ends the snapshot.
func TestPostgresIncrementalSnapshotControl(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("incrctl")
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, `CREATE TABLE a (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO a SELECT i, i FROM generate_series(1, 3000) i;
		CREATE TABLE big (id bigint PRIMARY KEY, v bigint NOT NULL);
		INSERT INTO big SELECT i, i FROM generate_series(1, 100000) i`)
	bootstrap, r, w, _ := startWorker(t, "pgincrctl", nil)
	cfg := pgIncrementalConfig(pg, id, "public.a,public.big")
	cfg["incremental.snapshot.watermarking.strategy"] = "insert_delete"
	cfg["incremental.snapshot.chunk.size"] = "50"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	er := newEventReader(t, bootstrap, id+".public.a", id+".public.big")
	er.diag = func() string { return harnessTail(w.LogPath()) }
	pg.Exec(t, "UPDATE a SET v = 0 WHERE id = 1")
	er.until(time.Minute, "the first change", func(es []cdcEvent) bool { return len(es) > 0 })

	// additional-conditions: only the rows with even v.
	signal(t, pg, "cond-1", "execute-snapshot", `{"data-collections": ["public.a"], "additional-conditions": [{"data-collection": "public.a", "filter": "v % 2 = 0"}]}`)
	waitLog(t, w, "incremental snapshot completed")
	ra := newReplay()
	er.until(time.Minute, "the even rows of a", func(es []cdcEvent) bool {
		ra.apply(t, es, id+".public.a")
		return len(ra.reads) >= 1500
	})
	for k := range ra.reads {
		if k%2 != 0 && k != 1 {
			t.Fatalf("row %d read despite the additional condition", k)
		}
	}
	if n := pgScalar(t, pg, "SELECT count(*)::text FROM debezium_signal WHERE type LIKE 'snapshot-window%'"); n != "0" {
		t.Errorf("%s watermark rows left with insert_delete", n)
	}

	// pause, resume, stop. Signals in one transaction act in order: an
	// execute-snapshot then a pause read one chunk; a resume then a pause
	// one more; a stop ends the snapshot, and a resume after it does
	// nothing.
	rb := newReplay()
	reads := func() int {
		time.Sleep(2 * time.Second) // what the connector had to send is sent by then
		// A change of big's last row marks the end (one partition: it
		// comes after what was sent before it).
		pg.Exec(t, "UPDATE big SET v = v + 1 WHERE id = 100000")
		n := len(er.got)
		er.until(time.Minute, "a marker change", func(es []cdcEvent) bool {
			for _, e := range es[n:] {
				if e.topic == id+".public.big" && e.op() == "u" {
					return true
				}
			}
			return false
		})
		rb.apply(t, er.got, id+".public.big")
		return len(rb.reads)
	}
	pg.Exec(t, `BEGIN; INSERT INTO debezium_signal VALUES ('big-1', 'execute-snapshot', '{"data-collections": ["public.big"]}');
		INSERT INTO debezium_signal VALUES ('pause-1', 'pause-snapshot', '{}'); COMMIT`)
	if n := reads(); n != 50 {
		b, _ := os.ReadFile(w.LogPath())
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "PostgresTask") {
				t.Log(l)
			}
		}
		t.Fatalf("%d rows read after execute and pause, want one chunk (50)", n)
	}
	pg.Exec(t, `BEGIN; INSERT INTO debezium_signal VALUES ('resume-1', 'resume-snapshot', '{}');
		INSERT INTO debezium_signal VALUES ('pause-2', 'pause-snapshot', '{"type": "incremental"}'); COMMIT`)
	if n := reads(); n != 100 {
		t.Fatalf("%d rows read after resume and pause, want two chunks (100)", n)
	}
	signal(t, pg, "stop-1", "stop-snapshot", `{"data-collections": ["public.big"], "type": "incremental"}`)
	waitLog(t, w, "incremental snapshot stopped")
	signal(t, pg, "resume-2", "resume-snapshot", `{}`)
	if n := reads(); n != 100 {
		t.Fatalf("%d rows read after stop and resume, want 100", n)
	}
	// A new snapshot after the stop runs to the end.
	signal(t, pg, "big-2", "execute-snapshot", `{"data-collections": ["public.big"]}`)
	er.until(2*time.Minute, "all of big", func(es []cdcEvent) bool {
		rb.apply(t, es, id+".public.big")
		return len(rb.reads) >= 100000
	})
}

// TestPostgresBlockingSnapshot: execute-snapshot with type blocking reads
// the table (with its additional condition) while the stream waits, as
// read events, then the stream goes on; a restart afterwards streams on
// (the snapshot's offsets are the stream's, not an unfinished initial
// snapshot's).
func TestPostgresBlockingSnapshot(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("blocking")
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, `CREATE TABLE c (id bigint PRIMARY KEY, v bigint NOT NULL); INSERT INTO c SELECT i, i FROM generate_series(1, 1000) i`)
	bootstrap, r, w, _ := startWorker(t, "pgblocking", nil)
	cfg := pgConnectorConfig(pg, id, "public.c")
	cfg["signal.data.collection"] = "public.debezium_signal"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.c"
	er := newEventReader(t, bootstrap, topic)
	er.diag = func() string { return harnessTail(w.LogPath()) }
	count := func(es []cdcEvent, op string) int {
		n := 0
		for _, e := range es {
			if e.op() == op {
				n++
			}
		}
		return n
	}
	er.until(time.Minute, "the initial snapshot", func(es []cdcEvent) bool { return count(es, "r") >= 1000 })
	signal(t, pg, "block-1", "execute-snapshot", `{"data-collections": ["public.c"], "type": "blocking", "additional-conditions": [{"data-collection": "public.c", "filter": "id <= 500"}]}`)
	pg.Exec(t, "UPDATE c SET v = -1 WHERE id = 1")
	es := er.until(time.Minute, "the blocking snapshot and the change after it", func(es []cdcEvent) bool { return count(es, "r") >= 1500 && count(es, "u") >= 1 })
	var markers []string
	for _, e := range es[1000:] {
		if e.op() == "r" {
			src, _ := e.value["source"].(map[string]any)
			if k, _ := e.key["id"].(json.Number).Int64(); k > 500 {
				t.Fatalf("row %d read despite the additional condition", k)
			}
			if m := fmt.Sprint(src["snapshot"]); len(markers) == 0 || markers[len(markers)-1] != m {
				markers = append(markers, m)
			}
		}
	}
	if markers[0] != "first" || markers[len(markers)-1] != "last" {
		t.Errorf("source.snapshot of the blocking snapshot's events: %v", markers)
	}
	waitLog(t, w, "blocking snapshot completed")
	// A restart streams on: nothing is read again.
	r.must("POST", "/connectors/pg/tasks/0/restart", nil, 204)
	time.Sleep(2 * time.Second)
	r.waitState("pg", "RUNNING", 1)
	pg.Exec(t, "UPDATE c SET v = -2 WHERE id = 2")
	es = er.until(time.Minute, "the change after the restart", func(es []cdcEvent) bool { return count(es, "u") >= 2 })
	if n := count(es, "r"); n != 1500 {
		t.Fatalf("%d read events after the restart, want 1500 (nothing read again)", n)
	}
	t.Logf("blocking snapshot: 500 rows read (markers %v), the stream went on, a restart read nothing again", markers)
}

// TestPostgresPartitionedTable: with publish.via.partition.root=true a
// partitioned table's rows and changes, in every partition and in one
// created while streaming, arrive under the root table's topic: by the
// initial snapshot, by streaming and by an incremental snapshot.
func TestPostgresPartitionedTable(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("parts")
	pg.Exec(t, signalTableSQL)
	pg.Exec(t, `CREATE TABLE m (id bigint, region text, v bigint NOT NULL, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
		CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu');
		CREATE TABLE m_us PARTITION OF m FOR VALUES IN ('us');
		INSERT INTO m SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END, i FROM generate_series(1, 1000) i`)
	bootstrap, r, w, _ := startWorker(t, "pgparts", nil)
	cfg := pgConnectorConfig(pg, id, "public.m")
	cfg["publish.via.partition.root"] = "true"
	cfg["signal.data.collection"] = "public.debezium_signal"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.m"
	er := newEventReader(t, bootstrap, topic, id+".public.m_eu", id+".public.m_us", id+".public.m_asia")
	er.diag = func() string { return harnessTail(w.LogPath()) }
	count := func(es []cdcEvent, op string) int {
		n := 0
		for _, e := range es {
			if e.op() == op && e.topic == topic {
				n++
			}
		}
		return n
	}
	er.until(time.Minute, "the snapshot of the partitioned table", func(es []cdcEvent) bool { return count(es, "r") >= 1000 })
	pg.Exec(t, `CREATE TABLE m_asia PARTITION OF m FOR VALUES IN ('asia');
		INSERT INTO m VALUES (2001, 'eu', 1), (2002, 'us', 2), (2003, 'asia', 3);
		UPDATE m SET v = -1 WHERE id = 2 AND region = 'eu'`)
	er.until(time.Minute, "the changes of every partition", func(es []cdcEvent) bool { return count(es, "c") >= 3 && count(es, "u") >= 1 })
	signal(t, pg, "parts-1", "execute-snapshot", `{"data-collections": ["public.m"]}`)
	es := er.until(time.Minute, "the incremental snapshot", func(es []cdcEvent) bool { return count(es, "r") >= 2003 })
	for _, e := range es {
		if e.topic != topic {
			t.Fatalf("an event under a partition's topic %s: %v", e.topic, e.value)
		}
	}
	regions := map[string]bool{}
	for _, e := range es {
		if e.op() == "c" {
			regions[fmt.Sprint(e.key["region"])] = true
		}
	}
	if len(regions) != 3 {
		t.Errorf("creates from the regions %v, want eu, us and asia", regions)
	}
}

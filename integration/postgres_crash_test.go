package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/plugins"
)

// offsetWatcher follows a worker's offsets topic and knows the latest
// committed offset of a source partition.
type offsetWatcher struct {
	t      *testing.T
	cl     *kgo.Client
	adm    *kadm.Client
	topic  string
	key    string
	latest map[string]any
	pos    map[int32]int64 // next offset to read per partition
}

func newOffsetWatcher(t *testing.T, bootstrap, topic, connector, server string) *offsetWatcher {
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	key, _ := json.Marshal([]any{connector, map[string]string{"server": server}})
	return &offsetWatcher{t: t, cl: cl, adm: kadm.NewClient(cl), topic: topic, key: string(key), pos: map[int32]int64{}}
}

// catchUp reads the offsets topic up to its end as of now.
func (w *offsetWatcher) catchUp() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := w.adm.ListEndOffsets(ctx, w.topic)
	if err != nil {
		w.t.Errorf("list offsets of %s: %v", w.topic, err)
		return
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	pos := w.pos
	done := func() bool {
		for p, e := range want {
			if e > 0 && pos[p] < e {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := w.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			w.t.Errorf("read %s: %v", w.topic, ctx.Err())
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if string(r.Key) != w.key {
				return
			}
			var m map[string]any
			d := json.NewDecoder(strings.NewReader(string(r.Value)))
			d.UseNumber()
			if r.Value != nil && d.Decode(&m) == nil {
				w.latest = m
			}
		})
	}
}

// committedLSN is the LSN the latest committed offset lets the slot
// confirm (lsn_commit, else lsn); 0 when none.
func (w *offsetWatcher) committedLSN() uint64 {
	for _, k := range []string{"lsn_commit", "lsn"} {
		if v, ok := w.latest[k].(json.Number); ok {
			n, _ := strconv.ParseUint(v.String(), 10, 64)
			return n
		}
	}
	return 0
}

// slotFlushLSN returns the slot's confirmed_flush_lsn (0 when missing).
func slotFlushLSN(t *testing.T, pg *harness.Postgres, slot string) uint64 {
	s := pgScalar(t, pg, fmt.Sprintf(`SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '%s'
		UNION ALL SELECT NULL LIMIT 1`, slot))
	if s == "" {
		return 0
	}
	l, err := pglogrepl.ParseLSN(s)
	if err != nil {
		t.Fatalf("slot LSN %q: %v", s, err)
	}
	return uint64(l)
}

// workerChildren returns the pids of the worker's child processes (a child
// is listed under the thread that started it).
func workerChildren(workerPid int) []int {
	var pids []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", workerPid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", workerPid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// pluginChild returns the pid of a plugin process of the worker that runs
// the executable of the connector family (postgres, mongodb, s3, basic), or
// 0.
func pluginChild(workerPid int, family string) int {
	for _, pid := range workerChildren(workerPid) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmd), plugins.BuiltinPrefix+family) {
			return pid
		}
	}
	return 0
}

// TestPostgresKill9 streams a steady flow of transactions through the
// Postgres source while the worker is SIGKILLed twice and the plugin
// process once. Throughout, the slot's confirmed_flush_lsn is sampled and
// checked against the offsets the worker committed: it is never ahead. At
// the end every inserted row has its create event (duplicates allowed,
// nothing missing).
func TestPostgresKill9(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin process")
	}
	pg := harness.StartPostgresT(t)
	id := pgID("kill")
	pg.Exec(t, `CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL)`)
	group := "pgkill"
	bootstrap, r, w, restart := startWorker(t, group, map[string]string{"offset.flush.interval.ms": "300"})
	cfg := pgConnectorConfig(pg, id, "public.ledger")
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)

	// The workload: transactions of 1 to 9 rows, about 300 rows/s.
	load := startLedgerLoad(t, pg)

	// The sampler: the slot never confirms past the committed offsets.
	ow := newOffsetWatcher(t, bootstrap, group+"-offsets", "pg", id)
	samplerStop, samplerDone := make(chan struct{}), make(chan struct{})
	var samples, violations int
	var maxFlush uint64
	go func() {
		defer close(samplerDone)
		for {
			select {
			case <-samplerStop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			flush := slotFlushLSN(t, pg, "slot_"+id) // first the slot, then what was committed since
			ow.catchUp()
			committed := ow.committedLSN()
			samples++
			maxFlush = max(maxFlush, flush)
			if flush > committed && committed != 0 {
				violations++
				t.Errorf("slot confirmed %s but the committed offsets only reach %s", pglogrepl.LSN(flush), pglogrepl.LSN(committed))
			}
		}
	}()

	topic := id + ".public.ledger"
	er := newEventReader(t, bootstrap, topic)
	wait := func(n int) {
		er.until(90*time.Second, fmt.Sprintf("%d rows", n), func(es []cdcEvent) bool { return len(es) >= n })
	}
	wait(500)
	for k := 1; k <= 2; k++ {
		w.Kill()
		t.Logf("worker SIGKILL %d: %d events read so far", k, len(er.got))
		time.Sleep(500 * time.Millisecond)
		w = restart()
		r = rest{t, w.URL()}
		wait(len(er.got) + 500)
	}
	// The plugin process alone.
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pid = pluginChild(w.Pid(), "postgres")
	}
	if pid == 0 {
		t.Fatal("no plugin process under the worker")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	trace := r.waitFailed("pg")
	t.Logf("plugin SIGKILL (pid %d): failed: %.100s", pid, trace)
	r.must("POST", "/connectors/pg/restart?includeTasks=true&onlyFailed=true", nil, 202)
	r.waitState("pg", "RUNNING", 1)
	wait(len(er.got) + 500)

	n := load.end()
	close(samplerStop)
	<-samplerDone
	seen := map[string]bool{}
	done := 0
	events := er.until(2*time.Minute, fmt.Sprintf("all %d rows", n), func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			if e.op() == "c" {
				seen[keyString(e.key)] = true
			}
		}
		done = len(es)
		return len(seen) >= n
	})
	missing := 0
	for i := 0; i < n; i++ {
		if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d rows have no create event after the kills", missing, n)
	}
	if samples < 10 || maxFlush == 0 {
		t.Errorf("only %d samples of the slot, highest confirmed %s: the check saw too little", samples, pglogrepl.LSN(maxFlush))
	}
	t.Logf("no change lost: %d rows, %d events (%d duplicates); %d samples of the slot, never ahead of the committed offsets (%d violations), last confirmed %s",
		n, len(events), len(events)-n, samples, violations, pglogrepl.LSN(maxFlush))
}

// TestPostgresSnapshotKill9 SIGKILLs the worker during a parallel,
// chunked snapshot; the restarted task follows snapshot.mode=initial: the
// snapshot was not complete, so it starts again from a new slot, and every
// row arrives.
func TestPostgresSnapshotKill9(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("snapkill")
	const rows = 40000
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE big (id int PRIMARY KEY, payload text NOT NULL);
		INSERT INTO big SELECT i, repeat('x', 100) FROM generate_series(1, %d) i;
		CREATE TABLE small (id int PRIMARY KEY);
		INSERT INTO small SELECT generate_series(1, 100)`, rows))
	bootstrap, r, w, restart := startWorker(t, "pgsnapkill", map[string]string{"offset.flush.interval.ms": "200"})
	cfg := pgConnectorConfig(pg, id, "public.big,public.small")
	cfg["snapshot.max.threads"] = "2"
	cfg["snapshot.fetch.size"] = "1000"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	er := newEventReader(t, bootstrap, id+".public.big")
	er.until(time.Minute, "the first snapshot rows", func(es []cdcEvent) bool { return len(es) >= 4000 })
	w.Kill()
	before := len(er.got)
	if before >= rows {
		t.Fatalf("the snapshot completed (%d rows) before the kill", before)
	}
	t.Logf("worker SIGKILL during the snapshot, %d of %d rows read", before, rows)
	w = restart()
	_ = w
	seen := map[string]bool{}
	done := 0
	er.until(3*time.Minute, fmt.Sprintf("all %d rows", rows), func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			if e.op() == "r" {
				seen[keyString(e.key)] = true
			}
		}
		done = len(es)
		return len(seen) >= rows
	})
	slots := pgScalar(t, pg, "SELECT count(*)::text FROM pg_replication_slots")
	if slots != "1" {
		t.Errorf("%s replication slots after the restarted snapshot, want 1", slots)
	}
	t.Logf("all %d rows read after the restart (%d events, %d read twice)", rows, len(er.got), len(er.got)-rows)
}

// TestPostgresSurvivesServerCrash kills PostgreSQL itself (every server
// process, SIGKILL) while transactions stream through the source, keeps it
// down for 4 s, and starts it again (crash recovery, same port and data):
// the task reconnects by itself, never fails, and every row the table
// holds at the end has its create event (the table is the truth: a
// transaction whose commit the crash cut off may or may not be there).
func TestPostgresSurvivesServerCrash(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("crash")
	pg.Exec(t, `CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL)`)
	bootstrap, r, _, _ := startWorker(t, "pgcrash", map[string]string{"offset.flush.interval.ms": "300"})
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": pgConnectorConfig(pg, id, "public.ledger")}, 201)
	r.waitState("pg", "RUNNING", 1)

	// The workload: transactions of 1 to 9 rows; through the outage it
	// reconnects and goes on (ON CONFLICT: a retried transaction may have
	// committed before the crash).
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	var failedTx int
	go func() {
		defer close(loadDone)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		next := 0
		for tx := 0; ; tx++ {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			if conn == nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				c, err := pg.Connect(ctx)
				cancel()
				if err != nil {
					continue
				}
				conn = c
			}
			k := tx%9 + 1
			sql := fmt.Sprintf(`INSERT INTO ledger SELECT i, 'v' || i FROM generate_series(%d, %d) i ON CONFLICT DO NOTHING`, next, next+k-1)
			if _, err := conn.Exec(context.Background(), sql); err != nil {
				failedTx++
				conn.Close(context.Background())
				conn = nil
				continue // the same rows again
			}
			next += k
		}
	}()

	er := newEventReader(t, bootstrap, id+".public.ledger")
	creates := func(es []cdcEvent) map[string]bool {
		seen := map[string]bool{}
		for _, e := range es {
			if e.op() == "c" {
				seen[keyString(e.key)] = true
			}
		}
		return seen
	}
	er.until(60*time.Second, "300 rows", func(es []cdcEvent) bool { return len(es) >= 300 })
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL killed after %d events", len(er.got))
	time.Sleep(4 * time.Second)
	if err := pg.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Log("PostgreSQL restarted (crash recovery)")
	before := len(er.got)
	er.until(90*time.Second, "rows after the restart", func(es []cdcEvent) bool { return len(es) >= before+300 })
	close(stop)
	<-loadDone

	var n int
	if err := pgConn(t, pg).QueryRow(context.Background(), `SELECT count(*) FROM ledger`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	events := er.until(2*time.Minute, fmt.Sprintf("all %d rows", n), func(es []cdcEvent) bool { return len(creates(es)) >= n })
	seen := creates(events)
	rows, err := pgConn(t, pg).Query(context.Background(), `SELECT id FROM ledger`)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			t.Fatal(err)
		}
		if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
			missing++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if missing > 0 {
		t.Fatalf("%d of %d rows have no create event after the server crash", missing, n)
	}
	if s, _ := r.status("pg"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("task %s after the crash: %s", s.Tasks[0].State, s.Tasks[0].Trace)
	}
	t.Logf("no change lost: %d rows, %d events (%d duplicates), %d transactions cut off by the crash and retried", n, len(events), len(events)-n, failedTx)
}

// TestPostgresSnapshotServerCrash kills PostgreSQL itself (every server
// process, SIGKILL) while a parallel, chunked snapshot reads, and starts it
// again 3 s later. The snapshot's exported transaction died with the
// server; the task, as Debezium's, takes the snapshot again by itself (it
// retries until the server is back), from a new slot, and never goes
// FAILED; every row is read, and one slot is left.
func TestPostgresSnapshotServerCrash(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	id := pgID("snapcrash")
	const rows = 300000 // more than the worker's producer buffer holds: the crash comes while the task reads
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE big (id int PRIMARY KEY, payload text NOT NULL);
		INSERT INTO big SELECT i, repeat('x', 100) FROM generate_series(1, %d) i;
		CHECKPOINT`, rows))
	bootstrap, r, w, _ := startWorker(t, "pgsnapcrash", map[string]string{"offset.flush.interval.ms": "200"})
	cfg := pgConnectorConfig(pg, id, "public.big")
	cfg["snapshot.max.threads"] = "2"
	cfg["snapshot.fetch.size"] = "1000"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	er := newEventReader(t, bootstrap, id+".public.big")
	// The crash comes 0.4 s into the snapshot's reading, checked in the
	// worker's log. The reading takes about 6 s on a loaded 2-core
	// machine but was done within 1.5 s on a quiet one (200,000 rows at
	// over 130,000 rows/s), so the delay stays well under a second.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(harnessTail(w.LogPath()), `msg="snapshot started"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot started within a minute\n%s", harnessTail(w.LogPath()))
		}
	}
	time.Sleep(400 * time.Millisecond)
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(harnessTail(w.LogPath()), `msg="snapshot completed"`) {
		t.Fatal("the snapshot's reading completed before the crash")
	}
	t.Logf("PostgreSQL killed during the snapshot's reading")
	time.Sleep(3 * time.Second)
	if err := pg.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() { // what the task decided at each start
			b, _ := os.ReadFile(w.LogPath())
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "offset") || strings.Contains(l, "snapshot") || strings.Contains(l, "slot") || strings.Contains(l, "fail") {
					t.Log(l)
				}
			}
		}
	})
	seen := map[string]bool{}
	done := 0
	var checked time.Time
	er.until(3*time.Minute, fmt.Sprintf("all %d rows", rows), func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			if e.op() == "r" {
				seen[keyString(e.key)] = true
			}
		}
		done = len(es)
		if time.Since(checked) > time.Second {
			checked = time.Now()
			if s, _ := r.status("pg"); len(s.Tasks) == 1 && s.Tasks[0].State == "FAILED" {
				t.Fatalf("the task failed instead of taking the snapshot again: %.300s", s.Tasks[0].Trace)
			}
		}
		return len(seen) >= rows
	})
	if b, _ := os.ReadFile(w.LogPath()); !strings.Contains(string(b), "taking it again from a new slot") {
		t.Errorf("the worker log does not say that the snapshot was taken again")
	}
	if slots := pgScalar(t, pg, "SELECT count(*)::text FROM pg_replication_slots"); slots != "1" {
		t.Errorf("%s replication slots after the snapshot was taken again, want 1", slots)
	}
	t.Logf("all %d rows read after the crash (%d events, %d read twice)", rows, len(er.got), len(er.got)-rows)
}

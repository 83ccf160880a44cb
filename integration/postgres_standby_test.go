package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPostgresStandbyDecoding: logical decoding on a standby (PostgreSQL
// 16 and later). A PostgreSQL 17 primary and a physical standby with
// hot_standby_feedback=on; the publication is created on the primary and
// reaches the standby through replication. The connector, pointed at the
// standby alone, first refuses publication.autocreate.mode other than
// disabled (validation and creation, saying what to do); with disabled
// it creates its slot on the standby, snapshots the table there and
// streams what the primary commits (inserts, updates, deletes in
// transactions of several rows): the topic replayed by key equals the
// primary's table at the end, every snapshot row arrives once, and the
// slot is the standby's, not the primary's.
func TestPostgresStandbyDecoding(t *testing.T) {
	t.Parallel()
	requirePG17Image(t)
	id := pgID("standby")
	primary, standby := pg17Pair(t, id, nil, "")
	const initial = 5000
	primary.psql(t, fmt.Sprintf(`CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL);
		INSERT INTO ledger SELECT i, 'v' || i FROM generate_series(1, %d) i;
		CREATE PUBLICATION pub_%s FOR TABLE ledger`, initial, id))
	for deadline := time.Now().Add(time.Minute); standby.psql(t, fmt.Sprintf(`SELECT count(*) FROM pg_publication WHERE pubname = 'pub_%s'`, id)) != "1"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the publication did not reach the standby")
		}
	}
	if r := standby.psql(t, "SELECT pg_is_in_recovery()"); r != "t" {
		t.Fatalf("the standby is not in recovery: %q", r)
	}

	bootstrap, r, w, _ := startWorker(t, "pgstandby", map[string]string{"offset.flush.interval.ms": "300"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "pg")
	cfg := map[string]string{
		"name":                        "pg",
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":           "127.0.0.1",
		"database.port":               standby.port,
		"database.user":               "postgres",
		"database.password":           "pw",
		"database.dbname":             "postgres",
		"database.sslmode":            "disable",
		"topic.prefix":                id,
		"table.include.list":          "public.ledger",
		"slot.name":                   "slot_" + id,
		"publication.name":            "pub_" + id,
		"publication.autocreate.mode": "filtered",
		"heartbeat.interval.ms":       "500",
	}

	// Asked to create or change the publication on a standby: refused,
	// saying what to do, and nothing is created.
	n, errs := r.validateErrors(cfg)
	if n == 0 || !strings.Contains(strings.Join(errs["publication.autocreate.mode"], " "), "publication.autocreate.mode=disabled") {
		t.Fatalf("validation on a standby with publication.autocreate.mode=filtered: %d errors %v", n, errs)
	}
	body := r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 400)
	if !strings.Contains(string(body), "Create it on the primary") {
		t.Fatalf("creating the connector on a standby with publication.autocreate.mode=filtered: %s", body)
	}
	if got := standby.psql(t, "SELECT count(*) FROM pg_replication_slots"); got != "0" {
		t.Fatalf("a refused connector left %s slots on the standby", got)
	}

	// The publication from the primary: the connector runs on the standby.
	cfg["publication.autocreate.mode"] = "disabled"
	if n, errs := r.validateErrors(cfg); n != 0 {
		t.Fatalf("validation on a standby: %v", errs)
	}
	// Creating a slot on a standby waits for the primary to log its
	// running transactions (every 15 s while it is busy, or on demand).
	standbySnapshots := make(chan struct{})
	go func() {
		for {
			select {
			case <-standbySnapshots:
				return
			case <-time.After(300 * time.Millisecond):
				_ = pgExec(primary, "SELECT pg_log_standby_snapshot()")
			}
		}
	}()
	begin := time.Now()
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	topic := id + ".public.ledger"
	er := newEventReader(t, bootstrap, topic)
	er.diag = func() string { return harnessTail(w.LogPath()) }
	er.until(2*time.Minute, "the snapshot", func(es []cdcEvent) bool { return len(es) >= initial })
	close(standbySnapshots)
	t.Logf("slot created and %d rows snapshotted through the standby in %v", initial, time.Since(begin).Round(time.Millisecond))
	if got := standby.psql(t, fmt.Sprintf(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_%s' AND slot_type = 'logical'`, id)); got != "1" {
		t.Fatalf("no logical slot on the standby: %s", got)
	}
	if got := primary.psql(t, fmt.Sprintf(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_%s'`, id)); got != "0" {
		t.Fatalf("the slot is on the primary too: %s", got)
	}

	// A stream of changes on the primary: 600 transactions of inserts,
	// updates and deletes.
	conn, err := pgx.Connect(t.Context(), primary.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))
	next := int64(initial + 1)
	for tx := range 600 {
		b := &pgx.Batch{}
		for range 1 + rng.IntN(5) {
			switch k := rng.IntN(10); {
			case k < 5:
				b.Queue("INSERT INTO ledger VALUES ($1, $2)", next, fmt.Sprintf("new%d", tx))
				next++
			case k < 8:
				b.Queue("UPDATE ledger SET v = $2 WHERE id = $1", 1+rng.Int64N(next-1), fmt.Sprintf("upd%d", tx))
			default:
				b.Queue("DELETE FROM ledger WHERE id = $1", 1+rng.Int64N(next-1))
			}
		}
		if err := conn.SendBatch(t.Context(), b).Close(); err != nil {
			t.Fatal(err)
		}
	}
	var lsn string
	if err := conn.QueryRow(t.Context(), "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	want := connRows(t, conn, "ledger")

	// Replayed by key, the topic equals the primary's table.
	rows := map[int64]string{}
	reads := map[int64]int{}
	done := 0
	replay := func(es []cdcEvent) {
		for _, e := range es[done:] {
			if e.value == nil {
				continue
			}
			id, err := e.key["id"].(json.Number).Int64()
			if err != nil {
				t.Fatalf("key %v: %v", e.key, err)
			}
			switch e.op() {
			case "r":
				reads[id]++
				rows[id] = fmt.Sprint(e.row("after")["v"])
			case "c", "u":
				rows[id] = fmt.Sprint(e.row("after")["v"])
			case "d":
				delete(rows, id)
			}
		}
		done = len(es)
	}
	er.until(2*time.Minute, "the primary's changes", func(es []cdcEvent) bool {
		replay(es)
		if len(rows) != len(want) {
			return false
		}
		for id, v := range want {
			if rows[id] != v {
				return false
			}
		}
		return true
	})
	sameReplayedRows(t, rows, want)
	for i := int64(1); i <= initial; i++ {
		if reads[i] != 1 {
			t.Fatalf("snapshot row %d read %d times", i, reads[i])
		}
	}
	if s, _ := r.status("pg"); len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
		t.Fatalf("the task is not running: %+v", s)
	}
	t.Logf("%d events through the standby's slot; the primary at %s, the standby replayed %s", len(er.got), lsn,
		standby.psql(t, "SELECT pg_last_wal_replay_lsn()"))
}

// pgExec runs SQL on a container's server, returning the error.
func pgExec(c pgContainer, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

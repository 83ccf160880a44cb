package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors/postgres"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
)

// taskCtx is a source task's runtime for tests that drive the task
// directly: it serves one stored offset.
type taskCtx struct {
	t      *testing.T
	offset sdk.Offset
}

func (c *taskCtx) Info() sdk.TaskInfo { return sdk.TaskInfo{Connector: "modes"} }
func (c *taskCtx) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{c.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
func (c *taskCtx) Offset(context.Context, sdk.Partition) (sdk.Offset, error) { return c.offset, nil }
func (c *taskCtx) Offsets(_ context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	out := make([]sdk.Offset, len(ps))
	for i := range out {
		out[i] = c.offset
	}
	return out, nil
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// runTask opens a task with cfg and the stored offset, reads until want
// events with a value arrived (or, with want 0, for a second), commits the
// last offset (OffsetsCommitted, as the worker does), closes it, and
// returns the ops read and the last offset (JSON round-tripped).
func runTask(t *testing.T, cfg map[string]string, offset sdk.Offset, want int) ([]string, sdk.Offset) {
	t.Helper()
	task, err := postgres.Connector().(sdk.SourcePlugin).NewSourceTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := task.Open(ctx, &taskCtx{t: t, offset: offset}); err != nil {
		task.Close(ctx)
		t.Fatalf("open: %v", err)
	}
	var ops []string
	var last sdk.SourceRecord
	deadline := time.Now().Add(30 * time.Second)
	if want == 0 {
		deadline = time.Now().Add(time.Second)
	}
	for (want == 0 || len(ops) < want) && time.Now().Before(deadline) {
		pctx, cancel := context.WithDeadline(ctx, deadline)
		recs, err := task.Poll(pctx, 100)
		cancel()
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		for _, r := range recs {
			if r.Value != nil && r.Topic != "" {
				v := r.Value.(interface{ Get(string) any })
				ops = append(ops, fmt.Sprint(v.Get("op")))
			}
			last = r
		}
	}
	if want > 0 && len(ops) < want {
		t.Fatalf("read %v, want %d events", ops, want)
	}
	if last.Offset != nil {
		task.(sdk.OffsetsCommitter).OffsetsCommitted(ctx, []sdk.SourceOffset{{Partition: last.Partition, Offset: last.Offset}})
		time.Sleep(300 * time.Millisecond) // the stream confirms it
	}
	if err := task.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	var round sdk.Offset
	b, _ := json.Marshal(last.Offset)
	json.Unmarshal(b, &round)
	if round == nil {
		round = offset
	}
	return ops, round
}

// TestPostgresSnapshotModes drives the task through restarts under each
// snapshot.mode and checks what it reads: initial snapshots once then
// streams; always snapshots at each start; no_data never; initial_only
// snapshots and stops; when_needed snapshots again when the slot is gone;
// initial refuses to go on without its slot; slot.drop.on.stop drops it.
func TestPostgresSnapshotModes(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE m (id int PRIMARY KEY); INSERT INTO m SELECT generate_series(1, 3)`)
	mk := func(id, mode string) map[string]string {
		c := pgConnectorConfig(pg, id, "public.m")
		c["snapshot.mode"] = mode
		c["status.update.interval.ms"] = "100"
		return c
	}
	equal := func(what string, got []string, want ...string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: read %v, want %v", what, got, want)
		}
	}

	// initial: snapshot, then stream; the restart streams from the offset.
	cfg := mk("initial", "initial")
	ops, off := runTask(t, cfg, nil, 3)
	equal("initial, first start", ops, "r", "r", "r")
	pg.Exec(t, `INSERT INTO m VALUES (4)`)
	ops, off = runTask(t, cfg, off, 1)
	equal("initial, restart", ops, "c")
	pg.Exec(t, `INSERT INTO m VALUES (5)`)
	ops, _ = runTask(t, cfg, off, 1)
	equal("initial, second restart", ops, "c")

	// always: a snapshot at every start.
	cfg = mk("always", "always")
	_, off = runTask(t, cfg, nil, 5)
	ops, _ = runTask(t, cfg, off, 5)
	equal("always, restart", ops, "r", "r", "r", "r", "r")

	// no_data: the slot's changes only.
	cfg = mk("nodata", "no_data")
	ops, off = runTask(t, cfg, nil, 0)
	equal("no_data, first start", ops)
	pg.Exec(t, `INSERT INTO m VALUES (6)`)
	ops, _ = runTask(t, cfg, off, 1)
	equal("no_data, restart", ops, "c")

	// initial_only: a snapshot, then nothing; no slot is left behind.
	cfg = mk("only", "initial_only")
	ops, off = runTask(t, cfg, nil, 6)
	equal("initial_only", ops, "r", "r", "r", "r", "r", "r")
	ops, _ = runTask(t, cfg, off, 0)
	equal("initial_only, restart", ops)
	if n := pgScalar(t, pg, "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = 'slot_only'"); n != "0" {
		t.Errorf("initial_only left its slot")
	}

	// when_needed: the slot is gone, so a new snapshot.
	cfg = mk("needed", "when_needed")
	_, off = runTask(t, cfg, nil, 6)
	pg.Exec(t, `SELECT pg_drop_replication_slot('slot_needed')`)
	ops, _ = runTask(t, cfg, off, 6)
	equal("when_needed, slot dropped", ops, "r", "r", "r", "r", "r", "r")

	// initial without its slot: a clear error, not a silent gap.
	cfg = mk("gone", "initial")
	_, off = runTask(t, cfg, nil, 6)
	pg.Exec(t, `SELECT pg_drop_replication_slot('slot_gone')`)
	task, _ := postgres.Connector().(sdk.SourcePlugin).NewSourceTask(cfg)
	err := task.Open(context.Background(), &taskCtx{t: t, offset: off})
	task.Close(context.Background())
	if err == nil {
		t.Error("initial with its slot dropped opened without an error")
	} else {
		t.Logf("initial without its slot: %v", err)
	}

	// slot.drop.on.stop.
	cfg = mk("dropped", "no_data")
	maps.Copy(cfg, map[string]string{"slot.drop.on.stop": "true"})
	runTask(t, cfg, nil, 0)
	if n := pgScalar(t, pg, "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name = 'slot_dropped'"); n != "0" {
		t.Errorf("slot.drop.on.stop=true left the slot")
	}
}

// TestPostgresReconnect terminates the task's walsender on the server twice
// while changes stream: the task reconnects by itself, resumes after the
// last record it handed out, and no change is missing.
func TestPostgresReconnect(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE r (id int PRIMARY KEY)`)
	task := openTask(t, pgConnectorConfig(pg, "reconn", "public.r"))
	ctx := context.Background()
	const total = 3000
	conn := pgConn(t, pg)
	go func() {
		for i := 0; i < total; i += 10 {
			if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO r SELECT generate_series(%d, %d)`, i, i+9)); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	seen := map[string]bool{}
	kills := 0
	deadline := time.Now().Add(2 * time.Minute)
	for len(seen) < total && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		recs, err := task.Poll(pctx, 500)
		cancel()
		if err != nil && !sdk.IsRetriable(err) {
			t.Fatalf("poll after %d rows: %v", len(seen), err)
		}
		for _, r := range recs {
			if r.Key != nil {
				seen[fmt.Sprint(r.Key)] = true
			}
		}
		if kills < 2 && len(seen) > (kills+1)*total/3 {
			kills++
			n := pgScalar(t, pg, `SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_replication WHERE application_name = 'tributary-slot_reconn'`)
			t.Logf("terminated %s walsender(s) after %d rows", n, len(seen))
		}
	}
	if len(seen) < total {
		t.Fatalf("%d of %d rows after the walsender was terminated %d times", len(seen), total, kills)
	}
}

// TestPostgresRetriesBounded: with errors.max.retries=2 and the server gone
// for good, the task tries to reconnect twice (Retriable errors, which the
// runtime retries) and then fails with the error that lost the stream.
func TestPostgresRetriesBounded(t *testing.T) {
	t.Parallel()
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE b (id int PRIMARY KEY)`)
	cfg := pgConnectorConfig(pg, "bounded", "public.b")
	cfg["errors.max.retries"] = "2"
	cfg["retriable.restart.connector.wait.ms"] = "500"
	task := openTask(t, cfg)
	ctx := context.Background()
	pg.Exec(t, `INSERT INTO b VALUES (1)`)
	for deadline := time.Now().Add(30 * time.Second); ; {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		recs, err := task.Poll(pctx, 10)
		cancel()
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(recs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no record within 30 s")
		}
	}
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	retried := 0
	for deadline := time.Now().Add(time.Minute); ; {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := task.Poll(pctx, 10)
		cancel()
		if err != nil && sdk.IsRetriable(err) {
			retried++
			continue
		}
		if err != nil {
			if retried != 2 {
				t.Fatalf("failed after %d retriable reconnection errors, want 2: %v", retried, err)
			}
			t.Logf("failed after %d reconnection attempts: %v", retried, err)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still polling a minute after the server went away (%d retriable errors)", retried)
		}
	}
}

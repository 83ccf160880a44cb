package integration

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/integration/harness"
)

// parquetFiles lists the Parquet files under dir (versitygw's POSIX
// backend keeps each object as a file).
func parquetFiles(dir string) map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out[p] = true
		}
		return nil
	})
	return out
}

// TestIcebergKill9 kills the worker (kill -9, with its plugin processes)
// 12 times while a steady CDC stream flows from PostgreSQL into an Iceberg
// table: half at random moments, half the instant a new Parquet file
// appears in the warehouse, before the catalog commit that would reference
// it. After each kill the worker restarts. In the end the table, read by
// Iceberg's Java library and by pyiceberg, equals the source table (no
// change lost, none applied twice: a duplicate id fails); every snapshot
// carries the sink's commit id and offsets that never go back (no partial
// or replayed commit is visible); and files the killed commits wrote are
// left unreferenced, which shows that kills landed between an upload and
// its commit.
func TestIcebergKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: kills a worker 12 times")
	}
	harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	harness.RequireIcebergJars(t)
	pg := harness.StartPostgresT(t)
	lake := newIcebergLake(t)
	pg.Exec(t, icebergOrdersDDL)
	conn := pgConn(t, pg)
	ctx := context.Background()
	var b pgx.Batch
	for id := int64(1); id <= 200; id++ {
		icebergRow(&b, id, 1)
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	bootstrap, r, w, restart := startWorker(t, "icekill", map[string]string{
		"offset.flush.interval.ms": "300", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000"})
	id := pgID("icekill")
	topic := id + ".public.orders"
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": icebergSource(pg, id)}, 201)
	r.waitState("src", "RUNNING", 1)
	sink := icebergSink(t, lake, topic, "shop.orders")
	sink["iceberg.control.commit.interval-ms"] = "300"
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": sink}, 201)
	r.waitState("lake", "RUNNING", 1)

	// The steady stream: a transaction every 15 ms of inserts, updates
	// and deletes, until stopped.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	wconn := pgConn(t, pg)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(5, 9))
		live := map[int64]int64{}
		for id := int64(1); id <= 200; id++ {
			live[id] = 1
		}
		next := int64(201)
		for !stop.Load() {
			var b pgx.Batch
			ids := slices.Collect(maps.Keys(live))
			id := ids[rng.IntN(len(ids))]
			switch k := rng.IntN(10); {
			case k < 4 || len(live) < 50:
				icebergRow(&b, next, 1)
				live[next] = 1
				next++
			case k < 9:
				live[id]++
				icebergUpdate(&b, id, live[id])
			default:
				b.Queue(`DELETE FROM orders WHERE id = $1`, id)
				delete(live, id)
			}
			if err := wconn.SendBatch(ctx, &b).Close(); err != nil {
				t.Errorf("workload: %v", err)
				return
			}
			time.Sleep(15 * time.Millisecond)
		}
	}()

	data := filepath.Join(lake.s3.Dir, lake.bucket, "warehouse")
	rng := rand.New(rand.NewPCG(11, 3))
	for kill := range 12 {
		if kill%2 == 0 {
			time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
		} else {
			// The instant a data file the worker is writing appears.
			before := parquetFiles(data)
			for deadline := time.Now().Add(30 * time.Second); ; {
				if len(parquetFiles(data)) > len(before) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("kill %d: no new data file in 30s\n%s", kill, r.statusOf("lake")())
				}
				time.Sleep(time.Millisecond)
			}
		}
		w.Kill()
		w = restart()
		r = rest{t, w.URL()}
	}
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}
	status := func() string {
		return r.statusOf("src")() + "\n" + r.statusOf("lake")() + "\n" + harnessTail(w.LogPath())
	}
	want := pgRows(t, conn, "SELECT * FROM orders")
	it := lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", want, "id", 180*time.Second, status)
	java := lake.readJava(t, "shop.orders")
	for _, got := range []*icebergTable{java, it} {
		if diffs := sameRows(want, got.Rows, "id"); len(diffs) > 0 {
			t.Errorf("after 12 kills, %s reads %d rows, the source has %d; differences:\n%v", got.ReadBy, len(got.Rows), len(want), diffs)
		}
	}

	// Every snapshot is one of the sink's commits, with offsets that only
	// move forward along the table's history.
	hist := lake.history(t, "shop.orders")
	var prev int64 = -1
	seen := map[string]bool{}
	for _, s := range hist {
		if s.Summary["kafka.connect.commit-id"] == "" || seen[s.Summary["kafka.connect.commit-id"]] {
			t.Errorf("snapshot %d: commit id %q missing or repeated", s.ID, s.Summary["kafka.connect.commit-id"])
		}
		seen[s.Summary["kafka.connect.commit-id"]] = true
		off := tableOffsets(t, s.Summary, topic, "connect-lake")[0]
		if off <= prev {
			t.Errorf("snapshot %d: offset %d after %d", s.ID, off, prev)
		}
		prev = off
	}
	refs := map[string]bool{}
	for _, f := range it.ReferencedFiles {
		refs[strings.TrimPrefix(f, "s3://"+lake.bucket+"/warehouse")] = true
	}
	orphans := 0
	for f := range parquetFiles(data) {
		if !refs[strings.TrimPrefix(f, data)] {
			orphans++
		}
	}
	if orphans == 0 {
		t.Errorf("no data file is left unreferenced: no kill landed between an upload and its commit")
	}
	t.Logf("12 kills; %d rows equal SELECT * in Java and pyiceberg; %d snapshots; %d files written by killed commits left unreferenced",
		len(want), len(hist), orphans)
}

// icebergSnapshot is one snapshot of a table's history.
type icebergSnapshot struct {
	ID      int64             `json:"id"`
	Summary map[string]string `json:"summary"`
}

// history lists the snapshots of a table's main branch, oldest first, as
// pyiceberg reads them.
func (l *icebergLake) history(t *testing.T, table string) []icebergSnapshot {
	t.Helper()
	py := harness.Python(t, "pyiceberg", "sqlalchemy")
	cfg, _ := json.Marshal(map[string]string{"uri": "sqlite:///" + l.db, "warehouse": "s3://" + l.bucket + "/warehouse",
		"s3.endpoint": l.s3.URL, "s3.region": l.s3.Region, "s3.access-key-id": l.s3.AccessKey, "s3.secret-access-key": l.s3.SecretKey})
	out, err := runPython(py, `import json, sys
from pyiceberg.catalog.sql import SqlCatalog
tbl = SqlCatalog("`+l.catalog+`", **json.loads(sys.argv[1])).load_table(sys.argv[2])
snaps, s = [], tbl.current_snapshot()
while s is not None:
    snaps.append({"id": s.snapshot_id, "summary": dict(s.summary.additional_properties)})
    s = tbl.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id else None
print(json.dumps(snaps[::-1]))`, string(cfg), table)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	var snaps []icebergSnapshot
	if err := json.Unmarshal(out, &snaps); err != nil {
		t.Fatal(err)
	}
	return snaps
}

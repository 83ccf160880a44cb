package integration

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestIcebergTwoTasksRebalance writes one Iceberg table from two sink
// tasks (a topic of four partitions) while the group rebalances twice: a
// second worker joins (a task moves to it) and later leaves (the task
// comes back), and mid-stream the source table gains a column (ALTER TABLE
// ADD COLUMN), which the sink adds to the Iceberg table. Each task commits
// its own partitions; commits race on the catalog. In the end the table,
// read by Iceberg's Java library and pyiceberg, equals SELECT * with the
// new column, and snapshots by both tasks are in its history.
func TestIcebergTwoTasksRebalance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, versitygw and two workers")
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

	// The source runs in a group of its own, so that the sink's group
	// balances only the sink's tasks: a joining worker takes one of them.
	bootstrap, rs, _, _ := startWorker(t, "icesrc", map[string]string{"offset.flush.interval.ms": "300"})
	bin := harness.BuildTributary(t)
	props := func() map[string]string { // each worker its own REST port
		return harness.WorkerProps(t, bootstrap, "ice2", map[string]string{"offset.flush.interval.ms": "300",
			"scheduled.rebalance.max.delay.ms": "2000", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000"})
	}
	wa := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "a"), props())
	r := rest{t, wa.URL()}
	id := pgID("icetasks")
	topic := id + ".public.orders"
	if _, err := kadm.NewClient(newClient(t, bootstrap)).CreateTopics(ctx, 4, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	rs.must("POST", "/connectors", map[string]any{"name": "src", "config": icebergSource(pg, id)}, 201)
	rs.waitState("src", "RUNNING", 1)
	sink := icebergSink(t, lake, topic, "shop.orders")
	sink["tasks.max"] = "2"
	sink["iceberg.control.commit.interval-ms"] = "500"
	r.must("POST", "/connectors", map[string]any{"name": "lake", "config": sink}, 201)
	r.waitState("lake", "RUNNING", 2)

	var stop, altered atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	wconn := pgConn(t, pg)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(8, 1))
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
			case k < 3:
				icebergRow(&b, next, 1)
				live[next] = 1
				next++
			case k < 9:
				live[id]++
				icebergUpdate(&b, id, live[id])
				if altered.Load() {
					b.Queue(`UPDATE orders SET region = $2 WHERE id = $1`, id, fmt.Sprint("region-", id%5))
				}
			default:
				b.Queue(`DELETE FROM orders WHERE id = $1`, id)
				delete(live, id)
			}
			if err := wconn.SendBatch(ctx, &b).Close(); err != nil {
				t.Errorf("workload: %v", err)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	time.Sleep(3 * time.Second)
	wb := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "b"), props())
	waitTasksOn(t, r, "lake", 2, 30*time.Second)
	time.Sleep(2 * time.Second)
	pg.Exec(t, `ALTER TABLE orders ADD COLUMN region text`)
	altered.Store(true)
	time.Sleep(3 * time.Second)
	if err := wb.Stop(); err != nil {
		t.Logf("stop worker b: %v", err)
	}
	waitTasksOn(t, r, "lake", 1, 60*time.Second)
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}

	status := func() string { return rs.statusOf("src")() + "\n" + r.statusOf("lake")() }
	want := pgRows(t, conn, "SELECT * FROM orders")
	it := lake.waitTableEquals(t, bootstrap, topic, "shop.orders", "connect-lake", want, "id", 120*time.Second, status)
	wantTypes := maps.Clone(icebergOrdersTypes)
	wantTypes["region"] = "string optional"
	java := lake.readJava(t, "shop.orders")
	for _, got := range []*icebergTable{java, it} {
		if diffs := sameRows(want, got.Rows, "id"); len(diffs) > 0 {
			t.Errorf("%s reads %d rows, the source has %d; differences:\n%v", got.ReadBy, len(got.Rows), len(want), diffs)
		}
		if types := got.types(); !maps.Equal(types, wantTypes) {
			t.Errorf("%s: column types %v\nwant %v", got.ReadBy, types, wantTypes)
		}
	}
	byTask := map[string]int{}
	for _, s := range lake.history(t, "shop.orders") {
		byTask[s.Summary["kafka.connect.task-id"]]++
	}
	if byTask["lake-0"] == 0 || byTask["lake-1"] == 0 {
		t.Errorf("snapshots by task: %v, want both tasks'", byTask)
	}
	t.Logf("%d rows equal SELECT * (with the added column) in Java and pyiceberg; snapshots by task %v", len(want), byTask)
}

// waitTasksOn waits until the connector's tasks run on n distinct workers.
func waitTasksOn(t *testing.T, r rest, name string, n int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; {
		s, code := r.status(name)
		workers := map[string]bool{}
		running := code == 200
		for _, tk := range s.Tasks {
			workers[tk.WorkerID] = true
			running = running && tk.State == "RUNNING"
		}
		if running && len(workers) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks of %s not running on %d workers after %v: %+v", name, n, within, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestMongoToIceberg streams a MongoDB collection (FerretDB, the source's
// poll mode) through ExtractNewDocumentState into an Iceberg table keyed
// by _id (iceberg.tables.cdc-field=__op): documents with nested
// documents, arrays, dates, binary data; from the fourth batch on with one
// more field, which the sink adds to the table. pyiceberg reads the table:
// every document once, every column as inserted, typed from the document.
func TestMongoToIceberg(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts FerretDB, versitygw and a worker")
	}
	harness.Python(t, "pyiceberg", "sqlalchemy", "pyarrow")
	fdb := harness.StartFerretDBT(t)
	lake := newIcebergLake(t)
	mc := mongoClient(t, fdb.URI)
	ctx := context.Background()
	id := mgID("mice")
	db := id + "shop"
	coll := mc.Database(db).Collection("orders")
	want := map[string]map[string]any{}
	k := 0
	insertBatch := func(b int) {
		var docs []any
		for range 50 {
			oid := bson.NewObjectID()
			doc, row := mgLakeDoc(oid, k, b)
			// As the Iceberg readers render them: timestamps in UTC with
			// microseconds, binary as hex; __deleted and __op describe the
			// change and are not columns.
			at := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC).Add(time.Duration(k) * time.Minute)
			row["at"] = at.Format("2006-01-02T15:04:05.000000") + "Z"
			row["bin"] = fmt.Sprintf("%x", []byte{byte(k), 0xff, byte(k >> 8)})
			delete(row, "__deleted")
			want[oid.Hex()] = row
			docs = append(docs, doc)
			k++
		}
		mustInsert(t, coll, docs)
	}
	insertBatch(0)
	bootstrap, r, w, _ := startWorker(t, "mice", map[string]string{"offset.flush.interval.ms": "500"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "mice-src", "mice-lake")
	src := readmeMongoLake(t, "shop-mongo")
	maps.Copy(src, mongoPollConfig(fdb.URI, id, db))
	r.must("POST", "/connectors", map[string]any{"name": "mice-src", "config": src}, 201)
	r.waitState("mice-src", "RUNNING", 1)
	topic := id + "." + db + ".orders"
	adm := kadm.NewClient(newClient(t, bootstrap))
	for deadline := time.Now().Add(90 * time.Second); ; {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if o, ok := ends.Lookup(topic, 0); err == nil && ok && o.Offset >= 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot is not in %s after 90s: %v", topic, r.statusOf("mice-src")())
		}
		time.Sleep(200 * time.Millisecond)
	}
	sink := map[string]string{
		"connector.class":                "io.tabular.iceberg.connect.IcebergSinkConnector",
		"topics.regex":                   regexp.QuoteMeta(topic),
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "true",
		"transforms":                     "unwrap",
		"transforms.unwrap.type":         "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
		"transforms.unwrap.add.fields":   "op,source.ts_ms",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
		"iceberg.tables": "shop.mongo_orders",
		"iceberg.table.shop.mongo_orders.id-columns": "_id",
		"iceberg.tables.cdc-field":                   "__op",
		"iceberg.tables.auto-create-enabled":         "true",
		"iceberg.tables.evolve-schema-enabled":       "true",
		"iceberg.control.commit.interval-ms":         "500",
	}
	maps.Copy(sink, lake.sinkConfig())
	r.must("POST", "/connectors", map[string]any{"name": "mice-lake", "config": sink}, 201)
	r.waitState("mice-lake", "RUNNING", 1)
	for b := 1; b < 6; b++ {
		insertBatch(b)
		time.Sleep(700 * time.Millisecond)
	}
	status := func() string { return r.statusOf("mice-src")() + "\n" + r.statusOf("mice-lake")() }
	var it *icebergTable
	for deadline := time.Now().Add(120 * time.Second); ; {
		it = lake.waitTableCaughtUp(t, bootstrap, topic, "shop.mongo_orders", "connect-mice-lake", 120*time.Second, status)
		if len(it.Rows) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	got := map[string]map[string]any{}
	for _, row := range it.Rows {
		oid, _ := row["_id"].(string)
		if _, dup := got[oid]; dup {
			t.Errorf("document %s twice", oid)
		}
		delete(row, "__source_ts_ms")
		if row["note"] == nil {
			delete(row, "note") // the column added at the fourth batch: null before
		}
		got[oid] = row
	}
	for oid, w := range want {
		g, ok := got[oid]
		if !ok {
			t.Errorf("document %s missing", oid)
			continue
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("document %s: %v\nwant %v", oid, g, w)
		}
	}
	types := it.types()
	wantTypes := map[string]string{"_id": "string required", "n": "int optional", "price": "double optional",
		"at": "timestamptz optional", "bin": "binary optional", "tags": "list<string> optional", "scores": "list<double> optional",
		"__source_ts_ms": "long optional", "note": "string optional"}
	for col, typ := range wantTypes {
		if types[col] != typ {
			t.Errorf("column %s: %q, want %q (all: %v)", col, types[col], typ, types)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d documents in the table, %d inserted", len(got), len(want))
	}
	t.Logf("%d documents in %s (%s), columns %v", len(got), "shop.mongo_orders", it.ReadBy, types)
}

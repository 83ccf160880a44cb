package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// taskCtx is a sdk.SinkTaskContext that records rewinds.
type taskCtx struct {
	task    int
	rewinds map[sdk.TopicPartition]int64
}

func (c *taskCtx) Info() sdk.TaskInfo { return sdk.TaskInfo{Connector: "lake", Task: c.task} }
func (c *taskCtx) Rewind(o map[sdk.TopicPartition]int64) {
	if c.rewinds == nil {
		c.rewinds = map[sdk.TopicPartition]int64{}
	}
	maps.Copy(c.rewinds, o)
}
func (c *taskCtx) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }

var (
	valueSchema = &schema.Schema{Type: schema.TypeStruct, Name: "db.public.t.Value", Fields: []schema.Field{
		{Name: "id", Index: 0, Schema: schema.Int32},
		{Name: "name", Index: 1, Schema: schema.OptionalString},
		{Name: "amount", Index: 2, Schema: (&schema.Schema{Type: schema.TypeBytes, Name: schema.DecimalName, Version: 1,
			Parameters: map[string]string{"scale": "2", "connect.decimal.precision": "10"}}).AsOptional()},
		{Name: "ts", Index: 3, Schema: (&schema.Schema{Type: schema.TypeInt64, Name: dbzMicroTimestamp}).AsOptional()},
	}, Optional: true}
	envelopeSchema = &schema.Schema{Type: schema.TypeStruct, Name: "db.public.t.Envelope", Fields: []schema.Field{
		{Name: "before", Index: 0, Schema: valueSchema},
		{Name: "after", Index: 1, Schema: valueSchema},
		{Name: "op", Index: 2, Schema: schema.String},
	}}
	keySchema = &schema.Schema{Type: schema.TypeStruct, Name: "db.public.t.Key", Fields: []schema.Field{{Name: "id", Index: 0, Schema: schema.Int32}}}
)

// event makes a Debezium change event of table t: op c, u or d.
func event(p int32, off int64, op string, id int32, name string) sdk.SinkRecord {
	r := schema.NewStruct(valueSchema).Set("id", id).Set("name", name).Set("ts", int64(off)*1000)
	env := schema.NewStruct(envelopeSchema).Set("op", op)
	if op == "d" {
		env.Set("before", schema.NewStruct(valueSchema).Set("id", id))
	} else {
		env.Set("after", r)
	}
	return sdk.SinkRecord{Topic: "db.public.t", Partition: p, Offset: off, KeySchema: keySchema,
		Key: schema.NewStruct(keySchema).Set("id", id), ValueSchema: envelopeSchema, Value: env, Timestamp: time.UnixMilli(off)}
}

func lakeConfig(dir string, extra ...string) map[string]string {
	cfg := map[string]string{
		"name": "lake", "connector.class": Class, "topics": "db.public.t",
		"iceberg.tables": "db.t", "iceberg.tables.auto-create-enabled": "true", "iceberg.tables.upsert-mode-enabled": "true",
		"iceberg.control.commit.interval-ms": "1",
		"iceberg.catalog.type":               "sql",
		"iceberg.catalog.uri":                "sqlite:///" + filepath.Join(dir, "catalog.db"),
		"iceberg.catalog.warehouse":          "file://" + filepath.Join(dir, "warehouse"),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

func openTask(t *testing.T, cfg map[string]string, task int) (*sinkTask, *taskCtx) {
	t.Helper()
	st, err := Connector().(connector).NewSinkTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc := &taskCtx{task: task}
	if err := st.Open(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st.(*sinkTask), tc
}

// readTable reads a table with iceberg-go's scan (which applies equality
// deletes): id -> name.
func readTable(t *testing.T, cfg map[string]string) (map[int32]string, map[string]string) {
	t.Helper()
	ex, _ := parseExtra(cfg)
	cat, release, err := openCatalog(context.Background(), "iceberg", ex.catalog)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("db", "t"))
	if err != nil {
		t.Fatal(err)
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	out := map[int32]string{}
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int32)
		names := rec.Column(1).(*array.String)
		for i := range int(rec.NumRows()) {
			if _, dup := out[ids.Value(i)]; dup {
				t.Fatalf("id %d twice", ids.Value(i))
			}
			out[ids.Value(i)] = names.Value(i)
		}
	}
	return out, tbl.CurrentSnapshot().Summary.Properties
}

func TestUpsertEnvelopes(t *testing.T) {
	cfg := lakeConfig(t.TempDir())
	st, _ := openTask(t, cfg, 0)
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "db.public.t", Partition: 0}
	if err := st.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	put := func(recs ...sdk.SinkRecord) {
		t.Helper()
		if err := st.Put(ctx, recs); err != nil {
			t.Fatal(err)
		}
		next := recs[len(recs)-1].Offset + 1
		time.Sleep(2 * time.Millisecond) // iceberg.control.commit.interval-ms=1
		got, err := st.Flush(ctx, map[sdk.TopicPartition]int64{tp: next})
		if err != nil {
			t.Fatal(err)
		}
		if got[tp] != next {
			t.Fatalf("durable %v, want %d", got, next)
		}
	}
	put(event(0, 0, "c", 1, "a"), event(0, 1, "c", 2, "b"), event(0, 2, "c", 3, "c"), event(0, 3, "u", 1, "a2"))
	put(event(0, 4, "u", 2, "b2"), event(0, 5, "d", 3, ""), event(0, 6, "c", 4, "d"), event(0, 7, "u", 4, "d2"))
	got, props := readTable(t, cfg)
	want := map[int32]string{1: "a2", 2: "b2", 4: "d2"}
	if !maps.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	if props["kafka.connect.offsets.db.public.t.connect-lake"] != `{"0":8}` || props["kafka.connect.task-id"] != "lake-0" {
		t.Errorf("summary %v", props)
	}

	// A new task (a restart) resumes from the table's offsets, and a
	// replay of records the table holds changes nothing.
	st.Close(ctx)
	st2, tc2 := openTask(t, cfg, 0)
	if err := st2.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	if tc2.rewinds[tp] != 8 {
		t.Errorf("rewound to %v, want 8", tc2.rewinds)
	}
	if err := st2.Put(ctx, []sdk.SinkRecord{event(0, 6, "c", 4, "stale"), event(0, 8, "d", 1, "")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := st2.Flush(ctx, map[sdk.TopicPartition]int64{tp: 9}); err != nil {
		t.Fatal(err)
	}
	got, _ = readTable(t, cfg)
	if want := map[int32]string{2: "b2", 4: "d2"}; !maps.Equal(got, want) {
		t.Fatalf("after restart: table %v, want %v", got, want)
	}
}

// TestTwoTasksStale: a task that committed a partition another task then
// took over cannot commit its stale changes: its commit is refused, and
// it rewinds to the table's offsets.
func TestTwoTasksStale(t *testing.T) {
	cfg := lakeConfig(t.TempDir())
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "db.public.t", Partition: 0}
	a, _ := openTask(t, cfg, 0)
	b, _ := openTask(t, cfg, 1)
	if err := a.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	if err := b.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil { // the zombie's successor
		t.Fatal(err)
	}
	for _, st := range []*sinkTask{b, a} {
		if err := st.Put(ctx, []sdk.SinkRecord{event(0, 0, "c", 1, fmt.Sprint("by", st.taskID)), event(0, 1, "c", 2, "x")}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := b.Flush(ctx, map[sdk.TopicPartition]int64{tp: 2}); err != nil {
		t.Fatal(err)
	}
	atc := a.tc.(*taskCtx)
	if _, err := a.Flush(ctx, map[sdk.TopicPartition]int64{tp: 2}); err != nil {
		t.Fatal(err)
	}
	if atc.rewinds[tp] != 2 {
		t.Errorf("zombie rewound to %v, want 2", atc.rewinds)
	}
	got, _ := readTable(t, cfg)
	if want := map[int32]string{1: "bylake-1", 2: "x"}; !maps.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
}

func TestMalformedChangesNothing(t *testing.T) {
	cfg := lakeConfig(t.TempDir())
	st, _ := openTask(t, cfg, 0)
	ctx := context.Background()
	bad := []sdk.SinkRecord{
		{Topic: "db.public.t", Offset: 0, Value: map[string]any{"id": 1}},
		{Topic: "db.public.t", Offset: 0, ValueSchema: envelopeSchema, Value: schema.NewStruct(envelopeSchema).Set("op", "x")},
	}
	for _, r := range bad {
		if err := st.Put(ctx, []sdk.SinkRecord{r}); err == nil {
			t.Errorf("%v: no error", r.Value)
		}
	}
	names := slices.Collect(func(yield func(string) bool) {
		for n, w := range st.tables {
			if !w.batch.empty() {
				yield(n)
			}
		}
	})
	if len(names) > 0 {
		t.Errorf("changes kept after errors: %v", names)
	}
}

// TestTwoTasksConflictRetry: two tasks own different partitions of one
// table and commit on the same snapshot; the second commit conflicts, is
// rebuilt on the new snapshot, and the table ends with both tasks' rows and
// both partitions' offsets.
func TestTwoTasksConflictRetry(t *testing.T) {
	cfg := lakeConfig(t.TempDir())
	ctx := context.Background()
	tp0, tp1 := sdk.TopicPartition{Topic: "db.public.t", Partition: 0}, sdk.TopicPartition{Topic: "db.public.t", Partition: 1}
	a, _ := openTask(t, cfg, 0)
	b, _ := openTask(t, cfg, 1)
	// A first commit makes the table, which both then load.
	if err := a.Assigned(ctx, []sdk.TopicPartition{tp0}); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, []sdk.SinkRecord{event(0, 0, "c", 1, "a")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := a.Flush(ctx, map[sdk.TopicPartition]int64{tp0: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Assigned(ctx, []sdk.TopicPartition{tp1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, []sdk.SinkRecord{event(0, 1, "u", 1, "a2")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, []sdk.SinkRecord{event(1, 0, "c", 2, "b")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := a.Flush(ctx, map[sdk.TopicPartition]int64{tp0: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Flush(ctx, map[sdk.TopicPartition]int64{tp1: 1}) // built on the snapshot before a's
	if err != nil {
		t.Fatal(err)
	}
	if got[tp1] != 1 {
		t.Errorf("b's durable offsets %v, want %s at 1", got, tp1)
	}
	rows, props := readTable(t, cfg)
	if want := map[int32]string{1: "a2", 2: "b"}; !maps.Equal(rows, want) {
		t.Errorf("table %v, want %v", rows, want)
	}
	if o := props["kafka.connect.offsets.db.public.t.connect-lake"]; o != `{"0":2,"1":1}` {
		t.Errorf("offsets %s", o)
	}
}

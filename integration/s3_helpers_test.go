package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	s3sink "github.com/tributary-dev/tributary/connectors/s3"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// sinkCtx is the runtime seen by an S3 sink task driven directly by a test.
type sinkCtx struct {
	mu      sync.Mutex
	rewinds map[sdk.TopicPartition]int64
}

func (c *sinkCtx) Info() sdk.TaskInfo   { return sdk.TaskInfo{Connector: "s3-test"} }
func (c *sinkCtx) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func (c *sinkCtx) Rewind(o map[sdk.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewinds == nil {
		c.rewinds = map[sdk.TopicPartition]int64{}
	}
	for k, v := range o {
		c.rewinds[k] = v
	}
}

// sinkRun is one S3 sink task driven by a test: open, assigned, put,
// flush, close, as the worker calls them.
type sinkRun struct {
	t    *testing.T
	task sdk.SinkTask
	tc   *sinkCtx
	next map[sdk.TopicPartition]int64
}

func openS3Sink(t *testing.T, cfg map[string]string, tps ...sdk.TopicPartition) *sinkRun {
	t.Helper()
	c := s3sink.Connector()
	infos, err := c.Validate(context.Background(), cfg)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if infos.ErrorCount > 0 {
		t.Fatalf("validate: %v", infos.Errors())
	}
	task, err := c.(sdk.SinkPlugin).NewSinkTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &sinkRun{t: t, task: task, tc: &sinkCtx{}, next: map[sdk.TopicPartition]int64{}}
	ctx := context.Background()
	if err := task.Open(ctx, r.tc); err != nil {
		t.Fatalf("open: %v", err)
	}
	if ph, ok := task.(sdk.PartitionsHandler); ok {
		if err := ph.Assigned(ctx, tps); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { task.Close(context.Background()) })
	return r
}

func (r *sinkRun) put(recs ...sdk.SinkRecord) {
	r.t.Helper()
	if err := r.task.Put(context.Background(), recs); err != nil {
		r.t.Fatalf("put: %v", err)
	}
	for _, rec := range recs {
		r.next[rec.TopicPartition()] = rec.Offset + 1
	}
}

func (r *sinkRun) flush() map[sdk.TopicPartition]int64 {
	r.t.Helper()
	out, err := r.task.Flush(context.Background(), r.next)
	if err != nil {
		r.t.Fatalf("flush: %v", err)
	}
	return out
}

// richSchema has a field of every kind the sink maps to typed columns.
var richSchema = schema.StructOf("com.example.Order").Version(1).
	Field("id", schema.Int64).
	Field("name", schema.String).
	Field("score", schema.Float64).
	Field("ratio", schema.Float32).
	Field("small", schema.Int8).
	Field("medium", schema.Int16).
	Field("count", schema.Int32).
	Field("active", schema.Boolean).
	Field("note", schema.OptionalString).
	Field("raw", schema.Bytes).
	Field("amount", schema.Decimal(2)).
	Field("day", schema.Date).
	Field("at", schema.Time).
	Field("ts", schema.Timestamp).
	Field("tags", schema.ArrayOf(schema.String)).
	Field("attrs", schema.MapOf(schema.String, schema.Int32)).
	Field("addr", schema.StructOf("com.example.Address").Field("city", schema.String).Field("zip", schema.OptionalInt32).Build()).
	Build()

var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

func richValue(i int64) *schema.Struct {
	addr := schema.NewStruct(richSchema.Field("addr").Schema).Set("city", "Lyon")
	if i%2 == 0 {
		addr.Set("zip", int32(69000+i))
	}
	v := schema.NewStruct(richSchema).
		Set("id", i).Set("name", "order-"+strings.Repeat("x", int(i%5))).
		Set("score", float64(i)+0.5).Set("ratio", float32(i)/4).
		Set("small", int8(i%100)).Set("medium", int16(i*3)).Set("count", int32(i*7)).
		Set("active", i%3 == 0).
		Set("raw", []byte{byte(i), 0, 255}).
		Set("amount", big.NewInt(12345+i)).
		Set("day", time.Date(2026, 3, 4+int(i%20), 0, 0, 0, 0, time.UTC)).
		Set("at", time.Date(1970, 1, 1, 13, 14, 15, 16_000_000, time.UTC)).
		Set("ts", baseTime.Add(time.Duration(i)*time.Second)).
		Set("tags", []any{"a", "b" + strings.Repeat("c", int(i%3))}).
		Set("attrs", map[string]any{"k": int32(i)}).
		Set("addr", addr)
	if i%4 != 0 {
		v.Set("note", "n")
	}
	return v
}

func richRecord(topic string, p int32, off int64) sdk.SinkRecord {
	return sdk.SinkRecord{Topic: topic, Partition: p, Offset: off, KeySchema: schema.String, Key: "k" + itoa(off),
		ValueSchema: richSchema, Value: richValue(off), Timestamp: baseTime.Add(time.Duration(off) * time.Second)}
}

func itoa(i int64) string { return big.NewInt(i).String() }

// listKeys lists the bucket's keys, sorted.
func listKeys(t testing.TB, s *harness.S3, bucket, prefix string) []string {
	t.Helper()
	out, err := s.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, *o.Key)
	}
	sort.Strings(keys)
	return keys
}

func getObject(t *testing.T, s *harness.S3, bucket, key string) []byte {
	t.Helper()
	out, err := s.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readWith reads a file with the independent Python readers
// (testdata/s3read.py): kind is parquet, avro or duckdb.
func readWith(t *testing.T, kind string, data []byte, extra ...string) map[string]any {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return runS3Read(t, kind, f, extra...)
}

// runS3Read runs testdata/s3read.py's reader kind (parquet, parquet-dir,
// avro, duckdb) over path and decodes its JSON output. It skips t when
// Python or the reader's modules are missing.
func runS3Read(t *testing.T, kind, path string, extra ...string) map[string]any {
	t.Helper()
	mods := map[string][]string{"parquet": {"pyarrow"}, "parquet-dir": {"pyarrow"}, "avro": {"fastavro", "cramjam"}, "duckdb": {"duckdb"}}[kind]
	py := harness.Python(t, mods...)
	args := append([]string{"testdata/s3read.py", kind, path}, extra...)
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("s3read.py %s: %v\n%s", kind, err, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("s3read.py output: %v\n%s", err, out)
	}
	return m
}

func s3Connector() sdk.Connector { return s3sink.Connector() }

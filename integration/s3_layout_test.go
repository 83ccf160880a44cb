package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

func assertKeys(t *testing.T, s *harness.S3, prefix string, want ...string) {
	t.Helper()
	got := listKeys(t, s, "lake", prefix)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("keys under %s\n got %q\nwant %q", prefix, got, want)
	}
}

// jsonLines reads a JSON file of the bucket as its lines' values.
func jsonLines(t *testing.T, s *harness.S3, key string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(getObject(t, s, "lake", key)), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %q: %v", key, l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestS3SinkKeysPerPartitioner checks the object keys of every partitioner
// against Confluent's layout, including time zones, Joda patterns, zero
// padding and custom delimiters.
func TestS3SinkKeysPerPartitioner(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 2}
	cases := []struct {
		name string
		kv   []string
		want []string
	}{
		{"default", nil, []string{"D/orders/partition=2/orders+2+0000000000.json", "D/orders/partition=2/orders+2+0000000003.json"}},
		{"default-pad-delims", []string{"filename.offset.zero.pad.width", "4", "file.delim", "-"},
			[]string{"D/orders/partition=2/orders-2-0000.json", "D/orders/partition=2/orders-2-0003.json"}},
		{"field", []string{"partitioner.class", "io.confluent.connect.storage.partitioner.FieldPartitioner", "partition.field.name", "active,small"},
			// Records 0..5: active is i%3==0, small is i.
			[]string{"D/orders/active=false/small=1/orders+2+0000000001.json", "D/orders/active=false/small=2/orders+2+0000000002.json",
				"D/orders/active=false/small=4/orders+2+0000000004.json", "D/orders/active=false/small=5/orders+2+0000000005.json",
				"D/orders/active=true/small=0/orders+2+0000000000.json", "D/orders/active=true/small=3/orders+2+0000000003.json"}},
		{"timebased-record", []string{"partitioner.class", "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
			"path.format", "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm", "partition.duration.ms", "120000",
			"locale", "en", "timezone", "UTC", "timestamp.extractor", "Record"},
			// baseTime 05:06:07 plus i seconds: all in the 05:06 bucket.
			[]string{"D/orders/year=2026/month=03/day=04/hour=05/minute=06/orders+2+0000000000.json",
				"D/orders/year=2026/month=03/day=04/hour=05/minute=06/orders+2+0000000003.json"}},
		{"daily-recordfield-zone", []string{"partitioner.class", "io.confluent.connect.storage.partitioner.DailyPartitioner",
			"locale", "en", "timezone", "-06:00", "timestamp.extractor", "RecordField", "timestamp.field", "ts"},
			// 05:06 UTC is 23:06 the day before at -06:00.
			[]string{"D/orders/year=2026/month=03/day=03/orders+2+0000000000.json", "D/orders/year=2026/month=03/day=03/orders+2+0000000003.json"}},
		{"hourly-tokyo", []string{"partitioner.class", "HourlyPartitioner", "locale", "en", "timezone", "Asia/Tokyo", "timestamp.extractor", "Record"},
			[]string{"D/orders/year=2026/month=03/day=04/hour=14/orders+2+0000000000.json", "D/orders/year=2026/month=03/day=04/hour=14/orders+2+0000000003.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := "keys-" + c.name
			r := openS3Sink(t, s3Config(s, "lake", append([]string{"format.class", "JsonFormat", "topics.dir", dir}, c.kv...)...), tp)
			for i := int64(0); i < 6; i++ {
				r.put(richRecord("orders", 2, i))
			}
			if got := r.flush(); got[tp] != 6 {
				t.Fatalf("flush: %v, want 6", got)
			}
			want := make([]string, len(c.want))
			for i, k := range c.want {
				want[i] = dir + strings.TrimPrefix(k, "D")
			}
			assertKeys(t, s, dir+"/", want...)
		})
	}
}

// TestS3SinkRotation covers rotate.interval.ms by record time and
// rotate.schedule.interval.ms by wall clock (which commits without new
// records).
func TestS3SinkRotation(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	t.Run("record-time", func(t *testing.T) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "rt", "flush.size", "100",
			"partitioner.class", "TimeBasedPartitioner", "path.format", "'d'=dd", "partition.duration.ms", "86400000",
			"locale", "en", "timezone", "UTC", "timestamp.extractor", "Record", "rotate.interval.ms", "2500"), tp)
		for i := int64(0); i < 8; i++ {
			r.put(richRecord("orders", 0, i)) // one second apart
		}
		if got := r.flush(); got[tp] != 6 {
			t.Fatalf("flush: %v, want 6 (files of records 0-2 and 3-5 done, 6-7 open)", got)
		}
		assertKeys(t, s, "rt/", "rt/orders/d=04/orders+0+0000000000.json", "rt/orders/d=04/orders+0+0000000003.json")
		if n := len(jsonLines(t, s, "rt/orders/d=04/orders+0+0000000003.json")); n != 3 {
			t.Fatalf("second file has %d records", n)
		}
	})
	t.Run("wall-clock", func(t *testing.T) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "wc", "flush.size", "100",
			"rotate.schedule.interval.ms", "1000", "timezone", "UTC"), tp)
		r.put(richRecord("orders", 0, 0), richRecord("orders", 0, 1))
		if got := r.flush(); len(got) != 0 {
			t.Fatalf("flush before the schedule: %v, want nothing durable", got)
		}
		time.Sleep(1100 * time.Millisecond)
		if got := r.flush(); got[tp] != 2 {
			t.Fatalf("flush after the schedule: %v, want 2", got)
		}
		assertKeys(t, s, "wc/", "wc/orders/partition=0/orders+0+0000000000.json")
	})
}

func tombstone(off int64) sdk.SinkRecord {
	return sdk.SinkRecord{Topic: "orders", Partition: 0, Offset: off, KeySchema: schema.String, Key: "k" + itoa(off)}
}

// TestS3SinkNullValues covers behavior.on.null.values fail, ignore and
// write (keys of tombstones under tombstone.encoded.partition), with the
// keys and headers files.
func TestS3SinkNullValues(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	t.Run("fail", func(t *testing.T) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "nf"), tp)
		err := r.task.Put(context.Background(), []sdk.SinkRecord{richRecord("orders", 0, 0), tombstone(1)})
		if err == nil || !strings.Contains(err.Error(), "behavior.on.null.values") {
			t.Fatalf("put of a tombstone with fail: %v", err)
		}
	})
	t.Run("ignore", func(t *testing.T) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "ni", "behavior.on.null.values", "ignore"), tp)
		r.put(richRecord("orders", 0, 0), tombstone(1), richRecord("orders", 0, 2), richRecord("orders", 0, 3), tombstone(4))
		if got := r.flush(); got[tp] != 5 {
			t.Fatalf("flush: %v, want 5 (the trailing tombstone is skipped)", got)
		}
		assertKeys(t, s, "ni/", "ni/orders/partition=0/orders+0+0000000000.json")
		if n := len(jsonLines(t, s, "ni/orders/partition=0/orders+0+0000000000.json")); n != 3 {
			t.Fatalf("file has %d records, want 3", n)
		}
	})
	t.Run("write-keys-headers", func(t *testing.T) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "JsonFormat", "topics.dir", "nw", "behavior.on.null.values", "write",
			"store.kafka.keys", "true", "store.kafka.headers", "true", "keys.format.class", "JsonFormat", "headers.format.class", "JsonFormat", "flush.size", "4"), tp)
		a := richRecord("orders", 0, 0)
		a.Headers = []sdk.Header{{Key: "h", Schema: schema.String, Value: "v"}, {Key: "n", Schema: schema.Int32, Value: int32(7)}}
		r.put(a, tombstone(1), richRecord("orders", 0, 2), tombstone(3))
		if got := r.flush(); got[tp] != 4 {
			t.Fatalf("flush: %v", got)
		}
		assertKeys(t, s, "nw/",
			"nw/orders/partition=0/orders+0+0000000000.headers.json", "nw/orders/partition=0/orders+0+0000000000.json",
			"nw/orders/partition=0/orders+0+0000000000.keys.json",
			"nw/orders/tombstone/orders+0+0000000001.headers.json", "nw/orders/tombstone/orders+0+0000000001.keys.json")
		keys := string(getObject(t, s, "lake", "nw/orders/partition=0/orders+0+0000000000.keys.json"))
		if keys != "\"k0\"\n\"k2\"\n" {
			t.Fatalf("keys file %q", keys)
		}
		if tk := string(getObject(t, s, "lake", "nw/orders/tombstone/orders+0+0000000001.keys.json")); tk != "\"k1\"\n\"k3\"\n" {
			t.Fatalf("tombstone keys file %q", tk)
		}
		h := jsonLines(t, s, "nw/orders/partition=0/orders+0+0000000000.headers.json")
		if got := jsonNorm(t, h[0]); got != `{"headers":[{"key":"h","value":"v"},{"key":"n","value":"7"}]}` {
			t.Fatalf("headers of the first record: %s", got)
		}
	})
}

// TestS3SinkSchemaProjection: with BACKWARD, records alternating between
// two versions of a schema are projected onto the newest instead of
// rotating the file each time; NONE rotates on each change.
func TestS3SinkSchemaProjection(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	v1 := schema.StructOf("com.example.User").Version(1).Field("id", schema.Int64).Field("name", schema.String).Build()
	v2 := schema.StructOf("com.example.User").Version(2).Field("id", schema.Int64).Field("name", schema.String).
		Field("email", schema.OptionalString).Field("level", schema.Int32.WithDefault(int32(1))).Build()
	rec := func(off int64) sdk.SinkRecord {
		sch := v1
		if off%2 == 1 {
			sch = v2
		}
		v := schema.NewStruct(sch).Set("id", off).Set("name", "u")
		if sch == v2 {
			v.Set("email", "e").Set("level", int32(5))
		}
		return sdk.SinkRecord{Topic: "orders", Partition: 0, Offset: off, ValueSchema: sch, Value: v}
	}
	run := func(dir, compat string, durable int64) {
		r := openS3Sink(t, s3Config(s, "lake", "format.class", "ParquetFormat", "topics.dir", dir, "flush.size", "7", "schema.compatibility", compat), tp)
		for i := int64(0); i < 8; i++ {
			r.put(rec(i))
		}
		if got := r.flush(); got[tp] != durable {
			t.Fatalf("%s: flush %v, want %d", compat, got, durable)
		}
	}
	// v1 opens a file, v2 rotates it (a newer version), then every record
	// goes to the v2 file, v1 ones projected: 1 + 7 records.
	run("backward", "BACKWARD", 8)
	assertKeys(t, s, "backward/", "backward/orders/partition=0/orders+0+0000000000.snappy.parquet", "backward/orders/partition=0/orders+0+0000000001.snappy.parquet")
	m := readWith(t, "parquet", getObject(t, s, "lake", "backward/orders/partition=0/orders+0+0000000001.snappy.parquet"))
	rows := m["rows"].([]any)
	if len(rows) != 7 {
		t.Fatalf("projected file has %d rows, want 7", len(rows))
	}
	if got := jsonNorm(t, rows[1]); got != `{"email":null,"id":2,"level":1,"name":"u"}` {
		t.Fatalf("v1 record projected onto v2: %s", got)
	}
	run("none", "NONE", 7)
	if n := len(listKeys(t, s, "lake", "none/")); n != 7 {
		t.Fatalf("NONE wrote %d files, want 7 (one per schema change, the eighth open)", n)
	}
}

// TestS3SinkMultipart: a file larger than s3.part.size goes up in parts,
// and the object is whole.
func TestS3SinkMultipart(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	r := openS3Sink(t, s3Config(s, "lake", "format.class", "ByteArrayFormat", "topics.dir", "mp", "flush.size", "12",
		"s3.part.size", "5242880", "format.bytearray.separator", ""), tp)
	var want []byte
	for i := int64(0); i < 12; i++ {
		v := []byte(strings.Repeat(string(rune('a'+i)), 1<<20))
		want = append(want, v...)
		r.put(sdk.SinkRecord{Topic: "orders", Partition: 0, Offset: i, ValueSchema: schema.Bytes, Value: v})
	}
	if got := r.flush(); got[tp] != 12 {
		t.Fatalf("flush %v", got)
	}
	key := "mp/orders/partition=0/orders+0+0000000000.bin"
	got := getObject(t, s, "lake", key)
	if string(got) != string(want) {
		t.Fatalf("object is %d bytes, want %d identical", len(got), len(want))
	}
	bucket := "lake"
	head, err := s.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	if etag := *head.ETag; !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		t.Fatalf("ETag %s: want a multipart upload of 3 parts (12 MiB in 5 MiB parts)", etag)
	}
}

// TestS3SinkReplayKeepsObjects: a task that consumes again from offsets it
// already uploaded (a crash between upload and offset commit, or a zombie)
// writes the same keys, and the conditional create keeps the first
// objects: nothing is written twice.
func TestS3SinkReplayKeepsObjects(t *testing.T) {
	t.Parallel()
	s := harness.VersityGW(t, "lake")
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	cfg := s3Config(s, "lake", "format.class", "ParquetFormat", "topics.dir", "rp")
	first := openS3Sink(t, cfg, tp)
	for i := int64(0); i < 7; i++ {
		first.put(richRecord("orders", 0, i))
	}
	first.flush()
	bucket := "lake"
	mod := map[string]time.Time{}
	for _, k := range listKeys(t, s, "lake", "rp/") {
		h, err := s.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &k})
		if err != nil {
			t.Fatal(err)
		}
		mod[k] = *h.LastModified
	}
	time.Sleep(1100 * time.Millisecond)
	second := openS3Sink(t, cfg, tp) // the first never committed: replay from 0
	for i := int64(0); i < 9; i++ {
		second.put(richRecord("orders", 0, i))
	}
	if got := second.flush(); got[tp] != 9 {
		t.Fatalf("flush %v", got)
	}
	keys := listKeys(t, s, "lake", "rp/")
	if len(keys) != 3 {
		t.Fatalf("keys %q", keys)
	}
	for k, at := range mod {
		h, err := s.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &k})
		if err != nil {
			t.Fatal(err)
		}
		if !h.LastModified.Equal(at) {
			t.Fatalf("%s was rewritten (%v, then %v): the conditional create should have kept it", k, at, *h.LastModified)
		}
	}
	total := 0
	for _, k := range keys {
		total += len(readWith(t, "parquet", getObject(t, s, "lake", k))["rows"].([]any))
	}
	if total != 9 {
		t.Fatalf("%d rows across %d objects, want each of the 9 records once", total, len(keys))
	}
}

// TestS3SinkLocalLake writes Parquet through a file:// store, as
// `tributary dev --demo` does, and queries the directory with DuckDB the way
// the README shows.
func TestS3SinkLocalLake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	r := openS3Sink(t, map[string]string{"topics": "orders", "store.url": "file://" + dir,
		"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat", "flush.size": "4"}, tp)
	for i := int64(0); i < 10; i++ {
		r.put(richRecord("orders", 0, i))
	}
	if got := r.flush(); got[tp] != 8 {
		t.Fatalf("flush %v", got)
	}
	for _, name := range []string{"orders+0+0000000000.snappy.parquet", "orders+0+0000000004.snappy.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, "topics/orders/partition=0", name)); err != nil {
			t.Fatal(err)
		}
	}
	m := readWith(t, "duckdb", nil, "set timezone='UTC'; select count(*), sum(id), min(amount)::varchar, max(ts)::varchar from '"+dir+"/**/*.parquet'")
	if got := jsonNorm(t, m["rows"]); got != `[[8,28,"123.45","2026-03-04 05:06:14.008+00"]]` {
		t.Fatalf("duckdb over the lake: %s", got)
	}
}

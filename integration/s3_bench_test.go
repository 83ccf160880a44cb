package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// benchResult is what one benchmark child process measured.
type benchResult struct {
	records, bytes, objects int64
	wall, cpu               time.Duration
	rss                     int64
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestS3BenchChild is the child process of BenchmarkS3Sink; it does
// nothing unless TRIBUTARY_S3_BENCH names a run.
func TestS3BenchChild(t *testing.T) {
	spec := os.Getenv("TRIBUTARY_S3_BENCH")
	if spec == "" {
		t.Skip("benchmark child process only")
	}
	f := strings.Split(spec, "|") // mode|format|url|records
	mode, format, url := f[0], f[1], f[2]
	n, _ := strconv.ParseInt(f[3], 10, 64)
	s := &harness.S3{URL: url, AccessKey: "tributary", SecretKey: "tributary-secret", Region: "us-east-1"}
	var res benchResult
	switch mode {
	case "sink":
		res = benchSink(t, s, format, n)
	case "direct":
		res = benchDirect(t, s, format)
	}
	fmt.Printf("bench-result %d %d %d %d %d %d\n", res.records, res.bytes, res.objects, res.wall, res.cpu, vmHWM())
}

const benchPartitions = 4

func benchSink(t *testing.T, s *harness.S3, format string, n int64) benchResult {
	var tps []sdk.TopicPartition
	for p := range benchPartitions {
		tps = append(tps, sdk.TopicPartition{Topic: "bench", Partition: int32(p)})
	}
	r := openS3Sink(t, s3Config(s, "lake", "format.class", format, "topics.dir", "sink-"+format, "flush.size", "10000"), tps...)
	vals := make([]sdk.SinkRecord, 10000)
	for i := range vals {
		vals[i] = sdk.SinkRecord{Topic: "bench", ValueSchema: benchSchema, Value: benchValue(int64(i))}
	}
	batch := make([]sdk.SinkRecord, 0, 500)
	start, cpu0 := time.Now(), cpuTime()
	for off := int64(0); off < n/benchPartitions; off += 125 {
		for p := range benchPartitions {
			for o := off; o < off+125; o++ {
				rec := vals[o%int64(len(vals))]
				rec.Partition, rec.Offset = int32(p), o
				batch = append(batch, rec)
			}
		}
		r.put(batch...)
		batch = batch[:0]
	}
	got := r.flush()
	wall, cpu := time.Since(start), cpuTime()-cpu0
	for _, tp := range tps {
		if got[tp] != n/benchPartitions {
			t.Fatalf("flush %v: not everything uploaded", got)
		}
	}
	var size, objects int64
	bucket, prefix := "lake", "sink-"+format+"/"
	out, err := s.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		size += *o.Size
		objects++
	}
	return benchResult{records: n, bytes: size, objects: objects, wall: wall, cpu: cpu}
}

// benchDirect uploads the objects the sink wrote again, as they are, with
// aws-sdk-go-v2 PutObject one after the other (as the sink does): the
// upload limit.
func benchDirect(t *testing.T, s *harness.S3, format string) benchResult {
	cl := s.Client()
	bucket, prefix := "lake", "sink-"+format+"/"
	out, err := cl.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	var size int64
	for _, o := range out.Contents {
		b := getObject(t, s, bucket, *o.Key)
		bodies = append(bodies, b)
		size += int64(len(b))
	}
	start, cpu0 := time.Now(), cpuTime()
	for i, b := range bodies {
		key := fmt.Sprintf("direct-%s/%06d", format, i)
		n := int64(len(b))
		if _, err := cl.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b), ContentLength: &n}); err != nil {
			t.Fatal(err)
		}
	}
	return benchResult{bytes: size, objects: int64(len(bodies)), wall: time.Since(start), cpu: cpuTime() - cpu0}
}

func runBenchChild(b *testing.B, spec string) benchResult {
	args := []string{"-test.run=^TestS3BenchChild$", "-test.count=1", "-test.v"}
	if dir := os.Getenv("TRIBUTARY_S3_BENCH_PROFILE"); dir != "" {
		f := strings.Split(spec, "|")
		args = append(args, "-test.cpuprofile="+filepath.Join(dir, f[0]+"-"+f[1]+".cpu"))
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TRIBUTARY_S3_BENCH="+spec, "GOMEMLIMIT=96MiB")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("bench child %s: %v\n%s", spec, err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "bench-result "); ok {
			var r benchResult
			var wall, cpu int64
			fmt.Sscan(v, &r.records, &r.bytes, &r.objects, &wall, &cpu, &r.rss)
			r.wall, r.cpu = time.Duration(wall), time.Duration(cpu)
			return r
		}
	}
	b.Fatalf("bench child %s printed no result:\n%s", spec, out)
	return benchResult{}
}

// BenchmarkS3Sink measures the sink into versitygw, JSON and Parquet, 1 KiB
// records of ten fields, flush.size 10000, each run in a process of its
// own (as a plugin runs, with GOMEMLIMIT set), side by side with the same
// objects uploaded directly with aws-sdk-go-v2. Run it alone, once:
//
//	go test -run '^$' -bench BenchmarkS3Sink -benchtime 1x ./integration/
//
// With TRIBUTARY_S3_BENCH_PROFILE set to a directory, each child process
// writes its CPU profile there (sink-ParquetFormat.cpu, ...).
func BenchmarkS3Sink(b *testing.B) {
	s := harness.VersityGW(b, "lake")
	for b.Loop() {
		for _, c := range []struct {
			format  string
			records int
		}{{"JsonFormat", 160000}, {"ParquetFormat", 400000}} {
			sink := runBenchChild(b, "sink|"+c.format+"|"+s.URL+"|"+strconv.Itoa(c.records))
			direct := runBenchChild(b, "direct|"+c.format+"|"+s.URL+"|0")
			mb := float64(sink.bytes) / (1 << 20)
			b.Logf("%s: sink %d records in %d objects (%.1f MiB): %.0f records/s, %.1f MB/s, %.2f CPU-s per million records, peak RSS %.1f MiB",
				c.format, sink.records, sink.objects, mb, float64(sink.records)/sink.wall.Seconds(), mb/sink.wall.Seconds(),
				sink.cpu.Seconds()/float64(sink.records)*1e6, float64(sink.rss)/(1<<20))
			b.Logf("%s: direct aws-sdk-go-v2 upload of the same %d objects: %.1f MB/s, %.2f CPU-s; sink/direct rate = %.2f",
				c.format, direct.objects, mb/direct.wall.Seconds(), direct.cpu.Seconds(), direct.wall.Seconds()/sink.wall.Seconds())
			name := strings.TrimSuffix(c.format, "Format")
			b.ReportMetric(float64(sink.records)/sink.wall.Seconds(), name+"-records/s")
			b.ReportMetric(direct.wall.Seconds()/sink.wall.Seconds(), name+"-ratio")
			b.ReportMetric(sink.cpu.Seconds()/float64(sink.records)*1e6, name+"-cpu-s/Mrec")
			b.ReportMetric(float64(sink.rss)/(1<<20), name+"-peak-rss-MiB")
		}
	}
}

// The benchmark record, as connectors/s3 BenchmarkParquetWriters writes it.
// benchSchema is the benchmark's record: ten fields, about 1 KiB.
var benchSchema = schema.StructOf("bench.Event").Version(1).
	Field("id", schema.Int64).
	Field("ts", schema.Timestamp).
	Field("user_id", schema.Int64).
	Field("session", schema.String).
	Field("country", schema.String).
	Field("event", schema.String).
	Field("score", schema.Float64).
	Field("active", schema.Boolean).
	Field("count", schema.Int32).
	Field("payload", schema.String).
	Build()

// benchValue returns the i-th benchmark record (1 KiB of JSON).
func benchValue(i int64) *schema.Struct {
	countries := []string{"FR", "DE", "US", "JP", "BR"}
	events := []string{"view", "click", "purchase", "signup"}
	pl := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 24))
	pl[i%int64(len(pl))] = 'X'
	return schema.NewStruct(benchSchema).Set("id", i).Set("ts", time.UnixMilli(1_700_000_000_000+i)).
		Set("user_id", i*7919%100000).Set("session", "sess-"+strings.Repeat("s", int(i%8))).
		Set("country", countries[i%5]).Set("event", events[i%4]).Set("score", float64(i%1000)/7).
		Set("active", i%3 == 0).Set("count", int32(i%500)).Set("payload", string(pl))
}

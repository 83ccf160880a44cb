package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-dev/tributary/integration/harness"
)

// procHWM returns a process's peak resident set size in MiB.
func procHWM(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// driverScan reads every document filter selects with a plain driver find
// (optionally sorted), returning the count and the time taken.
func driverScan(b *testing.B, c *mongo.Collection, filter bson.D, sort bson.D) (int, time.Duration) {
	opts := options.Find()
	if sort != nil {
		opts.SetSort(sort)
	}
	start := time.Now()
	cur, err := c.Find(context.Background(), filter, opts)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for cur.Next(context.Background()) {
		n++
	}
	if err := cur.Err(); err != nil {
		b.Fatal(err)
	}
	cur.Close(context.Background())
	return n, time.Since(start)
}

// waitStopped waits until the connector reports STOPPED with no task
// and its plugin process has exited.
func waitStopped(b *testing.B, base, name string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, out := restDo(base, "GET", "/connectors/"+name+"/status", nil)
		var st struct {
			Connector struct{ State string }
			Tasks     []struct{ State string }
		}
		if json.Unmarshal(out, &st) == nil && st.Connector.State == "STOPPED" && len(st.Tasks) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("connector %s not stopped after 2 minutes: %s", name, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// topicCount returns the number of records in topic.
func topicCount(b *testing.B, adm *kadm.Client, topic string) int64 {
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total
}

// waitTopicEnd waits until topic holds n records.
func waitTopicEnd(b *testing.B, adm *kadm.Client, topic string, n int64) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err == nil {
			var total int64
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			if total >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("topic %s did not reach %d records", topic, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkMongoSource measures, against FerretDB, the MongoDB source's
// snapshot rate and its poll-mode change rate (documents per second into
// the bundled broker, through a worker process and the connector's plugin
// process), each side by side with a plain driver find over the same
// documents (the read limit: the snapshot reads in _id order, so the
// sorted find is its like, timed before and after the snapshot, and the
// mean taken, so that a change of load on the machine shows; the poll
// reads the new documents with one find sorted by _id). It
// reports the ratios, the CPU seconds per document of the worker and
// plugin processes, and the plugin's peak RSS.
//
//	go test -run '^$' -bench BenchmarkMongoSource -benchtime 1x ./integration/
//
// TRIBUTARY_BENCH_MONGO_DOCS sets the snapshot size (default 100000; the
// change phase inserts a fifth of it).
func BenchmarkMongoSource(b *testing.B) {
	n := 100000
	if s := os.Getenv("TRIBUTARY_BENCH_MONGO_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	m := n / 5
	fdb := harness.StartFerretDBT(b)
	mc, err := mongo.Connect(options.Client().ApplyURI(fdb.URI))
	if err != nil {
		b.Fatal(err)
	}
	defer mc.Disconnect(context.Background())
	db := mc.Database("bench")
	coll := db.Collection("docs")
	seq := 0
	insert := func(count int) {
		for done := 0; done < count; done += 5000 {
			var docs []any
			for i := 0; i < min(5000, count-done); i++ {
				seq++
				docs = append(docs, bson.D{
					{Key: "_id", Value: bson.NewObjectID()},
					{Key: "n", Value: int64(seq)},
					{Key: "name", Value: fmt.Sprintf("customer %08d", seq)},
					{Key: "at", Value: bson.NewDateTimeFromTime(time.UnixMilli(1700000000000 + int64(seq)))},
					{Key: "price", Value: float64(seq) / 100},
					{Key: "address", Value: bson.D{{Key: "city", Value: "Zürich"}, {Key: "zip", Value: "8001"}, {Key: "lines", Value: bson.A{"Bahnhofstrasse 1", "4th floor"}}}},
					{Key: "tags", Value: bson.A{"a", "b", int32(seq % 7)}},
					{Key: "note", Value: strings.Repeat("lorem ipsum ", 10)},
				})
			}
			if _, err := coll.InsertMany(context.Background(), docs); err != nil {
				b.Fatal(err)
			}
		}
	}
	insert(n)
	raw, _ := db.RunCommand(context.Background(), bson.D{{Key: "collStats", Value: "docs"}}).Raw()
	b.Logf("%d documents, collStats size %v", n, raw.Lookup("size"))

	// Reference: the driver reads the collection (unsorted, and sorted by
	// _id as the snapshot reads it).
	_, plain := driverScan(b, coll, bson.D{}, nil)
	got, sorted := driverScan(b, coll, bson.D{}, bson.D{{Key: "_id", Value: 1}})
	if got != n {
		b.Fatalf("find read %d of %d", got, n)
	}

	bootstrap := harness.TributaryBroker(b).Bootstrap()
	bin := harness.BuildTributary(b)
	props := harness.WorkerProps(b, bootstrap, "mbench", nil)
	w := harness.StartWorkerProcess(b, bin, b.TempDir(), props)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MetadataMinAge(50*time.Millisecond)) // sees the new topic at once: a 5 s refresh would time short jobs as 5 s
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	cfg := mongoPollConfig(fdb.URI, "mb", "bench")
	cfg["poll.interval.ms"] = "50"
	cpu0 := procCPU(w.Pid())
	start := time.Now()
	if code, out := restDo(w.URL(), "POST", "/connectors", map[string]any{"name": "mb", "config": cfg}); code != 201 {
		b.Fatalf("create connector: %d %s", code, out)
	}
	waitTopicEnd(b, adm, "mb.bench.docs", int64(n))
	snap := time.Since(start)
	plugin := pluginChild(w.Pid(), "mongodb")
	cpuSnap := procCPU(w.Pid()) - cpu0 + procCPU(plugin)
	pluginCPU0 := procCPU(plugin)
	workerCPU0 := procCPU(w.Pid())
	_, sorted2 := driverScan(b, coll, bson.D{}, bson.D{{Key: "_id", Value: 1}})
	b.Logf("sorted find before the snapshot %v, after it %v", sorted.Round(time.Millisecond), sorted2.Round(time.Millisecond))
	sorted = (sorted + sorted2) / 2

	// Poll-mode changes: documents inserted while the connector is
	// stopped, read when it resumes (the time includes the task's start).
	// Not paused: a paused task's plugin keeps polling ahead (the SDK
	// streams batches to the worker), so at resume the records would
	// already have been read.
	rssSnap := procHWM(plugin)
	if code, out := restDo(w.URL(), "PUT", "/connectors/mb/stop", nil); code != 202 && code != 204 {
		b.Fatalf("stop: %d %s", code, out)
	}
	waitStopped(b, w.URL(), "mb")
	var lastID bson.Raw
	opts := options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})
	if err := coll.FindOne(context.Background(), bson.D{}, opts).Decode(&lastID); err != nil {
		b.Fatal(err)
	}
	insert(m)
	after := bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: lastID.Lookup("_id")}}}}
	got, changeRef := driverScan(b, coll, after, bson.D{{Key: "_id", Value: 1}})
	if got != m {
		b.Fatalf("find of the new documents read %d of %d", got, m)
	}
	if k := topicCount(b, adm, "mb.bench.docs"); k != int64(n) {
		b.Fatalf("the paused connector wrote: %d records in the topic before resume, want %d", k, n)
	}
	start = time.Now()
	if code, out := restDo(w.URL(), "PUT", "/connectors/mb/resume", nil); code != 202 {
		b.Fatalf("resume: %d %s", code, out)
	}
	waitTopicEnd(b, adm, "mb.bench.docs", int64(n+m))
	change := time.Since(start)
	cpuChange := procCPU(w.Pid()) - workerCPU0
	rss := rssSnap
	if p2 := pluginChild(w.Pid(), "mongodb"); p2 == plugin {
		cpuChange += procCPU(plugin) - pluginCPU0
		rss = procHWM(plugin)
	} else if p2 != 0 { // the task runs in a new plugin process
		cpuChange += procCPU(p2)
		rss = max(rss, procHWM(p2))
	}

	rate := func(k int, d time.Duration) float64 { return float64(k) / d.Seconds() }
	b.Logf("snapshot of %d documents: driver find %.0f docs/s (sorted by _id, mean of before and after, %.0f docs/s), connector %.0f docs/s into the broker = %.0f%% of the sorted find, %.0f%% of the unsorted; %.2f µs CPU per document (worker + plugin)",
		n, rate(n, plain), rate(n, sorted), rate(n, snap), 100*sorted.Seconds()/snap.Seconds(), 100*plain.Seconds()/snap.Seconds(), cpuSnap/float64(n)*1e6)
	b.Logf("poll-mode changes, %d new documents: driver find by _id %.0f docs/s; connector %.0f docs/s into the broker (the time includes the task's start) = %.0f%% of the find; %.2f µs CPU per document",
		m, rate(m, changeRef), rate(m, change), 100*changeRef.Seconds()/change.Seconds(), cpuChange/float64(m)*1e6)
	b.Logf("plugin process peak RSS %.1f MiB", rss)
	b.ReportMetric(rate(n, snap), "snapshot-docs/s")
	b.ReportMetric(rate(n, sorted), "find-sorted-docs/s")
	b.ReportMetric(rate(n, plain), "find-docs/s")
	b.ReportMetric(rate(m, change), "change-docs/s")
	b.ReportMetric(rate(m, changeRef), "find-new-docs/s")
	b.ReportMetric(rss, "plugin-MiB")
	b.ReportMetric(0, "ns/op")
}

// restDo sends a REST request without a *testing.T.
func restDo(base, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		bb, _ := json.Marshal(body)
		rd = bytes.NewReader(bb)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

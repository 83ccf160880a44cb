package metrics

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The costs behind the metrics overhead figure (docs/benchmarks.md):
// what a runner records per batch, what a client's hooks record per
// request, and what a scrape costs; the connect benchmark's metrics run
// measures the whole (tributary-bench connect --pipelines metrics).

const benchBatch = 500 // records per batch, FileStream's and a sink's max.poll.records

// BenchmarkSourceBatch is what a source runner records per polled batch:
// the poll, the batch size, and the batch written once acknowledged (one
// atomic countdown per record, as batchWrite does).
func BenchmarkSourceBatch(b *testing.B) {
	c := New(Config{WorkerID: "w"})
	t := c.StartTask(TaskID{"src", 0}, Source)
	b.ReportAllocs()
	for b.Loop() {
		t.RecordBatch(benchBatch)
		t.RecordPoll(benchBatch, time.Millisecond)
		var remaining atomic.Int64
		remaining.Store(benchBatch)
		for range benchBatch {
			if remaining.Add(-1) == 0 { // each record's acknowledgement
				t.RecordWrite(benchBatch, 0)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/record")
}

// BenchmarkSinkBatch is what a sink runner records per batch: read, put,
// two end-to-end samples.
func BenchmarkSinkBatch(b *testing.B) {
	c := New(Config{WorkerID: "w"})
	t := c.StartTask(TaskID{"snk", 0}, Sink)
	b.ReportAllocs()
	for b.Loop() {
		t.RecordRead(benchBatch)
		t.RecordPut(benchBatch, time.Millisecond)
		t.E2E(5 * time.Millisecond)
		t.E2E(7 * time.Millisecond)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/record")
}

// BenchmarkClientProduce is what a producer's hooks record per produce
// request of one batch.
func BenchmarkClientProduce(b *testing.B) {
	c := New(Config{WorkerID: "w"})
	p := c.StartTask(TaskID{"src", 0}, Source).Client(ClientProducer, "connector-producer-src-0")
	meta := kgo.BrokerMetadata{NodeID: 1}
	b.ReportAllocs()
	for b.Loop() {
		p.OnBrokerE2E(meta, keyProduce, kgo.BrokerE2E{BytesWritten: 512 << 10, BytesRead: 64, WriteWait: time.Millisecond, TimeToWrite: time.Millisecond, ReadWait: time.Millisecond})
		p.OnProduceBatchWritten(meta, "t", 0, kgo.ProduceBatchMetrics{NumRecords: benchBatch, CompressedBytes: 512 << 10, UncompressedBytes: 512 << 10})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/record")
}

// BenchmarkScrape is one GET /metrics of a worker running a source task
// and a sink task (FileStream's pipeline): collecting and encoding every
// series as Prometheus text.
func BenchmarkScrape(b *testing.B) {
	c := New(Config{WorkerID: "w:8083"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	meta := kgo.BrokerMetadata{NodeID: 1}
	for _, kind := range []string{ClientAdmin, ClientConnect} {
		c.Client(kind, "w-"+kind).OnBrokerE2E(meta, keyMetadata, kgo.BrokerE2E{})
	}
	for _, conn := range []struct {
		name string
		kind Kind
	}{{"src", Source}, {"snk", Sink}} {
		c.SetConnector(conn.name, conn.kind, "C", "1")
		c.SetConnectorState(conn.name, StateRunning)
		t := c.StartTask(TaskID{conn.name, 0}, conn.kind)
		c.SetTaskState(TaskID{conn.name, 0}, "RUNNING")
		if conn.kind == Source {
			p := t.Client(ClientProducer, "connector-producer-src-0")
			p.OnBrokerE2E(meta, keyProduce, kgo.BrokerE2E{})
			p.OnProduceBatchWritten(meta, "t", 0, kgo.ProduceBatchMetrics{NumRecords: 1})
		} else {
			k := t.Client(ClientConsumer, "connector-consumer-snk-0")
			k.OnBrokerE2E(meta, keyFetch, kgo.BrokerE2E{})
			k.OnFetchBatchRead(meta, "t", 0, kgo.FetchBatchMetrics{NumRecords: 1})
			k.Lag("t", 0, 0, 0)
			t.SinkLag("t", 0, 10, 10)
		}
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		fams, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range fams {
			if err := enc.Encode(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/scrape")
}

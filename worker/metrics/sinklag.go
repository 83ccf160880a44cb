package metrics

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// What the worker measures beyond Kafka Connect, for sink tasks: how far
// each partition's durable position is behind its end (the lag Kafka
// Connect documents as sink-record-lag-max and never records), and the
// time from a record's timestamp (the source's, when a source set it) to
// the sink making it durable.

var (
	descSinkLag = prometheus.NewDesc("tributary_sink_lag_records",
		"Records of the partition the sink task has not made durable: the partition's end offset less the offset committed for the connector's group (connect-<connector>).",
		[]string{"connector", "task", "topic", "partition"}, nil)
	descSinkEnd = prometheus.NewDesc("tributary_sink_end_offset",
		"The partition's end offset (high watermark) as the sink task last read it.",
		[]string{"connector", "task", "topic", "partition"}, nil)
	descSinkCommitted = prometheus.NewDesc("tributary_sink_committed_offset",
		"The offset the sink task committed for the partition: every record before it is durable in the external system.",
		[]string{"connector", "task", "topic", "partition"}, nil)
	descE2E = prometheus.NewDesc("tributary_sink_e2e_latency_seconds",
		"Time from a record's timestamp (the source's, or when it was produced) to the sink task making it durable (its offset committed), sampled per batch.",
		[]string{"connector", "task"}, nil)
)

// e2eBuckets are the end-to-end latency histogram's bounds, in seconds.
var e2eBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

type sinkLag struct {
	end, committed int64
}

type sinkExtra struct {
	mu  sync.Mutex
	lag map[topicPartition]sinkLag

	e2eCounts []atomic.Uint64 // cumulative per bucket at scrape; here per bucket
	e2eCount  atomic.Uint64
	e2eSum    atomic.Uint64 // float64 bits
}

// SinkLag records a sink partition's end offset and the offset committed
// for it (tributary_sink_lag_records is their difference).
func (t *Task) SinkLag(topic string, partition int32, end, committed int64) {
	if t == nil {
		return
	}
	t.extra.mu.Lock()
	if t.extra.lag == nil {
		t.extra.lag = map[topicPartition]sinkLag{}
	}
	t.extra.lag[topicPartition{topic, partition}] = sinkLag{end: end, committed: committed}
	t.extra.mu.Unlock()
}

// SinkLagMax sets sink-record-lag-max: the largest lag of the task's
// partitions behind their end, from the position the task was given.
func (t *Task) SinkLagMax(n int64) {
	if t != nil {
		t.lagMax.Store(max(n, 0))
	}
}

// ForgetSinkPartition drops a partition's lag (revoked).
func (t *Task) ForgetSinkPartition(topic string, partition int32) {
	if t == nil {
		return
	}
	t.extra.mu.Lock()
	delete(t.extra.lag, topicPartition{topic, partition})
	t.extra.mu.Unlock()
}

// E2E records a record's end-to-end latency.
func (t *Task) E2E(d time.Duration) {
	if t == nil {
		return
	}
	x := &t.extra
	if x.e2eCounts == nil {
		return
	}
	s := d.Seconds()
	i, _ := slices.BinarySearch(e2eBuckets, s)
	if i < len(x.e2eCounts) {
		x.e2eCounts[i].Add(1)
	}
	x.e2eCount.Add(1)
	for {
		old := x.e2eSum.Load()
		if x.e2eSum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+s)) {
			break
		}
	}
}

func (x *sinkExtra) init() { x.e2eCounts = make([]atomic.Uint64, len(e2eBuckets)) }

// collectExtra writes the sink's lag and latency series.
func (t *Task) collectExtra(ch chan<- prometheus.Metric) {
	if t.kind != Sink {
		return
	}
	conn, task := t.id.Connector, strconv.Itoa(t.id.Task)
	t.extra.mu.Lock()
	tps := make([]topicPartition, 0, len(t.extra.lag))
	for tp := range t.extra.lag {
		tps = append(tps, tp)
	}
	lags := make([]sinkLag, len(tps))
	for i, tp := range tps {
		lags[i] = t.extra.lag[tp]
	}
	t.extra.mu.Unlock()
	for i, tp := range tps {
		l := lags[i]
		p := strconv.Itoa(int(tp.part))
		ch <- prometheus.MustNewConstMetric(descSinkLag, prometheus.GaugeValue, float64(max(l.end-l.committed, 0)), conn, task, tp.topic, p)
		ch <- prometheus.MustNewConstMetric(descSinkEnd, prometheus.GaugeValue, float64(l.end), conn, task, tp.topic, p)
		ch <- prometheus.MustNewConstMetric(descSinkCommitted, prometheus.GaugeValue, float64(l.committed), conn, task, tp.topic, p)
	}
	x := &t.extra
	buckets := make(map[float64]uint64, len(e2eBuckets))
	var cum uint64
	for i, b := range e2eBuckets {
		cum += x.e2eCounts[i].Load()
		buckets[b] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descE2E, x.e2eCount.Load(), math.Float64frombits(x.e2eSum.Load()), buckets, conn, task)
}

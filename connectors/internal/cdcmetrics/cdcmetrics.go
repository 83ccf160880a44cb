// Package cdcmetrics is the Debezium-compatible connectors' (postgres,
// mongodb) snapshot and streaming metrics: Debezium's MBean attributes
// (debezium.<plugin>:type=connector-metrics,context=snapshot|streaming,
// server=<topic.prefix>) as the JMX exporter's Debezium rules name them,
// debezium_metrics_<Attribute>{plugin,name,context}, registered in the
// task's sdk.Metrics (the worker adds connector and task). Users' Debezium
// dashboards and alerts (MilliSecondsBehindSource, Connected,
// RowsScanned, SnapshotCompleted, …) work unchanged.
//
// Recording is a few atomic operations per event; what depends on the
// time (MilliSecondsSinceLastEvent, MilliSecondsBehindSource) is computed
// when the runtime takes a snapshot.
//
//	m := cdcmetrics.New(sdk.MetricsOf(tc), "postgres", cfg.TopicPrefix, time.Now)
//	m.SnapshotStarted([]string{"public.items"})
//	rows := m.TableRows("postgres", cfg.TopicPrefix, "public.items")
//	m.SnapshotRow(rows)           // per row read
//	m.SnapshotCompleted()
//	m.SetConnected(true)
//	m.Event(cdcmetrics.Update)    // per change streamed
//	m.Queued(commitTime)          // a batch of changes committed at commitTime waits for Poll
//	m.Delivered()                 // … and Poll handed it out
package cdcmetrics

import (
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// Op is a change's kind.
type Op byte

// Ops, as Debezium's envelopes name them.
const (
	Read   Op = 'r'
	Create Op = 'c'
	Update Op = 'u'
	Delete Op = 'd'
)

// Metrics are one task's snapshot and streaming metrics. A nil *Metrics
// records nothing.
type Metrics struct {
	now          func() time.Time
	snap, stream ctxMetrics

	rows                         *sdk.GaugeVec
	totalTables, remainingTables *sdk.Gauge
	running, paused, aborted     *sdk.Gauge
	completed, skipped           *sdk.Gauge
	pausedDuration               *sdk.Gauge
	connected, committed         *sdk.Gauge
	unchanged                    *sdk.Gauge
	snapStart                    atomic.Int64 // ms, 0: none
	snapEnd                      atomic.Int64

	lag lagTracker
}

// ctxMetrics are the attributes both contexts have.
type ctxMetrics struct {
	events, creates, updates, deletes, filtered, erroneous *sdk.Gauge
	last                                                   atomic.Int64 // ms of the last event
}

const (
	prefix = "debezium_metrics_"
	// The JMX exporter's Debezium rules give no type: untyped.
)

// New registers the metrics of a task of plugin ("postgres", "mongodb")
// whose topic.prefix is name; now is the clock.
func New(reg *sdk.Metrics, plugin, name string, now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{now: now}
	labels := []string{"plugin", "name", "context"}
	g := func(attr, help, ctx string) *sdk.Gauge {
		return reg.Untyped(prefix+attr, help, labels...).With(plugin, name, ctx)
	}
	fn := func(attr, help, ctx string, f func() float64) {
		reg.Untyped(prefix+attr, help, labels...).WithFunc(f, plugin, name, ctx)
	}
	for _, c := range []struct {
		ctx string
		m   *ctxMetrics
	}{{"snapshot", &m.snap}, {"streaming", &m.stream}} {
		cm, ctx := c.m, c.ctx
		cm.events = g("TotalNumberOfEventsSeen", "The total number of events that this connector has seen since last started or reset.", ctx)
		cm.creates = g("TotalNumberOfCreateEventsSeen", "The total number of create events that this connector has seen since the last start or metrics reset.", ctx)
		cm.updates = g("TotalNumberOfUpdateEventsSeen", "The total number of update events that this connector has seen since the last start or metrics reset.", ctx)
		cm.deletes = g("TotalNumberOfDeleteEventsSeen", "The total number of delete events that this connector has seen since the last start or metrics reset.", ctx)
		cm.filtered = g("NumberOfEventsFiltered", "The number of events that have been filtered by include/exclude list filtering rules configured on the connector.", ctx)
		cm.erroneous = g("NumberOfErroneousEvents", "The number of events that have been erroneous.", ctx)
		fn("MilliSecondsSinceLastEvent", "The number of milliseconds since the connector has read and processed the most recent event (-1 before the first).", ctx, func() float64 {
			last := cm.last.Load()
			if last == 0 {
				return -1
			}
			return float64(max(m.now().UnixMilli()-last, 0))
		})
	}
	m.rows = reg.Untyped(prefix+"RowsScanned", "The number of rows scanned in each table of the snapshot.", "plugin", "name", "context", "table")
	_ = m.rows // series are made per table as the snapshot reads it
	s := func(attr, help string) *sdk.Gauge { return g(attr, help, "snapshot") }
	m.totalTables = s("TotalTableCount", "The total number of tables that are being included in the snapshot.")
	m.remainingTables = s("RemainingTableCount", "The number of tables that the snapshot has yet to copy.")
	m.running = s("SnapshotRunning", "Whether the snapshot was started.")
	m.paused = s("SnapshotPaused", "Whether the snapshot was paused.")
	m.aborted = s("SnapshotAborted", "Whether the snapshot was aborted.")
	m.completed = s("SnapshotCompleted", "Whether the snapshot completed.")
	m.skipped = s("SnapshotSkipped", "Whether the snapshot was skipped (snapshot.mode=no_data, or an offset says it is done).")
	m.pausedDuration = s("SnapshotPausedDurationInSeconds", "The total number of seconds that the snapshot has paused.")
	fn("SnapshotDurationInSeconds", "The total number of seconds that the snapshot has taken so far, even if not complete.", "snapshot", func() float64 {
		start := m.snapStart.Load()
		if start == 0 {
			return 0
		}
		end := m.snapEnd.Load()
		if end == 0 {
			end = m.now().UnixMilli()
		}
		return float64((end - start) / 1000)
	})
	st := func(attr, help string) *sdk.Gauge { return g(attr, help, "streaming") }
	m.connected = st("Connected", "Flag that denotes whether the connector is currently connected to the database server.")
	m.committed = st("NumberOfCommittedTransactions", "The number of processed transactions that were committed.")
	m.unchanged = st("NumberOfUnchangedEventsSkipped", "The number of events that have been skipped because they held no change.")
	fn("MilliSecondsBehindSource", "The number of milliseconds between the last change event's timestamp (its commit in the database) and the connector processing it; "+
		"while changes wait to be processed, the time since the oldest of them was committed.", "streaming", m.lag.behind(m.now))
	fn("MilliSecondsBehindSourceMinValue", "The minimum of MilliSecondsBehindSource since the task started.", "streaming", m.lag.stat(func(s *sketch) float64 { return s.min }))
	fn("MilliSecondsBehindSourceMaxValue", "The maximum of MilliSecondsBehindSource since the task started.", "streaming", m.lag.stat(func(s *sketch) float64 { return s.max }))
	fn("MilliSecondsBehindSourceAverageValue", "The average of MilliSecondsBehindSource since the task started.", "streaming", m.lag.stat(func(s *sketch) float64 { return s.sum / float64(s.n) }))
	for _, q := range []struct {
		attr string
		q    float64
	}{{"P50", 0.5}, {"P95", 0.95}, {"P99", 0.99}} {
		fn("MilliSecondsBehindSource"+q.attr, "The "+q.attr[1:]+"th percentile of MilliSecondsBehindSource since the task started (1% relative accuracy, as Debezium's DDSketch).",
			"streaming", m.lag.stat(func(s *sketch) float64 { return s.quantile(q.q) }))
	}
	return m
}

// Queue registers the queue attributes: the capacity, in batches, of the
// queue between the reader and Poll, what remains of it (capacity less
// the batches Queued and not Delivered), and the byte sizes (0: not
// bounded by bytes, as Debezium's default).
func (m *Metrics) Queue(reg *sdk.Metrics, plugin, name string, capacity int) {
	if m == nil {
		return
	}
	remaining := func() int {
		m.lag.mu.Lock()
		defer m.lag.mu.Unlock()
		return max(capacity-len(m.lag.waiting), 0)
	}
	for _, ctx := range []string{"snapshot", "streaming"} {
		reg.Untyped(prefix+"QueueTotalCapacity", "The length of the queue between the reader and the task's Poll.", "plugin", "name", "context").
			With(plugin, name, ctx).Set(float64(capacity))
		reg.Untyped(prefix+"QueueRemainingCapacity", "The free capacity of the queue between the reader and the task's Poll.", "plugin", "name", "context").
			WithFunc(func() float64 { return float64(remaining()) }, plugin, name, ctx)
		reg.Untyped(prefix+"MaxQueueSizeInBytes", "The maximum buffer of the queue in bytes (0: not bounded by bytes).", "plugin", "name", "context").
			With(plugin, name, ctx).Set(0)
		reg.Untyped(prefix+"CurrentQueueSizeInBytes", "The current volume, in bytes, of records in the queue (0 when not bounded by bytes).", "plugin", "name", "context").
			With(plugin, name, ctx).Set(0)
	}
}

// SnapshotStarted records a snapshot of tables starting.
func (m *Metrics) SnapshotStarted(tables []string) {
	if m == nil {
		return
	}
	m.snapStart.Store(m.now().UnixMilli())
	m.snapEnd.Store(0)
	m.totalTables.Set(float64(len(tables)))
	m.remainingTables.Set(float64(len(tables)))
	m.running.Set(1)
	m.completed.Set(0)
	m.aborted.Set(0)
}

// SnapshotRow records a row read (a read event) into rows, its table's
// RowsScanned (TableRows).
func (m *Metrics) SnapshotRow(rows *sdk.Gauge) {
	if m == nil || rows == nil {
		return
	}
	rows.Add(1)
	m.snap.events.Add(1)
	m.snap.last.Store(m.now().UnixMilli())
}

// TableRows returns the RowsScanned series of a table, for SnapshotRow.
func (m *Metrics) TableRows(plugin, name, table string) *sdk.Gauge {
	if m == nil {
		return nil
	}
	return m.rows.With(plugin, name, "snapshot", table)
}

// SetRemainingTables sets RemainingTableCount.
func (m *Metrics) SetRemainingTables(n int) {
	if m != nil {
		m.remainingTables.Set(float64(n))
	}
}

// SnapshotTableDone records that a table is read.
func (m *Metrics) SnapshotTableDone() {
	if m == nil {
		return
	}
	m.remainingTables.Add(-1)
}

// SnapshotCompleted records the snapshot's end.
func (m *Metrics) SnapshotCompleted() {
	if m == nil {
		return
	}
	m.snapEnd.Store(m.now().UnixMilli())
	m.running.Set(0)
	m.completed.Set(1)
	m.remainingTables.Set(0)
}

// SnapshotAborted records a snapshot that did not complete.
func (m *Metrics) SnapshotAborted() {
	if m == nil {
		return
	}
	m.snapEnd.Store(m.now().UnixMilli())
	m.running.Set(0)
	m.aborted.Set(1)
}

// SnapshotSkipped records that no snapshot is taken.
func (m *Metrics) SnapshotSkipped() {
	if m == nil {
		return
	}
	m.skipped.Set(1)
}

// SetConnected records whether the stream is connected to the database.
func (m *Metrics) SetConnected(c bool) {
	if m == nil {
		return
	}
	m.connected.SetBool(c)
}

// Event records a change streamed.
func (m *Metrics) Event(op Op) {
	if m == nil {
		return
	}
	c := &m.stream
	c.events.Add(1)
	switch op {
	case Create:
		c.creates.Add(1)
	case Update:
		c.updates.Add(1)
	case Delete:
		c.deletes.Add(1)
	}
	c.last.Store(m.now().UnixMilli())
}

// Filtered records a streamed change left out by the connector's filters.
func (m *Metrics) Filtered() {
	if m == nil {
		return
	}
	m.stream.filtered.Add(1)
}

// Unchanged records a streamed change skipped because it changed nothing.
func (m *Metrics) Unchanged() {
	if m == nil {
		return
	}
	m.unchanged.Add(1)
}

// Committed records a transaction streamed.
func (m *Metrics) Committed() {
	if m == nil {
		return
	}
	m.committed.Add(1)
}

// Queued records a batch of changes, the oldest committed at sourceTime,
// waiting for Poll; Delivered records that Poll handed the oldest such
// batch out (its lag is then a sample of MilliSecondsBehindSource). A zero
// sourceTime is a batch without changes (snapshot rows, heartbeats).
func (m *Metrics) Queued(sourceTime time.Time) {
	if m != nil {
		m.lag.queued(sourceTime)
	}
}

// Delivered: see Queued.
func (m *Metrics) Delivered() {
	if m == nil {
		return
	}
	m.lag.delivered(m.now())
}

// Requeued records that the batches queued were dropped (the reader was
// started again with a new queue).
func (m *Metrics) Requeued() {
	if m == nil {
		return
	}
	m.lag.mu.Lock()
	m.lag.waiting = m.lag.waiting[:0]
	m.lag.mu.Unlock()
}

// lagTracker keeps the source times of the batches between the reader and
// Poll, and the lag of the batches delivered.
type lagTracker struct {
	mu      sync.Mutex
	waiting []int64 // source times, ms (0: none), in queue order
	last    float64 // the last batch's lag, ms
	has     bool
	sk      sketch
}

func (l *lagTracker) queued(t time.Time) {
	var ms int64
	if !t.IsZero() {
		ms = t.UnixMilli()
	}
	l.mu.Lock()
	l.waiting = append(l.waiting, ms)
	l.mu.Unlock()
}

func (l *lagTracker) delivered(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiting) == 0 {
		return
	}
	ts := l.waiting[0]
	l.waiting = l.waiting[1:]
	if ts == 0 {
		return
	}
	lag := float64(max(now.UnixMilli()-ts, 0))
	l.last, l.has = lag, true
	l.sk.add(lag)
}

// behind is MilliSecondsBehindSource: the last delivered batch's lag, or
// the age of the oldest change still waiting if that is more.
func (l *lagTracker) behind(now func() time.Time) func() float64 {
	return func() float64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		v := -1.0
		if l.has {
			v = l.last
		}
		for _, ts := range l.waiting {
			if ts != 0 {
				v = max(v, float64(max(now().UnixMilli()-ts, 0)))
				break
			}
		}
		return v
	}
}

// stat computes f over the lags delivered (NaN before the first).
func (l *lagTracker) stat(f func(*sketch) float64) func() float64 {
	return func() float64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.sk.n == 0 {
			return math.NaN()
		}
		return f(&l.sk)
	}
}

// sketch is a DDSketch of non-negative values with 1% relative accuracy:
// value v > 0 counts in bucket ceil(log_gamma(v)), gamma = (1+a)/(1-a).
type sketch struct {
	counts        map[int]uint64
	zeros, n      uint64
	min, max, sum float64
}

const accuracy = 0.01

var logGamma = math.Log((1 + accuracy) / (1 - accuracy))

func (s *sketch) add(v float64) {
	if s.n == 0 {
		s.min, s.max = v, v
	}
	s.min, s.max = min(s.min, v), max(s.max, v)
	s.sum += v
	s.n++
	if v <= 0 {
		s.zeros++
		return
	}
	if s.counts == nil {
		s.counts = map[int]uint64{}
	}
	s.counts[int(math.Ceil(math.Log(v)/logGamma))]++
}

// quantile returns the q-quantile (0 < q < 1) within the accuracy.
func (s *sketch) quantile(q float64) float64 {
	rank := uint64(q * float64(s.n-1))
	if rank < s.zeros {
		return 0
	}
	seen := s.zeros
	keys := slices.Sorted(maps.Keys(s.counts))
	for _, k := range keys {
		seen += s.counts[k]
		if seen > rank {
			// The bucket's representative value: 2 g^k / (g + 1).
			g := math.Exp(logGamma)
			return 2 * math.Pow(g, float64(k)) / (g + 1)
		}
	}
	return s.max
}

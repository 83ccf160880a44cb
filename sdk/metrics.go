package sdk

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Metrics is the registry of a task's (or connector's) own metrics:
// Kafka's KIP-877 PluginMetrics for Tributary. A task registers counters,
// gauges and histograms here; the runtime sends their values to the
// worker, which serves them on its /metrics with the connector and task
// labels added (a plugin must not use those two label names). A plugin
// needs no Prometheus library: names, help texts and label names are
// Prometheus's, the rest is the worker's business.
//
// Get a task's registry with MetricsOf(tc) in Open. Registering is cheap
// and may happen at any time; recording (Counter.Add, Gauge.Set,
// Histogram.Observe) is an atomic operation or two, safe from any
// goroutine. Registering a name again returns the first registration.
// A series' values are kept until the task ends: label values must be
// few (tables, partitions, reasons), never per record.
type Metrics struct {
	mu     sync.Mutex
	fams   []*metricFamily
	byName map[string]*metricFamily
}

// NewMetrics returns an empty registry: what MetricsOf gives a task whose
// runtime collects none, and what tests record into.
func NewMetrics() *Metrics { return &Metrics{byName: map[string]*metricFamily{}} }

// MetricsOf returns the metrics registry the runtime gave a context
// (SourceTaskContext, SinkTaskContext or ConnectorContext), or a fresh one
// that nobody reads when the runtime offers none.
func MetricsOf(c any) *Metrics {
	if h, ok := c.(interface{ Metrics() *Metrics }); ok {
		if m := h.Metrics(); m != nil {
			return m
		}
	}
	return NewMetrics()
}

// MetricType is the Prometheus type of a family.
type MetricType int

// Metric types.
const (
	MetricUntyped MetricType = iota
	MetricCounter
	MetricGauge
	MetricHistogram
)

// MetricFamily is a snapshot of one family: what the runtime sends.
type MetricFamily struct {
	Name, Help string
	Type       MetricType
	LabelNames []string
	// Buckets are a histogram's upper bounds, ascending (+Inf implied).
	Buckets []float64
	Metrics []MetricSample
}

// MetricSample is one series of a MetricFamily snapshot.
type MetricSample struct {
	LabelValues []string
	// Value of a counter, gauge or untyped series.
	Value float64
	// Count, Sum and BucketCounts (cumulative, one per bucket) of a
	// histogram.
	Count        uint64
	Sum          float64
	BucketCounts []uint64
}

type metricFamily struct {
	name, help string
	typ        MetricType
	labels     []string
	buckets    []float64
	fn         func() float64 // a GaugeFunc's

	mu     sync.RWMutex
	series map[string]*metricSeries
	order  []*metricSeries
}

type metricSeries struct {
	values []string
	bits   atomic.Uint64  // a float64's
	fn     func() float64 // WithFunc's
	// histogram
	counts []atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Uint64 // a float64's
}

func (m *Metrics) family(name, help string, typ MetricType, buckets []float64, labels []string) *metricFamily {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName == nil {
		m.byName = map[string]*metricFamily{}
	}
	if f := m.byName[name]; f != nil {
		return f
	}
	f := &metricFamily{name: name, help: help, typ: typ, labels: slices.Clone(labels), buckets: slices.Clone(buckets),
		series: map[string]*metricSeries{}}
	m.fams = append(m.fams, f)
	m.byName[name] = f
	return f
}

// get returns the series of label values (missing ones are "", extra
// ones dropped).
func (f *metricFamily) get(values []string) *metricSeries {
	if len(values) != len(f.labels) {
		v := make([]string, len(f.labels))
		copy(v, values)
		values = v
	}
	key := strings.Join(values, "\xff")
	f.mu.RLock()
	s := f.series[key]
	f.mu.RUnlock()
	if s != nil {
		return s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s = f.series[key]; s == nil {
		s = &metricSeries{values: slices.Clone(values)}
		if f.typ == MetricHistogram {
			s.counts = make([]atomic.Uint64, len(f.buckets))
		}
		f.series[key] = s
		f.order = append(f.order, s)
	}
	return s
}

func addFloat(u *atomic.Uint64, d float64) {
	for {
		old := u.Load()
		if u.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// CounterVec is a counter family with labels.
type CounterVec struct{ f *metricFamily }

// Counter registers a counter (a value that only goes up; by convention
// its name ends in _total).
func (m *Metrics) Counter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{m.family(name, help, MetricCounter, nil, labels)}
}

// With returns the counter of the label values, in the labels' order.
func (v *CounterVec) With(values ...string) *Counter { return &Counter{v.f.get(values)} }

// Counter is one counter series.
type Counter struct{ s *metricSeries }

// Inc adds 1.
func (c *Counter) Inc() { addFloat(&c.s.bits, 1) }

// Add adds d (not negative).
func (c *Counter) Add(d float64) {
	if d > 0 {
		addFloat(&c.s.bits, d)
	}
}

// GaugeVec is a gauge (or untyped) family with labels.
type GaugeVec struct{ f *metricFamily }

// Gauge registers a gauge.
func (m *Metrics) Gauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{m.family(name, help, MetricGauge, nil, labels)}
}

// Untyped registers a gauge exported without a type, as the JMX exporter
// exports MBean attributes its rules give none (Debezium's, for example).
func (m *Metrics) Untyped(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{m.family(name, help, MetricUntyped, nil, labels)}
}

// GaugeFunc registers a gauge without labels whose value f computes when
// the runtime takes a snapshot (f must be quick and safe to call from any
// goroutine).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	fam := m.family(name, help, MetricGauge, nil, nil)
	fam.mu.Lock()
	fam.fn = f
	fam.mu.Unlock()
}

// With returns the gauge of the label values, in the labels' order.
func (v *GaugeVec) With(values ...string) *Gauge { return &Gauge{v.f.get(values)} }

// WithFunc makes the series of the label values one whose value f
// computes when the runtime takes a snapshot (f must be quick and safe to
// call from any goroutine): a time since something, a queue's length.
func (v *GaugeVec) WithFunc(f func() float64, values ...string) {
	s := v.f.get(values)
	v.f.mu.Lock()
	s.fn = f
	v.f.mu.Unlock()
}

// Gauge is one gauge series.
type Gauge struct{ s *metricSeries }

// Set sets the value.
func (g *Gauge) Set(v float64) { g.s.bits.Store(math.Float64bits(v)) }

// SetBool sets 1 for true, 0 for false.
func (g *Gauge) SetBool(b bool) {
	if b {
		g.Set(1)
	} else {
		g.Set(0)
	}
}

// Add adds d (may be negative).
func (g *Gauge) Add(d float64) { addFloat(&g.s.bits, d) }

// Value is the current value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.s.bits.Load()) }

// HistogramVec is a histogram family with labels.
type HistogramVec struct{ f *metricFamily }

// Histogram registers a histogram with the given upper bounds (sorted
// here; +Inf is implied).
func (m *Metrics) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	b := slices.Clone(buckets)
	slices.Sort(b)
	return &HistogramVec{m.family(name, help, MetricHistogram, b, labels)}
}

// With returns the histogram of the label values, in the labels' order.
func (v *HistogramVec) With(values ...string) *Histogram {
	return &Histogram{s: v.f.get(values), buckets: v.f.buckets}
}

// Histogram is one histogram series.
type Histogram struct {
	s       *metricSeries
	buckets []float64
}

// Observe records a value.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.buckets, v)
	if i < len(h.s.counts) {
		h.s.counts[i].Add(1)
	}
	h.s.count.Add(1)
	addFloat(&h.s.sum, v)
}

// Families returns every family registered, in the order they were,
// without their series: what a connector declares, for its
// documentation (Tributary's README lists its connectors' series from
// it).
func (m *Metrics) Families() []MetricFamily {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MetricFamily, len(m.fams))
	for i, f := range m.fams {
		out[i] = MetricFamily{Name: f.name, Help: f.help, Type: f.typ, LabelNames: slices.Clone(f.labels), Buckets: slices.Clone(f.buckets)}
	}
	return out
}

// Snapshot returns every family with its series' current values, in the
// order they were registered.
func (m *Metrics) Snapshot() []MetricFamily {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	fams := slices.Clone(m.fams)
	m.mu.Unlock()
	out := make([]MetricFamily, 0, len(fams))
	for _, f := range fams {
		mf := MetricFamily{Name: f.name, Help: f.help, Type: f.typ, LabelNames: f.labels, Buckets: f.buckets}
		f.mu.RLock()
		fn, series := f.fn, slices.Clone(f.order)
		f.mu.RUnlock()
		if fn != nil {
			mf.Metrics = append(mf.Metrics, MetricSample{Value: fn()})
		}
		f.mu.RLock()
		fns := make([]func() float64, len(series))
		for i, s := range series {
			fns[i] = s.fn
		}
		f.mu.RUnlock()
		for i, s := range series {
			ms := MetricSample{LabelValues: s.values, Value: math.Float64frombits(s.bits.Load())}
			if fns[i] != nil {
				ms.Value = fns[i]()
			}
			if f.typ == MetricHistogram {
				ms.Count, ms.Sum = s.count.Load(), math.Float64frombits(s.sum.Load())
				ms.BucketCounts = make([]uint64, len(s.counts))
				var cum uint64
				for i := range s.counts {
					cum += s.counts[i].Load()
					ms.BucketCounts[i] = cum
				}
			}
			mf.Metrics = append(mf.Metrics, ms)
		}
		if len(mf.Metrics) > 0 {
			out = append(out, mf)
		}
	}
	return out
}

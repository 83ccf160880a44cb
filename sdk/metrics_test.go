package sdk

import (
	"fmt"
	"sync"
	"testing"
)

func TestMetricsSnapshot(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	rows := m.Untyped("debezium_metrics_RowsScanned", "Rows scanned.", "table")
	rows.With("public.a").Set(3)
	rows.With("public.b").Add(2)
	rows.With("public.b").Add(1)
	files := m.Counter("files_total", "Files.")
	files.With().Inc()
	files.With().Add(-5) // ignored: counters only go up
	up := m.Histogram("upload_seconds", "Uploads.", []float64{1, 0.1})
	up.With().Observe(0.05)
	up.With().Observe(0.5)
	up.With().Observe(7)
	m.GaugeFunc("queue", "Queue.", func() float64 { return 42 })
	m.Gauge("unused", "No series yet.", "x")
	if again := m.Counter("files_total", "ignored", "other"); again.f != files.f {
		t.Error("registering a name again must return the first registration")
	}
	got := m.Snapshot()
	want := []MetricFamily{
		{Name: "debezium_metrics_RowsScanned", Help: "Rows scanned.", Type: MetricUntyped, LabelNames: []string{"table"},
			Metrics: []MetricSample{{LabelValues: []string{"public.a"}, Value: 3}, {LabelValues: []string{"public.b"}, Value: 3}}},
		{Name: "files_total", Help: "Files.", Type: MetricCounter, LabelNames: []string{}, Metrics: []MetricSample{{LabelValues: []string{}, Value: 1}}},
		{Name: "upload_seconds", Help: "Uploads.", Type: MetricHistogram, LabelNames: []string{}, Buckets: []float64{0.1, 1},
			Metrics: []MetricSample{{LabelValues: []string{}, Count: 3, Sum: 7.55, BucketCounts: []uint64{1, 2}}}},
		{Name: "queue", Help: "Queue.", Type: MetricGauge, Metrics: []MetricSample{{Value: 42}}},
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("snapshot\n got %+v\nwant %+v", got, want)
	}
	var names []string
	for _, f := range m.Families() {
		if len(f.Metrics) != 0 {
			t.Errorf("Families: %s has series", f.Name)
		}
		names = append(names, fmt.Sprint(f.Name, f.LabelNames))
	}
	if got, want := fmt.Sprint(names), "[debezium_metrics_RowsScanned[table] files_total[] upload_seconds[] queue[] unused[x]]"; got != want {
		t.Errorf("Families: %s, want %s", got, want)
	}
}

func TestMetricsOf(t *testing.T) {
	t.Parallel()
	own := NewMetrics()
	tc := &sourceTaskContext{metrics: own}
	if MetricsOf(tc) != own {
		t.Error("MetricsOf must return the context's registry")
	}
	if MetricsOf(struct{}{}) == nil {
		t.Error("MetricsOf of a context without one must return a registry")
	}
}

func TestMetricsConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	c := m.Counter("n_total", "N.", "k")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.With([]string{"a", "b"}[i%2]).Inc()
				m.Snapshot()
			}
		}()
	}
	wg.Wait()
	var total float64
	for _, s := range m.Snapshot()[0].Metrics {
		total += s.Value
	}
	if total != 8000 {
		t.Errorf("total %v, want 8000", total)
	}
}

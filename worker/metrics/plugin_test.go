package metrics

import (
	"testing"

	"github.com/tributary-dev/tributary/sdk"
)

type reporter []sdk.MetricFamily

func (r reporter) PluginMetrics() []sdk.MetricFamily { return r }

// TestPluginSeries: a plugin's own series are served with the connector
// and task labels the worker adds, which win over the plugin's; names and
// labels Prometheus refuses are left out; histograms keep their buckets.
func TestPluginSeries(t *testing.T) {
	t.Parallel()
	c := New(Config{WorkerID: "w:8083", Now: newClock().Now})
	m := sdk.NewMetrics()
	m.Untyped("debezium_metrics_RowsScanned", "Rows.", "plugin", "name", "context", "table", "connector").
		With("postgres", "cdc", "snapshot", "public.items", "spoofed").Set(150)
	m.Counter("bad-name", "Refused.").With().Inc()
	up := m.Histogram("tributary_s3_upload_duration_seconds", "Uploads.", []float64{0.1, 1})
	up.With().Observe(0.05)
	up.With().Observe(0.5)
	task := c.StartTask(TaskID{"pg", 0}, Source)
	task.SetPluginMetrics(reporter(m.Snapshot()))
	cm := sdk.NewMetrics()
	cm.Gauge("tributary_test_connector_gauge", "A connector's.").With().Set(7)
	c.SetConnector("pg", Source, "C", "1")
	c.SetConnectorPlugin("pg", reporter(cm.Snapshot()))
	fams := gather(t, c)
	if got := valueOf(t, fams, "debezium_metrics_RowsScanned", "connector", "pg", "task", "0", "table", "public.items", "context", "snapshot"); got != 150 {
		t.Errorf("RowsScanned = %v", got)
	}
	if fams["bad-name"] != nil || fams["bad_name"] != nil {
		t.Error("an invalid name was served")
	}
	h := fams["tributary_s3_upload_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetBucket()[0].GetCumulativeCount() != 1 || h.GetBucket()[1].GetCumulativeCount() != 2 {
		t.Errorf("histogram %v", h)
	}
	if got := valueOf(t, fams, "tributary_test_connector_gauge", "connector", "pg"); got != 7 {
		t.Errorf("connector gauge = %v", got)
	}
}

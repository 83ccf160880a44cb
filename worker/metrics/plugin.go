package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/tributary-dev/tributary/sdk"
)

// PluginReporter is a task or connector whose plugin reports its own
// metrics (plugins.MetricsReporter): the last snapshot it sent.
type PluginReporter interface {
	PluginMetrics() []sdk.MetricFamily
}

// SetPluginMetrics attaches the plugin's own metrics to the task: they are
// served with the task's, its connector and task labels added (KIP-877).
func (t *Task) SetPluginMetrics(r PluginReporter) {
	if t != nil && r != nil {
		t.plugin.Store(&r)
	}
}

// SetConnectorPlugin attaches a connector plugin's own metrics to the
// connector's set (its connector label added).
func (c *Connect) SetConnectorPlugin(name string, r PluginReporter) {
	if c == nil || r == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn := c.conns[name]; cn != nil {
		cn.plugin = r
	}
}

// writePlugin writes a plugin's families with the labels the worker adds
// (names and values), which win over the plugin's own of the same name.
func writePlugin(w *writer, fams []sdk.MetricFamily, names, values []string) {
	for _, f := range fams {
		if !model.LegacyValidation.IsValidMetricName(f.Name) {
			continue
		}
		var keep []int // the plugin's labels kept, by index
		labels := slices.Clone(names)
		for i, l := range f.LabelNames {
			if model.LegacyValidation.IsValidLabelName(l) && !slices.Contains(names, l) && l != "le" {
				keep = append(keep, i)
				labels = append(labels, l)
			}
		}
		typ, ok := pluginTypes[f.Type]
		if !ok && f.Type != sdk.MetricHistogram {
			continue
		}
		if !w.descs.typeOK(f.Name, f.Type) {
			continue // another plugin's family of that name has another type
		}
		s := series{name: f.Name, labels: labels, help: f.Help, typ: typ}
		desc := w.descs.get(&s)
		for _, m := range f.Metrics {
			lv := slices.Clone(values)
			for _, i := range keep {
				v := ""
				if i < len(m.LabelValues) {
					v = m.LabelValues[i]
				}
				lv = append(lv, v)
			}
			var pm prometheus.Metric
			var err error
			if f.Type == sdk.MetricHistogram {
				buckets := make(map[float64]uint64, len(f.Buckets))
				for i, b := range f.Buckets {
					if i < len(m.BucketCounts) {
						buckets[b] = m.BucketCounts[i]
					}
				}
				pm, err = prometheus.NewConstHistogram(desc, m.Count, m.Sum, buckets, lv...)
			} else {
				pm, err = prometheus.NewConstMetric(desc, typ, m.Value, lv...)
			}
			if err == nil {
				w.ch <- pm
			}
		}
	}
}

var pluginTypes = map[sdk.MetricType]prometheus.ValueType{
	sdk.MetricUntyped: prometheus.UntypedValue,
	sdk.MetricCounter: prometheus.CounterValue,
	sdk.MetricGauge:   prometheus.GaugeValue,
}

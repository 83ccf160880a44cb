package sdk

import (
	"sync"
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// metricsProto is a snapshot in the plugin protocol.
func metricsProto(fams []MetricFamily) *pluginpb.Metrics {
	out := &pluginpb.Metrics{Families: make([]*pluginpb.MetricFamily, len(fams))}
	for i, f := range fams {
		pf := &pluginpb.MetricFamily{Name: f.Name, Help: f.Help, Type: pluginpb.MetricType(f.Type), LabelNames: f.LabelNames,
			Buckets: f.Buckets, Metrics: make([]*pluginpb.Metric, len(f.Metrics))}
		for j, s := range f.Metrics {
			pf.Metrics[j] = &pluginpb.Metric{LabelValues: s.LabelValues, Value: s.Value, Count: s.Count, Sum: s.Sum, BucketCounts: s.BucketCounts}
		}
		out.Families[i] = pf
	}
	return out
}

// reportMetrics sends m's snapshot every interval (none when interval is
// 0: the host collects none) from a goroutine of its own. The returned
// stop sends a last snapshot and waits for the goroutine; it is
// idempotent.
func reportMetrics(m *Metrics, interval time.Duration, send func(*pluginpb.Metrics) error) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	sendSnapshot := func() {
		if fams := m.Snapshot(); len(fams) > 0 {
			_ = send(metricsProto(fams)) // a broken stream ends the task anyway
		}
	}
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				sendSnapshot()
			case <-done:
				sendSnapshot()
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}
}

package sdk

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// metricsKey names a running task (task >= 0) or connector (task -1).
type metricsKey struct {
	connector string
	task      int32
}

// liveMetrics is a running task's or connector's registry, watched by the
// host through WatchMetrics.
type liveMetrics struct {
	m    *Metrics
	done chan struct{} // closed when the task or connector ended
}

// metricsRegistry holds the registries of the tasks and connectors the
// plugin process runs.
type metricsRegistry struct {
	mu      sync.Mutex
	live    map[metricsKey]*liveMetrics
	changed chan struct{} // closed and replaced at every add
}

// add registers a starting task's registry; the returned end marks it
// ended (watchers send a last snapshot) and forgets it.
func (r *metricsRegistry) add(connector string, task int32, m *Metrics) (end func()) {
	k := metricsKey{connector, task}
	lm := &liveMetrics{m: m, done: make(chan struct{})}
	r.mu.Lock()
	if r.live == nil {
		r.live = map[metricsKey]*liveMetrics{}
	}
	r.live[k] = lm
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(lm.done)
			// A host that asks late (a task that failed at once) still
			// gets the last values: forgotten a while after the end.
			time.AfterFunc(endedMetricsKept, func() {
				r.mu.Lock()
				if r.live[k] == lm {
					delete(r.live, k)
				}
				r.mu.Unlock()
			})
		})
	}
}

// endedMetricsKept is how long an ended task's registry stays for
// WatchMetrics.
const endedMetricsKept = 30 * time.Second

// get returns a task's registry, waiting up to wait for it to be added
// (the host may ask as the task starts).
func (r *metricsRegistry) get(k metricsKey, wait time.Duration) *liveMetrics {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		lm := r.live[k]
		if lm != nil {
			r.mu.Unlock()
			return lm
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return nil
		}
	}
}

// WatchMetrics streams a running task's or connector's metrics snapshots.
func (s *server) WatchMetrics(req *pluginpb.WatchMetricsRequest, stream pluginpb.Plugin_WatchMetricsServer) error {
	lm := s.metrics.get(metricsKey{req.GetConnector(), req.GetTask()}, 5*time.Second)
	if lm == nil {
		return status.Errorf(codes.NotFound, "sdk: no running task %d of connector %s", req.GetTask(), req.GetConnector())
	}
	interval := time.Duration(req.GetIntervalMs()) * time.Millisecond
	if interval <= 0 {
		interval = time.Second
	}
	send := func() error {
		fams := lm.m.Snapshot()
		if len(fams) == 0 {
			return nil
		}
		return stream.Send(metricsProto(fams))
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := send(); err != nil {
				return err
			}
		case <-lm.done:
			return send() // the last values, as the task ended
		case <-stream.Context().Done():
			return nil
		}
	}
}

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

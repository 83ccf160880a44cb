package worker

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// fakeConfigs serves one connector's snapshot.
type fakeConfigs struct {
	configBackend
	snap map[string]ConnectorSnapshot
}

func (f *fakeConfigs) Snapshot() (map[string]ConnectorSnapshot, int64) { return f.snap, 1 }

// fakeStatuses records connector states.
type fakeStatuses struct {
	statusBackend
	mu   sync.Mutex
	conn map[string]ConnectorState
}

func (f *fakeStatuses) PutConnector(_ context.Context, name string, st ConnectorState, _ int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conn[name] = st
	return nil
}

func (f *fakeStatuses) Connector(name string) (ConnectorState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.conn[name]
	return st, ok
}

// hungConnector's TaskConfigs ignores its context, as a plugin stuck in a
// call to its source system would; Stop ends it.
type hungConnector struct {
	stopped chan struct{}
	events  chan plugins.ConnectorEvent
}

func (c *hungConnector) TaskConfigs(ctx context.Context, _ int) ([]map[string]string, error) {
	select { // the host side gives up when ctx does; the plugin does not
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.stopped:
		return nil, plugins.ErrStopped
	}
}

func (c *hungConnector) Events() <-chan plugins.ConnectorEvent { return c.events }

func (c *hungConnector) Stop(context.Context) error {
	close(c.stopped)
	return nil
}

// A connector whose TaskConfigs never returns is failed and stopped after
// the timeout instead of holding the herder (and so every REST write) for
// good.
func TestTaskConfigsTimeout(t *testing.T) {
	h := newHerder(Config{TaskShutdownTimeout: time.Second, TaskConfigsTimeout: 200 * time.Millisecond}, slog.New(slog.DiscardHandler), "w1")
	st := &fakeStatuses{conn: map[string]ConnectorState{}}
	h.statuses = st
	h.configs = &fakeConfigs{snap: map[string]ConnectorSnapshot{"hung": {Config: map[string]string{"tasks.max": "1"}}}}
	conn := &hungConnector{stopped: make(chan struct{}), events: make(chan plugins.ConnectorEvent)}
	done := make(chan struct{})
	close(done)
	h.running["hung"] = &runningConnector{conn: conn, spec: sdk.Spec{Class: "Hung"}, stop: func() {}, done: done}
	start := time.Now()
	h.generateTasks(context.Background(), "hung")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("generateTasks took %v", took)
	}
	cs, ok := st.Connector("hung")
	if !ok || cs.State != StateFailed || !strings.Contains(cs.Trace, "did not return its task configurations within 200ms") {
		t.Errorf("status %+v", cs)
	}
	if _, running := h.running["hung"]; running {
		t.Error("the connector is still running")
	}
	select {
	case <-conn.stopped:
	default:
		t.Error("the connector was not stopped")
	}
}

// Until the worker has read its internal topics, the REST calls that read
// them answer 503 "still starting" instead of panicking on a nil backend.
func TestAPIWhileStarting(t *testing.T) {
	h := newHerder(Config{TopicTracking: true, TopicTrackingReset: true}, slog.New(slog.DiscardHandler), "w1")
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindUnavailable || !strings.Contains(e.Message, "still starting") {
			t.Errorf("%s: %v, want the 503 of a worker still starting", what, err)
		}
	}
	_, err := h.Connectors(ctx)
	check("Connectors", err)
	_, err = h.ConnectorInfo(ctx, "c")
	check("ConnectorInfo", err)
	_, err = h.ConnectorStatus(ctx, "c")
	check("ConnectorStatus", err)
	_, err = h.TaskStatus(ctx, "c", 0)
	check("TaskStatus", err)
	_, err = h.ConnectorTopics(ctx, "c")
	check("ConnectorTopics", err)
	check("ResetConnectorTopics", h.ResetConnectorTopics(ctx, "c"))
	_, err = h.Offsets(ctx, "c")
	check("Offsets", err)
}

// stoppingSink records BeginStop.
type stoppingSink struct {
	plugins.SinkTask
	began bool
}

func (s *stoppingSink) BeginStop() { s.began = true }

// The worker's wrapper of sink tasks passes on the runner's BeginStop (a
// prompt stop of a task whose Put retries) and EndingSink.
func TestTrackedSinkForwards(t *testing.T) {
	inner := &stoppingSink{}
	var task plugins.SinkTask = trackedSink{SinkTask: inner}
	s, ok := task.(plugins.StoppingSink)
	if !ok {
		t.Fatal("trackedSink is not a StoppingSink")
	}
	s.BeginStop()
	if !inner.began {
		t.Error("BeginStop not forwarded")
	}
	if _, ok := task.(plugins.EndingSink); !ok {
		t.Error("trackedSink is not an EndingSink")
	}
}

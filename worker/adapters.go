package worker

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/store"
)

// configAdapter presents store.ConfigStore as the herder's configBackend.
type configAdapter struct {
	s       *store.ConfigStore
	updates chan struct{}
}

func newConfigUpdates() chan struct{} { return make(chan struct{}, 1) }

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (a *configAdapter) Snapshot() (map[string]ConnectorSnapshot, int64) {
	snap := a.s.Snapshot()
	out := make(map[string]ConnectorSnapshot, len(snap.Connectors))
	for name, cfg := range snap.Connectors {
		target := TargetStarted
		switch snap.TargetStates[name] {
		case store.TargetState(TargetPaused):
			target = TargetPaused
		case store.TargetState(TargetStopped):
			target = TargetStopped
		}
		out[name] = ConnectorSnapshot{Config: cfg, Target: target, Tasks: snap.Tasks[name]}
	}
	return out, snap.Offset
}

func (a *configAdapter) PutConnectorConfig(ctx context.Context, name string, config map[string]string) error {
	return a.s.PutConnectorConfig(ctx, name, config, "")
}

func (a *configAdapter) DeleteConnector(ctx context.Context, name string) error {
	return a.s.DeleteConnector(ctx, name)
}

func (a *configAdapter) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	return a.s.PutTaskConfigs(ctx, name, tasks)
}

func (a *configAdapter) PutLoggerLevel(ctx context.Context, namespace, level string) error {
	return a.s.PutLoggerLevel(ctx, namespace, level)
}

func (a *configAdapter) PutTargetState(ctx context.Context, name, state string) error {
	return a.s.PutTargetState(ctx, name, store.TargetState(state))
}

func (a *configAdapter) Updates() <-chan struct{} { return a.updates }

// statusAdapter presents store.StatusStore as the herder's statusBackend,
// active topics (KIP-558 status-topic-* records) included.
type statusAdapter struct {
	s *store.StatusStore
	// version returns the plugin version of a connector's class ("" if
	// unknown); Kafka Connect 4.x writes it into status records (KIP-891).
	version func(connector string) string

	mu       sync.Mutex
	versions map[string]string // last known plugin version per connector
}

// pluginVersion is the version written with a connector's statuses. It is
// remembered, so that the statuses written while a connector is being
// deleted (when its config is gone) still carry it, as Kafka Connect's do.
func (a *statusAdapter) pluginVersion(name string) string {
	v := ""
	if a.version != nil {
		v = a.version(name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if v != "" {
		if a.versions == nil {
			a.versions = map[string]string{}
		}
		a.versions[name] = v
		return v
	}
	return a.versions[name]
}

func (a *statusAdapter) PutConnector(ctx context.Context, name string, st ConnectorState, generation int32) error {
	_, err := a.s.PutConnectorSafe(ctx, name, store.Status{State: store.State(st.State), Trace: st.Trace, WorkerID: st.WorkerID, Generation: generation, Version: a.pluginVersion(name)})
	return err
}

func (a *statusAdapter) PutTask(ctx context.Context, id TaskID, st TaskState, generation int32) error {
	version := ""
	if st.State != StateUnassigned {
		// Kafka Connect's UNASSIGNED task status (written when a task
		// shuts down) carries no version; every other one does.
		version = a.pluginVersion(id.Connector)
	}
	_, err := a.s.PutTaskSafe(ctx, store.TaskID{Connector: id.Connector, Task: id.Task}, store.Status{State: store.State(st.State), Trace: st.Trace, WorkerID: st.WorkerID, Generation: generation, Version: version})
	return err
}

func (a *statusAdapter) Connector(name string) (ConnectorState, bool) {
	st, ok := a.s.Connector(name)
	if !ok {
		return ConnectorState{}, false
	}
	return ConnectorState{State: string(st.State), WorkerID: st.WorkerID, Trace: st.Trace, Version: st.Version}, true
}

func (a *statusAdapter) Tasks(name string) []TaskState {
	var out []TaskState
	for id, st := range a.s.Tasks(name) {
		out = append(out, TaskState{ID: id, State: string(st.State), WorkerID: st.WorkerID, Trace: st.Trace, Version: st.Version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (a *statusAdapter) DeleteConnector(ctx context.Context, name string, tasks int) error {
	for id := range a.s.Tasks(name) {
		if err := a.s.DeleteTask(ctx, store.TaskID{Connector: name, Task: id}); err != nil {
			return err
		}
	}
	if err := a.s.ResetTopics(ctx, name); err != nil {
		return err
	}
	return a.s.DeleteConnector(ctx, name)
}

func (a *statusAdapter) DeleteTask(ctx context.Context, id TaskID) error {
	return a.s.DeleteTask(ctx, store.TaskID{Connector: id.Connector, Task: id.Task})
}

// noteTopic records, once, that a connector's task used a topic.
func (a *statusAdapter) noteTopic(ctx context.Context, connector string, task int, topic string) error {
	return a.s.PutTopic(ctx, topic, connector, task, time.Now().UnixMilli())
}

func (a *statusAdapter) Topics(name string) []string { return a.s.Topics(name) }

func (a *statusAdapter) ResetTopics(ctx context.Context, name string) error {
	return a.s.ResetTopics(ctx, name)
}

// offsetAdapter presents store.OffsetStore as the herder's offsetBackend.
type offsetAdapter struct{ s *store.OffsetStore }

func (a offsetAdapter) Offsets(ctx context.Context, connector string, partitions []sdk.Partition) ([]sdk.Offset, error) {
	return a.s.Offsets(ctx, connector, partitions)
}

func (a offsetAdapter) WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error {
	return a.s.WriteOffsets(ctx, connector, offsets)
}

func (a offsetAdapter) All(connector string) []sdk.SourceOffset {
	offs, _ := a.s.ConnectorOffsets(context.Background(), connector)
	return offs
}

package worker

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tributary-dev/tributary/worker/store"
)

// connectorProblem says why no worker can run a connector of the config
// snapshot ("" if one can): the leader leaves such connectors out of the
// assignment, and the herder reports them FAILED.
func connectorProblem(name string, snap store.ConfigSnapshot) string {
	if p := unassignableName(name); p != "" {
		return p
	}
	return snap.Problems[name]
}

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

// maxTraceBytes bounds the trace of a status record: a status topic takes
// records of 1 MB by default, and a status that cannot be written would
// leave the last one (RUNNING) showing.
const maxTraceBytes = 256 << 10

// clipTrace keeps the first maxTraceBytes of a trace.
func clipTrace(t string) string {
	if len(t) <= maxTraceBytes {
		return t
	}
	cut := maxTraceBytes
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut] + fmt.Sprintf("\n… (%d more bytes of the trace left out)", len(t)-cut)
}

func (a *statusAdapter) PutConnector(ctx context.Context, name string, st ConnectorState, generation int32) error {
	_, err := a.s.PutConnectorSafe(ctx, name, store.Status{State: store.State(st.State), Trace: clipTrace(st.Trace), WorkerID: st.WorkerID, Generation: generation, Version: a.pluginVersion(name)})
	return err
}

func (a *statusAdapter) PutTask(ctx context.Context, id TaskID, st TaskState, generation int32) error {
	version := ""
	if st.State != StateUnassigned {
		// Kafka Connect's UNASSIGNED task status (written when a task
		// shuts down) carries no version; every other one does.
		version = a.pluginVersion(id.Connector)
	}
	_, err := a.s.PutTaskSafe(ctx, store.TaskID{Connector: id.Connector, Task: id.Task}, store.Status{State: store.State(st.State), Trace: clipTrace(st.Trace), WorkerID: st.WorkerID, Generation: generation, Version: version})
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

func (a *statusAdapter) Refresh(ctx context.Context) error { return a.s.Refresh(ctx) }

func (a *statusAdapter) All() map[string][]int {
	snap := a.s.Snapshot()
	out := map[string][]int{}
	for name := range snap.Connectors {
		out[name] = nil
	}
	for id := range snap.Tasks {
		out[id.Connector] = append(out[id.Connector], id.Task)
	}
	for _, name := range a.s.Connectors() { // active topics too
		if _, ok := out[name]; !ok {
			out[name] = nil
		}
	}
	return out
}

func (a *statusAdapter) ResetTopics(ctx context.Context, name string) error {
	return a.s.ResetTopics(ctx, name)
}

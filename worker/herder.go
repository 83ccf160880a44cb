package worker

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// assignment is the work the group gave this worker.
type assignment struct {
	generation int32
	leader     bool
	leaderURL  string
	connectors map[string]bool
	tasks      map[TaskID]bool
	all        bool // assign everything (a worker that runs alone)
}

// taskStarter starts a task runner for a task (worker/task through the
// worker); report receives its state changes.
type taskStarter func(ctx context.Context, id TaskID, spec sdk.Spec, connConfig, taskConfig map[string]string, paused bool, report func(state, trace string)) (taskRunner, error)

// herder is the worker's brain: one goroutine (run) owns which connectors
// and tasks run here and applies config-topic changes, assignments,
// connector requests and REST writes one at a time. REST reads go to the
// stores' snapshots directly.
type herder struct {
	cfg       Config
	logger    *slog.Logger
	workerID  string
	clusterID string
	// pl holds the plugin loader once the worker has started it; REST
	// requests may come before (pluginLoader).
	pl        atomic.Pointer[pluginLoader]
	configs   configBackend
	statuses  statusBackend
	offsets   offsetBackend
	startTask taskStarter
	groups    groupOffsets // sink connectors' consumer-group offsets

	reqs        chan func(context.Context)
	assignments chan assignment
	events      chan connEvent
	taskFails   chan taskFailure
	ready       atomic.Bool
	// apiReady is set once configs, statuses, offsets and groups are (the
	// REST API reads them from its own goroutines; backendsReady).
	apiReady atomic.Bool
	stage    atomic.Value       // string: what the herder is doing, for /health
	loggers  *loglevel.Registry // /admin/loggers

	// Owned by the run goroutine.
	assign     assignment
	running    map[string]*runningConnector
	tasks      map[TaskID]*runningTask
	taskCounts map[string]int // last generated task count per connector
	// failed connectors (with the config that failed) and tasks: they stay
	// FAILED until restarted or reconfigured, as in Kafka Connect.
	failedConnectors map[string]map[string]string
	failedTasks      map[TaskID]bool
	taskSeq          uint64
}

// TaskConfigsTimeout is how long the herder waits for a connector's
// TaskConfigs before it fails the connector, unless Config says otherwise.
const TaskConfigsTimeout = 30 * time.Second

type runningConnector struct {
	conn   plugins.Connector
	spec   sdk.Spec
	config map[string]string
	target string
	stop   context.CancelFunc
	done   chan struct{}
}

type runningTask struct {
	token  uint64 // tells this runner's failure reports from an earlier one's
	r      taskRunner
	config map[string]string
	conn   map[string]string
	target string
}

type connEvent struct {
	name string
	conn plugins.Connector
	ev   plugins.ConnectorEvent
}

type taskFailure struct {
	id    TaskID
	trace string
	token uint64
}

// groupOffsets reads and changes sink connectors' committed offsets.
type groupOffsets interface {
	Fetch(ctx context.Context, group string) (map[sdk.TopicPartition]int64, error)
	Commit(ctx context.Context, group string, offsets map[sdk.TopicPartition]int64) error
	Delete(ctx context.Context, group string, partitions []sdk.TopicPartition) error
}

func newHerder(cfg Config, logger *slog.Logger, workerID string) *herder {
	if cfg.TaskConfigsTimeout <= 0 {
		cfg.TaskConfigsTimeout = TaskConfigsTimeout
	}
	h := &herder{
		cfg: cfg, logger: logger, workerID: workerID,
		reqs:        make(chan func(context.Context)),
		assignments: make(chan assignment, 1),
		events:      make(chan connEvent, 16),
		taskFails:   make(chan taskFailure, 16),
		running:     map[string]*runningConnector{},
		tasks:       map[TaskID]*runningTask{},
		taskCounts:  map[string]int{},
		loggers:     loglevel.New(logger.Handler(), slog.LevelInfo),

		failedConnectors: map[string]map[string]string{},
		failedTasks:      map[TaskID]bool{},
	}
	h.stage.Store("starting")
	return h
}

// setAssignment hands a new assignment to the loop.
func (h *herder) setAssignment(a assignment) {
	for {
		select {
		case h.assignments <- a:
			return
		default:
			select { // replace a stale one nobody took yet
			case <-h.assignments:
			default:
			}
		}
	}
}

// run is the herder loop.
func (h *herder) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	defer h.stopAll()
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-h.reqs:
			f(ctx)
		case a := <-h.assignments:
			h.assign = a
			h.ready.Store(true)
			h.stage.Store("running")
			h.reconcile(ctx)
		case <-h.configs.Updates():
			h.reconcile(ctx)
		case e := <-h.events:
			h.onConnectorEvent(ctx, e)
		case f := <-h.taskFails:
			h.onTaskFailure(ctx, f)
		case <-tick.C:
			h.reconcile(ctx)
		}
	}
}

// do runs f on the herder loop and waits for it.
func (h *herder) do(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	select {
	case h.reqs <- func(lctx context.Context) { done <- f(lctx) }:
	case <-ctx.Done():
		return Errorf(KindInternal, "Request timed out. The worker is currently %s", h.stage.Load())
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return Errorf(KindInternal, "Request timed out. The worker is currently %s", h.stage.Load())
	}
}

func (h *herder) mine(name string) bool {
	return h.assign.all || h.assign.connectors[name]
}

func (h *herder) mineTask(id TaskID) bool {
	return h.assign.all || h.assign.tasks[id]
}

// reconcile makes what runs here match the config snapshot and assignment.
func (h *herder) reconcile(ctx context.Context) {
	if !h.ready.Load() {
		return
	}
	snap, _ := h.configs.Snapshot()
	// Connectors.
	var deleted []string
	for name, rc := range h.running {
		cs, ok := snap[name]
		if !ok || !h.mine(name) || cs.Target == TargetStopped || cs.Target == TargetPaused || !maps.Equal(cs.Config, rc.config) {
			h.stopConnector(ctx, name)
			if !ok || !h.mine(name) || cs.Target == TargetStarted {
				// Shut down, not paused or stopped in place: Kafka
				// Connect's onShutdown status.
				h.putConnectorStatus(ctx, name, StateUnassigned, "")
			}
			if !ok && h.assign.leader {
				deleted = append(deleted, name) // statuses go once its tasks are down
			}
		}
	}
	names := slices.Sorted(maps.Keys(snap))
	for _, name := range names {
		cs := snap[name]
		if !h.mine(name) {
			continue
		}
		switch cs.Target {
		case TargetStopped:
			h.putConnectorStatus(ctx, name, StateStopped, "")
			if len(cs.Tasks) > 0 && h.assign.leader {
				// A stopped connector has no tasks (KIP-875).
				if err := h.configs.PutTaskConfigs(ctx, name, nil); err != nil {
					h.logger.Warn("clearing task configs of a stopped connector", "connector", name, "err", err)
				}
			}
		case TargetPaused:
			h.putConnectorStatus(ctx, name, StatePaused, "")
		default:
			if _, ok := h.running[name]; !ok {
				if st, ok := h.statuses.Connector(name); ok && st.State == StateFailed && st.WorkerID == h.workerID && h.failedSame(name, cs.Config) {
					continue // failed connectors stay failed until restarted
				}
				h.startConnector(ctx, name, cs)
			}
		}
	}
	// Tasks.
	for id, rt := range h.tasks {
		cs, ok := snap[id.Connector]
		if !ok || !h.mineTask(id) || id.Task >= len(cs.Tasks) || !maps.Equal(cs.Tasks[id.Task], rt.config) || !maps.Equal(cs.Config, rt.conn) {
			h.stopTask(ctx, id)
			h.putTaskStatus(ctx, id, StateUnassigned, "") // Kafka Connect's onShutdown status
			continue
		}
		if cs.Target != rt.target {
			switch cs.Target {
			case TargetPaused:
				rt.r.Pause()
				h.putTaskStatus(ctx, id, StatePaused, "")
			case TargetStarted:
				rt.r.Resume()
				h.putTaskStatus(ctx, id, StateRunning, "")
			}
			rt.target = cs.Target
		}
	}
	for _, name := range names {
		cs := snap[name]
		if cs.Target == TargetStopped {
			continue
		}
		for i, tc := range cs.Tasks {
			id := TaskID{Connector: name, Task: i}
			if _, ok := h.tasks[id]; ok || !h.mineTask(id) {
				continue
			}
			if st, ok := h.taskStatus(id); ok && st.State == StateFailed && st.WorkerID == h.workerID && h.failedTasks[id] {
				continue // failed tasks stay failed until restarted
			}
			h.startTaskLocked(ctx, id, cs, tc)
		}
	}
	h.cleanStatuses(ctx, snap, deleted)
}

func (h *herder) failedSame(name string, config map[string]string) bool {
	fc, ok := h.failedConnectors[name]
	return ok && maps.Equal(fc, config)
}

func (h *herder) taskStatus(id TaskID) (TaskState, bool) {
	for _, t := range h.statuses.Tasks(id.Connector) {
		if t.ID == id.Task {
			return t, true
		}
	}
	return TaskState{}, false
}

func (h *herder) connLogger(name string) *slog.Logger { return h.logger.With("connector", name) }

// startConnector starts a connector instance here and generates its tasks.
func (h *herder) startConnector(ctx context.Context, name string, cs ConnectorSnapshot) {
	log := h.connLogger(name)
	spec, err := h.pl.Load().Spec(cs.Config["connector.class"])
	if err != nil {
		h.failConnector(ctx, name, cs.Config, err)
		return
	}
	cctx, cancel := context.WithCancel(context.Background())
	conn, err := h.pl.Load().StartConnector(ctx, spec.Class, name, h.resolve(cs.Config))
	if err != nil {
		cancel()
		h.failConnector(ctx, name, cs.Config, err)
		return
	}
	rc := &runningConnector{conn: conn, spec: spec, config: cs.Config, target: cs.Target, stop: cancel, done: make(chan struct{})}
	h.running[name] = rc
	delete(h.failedConnectors, name)
	go func() {
		defer close(rc.done)
		for {
			select {
			case <-cctx.Done():
				return
			case ev, ok := <-conn.Events():
				if !ok {
					return
				}
				select {
				case h.events <- connEvent{name: name, conn: conn, ev: ev}:
				case <-cctx.Done():
					return
				}
			}
		}
	}()
	log.Info("connector started", "class", spec.Class)
	h.putConnectorStatus(ctx, name, StateRunning, "")
	h.generateTasks(ctx, name)
}

// generateTasks asks the running connector for task configs and, if they
// differ from the stored ones, writes them (leader only).
func (h *herder) generateTasks(ctx context.Context, name string) {
	rc := h.running[name]
	if rc == nil {
		return
	}
	snap, _ := h.configs.Snapshot()
	cs, ok := snap[name]
	if !ok {
		return
	}
	maxTasks, _ := strconv.Atoi(strings.TrimSpace(cs.Config["tasks.max"]))
	if maxTasks < 1 {
		maxTasks = 1
	}
	tctx, cancel := context.WithTimeout(ctx, h.cfg.TaskConfigsTimeout)
	tcs, err := rc.conn.TaskConfigs(tctx, maxTasks)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = Errorf(KindInternal, "The connector %s did not return its task configurations within %v (TaskConfigs blocked); it is failed and stopped. Restart it once the cause is fixed.", name, h.cfg.TaskConfigsTimeout)
	}
	if err != nil {
		h.failConnector(ctx, name, cs.Config, err)
		h.stopConnector(ctx, name)
		return
	}
	if len(tcs) > maxTasks && !strings.EqualFold(strings.TrimSpace(cs.Config["tasks.max.enforce"]), "false") {
		h.failConnector(ctx, name, cs.Config, Errorf(KindInternal, "The connector %s has generated %d tasks, which is greater than %d, the maximum number of tasks it is configured to create. This behavior should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect.", name, len(tcs), maxTasks))
		h.stopConnector(ctx, name)
		return
	}
	taskClass := plugins.TaskClass(rc.spec.Class)
	for _, tc := range tcs {
		tc["task.class"] = taskClass
	}
	h.taskCounts[name] = max(h.taskCounts[name], len(tcs))
	if taskConfigsEqual(tcs, cs.Tasks) {
		return
	}
	if !h.assign.leader {
		h.connLogger(name).Warn("task configs changed but this worker is not the leader; the leader regenerates them")
		return
	}
	if err := h.configs.PutTaskConfigs(ctx, name, tcs); err != nil {
		h.connLogger(name).Error("writing task configs failed; retrying at the next reconcile", "err", err)
		return
	}
	h.connLogger(name).Info("task configs written", "tasks", len(tcs))
}

func taskConfigsEqual(a, b []map[string]string) bool {
	return slices.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

func (h *herder) onConnectorEvent(ctx context.Context, e connEvent) {
	rc := h.running[e.name]
	if rc == nil || rc.conn != e.conn {
		return
	}
	if e.ev.Err != nil {
		h.failConnector(ctx, e.name, rc.config, e.ev.Err)
		h.stopConnector(ctx, e.name)
		return
	}
	if e.ev.Reconfigure {
		h.generateTasks(ctx, e.name)
	}
}

// failConnector records a connector failure; it stays FAILED until restarted.
func (h *herder) failConnector(ctx context.Context, name string, config map[string]string, err error) {
	trace := err.Error()
	var te *sdk.TaskError
	if errors.As(err, &te) && te.Trace != "" {
		trace = te.Trace
	}
	h.connLogger(name).Error("connector failed", "err", err)
	h.failedConnectors[name] = config
	h.putConnectorStatus(ctx, name, StateFailed, trace)
}

func (h *herder) stopConnector(ctx context.Context, name string) {
	rc := h.running[name]
	if rc == nil {
		return
	}
	delete(h.running, name)
	sctx, cancel := context.WithTimeout(ctx, h.cfg.TaskShutdownTimeout+time.Second)
	defer cancel()
	if err := rc.conn.Stop(sctx); err != nil {
		h.connLogger(name).Warn("connector did not stop cleanly", "err", err)
	}
	rc.stop()
	<-rc.done
	h.connLogger(name).Info("connector stopped")
}

func (h *herder) startTaskLocked(ctx context.Context, id TaskID, cs ConnectorSnapshot, tc map[string]string) {
	log := h.connLogger(id.Connector).With("task", id.Task)
	spec, err := h.pl.Load().Spec(cs.Config["connector.class"])
	if err != nil {
		h.failTask(ctx, id, err.Error())
		return
	}
	paused := cs.Target == TargetPaused
	h.taskSeq++
	token := h.taskSeq
	report := func(state, trace string) {
		if state != StateFailed {
			return
		}
		// Never block the runner (it may hold its own locks while the
		// herder is stopping it); the loop drops reports of runners
		// that were replaced since (token).
		go func() {
			select {
			case h.taskFails <- taskFailure{id: id, trace: trace, token: token}:
			case <-ctx.Done():
			}
		}()
	}
	r, err := h.startTask(ctx, id, spec, h.resolve(cs.Config), h.resolve(tc), paused, report)
	if err != nil {
		trace := err.Error()
		var te *sdk.TaskError
		if errors.As(err, &te) && te.Trace != "" {
			trace = te.Trace
		}
		h.failTask(ctx, id, trace)
		return
	}
	h.tasks[id] = &runningTask{r: r, config: tc, conn: cs.Config, target: cs.Target, token: token}
	delete(h.failedTasks, id)
	state := StateRunning
	if paused {
		state = StatePaused
	}
	h.putTaskStatus(ctx, id, state, "")
	log.Info("task started")
}

func (h *herder) failTask(ctx context.Context, id TaskID, trace string) {
	h.connLogger(id.Connector).Error("task failed", "task", id.Task, "trace", firstLine(trace))
	h.failedTasks[id] = true
	h.putTaskStatus(ctx, id, StateFailed, trace)
}

func (h *herder) onTaskFailure(ctx context.Context, f taskFailure) {
	if rt, ok := h.tasks[f.id]; !ok || rt.token != f.token {
		return // a runner stopped or replaced since it reported
	}
	h.stopTask(ctx, f.id)
	h.failTask(ctx, f.id, f.trace)
}

func (h *herder) stopTask(ctx context.Context, id TaskID) {
	rt := h.tasks[id]
	if rt == nil {
		return
	}
	delete(h.tasks, id)
	sctx, cancel := context.WithTimeout(ctx, h.cfg.TaskShutdownTimeout+time.Second)
	defer cancel()
	if err := rt.r.Stop(sctx); err != nil {
		h.connLogger(id.Connector).Warn("task did not stop cleanly", "task", id.Task, "err", err)
	}
	h.connLogger(id.Connector).Info("task stopped", "task", id.Task)
}

func (h *herder) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.TaskShutdownTimeout+5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for id := range h.tasks {
		rt := h.tasks[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rt.r.Stop(ctx); err != nil {
				h.connLogger(id.Connector).Warn("task did not stop cleanly", "task", id.Task, "err", err)
			}
		}()
	}
	wg.Wait()
	h.tasks = map[TaskID]*runningTask{}
	for name := range h.running {
		h.stopConnector(ctx, name)
	}
}

func (h *herder) putConnectorStatus(ctx context.Context, name, state, trace string) {
	if cur, ok := h.statuses.Connector(name); ok && cur.State == state && cur.WorkerID == h.workerID && cur.Trace == trace {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	if err := h.statuses.PutConnector(ctx, name, ConnectorState{State: state, WorkerID: h.workerID, Trace: trace}, h.assign.generation); err != nil {
		h.connLogger(name).Warn("writing connector status failed", "state", state, "err", err)
	}
}

func (h *herder) putTaskStatus(ctx context.Context, id TaskID, state, trace string) {
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	if err := h.statuses.PutTask(ctx, id, TaskState{ID: id.Task, State: state, WorkerID: h.workerID, Trace: trace}, h.assign.generation); err != nil {
		h.connLogger(id.Connector).Warn("writing task status failed", "task", id.Task, "state", state, "err", err)
	}
}

// statusWriteTimeout bounds a status write on the herder loop, so that an
// unreachable broker cannot stall the loop (and with it rebalances).
const statusWriteTimeout = 10 * time.Second

// resolve returns the config handed to plugins. Config providers
// (${provider:path:key}) are resolved here once supported.
func (h *herder) resolve(c map[string]string) map[string]string { return maps.Clone(c) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func sortedTasks(ts []TaskState) []TaskState {
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
	return ts
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/internal/configprovider"
	"github.com/tributary-dev/tributary/internal/jaas"
	"github.com/tributary-dev/tributary/internal/kafkaauth"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/metrics"
	"github.com/tributary-dev/tributary/worker/store"
)

// TaskConfigsTimeout is how long a connector's taskConfigs may take before
// the connector is failed.
const TaskConfigsTimeout = 30 * time.Second

// statusWriteTimeout bounds one status write.
const statusWriteTimeout = 10 * time.Second

// taskStarter starts a task runner for a task (worker/task through the
// worker), recording into tm; report receives its state changes. eos,
// when not nil, runs a source task with exactly-once support.
type taskStarter func(ctx context.Context, id TaskID, spec sdk.Spec, connConfig, taskConfig map[string]string, paused bool, eos *taskEOS, tm *metrics.Task, report func(state, trace string)) (taskRunner, error)

// taskEOS is what a source task with exactly-once support asks of the
// herder as it starts: a round of zombie fencing before its producer is
// initialized, and the check that it may still run after.
type taskEOS struct {
	Preflight, Verify func(ctx context.Context) error
}

// groupOffsets reads and changes sink connectors' committed offsets.
type groupOffsets interface {
	Fetch(ctx context.Context, group string) (map[sdk.TopicPartition]int64, error)
	Commit(ctx context.Context, group string, offsets map[sdk.TopicPartition]int64) error
	Delete(ctx context.Context, group string, partitions []sdk.TopicPartition) error
}

// membership is what the driver needs from the group member.
type membership interface {
	// Lease is how long the membership can still be trusted.
	Lease() time.Duration
	Rejoin()
}

// driver runs the herder core (package herder) for a worker: one loop
// goroutine owns the Machine, feeds it events and hands its actions to
// goroutines, so that no plugin call, status write or config write ever
// runs on the loop. It also serves the REST API (the Herder interface):
// reads from the stores' snapshots, writes as requests to the loop.
type driver struct {
	cfg      Config
	logger   *slog.Logger
	workerID string
	url      string // advertised REST URL, no trailing slash

	// pl holds the plugin loader once the worker has started it; REST
	// requests may come before.
	pl        atomic.Pointer[pluginLoader]
	clusterID string
	loggers   *loglevel.Registry // /admin/loggers
	stage     atomic.Value       // string: what the worker is doing, for /health
	// apiReady is set once the stores below are (REST readers see them).
	apiReady atomic.Bool
	// ready is set at the first assignment (the worker has started).
	ready atomic.Bool
	// sessioned: the group's protocol signs internal requests.
	sessioned atomic.Bool

	configs  *store.ConfigStore
	statuses statusBackend
	offsets  offsetBackend
	groups   groupOffsets
	start    taskStarter
	// adminOpts are the client options of a connector's admin client (the
	// worker's top-level and admin.* settings, its admin.override.* on
	// top): fencing its tasks' producers goes through them.
	adminOpts func(connector string, config map[string]string) ([]kgo.Opt, error)
	member    membership
	client    forwardClient
	// providers resolve the references of connector configs when they
	// start and when they are validated; secrets holds the values to hide
	// (the worker's log handler scrubs them too, when it shares the set).
	providers *configprovider.Set
	secrets   *redact.Set
	// metrics holds the worker's Kafka Connect metrics; the loop creates
	// and removes the sets of connectors and tasks, as the core holds them.
	metrics *metrics.Connect

	// The loop.
	m       *herder.Machine
	events  chan herder.Event
	running atomic.Bool
	ctx     context.Context // the driver's lifetime (action goroutines)
	tokens  atomic.Uint64
	wmu     sync.Mutex
	waiting map[herder.Token]chan herder.Result
	// configQ holds config-topic changes for the loop in read order.
	configQ queue[configEvent]
	// chains serializes the actions of one connector or task (owned by
	// the loop).
	chains map[string]chan struct{}
	bg     sync.WaitGroup

	statusQ queue[herder.Action]
	// statusesPending counts status writes queued and not done.
	statusesPending atomic.Int64
	writeQ          queue[herder.WriteConfigs]

	// The connectors and tasks running here, for the action goroutines.
	rmu   sync.Mutex
	conns map[string]*liveConnector
	tasks map[TaskID]*liveTask

	// Leader-side assignor memory (the member's goroutine only).
	assignState assignMemory
}

type liveConnector struct {
	run    uint64
	conn   plugins.Connector
	spec   sdk.Spec
	cancel context.CancelFunc
	done   chan struct{}
	// raw is the connector's config as stored, resolved its resolution:
	// task configs get their references back from them.
	raw      map[string]string
	resolved configprovider.Result
}

type liveTask struct {
	run uint64
	r   taskRunner
}

// configEvent is a config-topic change for the loop: a new snapshot to
// read, a restart request, or the end of a config write (queued after the
// records it wrote were read back, so the loop sees them first); or, with
// applied, a caller waiting until the loop has applied every change
// queued before it (closed then).
type configEvent struct {
	restart *store.RestartRequest
	done    *herder.Done
	applied chan struct{}
}

// queue is an unbounded FIFO with a wake-up channel.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{}
}

func (q *queue[T]) init() { q.notify = make(chan struct{}, 1) }

func (q *queue[T]) push(x T) {
	q.mu.Lock()
	q.items = append(q.items, x)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *queue[T]) drain() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

func newDriver(cfg Config, logger *slog.Logger, loggers *loglevel.Registry, workerID string, m *metrics.Connect) *driver {
	if cfg.TaskConfigsTimeout <= 0 {
		cfg.TaskConfigsTimeout = TaskConfigsTimeout
	}
	if loggers == nil {
		loggers = loglevel.New(logger.Handler(), slog.LevelInfo)
	}
	d := &driver{
		cfg: cfg, logger: logger, workerID: workerID, url: cfg.AdvertisedScheme() + "://" + workerID,
		loggers:   loggers,
		events:    make(chan herder.Event, 256),
		waiting:   map[herder.Token]chan herder.Result{},
		chains:    map[string]chan struct{}{},
		conns:     map[string]*liveConnector{},
		tasks:     map[TaskID]*liveTask{},
		client:    newForwardClient(),
		providers: emptyProviders,
		secrets:   &redact.Set{},
		metrics:   m,
	}
	d.configQ.init()
	d.statusQ.init()
	d.writeQ.init()
	d.stage.Store("starting")
	d.m = herder.New(herder.Config{
		WorkerID: workerID, URL: d.url, HoldTimeout: cfg.RequestHold,
		TaskConfigsTimeout: cfg.TaskConfigsTimeout, KeyTTL: cfg.KeyTTL, Logger: logger,
		ExactlyOnce: cfg.ExactlyOnceSource.Enabled(), TransactionalLeader: cfg.ExactlyOnceSource.TransactionalLeader(),
	})
	return d
}

// offsetsPollInterval is how often the loop looks for offsets records that
// cannot be read.
const offsetsPollInterval = 2 * time.Second

// run is the loop; it returns when ctx (d.ctx) ends, after every action
// goroutine.
func (d *driver) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.statusWriter(ctx) }()
	go func() { defer wg.Done(); d.configWriter(ctx) }()
	d.running.Store(true)
	defer func() {
		d.running.Store(false)
		wg.Wait() // the writers first: they may start background work
		d.bg.Wait()
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	poll := time.NewTicker(offsetsPollInterval)
	defer poll.Stop()
	d.step(herder.Configs{Snapshot: d.snapshot()})
	problems := d.offsetsProblems()
	for {
		if dl := d.m.NextDeadline(); !dl.IsZero() {
			timer.Reset(max(time.Until(dl), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-ctx.Done():
			return
		case ev := <-d.events:
			d.step(ev)
		case <-d.configQ.notify:
			snap := false
			for _, ce := range d.configQ.drain() {
				if ce.restart == nil && ce.done == nil && ce.applied == nil {
					snap = true
					continue
				}
				if snap {
					d.step(herder.Configs{Snapshot: d.snapshot()})
					snap = false
				}
				switch {
				case ce.applied != nil:
					close(ce.applied)
				case ce.done != nil:
					d.step(*ce.done)
				default:
					d.step(herder.RestartRequested{Connector: ce.restart.Connector, IncludeTasks: ce.restart.IncludeTasks, OnlyFailed: ce.restart.OnlyFailed})
				}
			}
			if snap {
				d.step(herder.Configs{Snapshot: d.snapshot()})
			}
		case <-timer.C:
			d.step(herder.Tick{})
		case <-poll.C:
			if p := d.offsetsProblems(); p != problems {
				problems = p
				d.step(herder.Configs{Snapshot: d.snapshot()})
			}
		}
	}
}

func (d *driver) step(ev herder.Event) {
	d.m.Step(time.Now(), ev)
	for _, a := range d.m.Ready() {
		d.perform(a)
	}
	d.syncMetrics()
}

// syncMetrics drops the metrics of the tasks the core no longer holds and
// of the connectors it no longer owns (deleted, moved to another worker):
// a failed task's stay until then, unlike Kafka Connect's.
func (d *driver) syncMetrics() {
	for _, id := range d.metrics.TaskIDs() {
		if !d.m.HasTask(herder.TaskID{Connector: id.Connector, Task: id.Task}) {
			d.metrics.RemoveTask(id)
		}
	}
	for _, name := range d.metrics.ConnectorNames() {
		if !d.m.OwnsConnector(name) {
			d.metrics.RemoveConnector(name)
		}
	}
}

// noteStatus records a status this worker writes in the metrics: a
// task's state if it runs here, a connector's if this worker owns it
// (a paused or stopped one too, which runs nothing here).
func (d *driver) noteStatus(a herder.PutStatus) {
	if a.Task >= 0 {
		d.metrics.SetTaskState(metrics.TaskID{Connector: a.Connector, Task: a.Task}, a.State)
		return
	}
	if !d.m.OwnsConnector(a.Connector) {
		return
	}
	if !d.metrics.HasConnector(a.Connector) {
		d.noteConnector(a.Connector, d.configs.Snapshot().Connectors[a.Connector])
	}
	d.metrics.SetConnectorState(a.Connector, a.State)
}

// noteConnector makes the metrics of a connector this worker owns.
func (d *driver) noteConnector(name string, config map[string]string) {
	kind, class, version := metrics.Kind(""), config["connector.class"], ""
	if l := d.pl.Load(); l != nil {
		if spec, err := l.Spec(class); err == nil {
			kind, class, version = metrics.Kind(spec.Type), spec.Class, spec.Version
		}
	}
	d.metrics.SetConnector(name, kind, class, version)
}

// send hands an event to the loop (from any goroutine but the loop's).
func (d *driver) send(ev herder.Event) {
	select {
	case d.events <- ev:
	case <-d.ctx.Done():
	}
}

// snapshot is the config topic for the core.
func (d *driver) snapshot() herder.Snapshot {
	s := d.configs.Snapshot()
	out := herder.Snapshot{Offset: s.Offset, Connectors: make(map[string]herder.Connector, len(s.Connectors))}
	for name, cfg := range s.Connectors {
		t := herder.Target(s.TargetStates[name])
		if t == "" {
			t = herder.Started
		}
		count, hasCount := s.TaskCountRecords[name]
		c := herder.Connector{Config: cfg, ConfigOffset: s.ConfigOffsets[name], Target: t, Tasks: s.Tasks[name], Inconsistent: s.Inconsistent[name], Applied: s.Applied[name],
			Problem: connectorProblem(name, s), Source: d.connectorType(cfg) == "source",
			TaskCount: count, HasTaskCount: hasCount, PendingFencing: s.PendingFencing[name], Generation: s.TaskGenerations[name]}
		if c.Problem == "" {
			c.Problem = d.offsetsProblem(name, cfg)
			c.OffsetsProblem = c.Problem != ""
		}
		out.Connectors[name] = c
	}
	if k := s.SessionKey; k != nil {
		out.SessionKey = &herder.SessionKey{Key: k.Key, Algorithm: k.Algorithm, Created: time.UnixMilli(k.Created)}
	}
	return out
}

// offsetsProblem says why a source connector's offsets cannot all be read
// ("" when they can): its tasks could not know where they stand.
func (d *driver) offsetsProblem(name string, config map[string]string) string {
	if d.offsets == nil {
		return ""
	}
	p := d.offsets.Problem(name)
	if p == "" || d.connectorType(config) != "source" {
		return ""
	}
	return p
}

// offsetsProblems lists the connectors with offsets records that cannot
// be read, and why; the loop compares it from time to time, as the
// offsets topic sends no events.
func (d *driver) offsetsProblems() string {
	var b strings.Builder
	s := d.configs.Snapshot()
	for _, name := range slices.Sorted(maps.Keys(s.Connectors)) {
		if p := d.offsetsProblem(name, s.Connectors[name]); p != "" {
			b.WriteString(name + "\x00" + p + "\x00")
		}
	}
	return b.String()
}

// call sends an event that carries a reply token and waits for the reply.
func (d *driver) call(ctx context.Context, mk func(herder.Token) herder.Event) (herder.Result, error) {
	return d.callUntil(ctx, ctx, mk)
}

// callUntil is call that, once the loop has the event, waits for its
// answer until wait ends rather than ctx.
func (d *driver) callUntil(ctx, wait context.Context, mk func(herder.Token) herder.Event) (herder.Result, error) {
	tok := herder.Token(d.tokens.Add(1))
	ch := make(chan herder.Result, 1)
	d.wmu.Lock()
	d.waiting[tok] = ch
	d.wmu.Unlock()
	defer func() {
		d.wmu.Lock()
		delete(d.waiting, tok)
		d.wmu.Unlock()
	}()
	select {
	case d.events <- mk(tok):
	case <-ctx.Done():
		return herder.Result{}, ctx.Err()
	}
	select {
	case r := <-ch:
		return r, nil
	case <-wait.Done():
		return herder.Result{}, wait.Err()
	}
}

// request runs a REST request through the loop.
func (d *driver) request(ctx context.Context, op herder.Op) (herder.Result, error) {
	if !d.running.Load() {
		return herder.Result{}, d.stillStarting()
	}
	// Once the loop has the request, its answer is awaited even if ctx
	// ends (the loop answers within the hold timeout plus a write), so
	// that an error answer never hides a change the request made.
	r, err := d.callUntil(ctx, d.ctx, func(t herder.Token) herder.Event { return herder.Request{Reply: t, Op: op} })
	if err != nil {
		if ctx.Err() != nil && d.ctx.Err() == nil {
			return r, Errorf(KindInternal, "Request timed out before the worker could take it; nothing was changed. The worker is currently %s", d.stage.Load())
		}
		return r, Errorf(KindUnavailable, "The worker is shutting down; the request may or may not have been carried out")
	}
	if r.Err != nil {
		return r, &Error{Kind: Kind(r.Err.Code), Message: r.Err.Message, Forward: r.Err.Forward}
	}
	return r, nil
}

func (d *driver) deliver(to herder.Token, r herder.Result) {
	d.wmu.Lock()
	ch := d.waiting[to]
	d.wmu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// chain runs f after the earlier actions of the same connector or task.
func (d *driver) chain(key string, f func()) {
	prev := d.chains[key]
	done := make(chan struct{})
	d.chains[key] = done
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		f()
	}()
}

func (d *driver) goBg(f func()) {
	d.bg.Add(1)
	go func() { defer d.bg.Done(); f() }()
}

func taskKey(id herder.TaskID) string { return "t/" + id.String() }

func toTaskID(id herder.TaskID) TaskID { return TaskID{Connector: id.Connector, Task: id.Task} }

func (d *driver) perform(a herder.Action) {
	switch a := a.(type) {
	case herder.StartConnector:
		d.noteConnector(a.Name, a.Config)
		d.chain("c/"+a.Name, func() { d.startConnector(a) })
	case herder.StopConnector:
		d.chain("c/"+a.Name, func() { d.stopConnector(a) })
	case herder.GenerateTaskConfigs:
		d.goBg(func() { d.generate(a) })
	case herder.StartTask:
		// The set is made here, on the loop, as syncMetrics drops it: a
		// task stopped before its start goroutine runs leaves none behind.
		kind := metrics.Source
		if l := d.pl.Load(); l != nil {
			if spec, err := l.Spec(a.Connector["connector.class"]); err == nil && spec.Type == sdk.Sink {
				kind = metrics.Sink
			}
		}
		tm := d.metrics.StartTask(metrics.TaskID{Connector: a.ID.Connector, Task: a.ID.Task}, kind)
		d.chain(taskKey(a.ID), func() { d.startTask(a, tm) })
	case herder.StopTask:
		d.chain(taskKey(a.ID), func() { d.stopTask(a) })
	case herder.PauseTask:
		d.chain(taskKey(a.ID), func() {
			if lt := d.task(toTaskID(a.ID), a.Run); lt != nil {
				lt.r.Pause()
			}
		})
	case herder.ResumeTask:
		d.chain(taskKey(a.ID), func() {
			if lt := d.task(toTaskID(a.ID), a.Run); lt != nil {
				lt.r.Resume()
			}
		})
	case herder.PutStatus, herder.CleanStatuses:
		if ps, ok := a.(herder.PutStatus); ok {
			d.noteStatus(ps)
		}
		d.statusesPending.Add(1)
		d.statusQ.push(a)
	case herder.WriteConfigs:
		d.writeQ.push(a)
	case herder.SendTaskConfigs:
		d.goBg(func() { d.send(herder.Done{Op: a.Op, Err: d.sendTaskConfigs(a)}) })
	case herder.FenceProducers:
		d.goBg(func() {
			err := d.fenceProducers(a)
			if err == nil {
				// The leader checks the task config generation after the
				// fencing: read the config topic to its end first; Done
				// comes after what was read.
				ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
				err = d.configs.Refresh(ctx)
				cancel()
			}
			d.configQ.push(configEvent{done: &herder.Done{Op: a.Op, Err: coreErr(err)}})
		})
	case herder.ClaimWrites:
		d.goBg(func() { d.claimWrites(a.Claim) })
	case herder.ModifyOffsetsAction:
		d.goBg(func() {
			msg, err := d.modifyOffsets(a)
			d.send(herder.Done{Op: a.Op, Err: coreErr(err), Result: msg})
		})
	case herder.ReadConfigs:
		d.goBg(func() {
			ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
			defer cancel()
			if err := d.configs.Refresh(ctx); err != nil {
				d.logger.Warn("reading the config topic to the leader's offset failed; retrying at the next change", "err", err)
			}
			d.configQ.push(configEvent{})
		})
	case herder.Rejoin:
		if d.member != nil {
			d.member.Rejoin()
		}
	case herder.Reply:
		if d.statusesPending.Load() > 0 {
			// Read your writes: a reply never overtakes the statuses
			// decided before it (a client reads them next).
			d.statusQ.push(a)
			return
		}
		d.deliver(a.To, a.Result)
	}
}

func (d *driver) connLogger(name string) *slog.Logger { return d.logger.With("connector", name) }

// errTrace is the trace of a failure: a task error's own trace if it has
// one.
func errTrace(err error) string {
	var te *sdk.TaskError
	if errors.As(err, &te) && te.Trace != "" {
		return te.Trace
	}
	return err.Error()
}

func (d *driver) startConnector(a herder.StartConnector) {
	log := d.connLogger(a.Name)
	l := d.pl.Load()
	spec, err := l.Spec(a.Config["connector.class"])
	if err != nil {
		d.metrics.ConnectorStartup(false)
		d.send(herder.ConnectorStarted{Name: a.Name, Run: a.Run, Err: errTrace(err)})
		return
	}
	res, err := d.resolve(a.Name, spec, a.Config)
	if err != nil {
		d.metrics.ConnectorStartup(false)
		d.send(herder.ConnectorStarted{Name: a.Name, Run: a.Run, Err: errTrace(err)})
		return
	}
	conn, err := l.StartConnector(d.ctx, spec.Class, a.Name, res.Values)
	if err != nil {
		d.metrics.ConnectorStartup(false)
		d.send(herder.ConnectorStarted{Name: a.Name, Run: a.Run, Err: errTrace(err)})
		return
	}
	d.metrics.ConnectorStartup(true)
	if mr, ok := conn.(plugins.MetricsReporter); ok {
		d.metrics.SetConnectorPlugin(a.Name, mr)
	}
	cctx, cancel := context.WithCancel(d.ctx)
	lc := &liveConnector{run: a.Run, conn: conn, spec: spec, cancel: cancel, done: make(chan struct{}), raw: a.Config, resolved: res}
	d.rmu.Lock()
	d.conns[a.Name] = lc
	d.rmu.Unlock()
	go func() {
		defer close(lc.done)
		for {
			select {
			case <-cctx.Done():
				return
			case ev, ok := <-conn.Events():
				if !ok {
					return
				}
				switch {
				case ev.Err != nil:
					d.send(herder.ConnectorFailed{Name: a.Name, Run: a.Run, Trace: errTrace(ev.Err)})
				case ev.Reconfigure:
					d.send(herder.ReconfigurationRequested{Name: a.Name, Run: a.Run})
				}
			}
		}
	}()
	log.Info("connector started", "class", spec.Class)
	d.send(herder.ConnectorStarted{Name: a.Name, Run: a.Run})
}

func (d *driver) connector(name string, run uint64) *liveConnector {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if lc := d.conns[name]; lc != nil && lc.run == run {
		return lc
	}
	return nil
}

func (d *driver) generate(a herder.GenerateTaskConfigs) {
	lc := d.connector(a.Name, a.Run)
	if lc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.TaskConfigsTimeout)
	defer cancel()
	tcs, err := lc.conn.TaskConfigs(ctx, a.MaxTasks)
	if err != nil {
		if ctx.Err() != nil {
			return // the core fails the connector at its own deadline
		}
		d.send(herder.TaskConfigsGenerated{Name: a.Name, Run: a.Run, Gen: a.Gen, Err: errTrace(err)})
		return
	}
	taskClass := plugins.TaskClass(lc.spec.Class)
	for i := range tcs {
		tcs[i] = unresolveTaskConfig(tcs[i], lc.raw, lc.resolved)
		tcs[i]["task.class"] = taskClass
	}
	d.send(herder.TaskConfigsGenerated{Name: a.Name, Run: a.Run, Gen: a.Gen, Configs: tcs})
}

func (d *driver) stopConnector(a herder.StopConnector) {
	d.rmu.Lock()
	lc := d.conns[a.Name]
	if lc != nil && lc.run == a.Run {
		delete(d.conns, a.Name)
	} else {
		lc = nil
	}
	d.rmu.Unlock()
	if lc != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), d.cfg.TaskShutdownTimeout+2*time.Second)
		if err := lc.conn.Stop(ctx); err != nil && !errors.Is(err, plugins.ErrStopped) {
			d.connLogger(a.Name).Warn("connector did not stop cleanly", "err", err)
		}
		cancel()
		lc.cancel()
		<-lc.done
		d.connLogger(a.Name).Info("connector stopped")
	}
	d.send(herder.ConnectorStopped(a))
}

func (d *driver) task(id TaskID, run uint64) *liveTask {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if lt := d.tasks[id]; lt != nil && lt.run == run {
		return lt
	}
	return nil
}

func (d *driver) startTask(a herder.StartTask, tm *metrics.Task) {
	id := toTaskID(a.ID)
	spec, err := d.pl.Load().Spec(a.Connector["connector.class"])
	if err != nil {
		d.metrics.TaskStartup(false)
		d.send(herder.TaskStarted{ID: a.ID, Run: a.Run, Err: errTrace(err)})
		return
	}
	report := func(state, trace string) {
		if state != StateFailed {
			return
		}
		// Never block the runner (it may hold its own locks while it is
		// being stopped).
		go d.send(herder.TaskFailed{ID: a.ID, Run: a.Run, Trace: trace})
	}
	conn, err := d.resolve(id.Connector, spec, a.Connector)
	if err != nil {
		d.metrics.TaskStartup(false)
		d.send(herder.TaskStarted{ID: a.ID, Run: a.Run, Err: errTrace(err)})
		return
	}
	tc, err := d.resolve(id.Connector, spec, a.Config)
	if err != nil {
		d.metrics.TaskStartup(false)
		d.send(herder.TaskStarted{ID: a.ID, Run: a.Run, Err: errTrace(err)})
		return
	}
	var eos *taskEOS
	if a.ExactlyOnce && spec.Type == "source" {
		eos = &taskEOS{
			Preflight: func(ctx context.Context) error { return d.preflight(ctx, id) },
			Verify:    func(ctx context.Context) error { return d.verifyTask(ctx, id, a.TaskGeneration) },
		}
	}
	r, err := d.start(d.ctx, id, spec, conn.Values, tc.Values, a.Paused, eos, tm, report)
	d.metrics.TaskStartup(err == nil)
	if err != nil {
		d.send(herder.TaskStarted{ID: a.ID, Run: a.Run, Err: errTrace(err)})
		return
	}
	d.rmu.Lock()
	d.tasks[id] = &liveTask{run: a.Run, r: r}
	d.rmu.Unlock()
	d.connLogger(id.Connector).Info("task started", "task", id.Task)
	d.send(herder.TaskStarted{ID: a.ID, Run: a.Run})
}

func (d *driver) stopTask(a herder.StopTask) {
	id := toTaskID(a.ID)
	d.rmu.Lock()
	lt := d.tasks[id]
	if lt != nil && lt.run == a.Run {
		delete(d.tasks, id)
	} else {
		lt = nil
	}
	d.rmu.Unlock()
	if lt != nil {
		// The runner stops gracefully within task.shutdown.graceful.timeout.ms;
		// a plugin that does not is killed (plugins.Config.StopTimeout).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), d.cfg.TaskShutdownTimeout+2*time.Second)
		if err := lt.r.Stop(ctx); err != nil {
			d.connLogger(id.Connector).Warn("task did not stop cleanly", "task", id.Task, "err", err)
		}
		cancel()
		d.connLogger(id.Connector).Info("task stopped", "task", id.Task)
	}
	d.send(herder.TaskStopped(a))
}

// emptyProviders resolve nothing (a driver made without a worker).
var emptyProviders, _ = configprovider.New(nil, nil)

// resolve returns the config handed to a plugin: c with its references
// resolved by the worker's config providers, here, when the connector or
// task starts, so that a secret changed on disk reaches a restarted task.
// A reference that does not resolve stays as it is (Kafka's behaviour)
// and is logged; a provider that cannot read fails the start. The values
// of the connector's secrets (its PASSWORD keys, the client security
// secrets of its overrides, whatever references resolved to) join the
// worker's set of secrets to hide.
func (d *driver) resolve(name string, spec sdk.Spec, c map[string]string) (configprovider.Result, error) {
	res, err := d.providers.Resolve(c)
	if err != nil {
		return res, fmt.Errorf("config providers: %w", err)
	}
	d.secrets.Add(res.Secrets...)
	d.secrets.Add(secretValues(spec, res.Values)...)
	for _, k := range slices.Sorted(maps.Keys(res.Unresolved)) {
		for _, why := range res.Unresolved[k] {
			d.connLogger(name).Warn("a config reference did not resolve; the value is passed as it is", "property", k, "reference", why)
		}
	}
	return res, nil
}

// unresolveTaskConfig gives a task config that the connector made from
// its resolved config the references of raw back, so that the config
// topic never holds what they resolved to: a key whose raw value holds a
// reference and whose value is the resolved one gets the raw value (Kafka
// Connect's reverse transformation), and any resolved value found in
// another key (a renamed key, a value built from secrets) gets its
// reference, which Kafka Connect does not do.
func unresolveTaskConfig(tc, raw map[string]string, res configprovider.Result) map[string]string {
	out := make(map[string]string, len(tc))
	for k, v := range tc {
		if rv, ok := raw[k]; ok && configprovider.HasReference(rv) && v == res.Values[k] {
			out[k] = rv
			continue
		}
		out[k] = res.Unresolve(v)
	}
	return out
}

// secretValues returns the values of config that are secrets: its PASSWORD
// keys (by the plugin's definitions), the client security secrets
// (producer.override.sasl.jaas.config and the like), and the passwords
// within a JAAS configuration.
func secretValues(spec sdk.Spec, config map[string]string) []string {
	password := map[string]bool{}
	for _, k := range spec.Config {
		if k.Type == sdk.TypePassword {
			password[k.Name] = true
		}
	}
	var out []string
	for k, v := range config {
		if password[k] || kafkaauth.IsSecret(k) {
			out = append(out, v)
		}
		if strings.HasSuffix(k, "sasl.jaas.config") {
			if m, err := jaas.ParseClient(v); err == nil {
				for o, ov := range m.Options {
					if lo := strings.ToLower(o); strings.Contains(lo, "password") || strings.Contains(lo, "secret") || strings.Contains(lo, "token") {
						out = append(out, ov)
					}
				}
			}
		}
	}
	return out
}

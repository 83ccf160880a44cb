package metrics

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tributary-dev/tributary/internal/stats"
)

// Config configures a worker's metrics.
type Config struct {
	// Style names the series (tributary.metrics.naming); default Strimzi.
	Style Style
	// Window is metrics.sample.window.ms and metrics.num.samples.
	Window stats.Window
	// WorkerID is the worker's id (its advertised host:port): Kafka
	// Connect's app-info client-id, and with "connect-" before it the
	// group member's (ClientID overrides that).
	WorkerID, ClientID string
	// Version and Commit are app-info's version and commit-id.
	Version, Commit string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Connect is a worker's Kafka Connect metrics: the worker, rebalance and
// coordinator groups, and a Connector or Task set for each connector and
// task this worker runs. It is a prometheus.Collector: every value is
// computed when scraped, and the names are its Style's. The driver
// creates and removes the sets; runners record into their Task.
type Connect struct {
	cfg   Config
	start time.Time
	descs descCache

	mu    sync.Mutex
	tasks map[TaskID]*Task
	conns map[string]*connector

	connAttempts, connOK, connFailed atomic.Int64
	taskAttempts, taskOK, taskFailed atomic.Int64
	connResults, taskResults         *stats.Sampled

	cmu     sync.Mutex
	clients []*Client // the worker's own Kafka clients

	rmu        sync.Mutex
	rebalance  rebalanceState
	rebalTime  *stats.Sampled
	assignedCs atomic.Int64
	assignedTs atomic.Int64
}

type rebalanceState struct {
	rebalancing bool
	started     time.Time
	epoch       int32
	leader      string
	protocol    string
	completed   int64
	last        time.Time
}

type connector struct {
	kind                  Kind
	class, version, state string
	plugin                PluginReporter
}

// New returns a worker's metrics.
func New(cfg Config) *Connect {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "connect-" + cfg.WorkerID
	}
	s := func() *stats.Sampled { return stats.NewSampled(cfg.Window) }
	return &Connect{cfg: cfg, start: cfg.Now(), tasks: map[TaskID]*Task{}, conns: map[string]*connector{},
		connResults: s(), taskResults: s(), rebalTime: s()}
}

// Client makes the metrics of one of the worker's own Kafka clients (the
// admin client, the stores', the group member's: kind ClientConnect,
// whose coordinator group carries assigned-connectors and -tasks); nil
// for a nil *Connect.
func (c *Connect) Client(kind, id string) *Client {
	if c == nil {
		return nil
	}
	cl := newClient(kind, id, &c.cfg)
	c.cmu.Lock()
	c.clients = append(c.clients, cl)
	c.cmu.Unlock()
	return cl
}

// ClientID is the group member's client id (connect-<worker id>).
func (c *Connect) ClientID() string { return c.cfg.ClientID }

// Now is the metrics' clock.
func (c *Connect) Now() time.Time { return c.cfg.Now() }

// StartTask makes a new set for a task being started here, replacing any
// earlier one: a task's totals count since it was last started. It
// returns nil for a nil *Connect, which records nothing.
func (c *Connect) StartTask(id TaskID, kind Kind) *Task {
	if c == nil {
		return nil
	}
	t := newTask(id, kind, &c.cfg)
	c.mu.Lock()
	c.tasks[id] = t
	c.mu.Unlock()
	return t
}

// Task returns the task's set, or nil.
func (c *Connect) Task(id TaskID) *Task {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks[id]
}

// SetTaskState records a task's state (a status-topic state such as
// RUNNING, in any case) if the task has a set here.
func (c *Connect) SetTaskState(id TaskID, state string) {
	if t := c.Task(id); t != nil {
		t.state.set(c.cfg.Now(), strings.ToLower(state))
	}
}

// RemoveTask drops a task's set: it was deleted, or moved to another worker.
func (c *Connect) RemoveTask(id TaskID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.tasks, id)
	c.mu.Unlock()
}

// TaskIDs lists the tasks with a set.
func (c *Connect) TaskIDs() []TaskID {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.tasks))
}

// SetConnector makes or updates the set of a connector this worker runs.
func (c *Connect) SetConnector(name string, kind Kind, class, version string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cn := c.conns[name]
	if cn == nil {
		cn = &connector{state: StateUnassigned}
		c.conns[name] = cn
	}
	cn.kind, cn.class, cn.version = kind, class, version
}

// SetConnectorState records a connector's state if it has a set here.
func (c *Connect) SetConnectorState(name, state string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn := c.conns[name]; cn != nil {
		cn.state = strings.ToLower(state)
	}
}

// HasConnector reports whether the connector has a set here.
func (c *Connect) HasConnector(name string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[name] != nil
}

// RemoveConnector drops a connector's set.
func (c *Connect) RemoveConnector(name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.conns, name)
	c.mu.Unlock()
}

// ConnectorNames lists the connectors with a set.
func (c *Connect) ConnectorNames() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.conns))
}

// ConnectorStartup records a connector start's outcome.
func (c *Connect) ConnectorStartup(ok bool) {
	if c == nil {
		return
	}
	c.connAttempts.Add(1)
	if ok {
		c.connOK.Add(1)
	} else {
		c.connFailed.Add(1)
	}
	c.connResults.Record(c.cfg.Now(), b2f(ok))
}

// TaskStartup records a task start's outcome.
func (c *Connect) TaskStartup(ok bool) {
	if c == nil {
		return
	}
	c.taskAttempts.Add(1)
	if ok {
		c.taskOK.Add(1)
	} else {
		c.taskFailed.Add(1)
	}
	c.taskResults.Record(c.cfg.Now(), b2f(ok))
}

// RebalanceStarted records that the worker is (re)joining its group.
func (c *Connect) RebalanceStarted() {
	if c == nil {
		return
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if !c.rebalance.rebalancing {
		c.rebalance.rebalancing, c.rebalance.started = true, c.cfg.Now()
	}
}

// Protocol names for connect-protocol (Kafka's ConnectProtocolCompatibility).
func protocolName(p string) string {
	switch strings.ToLower(p) {
	case "default", "eager":
		return "EAGER"
	case "compatible":
		return "COMPATIBLE"
	case "sessioned":
		return "SESSIONED"
	}
	return strings.ToUpper(p)
}

// RebalanceCompleted records a generation's assignment, applied: its
// generation, sub-protocol, leader URL and the connectors and tasks this
// worker owns.
func (c *Connect) RebalanceCompleted(generation int32, protocol, leaderURL string, connectors, tasks int) {
	if c == nil {
		return
	}
	now := c.cfg.Now()
	c.rmu.Lock()
	r := &c.rebalance
	d := time.Duration(0)
	if r.rebalancing {
		d = max(now.Sub(r.started), 0)
	}
	r.rebalancing = false
	r.epoch, r.protocol, r.leader = generation, protocolName(protocol), leaderURL
	r.completed++
	r.last = now
	c.rmu.Unlock()
	c.rebalTime.Record(now, ms(d))
	c.assignedCs.Store(int64(connectors))
	c.assignedTs.Store(int64(tasks))
}

// Describe sends nothing: the series change as connectors come and go.
func (c *Connect) Describe(chan<- *prometheus.Desc) {}

// Collect writes every series.
func (c *Connect) Collect(ch chan<- prometheus.Metric) {
	now := c.cfg.Now()
	w := &writer{style: c.cfg.Style, descs: &c.descs, ch: ch}
	c.collect(w, now)
	w.flush()
}

func (c *Connect) collect(w *writer, now time.Time) {
	c.cmu.Lock()
	clients := slices.Clone(c.clients)
	c.cmu.Unlock()
	member := slices.ContainsFunc(clients, func(cl *Client) bool { return cl.kind == ClientConnect && cl.id == c.cfg.ClientID })
	ids := []string{c.cfg.WorkerID}
	if !member {
		ids = append(ids, c.cfg.ClientID) // else the member's client writes it
	}
	for _, id := range ids {
		w.begin(bean{"connect", groupAppInfo, []tag{{"client-id", id}}})
		w.attr("commit-id", str(c.cfg.Commit), help(groupAppInfo, "commit-id"))
		w.attr("start-time-ms", num(float64(c.start.UnixMilli())), help(groupAppInfo, "start-time-ms"))
		w.attr("version", str(c.cfg.Version), help(groupAppInfo, "version"))
	}

	c.mu.Lock()
	tasks := make([]*Task, 0, len(c.tasks))
	for _, t := range c.tasks {
		tasks = append(tasks, t)
	}
	type connView struct {
		name string
		connector
	}
	conns := make([]connView, 0, len(c.conns))
	for n, cn := range c.conns {
		conns = append(conns, connView{n, *cn})
	}
	c.mu.Unlock()
	slices.SortFunc(tasks, func(a, b *Task) int {
		if x := strings.Compare(a.id.Connector, b.id.Connector); x != 0 {
			return x
		}
		return a.id.Task - b.id.Task
	})
	slices.SortFunc(conns, func(a, b connView) int { return strings.Compare(a.name, b.name) })

	a := func(g, name string, v value) { w.attr(name, v, help(g, name)) }
	w.begin(bean{"connect", groupWorker, nil})
	a(groupWorker, "connector-count", num(float64(len(conns))))
	a(groupWorker, "task-count", num(float64(len(tasks))))
	a(groupWorker, "connector-startup-attempts-total", num(float64(c.connAttempts.Load())))
	a(groupWorker, "connector-startup-success-total", num(float64(c.connOK.Load())))
	a(groupWorker, "connector-startup-success-percentage", num(c.connResults.Frequency(now)))
	a(groupWorker, "connector-startup-failure-total", num(float64(c.connFailed.Load())))
	a(groupWorker, "connector-startup-failure-percentage", num(c.connResults.FrequencyOf0(now)))
	a(groupWorker, "task-startup-attempts-total", num(float64(c.taskAttempts.Load())))
	a(groupWorker, "task-startup-success-total", num(float64(c.taskOK.Load())))
	a(groupWorker, "task-startup-success-percentage", num(c.taskResults.Frequency(now)))
	a(groupWorker, "task-startup-failure-total", num(float64(c.taskFailed.Load())))
	a(groupWorker, "task-startup-failure-percentage", num(c.taskResults.FrequencyOf0(now)))

	// Per connector with tasks here: the tasks' states (Kafka Connect's
	// ConnectorStatusMetricsGroup).
	counts := map[string]map[string]int{}
	var order []string
	for _, t := range tasks {
		m := counts[t.id.Connector]
		if m == nil {
			m = map[string]int{}
			counts[t.id.Connector] = m
			order = append(order, t.id.Connector)
		}
		m[""]++
		st := t.state.current()
		if st == "" {
			st = StateUnassigned
		}
		m[st]++
	}
	for _, name := range order {
		m := counts[name]
		w.begin(bean{"connect", groupWorker, []tag{{"connector", name}}})
		a(groupWorker, "connector-total-task-count", num(float64(m[""])))
		for _, st := range []string{StateRunning, StatePaused, StateFailed, StateUnassigned, StateDestroyed, StateRestarting} {
			a(groupWorker, "connector-"+st+"-task-count", num(float64(m[st])))
		}
	}

	c.rmu.Lock()
	r := c.rebalance
	c.rmu.Unlock()
	w.begin(bean{"connect", groupRebalance, nil})
	a(groupRebalance, "connect-protocol", str(r.protocol))
	a(groupRebalance, "leader-name", str(r.leader))
	a(groupRebalance, "epoch", num(float64(r.epoch)))
	a(groupRebalance, "completed-rebalances-total", num(float64(r.completed)))
	a(groupRebalance, "rebalancing", boolean(r.rebalancing))
	a(groupRebalance, "rebalance-max-time-ms", num(c.rebalTime.Max(now)))
	a(groupRebalance, "rebalance-avg-time-ms", num(c.rebalTime.Avg(now)))
	since := math.Inf(1)
	if !r.last.IsZero() {
		since = float64(now.Sub(r.last).Milliseconds())
	}
	a(groupRebalance, "time-since-last-rebalance-ms", num(since))

	assigned := func(w *writer) {
		a(groupCoord, "assigned-connectors", num(float64(c.assignedCs.Load())))
		a(groupCoord, "assigned-tasks", num(float64(c.assignedTs.Load())))
	}
	for _, cl := range clients {
		if cl.kind == ClientConnect && cl.id == c.cfg.ClientID {
			cl.collect(w, now, assigned)
		} else {
			cl.collect(w, now, nil)
		}
	}
	if !member {
		w.begin(bean{"connect", groupCoord, []tag{{"client-id", c.cfg.ClientID}}})
		assigned(w)
	}

	for _, cn := range conns {
		w.begin(bean{"connect", groupConnector, []tag{{"connector", cn.name}}})
		a(groupConnector, "connector-class", str(cn.class))
		a(groupConnector, "connector-type", str(string(cn.kind)))
		a(groupConnector, "connector-version", str(cn.version))
		a(groupConnector, "status", str(cn.state))
	}
	w.flush()
	for _, cn := range conns {
		if cn.plugin != nil && w.ch != nil {
			writePlugin(w, cn.plugin.PluginMetrics(), []string{"connector"}, []string{cn.name})
		}
	}
	for _, t := range tasks {
		t.collect(w, now)
	}
}

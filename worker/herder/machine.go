package herder

import (
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config configures a Machine.
type Config struct {
	// WorkerID is written into statuses (worker_id).
	WorkerID string
	// URL is this worker's advertised REST URL.
	URL string
	// HoldTimeout bounds how long a write that needs the leader waits for a
	// rebalance to end before it is answered 409 (default 30s).
	HoldTimeout time.Duration
	// TaskConfigsTimeout bounds a connector's taskConfigs call; a connector
	// that does not answer in time is failed (default 30s).
	TaskConfigsTimeout time.Duration
	// KeyTTL is inter.worker.key.ttl.ms: the leader writes a new session
	// key when the current one is older (default 1h).
	KeyTTL time.Duration
	// RetryBackoff is how long a follower waits before sending task configs
	// to the leader again after a failure (default 1s).
	RetryBackoff time.Duration
	// Logger defaults to a discarding one.
	Logger *slog.Logger
	// ExactlyOnce is exactly.once.source.support=enabled: source tasks
	// start after a round of zombie fencing, offsets change after one.
	ExactlyOnce bool
	// TransactionalLeader is exactly.once.source.support=preparing or
	// enabled: the leader claims the config topic's transactional
	// producer (ClaimWrites) when it becomes the leader.
	TransactionalLeader bool
}

func (c *Config) defaults() {
	if c.HoldTimeout <= 0 {
		c.HoldTimeout = 30 * time.Second
	}
	if c.TaskConfigsTimeout <= 0 {
		c.TaskConfigsTimeout = 30 * time.Second
	}
	if c.KeyTTL <= 0 {
		c.KeyTTL = time.Hour
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

type phase int

const (
	starting phase = iota + 1
	running
	stopping
	failed // stopped after a failure; stays so until restarted or reconfigured
)

// instance is a connector or task this worker runs (or ran and failed).
type instance struct {
	run    uint64
	phase  phase
	config map[string]string // the connector config it started with
	// restart: start again once stopped (a restart request).
	restart bool
	// failTrace: stopping after a failure; failed once stopped.
	failTrace string
	// unassigned: write UNASSIGNED once stopped (its work was revoked).
	unassigned bool
}

type conn struct {
	instance
	// configOffset is the offset of the config record it started with: a
	// new record, even of an equal config, restarts it (as in Kafka
	// Connect) and ends a failure.
	configOffset int64
	gen          uint64 // the last GenerateTaskConfigs
	generating   bool
	genDeadline  time.Time
	regen        bool // generate again when the current call answers
	// A follower's task configs for the leader: pending until sent.
	send      []map[string]string
	sendOp    uint64
	sendRetry time.Time
}

type task struct {
	instance
	taskConfig map[string]string
	paused     bool
}

type statusKey struct {
	conn string
	task int // -1: the connector
}

// held is a request waiting for the end of a rebalance.
type held struct {
	req      Request
	deadline time.Time
}

// pendingOp is a write or call a Reply waits for.
type pendingOp struct {
	reply   Token
	kind    string
	name    string
	created bool
	tasks   int
}

// Machine is the herder's state machine. It is not safe for concurrent
// use: one loop calls Step and Ready.
type Machine struct {
	cfg Config
	log *slog.Logger
	now time.Time

	snap Snapshot

	// Membership.
	assigned    bool // an assignment has been applied
	rebalancing bool // between JoinPrepare and Assigned
	catchingUp  int64
	lost        bool // membership lost: stop everything, write nothing
	stopping    bool // Shutdown: nothing starts again
	gen         int32
	leader      bool
	leaderURL   string
	protocol    Protocol
	ownConns    map[string]bool
	ownTasks    map[TaskID]bool
	connOwners  map[string]string
	taskOwners  map[TaskID]string
	waiters     []waiter

	conns   map[string]*conn
	tasks   map[TaskID]*task
	runSeq  uint64
	written map[statusKey]string

	held []held
	// Requests waiting for a restarted connector or task to start.
	startWaits map[statusKey][]Token
	ops        map[uint64]pendingOp
	opSeq      uint64
	creating   map[string]int // connector names with a config write in flight
	keyOp      uint64         // a session key write in flight
	keyRetry   time.Time      // after a failed key write
	// cleanup: the leader owes a CleanStatuses once removed work stopped.
	cleanup  bool
	clearing map[string]bool
	// fencings are the leader's rounds of zombie fencing in progress, by
	// connector (fencing.go).
	fencings map[string]*fencing
	// claimed: the leader's transactional producer of the config topic
	// was claimed (ClaimWrites) and not given up since.
	claimed bool

	actions []Action
}

// waiter is a group callback waiting for work to stop.
type waiter struct {
	token Token
	all   bool // everything; else everything outside the assignment
	// clean: the leader cleans the statuses of deleted work once its own
	// revoked work has stopped (and written UNASSIGNED).
	clean bool
}

// New returns a Machine that owns nothing and knows no config.
func New(cfg Config) *Machine {
	cfg.defaults()
	return &Machine{
		cfg: cfg, log: cfg.Logger,
		snap:       Snapshot{Offset: -1, Connectors: map[string]Connector{}},
		ownConns:   map[string]bool{},
		ownTasks:   map[TaskID]bool{},
		conns:      map[string]*conn{},
		tasks:      map[TaskID]*task{},
		written:    map[statusKey]string{},
		ops:        map[uint64]pendingOp{},
		creating:   map[string]int{},
		clearing:   map[string]bool{},
		startWaits: map[statusKey][]Token{},
		fencings:   map[string]*fencing{},
		catchingUp: -1,
	}
}

// Ready returns the actions to perform, in order, and forgets them.
func (m *Machine) Ready() []Action {
	a := m.actions
	m.actions = nil
	return a
}

func (m *Machine) emit(a Action) { m.actions = append(m.actions, a) }

// Leader reports whether this worker leads the current generation.
func (m *Machine) Leader() bool { return m.leader && m.active() }

// Generation is the generation of the applied assignment (-1 before one).
func (m *Machine) Generation() int32 {
	if !m.assigned {
		return -1
	}
	return m.gen
}

// HasTask reports whether the machine holds the task: starting, running,
// stopping, or failed here (a failed task stays until it is restarted,
// deleted or assigned elsewhere). The driver keeps a task's metrics while
// it does.
func (m *Machine) HasTask(id TaskID) bool { return m.tasks[id] != nil }

// OwnsConnector reports whether the connector is this worker's, in the
// config topic and assigned here (running, paused, stopped or failed).
func (m *Machine) OwnsConnector(name string) bool {
	_, exists := m.snap.Connectors[name]
	return exists && m.ownConns[name]
}

// active: a member of a generation, caught up, not rebalancing.
func (m *Machine) active() bool {
	return m.assigned && !m.rebalancing && m.catchingUp < 0 && !m.lost
}

// NextDeadline is when Step(Tick) must be called next (zero: no deadline).
func (m *Machine) NextDeadline() time.Time {
	var d time.Time
	at := func(t time.Time) {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	for _, h := range m.held {
		at(h.deadline)
	}
	for _, c := range m.conns {
		if c.generating {
			at(c.genDeadline)
		}
		if c.send != nil && c.sendOp == 0 {
			at(c.sendRetry)
		}
	}
	if k := m.keyDue(); !k.IsZero() {
		at(k)
	}
	return d
}

// Step applies one event at time now.
func (m *Machine) Step(now time.Time, ev Event) {
	m.now = now
	switch e := ev.(type) {
	case Configs:
		m.onConfigs(e.Snapshot)
	case RestartRequested:
		m.onRestart(e)
	case JoinPrepare:
		m.onJoinPrepare(e)
	case Assigned:
		if !m.stopping {
			m.onAssigned(e)
		} else {
			m.emit(Reply{To: e.Reply})
		}
	case Shutdown:
		m.stopping, m.rebalancing = true, true
		m.ownConns, m.ownTasks = map[string]bool{}, map[TaskID]bool{}
		m.waiters = append(m.waiters, waiter{token: e.Reply, all: true})
	case ConnectorStarted:
		m.onConnectorStarted(e)
	case ConnectorFailed:
		if c := m.conns[e.Name]; c != nil && c.run == e.Run && c.phase == running {
			m.failConnector(e.Name, c, e.Trace)
		}
	case ReconfigurationRequested:
		if c := m.conns[e.Name]; c != nil && c.run == e.Run && c.phase == running {
			m.generate(e.Name, c)
		}
	case TaskConfigsGenerated:
		m.onTaskConfigs(e)
	case ConnectorStopped:
		m.onConnectorStopped(e)
	case TaskStarted:
		m.onTaskStarted(e)
	case TaskFailed:
		if t := m.tasks[e.ID]; t != nil && t.run == e.Run && (t.phase == running || t.phase == starting) {
			m.log.Error("task failed", "connector", e.ID.Connector, "task", e.ID.Task, "trace", firstLine(e.Trace))
			m.putTask(e.ID, StateFailed, e.Trace)
			m.stopTask(e.ID, t)
			t.failTrace = e.Trace
		}
	case TaskStopped:
		m.onTaskStopped(e)
	case Done:
		m.onDone(e)
	case Request:
		m.dispatch(e)
	case Tick:
	}
	m.tick()
	m.reconcile()
	m.answerWaiters()
	m.clean()
}

// clean emits the leader's owed CleanStatuses once no work of a deleted
// connector, or beyond a connector's task count, is still stopping here
// (its UNASSIGNED would come after the tombstone).
func (m *Machine) clean() {
	if !m.cleanup || !m.leader {
		m.cleanup = false
		return
	}
	for name, c := range m.conns {
		if _, ok := m.snap.Connectors[name]; !ok && c.phase != failed {
			return
		}
	}
	for id, t := range m.tasks {
		if cs, ok := m.snap.Connectors[id.Connector]; (!ok || id.Task >= len(cs.Tasks)) && t.phase != failed {
			return
		}
	}
	m.cleanup = false
	counts := make(map[string]int, len(m.snap.Connectors))
	for name, cs := range m.snap.Connectors {
		counts[name] = len(cs.Tasks)
	}
	m.emit(CleanStatuses{Tasks: counts})
}

// ---- config topic ----

// workKey is what the leader assigns: connectors and their task counts
// (0 for a stopped one).
func workKey(s Snapshot) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s.Connectors)) {
		c := s.Connectors[name]
		if !c.assignable() {
			continue
		}
		n := len(c.Tasks)
		if c.Target == Stopped {
			n = 0
		}
		b.WriteString(name)
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(0)
	}
	return b.String()
}

func (m *Machine) onConfigs(s Snapshot) {
	if s.Connectors == nil {
		s.Connectors = map[string]Connector{}
	}
	if s.Offset < m.snap.Offset {
		return // an older read finishing late
	}
	prev := m.snap
	m.snap = s
	m.fencingsOutdated()
	if m.catchingUp >= 0 && s.Offset >= m.catchingUp {
		m.catchingUp = -1
		m.redispatch()
	}
	if prev.Offset >= 0 && workKey(prev) != workKey(s) && m.assigned && !m.lost {
		m.emit(Rejoin{}) // the leader must assign the changed work
	}
	for name, c := range m.conns {
		if nc, ok := s.Connectors[name]; ok && nc.Inconsistent && c.phase == running && !c.generating {
			m.generate(name, c)
		}
		if nc, ok := s.Connectors[name]; ok && nc.Target != Stopped {
			delete(m.clearing, name)
		}
	}
}

func (m *Machine) onRestart(r RestartRequested) {
	cs, ok := m.snap.Connectors[r.Connector]
	if !ok || !m.active() {
		return
	}
	if m.ownConns[r.Connector] && cs.Target == Started {
		m.restartConnector(r.Connector, r.OnlyFailed)
	}
	if !r.IncludeTasks || cs.Target == Stopped {
		return
	}
	for i := range cs.Tasks {
		id := TaskID{r.Connector, i}
		if !m.ownTasks[id] {
			continue
		}
		m.restartTask(id, r.OnlyFailed)
	}
}

// restartConnector restarts an owned connector (if it failed, when
// onlyFailed); it reports whether it does.
func (m *Machine) restartConnector(name string, onlyFailed bool) bool {
	c := m.conns[name]
	failedNow := c != nil && c.phase == failed
	if onlyFailed && !failedNow {
		return false
	}
	m.putConnector(name, StateRestarting, "")
	if c != nil {
		if c.phase == failed {
			delete(m.conns, name)
		} else {
			c.restart = true
		}
	}
	return true
}

// waitStart answers to once the connector (task < 0) or task has started
// again.
func (m *Machine) waitStart(conn string, task int, to Token) {
	k := statusKey{conn, task}
	m.startWaits[k] = append(m.startWaits[k], to)
}

// started answers the requests waiting for an instance to start.
func (m *Machine) started(conn string, task int) {
	k := statusKey{conn, task}
	for _, to := range m.startWaits[k] {
		m.reply(to, Result{})
	}
	delete(m.startWaits, k)
}

func (m *Machine) restartTask(id TaskID, onlyFailed bool) {
	t := m.tasks[id]
	failedNow := t != nil && t.phase == failed
	if onlyFailed && !failedNow {
		return
	}
	m.putTask(id, StateRestarting, "")
	if t != nil {
		if t.phase == failed {
			delete(m.tasks, id)
		} else {
			t.restart = true
		}
	}
}

// ---- group ----

func (m *Machine) onJoinPrepare(e JoinPrepare) {
	m.rebalancing = true
	m.abandonFencings()
	if e.Lost || e.Eager {
		if e.Lost {
			m.claimWrites(false)
			m.lost = true
			m.log.Warn("group membership lost: stopping every connector and task before another worker may start them")
		}
		m.ownConns, m.ownTasks = map[string]bool{}, map[TaskID]bool{}
		m.leader = false
		m.waiters = append(m.waiters, waiter{token: e.Reply, all: true})
		return
	}
	m.emit(Reply{To: e.Reply})
}

func (m *Machine) onAssigned(e Assigned) {
	m.assigned, m.rebalancing, m.lost = true, false, false
	m.claimWrites(e.Leader)
	m.gen, m.leader, m.leaderURL, m.protocol = e.Generation, e.Leader, e.LeaderURL, e.Protocol
	if e.Leader {
		m.leaderURL = m.cfg.URL
	}
	conns, tasks := map[string]bool{}, map[TaskID]bool{}
	for _, c := range e.Connectors {
		conns[c] = true
		if !m.ownConns[c] {
			delete(m.written, statusKey{c, -1}) // another worker's status is there now
		}
	}
	for _, t := range e.Tasks {
		tasks[t] = true
		if !m.ownTasks[t] {
			delete(m.written, statusKey{t.Connector, t.Task})
		}
	}
	m.ownConns, m.ownTasks = conns, tasks
	m.connOwners, m.taskOwners = e.ConnectorOwners, e.TaskOwners
	if e.ConfigOffset > m.snap.Offset {
		m.catchingUp = e.ConfigOffset
		m.emit(ReadConfigs{})
	} else {
		m.catchingUp = -1
	}
	m.waiters = append(m.waiters, waiter{token: e.Reply, clean: m.leader})
	m.redispatch()
}

// answerWaiters replies to group callbacks whose work has stopped.
func (m *Machine) answerWaiters() {
	keep := m.waiters[:0]
	for _, w := range m.waiters {
		if m.busy(w.all) {
			keep = append(keep, w)
			continue
		}
		if w.clean && m.leader {
			m.cleanup = true
			m.clean()
		}
		m.emit(Reply{To: w.token})
	}
	m.waiters = keep
}

// busy reports whether work that must stop still runs: any at all, or
// any outside the assignment.
func (m *Machine) busy(all bool) bool {
	for name, c := range m.conns {
		if c.phase != failed && (all || !m.ownConns[name]) {
			return true
		}
	}
	for id, t := range m.tasks {
		if t.phase != failed && (all || !m.ownTasks[id]) {
			return true
		}
	}
	return false
}

// ---- runtime results ----

func (m *Machine) onConnectorStarted(e ConnectorStarted) {
	c := m.conns[e.Name]
	if c == nil || c.run != e.Run || c.phase != starting {
		return
	}
	defer m.started(e.Name, -1) // after the status
	if e.Err != "" {
		m.log.Error("connector failed to start", "connector", e.Name, "err", firstLine(e.Err))
		c.phase = failed
		m.putConnector(e.Name, StateFailed, e.Err)
		return
	}
	c.phase = running
	m.putConnector(e.Name, StateRunning, "")
	m.generate(e.Name, c)
}

func (m *Machine) failConnector(name string, c *conn, trace string) {
	m.log.Error("connector failed", "connector", name, "trace", firstLine(trace))
	m.putConnector(name, StateFailed, trace)
	c.failTrace = trace
	m.stopConnector(name, c)
}

// generate asks the running connector for its task configs.
func (m *Machine) generate(name string, c *conn) {
	cs, ok := m.snap.Connectors[name]
	if !ok || cs.Target != Started {
		return
	}
	if c.generating {
		c.regen = true
		return
	}
	c.gen++
	c.generating, c.regen = true, false
	c.genDeadline = m.now.Add(m.cfg.TaskConfigsTimeout)
	m.emit(GenerateTaskConfigs{Name: name, Run: c.run, Gen: c.gen, MaxTasks: maxTasks(cs.Config)})
}

func maxTasks(cfg map[string]string) int {
	n, err := strconv.Atoi(strings.TrimSpace(cfg["tasks.max"]))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func (m *Machine) onTaskConfigs(e TaskConfigsGenerated) {
	c := m.conns[e.Name]
	if c == nil || c.run != e.Run || c.gen != e.Gen || !c.generating || c.phase != running {
		return
	}
	c.generating = false
	cs, ok := m.snap.Connectors[e.Name]
	if !ok {
		return
	}
	if e.Err != "" {
		m.failConnector(e.Name, c, e.Err)
		return
	}
	if n := maxTasks(cs.Config); len(e.Configs) > n && !strings.EqualFold(strings.TrimSpace(cs.Config["tasks.max.enforce"]), "false") {
		m.failConnector(e.Name, c, "The connector "+e.Name+" has generated "+strconv.Itoa(len(e.Configs))+" tasks, which is greater than "+strconv.Itoa(n)+
			", the maximum number of tasks it is configured to create. This behavior should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect.")
		return
	}
	m.publish(e.Name, c, e.Configs)
	if c.regen {
		m.generate(e.Name, c)
	}
}

// publish makes generated task configs the committed ones: written by the
// leader, sent to it by a follower.
func (m *Machine) publish(name string, c *conn, configs []map[string]string) {
	cs := m.snap.Connectors[name]
	if configs == nil {
		configs = []map[string]string{}
	}
	if tasksEqual(configs, cs.Tasks) && !cs.Inconsistent && maps.Equal(cs.applied(), cs.Config) {
		c.send = nil
		return
	}
	if m.leader && m.active() {
		c.send = nil
		m.log.Info("writing task configs", "connector", name, "tasks", len(configs))
		m.emit(WriteConfigs{Writes: []Write{{Kind: WriteTasks, Name: name, Tasks: configs, Run: c.run}}})
		return
	}
	c.send = configs
	c.sendRetry = m.now
	m.trySend(name, c)
}

func (m *Machine) trySend(name string, c *conn) {
	if c.send == nil || c.sendOp != 0 || m.now.Before(c.sendRetry) || !m.active() {
		return
	}
	if m.leader {
		configs := c.send
		c.send = nil
		m.publish(name, c, configs)
		return
	}
	if m.leaderURL == "" {
		c.sendRetry = m.now.Add(m.cfg.RetryBackoff)
		return
	}
	c.sendOp = m.newOp(pendingOp{kind: "send", name: name})
	m.log.Info("sending task configs to the leader", "connector", name, "tasks", len(c.send), "leader", m.leaderURL)
	m.emit(SendTaskConfigs{Op: c.sendOp, Name: name, Configs: c.send, LeaderURL: m.leaderURL, Signed: m.protocol == Sessioned})
}

func tasksEqual(a, b []map[string]string) bool {
	return slices.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

func (m *Machine) onConnectorStopped(e ConnectorStopped) {
	c := m.conns[e.Name]
	if c == nil || c.run != e.Run || c.phase != stopping {
		return
	}
	if c.failTrace != "" && !c.restart {
		c.phase = failed
		return
	}
	if c.unassigned {
		m.putConnector(e.Name, StateUnassigned, "")
	}
	delete(m.conns, e.Name)
}

func (m *Machine) onTaskStarted(e TaskStarted) {
	t := m.tasks[e.ID]
	if t == nil || t.run != e.Run || t.phase != starting {
		return
	}
	defer m.started(e.ID.Connector, e.ID.Task) // after the status
	if e.Err != "" {
		m.log.Error("task failed to start", "connector", e.ID.Connector, "task", e.ID.Task, "err", firstLine(e.Err))
		t.phase = failed
		m.putTask(e.ID, StateFailed, e.Err)
		return
	}
	t.phase = running
	if t.paused {
		m.putTask(e.ID, StatePaused, "")
	} else {
		m.putTask(e.ID, StateRunning, "")
	}
}

func (m *Machine) onTaskStopped(e TaskStopped) {
	t := m.tasks[e.ID]
	if t == nil || t.run != e.Run || t.phase != stopping {
		return
	}
	if t.failTrace != "" && !t.restart {
		t.phase = failed
		return
	}
	if t.unassigned {
		m.putTask(e.ID, StateUnassigned, "")
	}
	delete(m.tasks, e.ID)
}

// ---- time ----

func (m *Machine) tick() {
	for name, c := range m.conns {
		if c.generating && !m.now.Before(c.genDeadline) {
			c.generating = false
			m.failConnector(name, c, "The connector "+name+" did not return its task configurations within "+m.cfg.TaskConfigsTimeout.String()+
				" (taskConfigs blocked); it is failed and stopped. Restart it once the cause is fixed.")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.conns)) {
		if c := m.conns[name]; c.phase == running {
			m.trySend(name, c)
		}
	}
	keep := m.held[:0]
	for _, h := range m.held {
		if !m.now.Before(h.deadline) {
			m.log.Warn("request held during a rebalance timed out", "after", m.cfg.HoldTimeout)
			m.emit(Reply{To: h.req.Reply, Result: Result{Err: errorf(409, msgNoLeader)}})
			continue
		}
		keep = append(keep, h)
	}
	m.held = keep
	if k := m.keyDue(); !k.IsZero() && !m.now.Before(k) {
		m.keyOp = m.newOp(pendingOp{kind: "key"})
		m.log.Info("writing a new session key")
		m.emit(WriteConfigs{Op: m.keyOp, Writes: []Write{{Kind: WriteSessionKey}}})
	}
}

// keyDue is when the leader must write a session key (zero: not its job
// now).
func (m *Machine) keyDue() time.Time {
	if !m.Leader() || m.protocol != Sessioned || m.keyOp != 0 {
		return time.Time{}
	}
	due := m.now
	if m.snap.SessionKey != nil {
		due = m.snap.SessionKey.Created.Add(m.cfg.KeyTTL)
	}
	if due.Before(m.keyRetry) {
		due = m.keyRetry
	}
	return due
}

// ---- reconcile ----

// reconcile makes what runs here match the assignment and the config.
func (m *Machine) reconcile() {
	starts := m.catchingUp < 0 && m.assigned && !m.lost && !m.stopping
	for _, name := range slices.Sorted(maps.Keys(m.conns)) {
		c := m.conns[name]
		cs, exists := m.snap.Connectors[name]
		want := m.ownConns[name] && exists && cs.Target == Started && cs.runnable()
		changed := exists && (!maps.Equal(c.config, cs.Config) || c.configOffset != cs.ConfigOffset)
		switch c.phase {
		case starting, running:
			if !want || changed || c.restart {
				// Kafka Connect's onShutdown: UNASSIGNED when the work
				// went away (deleted or revoked), not when it restarts
				// (nor when it cannot run: it is FAILED then).
				c.unassigned = (!exists || !m.ownConns[name]) && !m.lost && cs.runnable()
				m.stopConnector(name, c)
			}
		case failed:
			if !want || changed {
				delete(m.conns, name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.snap.Connectors)) {
		cs := m.snap.Connectors[name]
		if !cs.runnable() {
			// The leader reports one that is not assigned; the owner one
			// whose offsets cannot be read.
			if cs.OffsetsProblem && m.ownConns[name] || !cs.OffsetsProblem && m.Leader() {
				if c := m.conns[name]; c == nil || c.phase == failed {
					m.putConnector(name, StateFailed, cs.Problem)
				}
			}
			continue
		}
		if !m.ownConns[name] || m.conns[name] != nil {
			continue
		}
		switch cs.Target {
		case Started:
			if starts {
				m.startConnector(name, cs)
			}
		case Paused:
			m.putConnector(name, StatePaused, "")
		case Stopped:
			m.putConnector(name, StateStopped, "")
			if len(cs.Tasks) > 0 && m.Leader() && !m.clearing[name] {
				m.clearing[name] = true // a stopped connector has no tasks (KIP-875)
				m.emit(WriteConfigs{Writes: []Write{{Kind: WriteTasks, Name: name}}})
			}
		}
	}
	for _, id := range sortedTaskIDs(m.tasks) {
		t := m.tasks[id]
		cs, exists := m.snap.Connectors[id.Connector]
		inConfig := exists && id.Task < len(cs.Tasks)
		want := m.ownTasks[id] && inConfig && cs.Target != Stopped && cs.runnable()
		changed := inConfig && (!maps.Equal(t.taskConfig, cs.Tasks[id.Task]) || !maps.Equal(t.config, cs.applied()))
		switch t.phase {
		case starting, running:
			if !want || changed || t.restart {
				t.unassigned = (!inConfig || !m.ownTasks[id]) && !m.lost
				m.stopTask(id, t)
				continue
			}
			if paused := cs.Target == Paused; t.phase == running && paused != t.paused {
				t.paused = paused
				if paused {
					m.emit(PauseTask{ID: id, Run: t.run})
					m.putTask(id, StatePaused, "")
				} else {
					m.emit(ResumeTask{ID: id, Run: t.run})
					m.putTask(id, StateRunning, "")
				}
			}
		case failed:
			if !want || changed {
				delete(m.tasks, id)
			}
		}
	}
	for k := range m.startWaits {
		// Nothing to wait for: the instance is not ours (any more) or not
		// to run.
		if k.task < 0 && (!m.ownConns[k.conn] || m.snap.Connectors[k.conn].Target != Started) ||
			k.task >= 0 && !m.ownTasks[TaskID{k.conn, k.task}] {
			m.started(k.conn, k.task)
		}
	}
	if !starts {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(m.snap.Connectors)) {
		cs := m.snap.Connectors[name]
		if cs.Target == Stopped || !cs.runnable() {
			continue
		}
		for i, tc := range cs.Tasks {
			id := TaskID{name, i}
			if !m.ownTasks[id] || m.tasks[id] != nil {
				continue
			}
			m.runSeq++
			t := &task{instance: instance{run: m.runSeq, phase: starting, config: cs.applied()}, taskConfig: tc, paused: cs.Target == Paused}
			m.tasks[id] = t
			m.emit(StartTask{ID: id, Run: t.run, Connector: t.config, Config: tc, Paused: t.paused, Generation: m.gen,
				ExactlyOnce: m.cfg.ExactlyOnce && cs.Source, TaskGeneration: cs.Generation})
		}
	}
}

func (m *Machine) startConnector(name string, cs Connector) {
	m.runSeq++
	m.conns[name] = &conn{instance: instance{run: m.runSeq, phase: starting, config: cs.Config}, configOffset: cs.ConfigOffset}
	m.emit(StartConnector{Name: name, Run: m.runSeq, Config: cs.Config})
}

func (m *Machine) stopConnector(name string, c *conn) {
	if c.phase == stopping || c.phase == failed {
		return
	}
	c.phase = stopping
	c.generating = false
	c.send = nil
	m.emit(StopConnector{Name: name, Run: c.run})
}

func (m *Machine) stopTask(id TaskID, t *task) {
	if t.phase == stopping || t.phase == failed {
		return
	}
	t.phase = stopping
	m.emit(StopTask{ID: id, Run: t.run})
}

func sortedTaskIDs(ts map[TaskID]*task) []TaskID {
	ids := slices.Collect(maps.Keys(ts))
	slices.SortFunc(ids, func(a, b TaskID) int {
		if c := strings.Compare(a.Connector, b.Connector); c != 0 {
			return c
		}
		return a.Task - b.Task
	})
	return ids
}

// ---- statuses ----

func (m *Machine) putConnector(name, state, trace string) { m.putStatus(name, -1, state, trace) }
func (m *Machine) putTask(id TaskID, state, trace string) {
	m.putStatus(id.Connector, id.Task, state, trace)
}

// putStatus writes a status unless it would repeat this worker's last one,
// the connector is gone (but for UNASSIGNED at its shutdown), or the
// membership is lost (someone else may own the work by now).
func (m *Machine) putStatus(conn string, task int, state, trace string) {
	if m.lost || !m.assigned {
		return
	}
	if _, ok := m.snap.Connectors[conn]; !ok && state != StateUnassigned {
		return // a deleted connector's; only its shutdown is written
	}
	k := statusKey{conn, task}
	v := state + "\x00" + trace
	if m.written[k] == v {
		return
	}
	m.written[k] = v
	m.emit(PutStatus{Connector: conn, Task: task, State: state, Trace: trace, Generation: m.gen})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// applied is the connector config the committed tasks go with.
func (c Connector) applied() map[string]string {
	if c.Applied != nil {
		return c.Applied
	}
	return c.Config
}

package herder

import "slices"

// Zombie fencing (KIP-618), the leader's part. A source connector's tasks
// run with transactional producers (<group.id>-<connector>-<task>). When
// its task configs change, the tasks of the previous generation may still
// run somewhere (a worker that lost its membership without knowing it, a
// task that did not stop in time); before a task of the new generation
// starts, the leader fences every producer the connector's task count
// record (tasks-fencing-<name>) says may run, and records the new task
// count. Fencing is lazy, per task start, and shared: the requests for one
// connector that arrive while a round runs wait for it.
//
// A round is not needed when no task count record was ever written (no
// transactional producer ran yet), nor when the old and the new generation
// both have one task (the new task's producer fences the old one as it
// starts); the record is still written.

// fencing is a round of zombie fencing in progress.
type fencing struct {
	// gen is the connector's task config generation when the round began:
	// a newer one fails the round (409).
	gen int
	// count is the task count to record.
	count int
	// op is the FenceProducers in flight, 0 once done; recordOp the write
	// of the task count record.
	op, recordOp uint64
	waiters      []fenceWaiter
}

// fenceWaiter is what waits for a round: a request to answer, or a
// ModifyOffsets request to carry out once the producers are fenced.
type fenceWaiter struct {
	reply   Token
	offsets *Request
}

// fence starts, or joins, a round of zombie fencing for a source
// connector, or answers at once when none is due.
func (m *Machine) fence(name string, cs Connector, w fenceWaiter) {
	if f := m.fencings[name]; f != nil {
		f.waiters = append(f.waiters, w)
		return
	}
	if !cs.PendingFencing {
		m.log.Debug("skipping zombie fencing: every older task generation is fenced already", "connector", name)
		m.fenced(w, nil)
		return
	}
	f := &fencing{gen: cs.Generation, count: len(cs.Tasks), waiters: []fenceWaiter{w}}
	m.fencings[name] = f
	if !cs.HasTaskCount || cs.TaskCount == 1 && len(cs.Tasks) == 1 {
		// Nothing to fence, but the record is needed to know what to fence
		// when the connector is reconfigured.
		m.log.Debug("skipping the zombie fencing round, writing the task count record", "connector", name, "tasks", f.count,
			"first", !cs.HasTaskCount)
		m.recordTaskCount(name, f)
		return
	}
	m.log.Info("fencing out the producers of older task generations", "connector", name, "tasks", cs.TaskCount)
	f.op = m.newOp(pendingOp{kind: "fence", name: name})
	m.emit(FenceProducers{Op: f.op, Name: name, Tasks: cs.TaskCount, Config: cs.Config})
}

func (m *Machine) recordTaskCount(name string, f *fencing) {
	f.op = 0
	f.recordOp = m.newOp(pendingOp{kind: "fencerecord", name: name})
	m.emit(WriteConfigs{Op: f.recordOp, Writes: []Write{{Kind: WriteTaskCount, Name: name, TaskCount: f.count}}})
}

// onFenced: the producers of a round were fenced (or could not be), and
// the config topic was read to its end since.
func (m *Machine) onFenced(name string, op uint64, err *Error) {
	f := m.fencings[name]
	if f == nil || f.op != op {
		return // abandoned
	}
	if err != nil {
		m.endFencing(name, errorf(500, "Failed to perform round of zombie fencing for connector %s: %s", name, err.Message))
		return
	}
	cs, ok := m.snap.Connectors[name]
	switch {
	case !ok:
		m.endFencing(name, errorf(404, "Connector %s not found", name))
	case cs.Generation > f.gen:
		m.endFencing(name, errorf(409, "Fencing failed because new task configurations were generated for the connector"))
	case !m.Leader():
		m.endFencing(name, &Error{Code: 409, Message: msgConflict, Forward: m.leaderURL})
	default:
		m.recordTaskCount(name, f)
	}
}

// onFenceRecorded: the task count record of a round was written.
func (m *Machine) onFenceRecorded(name string, op uint64, err *Error) {
	f := m.fencings[name]
	if f == nil || f.recordOp != op {
		return
	}
	m.endFencing(name, err)
}

// endFencing ends a round and tells whoever waits for it.
func (m *Machine) endFencing(name string, err *Error) {
	f := m.fencings[name]
	delete(m.fencings, name)
	for _, w := range f.waiters {
		m.fenced(w, err)
	}
}

// fenced answers one waiter of a round.
func (m *Machine) fenced(w fenceWaiter, err *Error) {
	if w.offsets == nil {
		m.reply(w.reply, Result{Err: err})
		return
	}
	r := *w.offsets
	op := r.Op.(ModifyOffsets)
	if err != nil {
		m.log.Error("zombie fencing failed before modifying offsets", "connector", op.Name, "err", err.Message)
		m.fail(r.Reply, &Error{Code: err.Code, Message: "Failed to perform zombie fencing for source connector prior to modifying offsets: " + err.Message})
		return
	}
	// The state may have changed while fencing: checked again.
	if cs, ok := m.modifiableOffsets(r, op.Name); ok {
		m.modifyOffsets(r, op, cs)
	}
}

// fencingsOutdated fails the rounds whose connector committed a new
// generation of task configs, or was deleted, since they began.
func (m *Machine) fencingsOutdated() {
	for _, name := range sortedNames(m.fencings) {
		f := m.fencings[name]
		cs, ok := m.snap.Connectors[name]
		if ok && cs.Generation == f.gen || f.op == 0 && f.recordOp != 0 && ok {
			// (A round writing its record finishes: a newer commit
			// sets the pending fencing again, which its record cannot
			// clear, being before it.)
			continue
		}
		m.endFencing(name, errorf(409, "Failed to complete zombie fencing because a new set of task configs was generated"))
	}
}

// abandonFencings fails every round in progress: a rebalance began, and
// this worker may not lead after it. The caller asks again (a task start
// does, at the leader after the rebalance).
func (m *Machine) abandonFencings() {
	for _, name := range sortedNames(m.fencings) {
		m.endFencing(name, errorf(409, msgConflict))
	}
}

// claimWrites claims or gives up the config topic's transactional
// producer as the worker becomes or stops being the leader.
func (m *Machine) claimWrites(leader bool) {
	if !m.cfg.TransactionalLeader || leader == m.claimed {
		return
	}
	m.claimed = leader
	m.emit(ClaimWrites{Claim: leader})
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

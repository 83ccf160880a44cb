package herder

import "maps"

func (m *Machine) newOp(p pendingOp) uint64 {
	m.opSeq++
	m.ops[m.opSeq] = p
	return m.opSeq
}

func (m *Machine) reply(to Token, r Result) { m.emit(Reply{To: to, Result: r}) }

func (m *Machine) fail(to Token, err *Error) { m.reply(to, Result{Err: err}) }

// hold keeps a request until the rebalance in progress ends.
func (m *Machine) hold(r Request) {
	m.held = append(m.held, held{req: r, deadline: m.now.Add(m.cfg.HoldTimeout)})
}

// redispatch tries the held requests again (a rebalance ended).
func (m *Machine) redispatch() {
	if !m.active() || len(m.held) == 0 {
		return
	}
	hs := m.held
	m.held = nil
	for _, h := range hs {
		m.dispatch(h.req)
	}
}

// leaderOnly answers a request that only the leader may do when this
// worker cannot do it now: held during a rebalance, forwarded to the
// leader otherwise. It reports whether the request was answered.
func (m *Machine) leaderOnly(r Request) bool {
	if !m.active() {
		m.hold(r)
		return true
	}
	if m.leader {
		return false
	}
	if m.leaderURL == "" {
		m.fail(r.Reply, errorf(409, msgNoLeader))
		return true
	}
	m.fail(r.Reply, &Error{Code: 409, Message: msgConflict, Forward: m.leaderURL})
	return true
}

func (m *Machine) exists(name string) bool {
	_, ok := m.snap.Connectors[name]
	return ok || m.creating[name] > 0
}

func (m *Machine) dispatch(r Request) {
	switch op := r.Op.(type) {
	case Ping:
		m.reply(r.Reply, Result{})
	case Leader:
		if !m.active() {
			m.hold(r)
			return
		}
		url := m.leaderURL
		if m.leader {
			url = ""
		}
		m.reply(r.Reply, Result{LeaderURL: url})
	case PutConfig:
		if m.leaderOnly(r) {
			return
		}
		existed := m.exists(op.Name)
		if existed && !op.AllowReplace {
			m.fail(r.Reply, errorf(409, "Connector %s already exists", op.Name))
			return
		}
		if op.Base != nil {
			if !existed {
				m.fail(r.Reply, errorf(404, "Connector %s not found", op.Name))
				return
			}
			if m.creating[op.Name] > 0 || !maps.Equal(m.snap.Connectors[op.Name].Config, op.Base) {
				m.reply(r.Reply, Result{Stale: true})
				return
			}
		}
		var ws []Write
		if !existed && op.Target != "" && op.Target != Started {
			ws = append(ws, Write{Kind: WriteTarget, Name: op.Name, Target: op.Target})
		}
		ws = append(ws, Write{Kind: WriteConnector, Name: op.Name, Config: maps.Clone(op.Config)})
		tasks := len(m.snap.Connectors[op.Name].Tasks)
		m.creating[op.Name]++
		m.emit(WriteConfigs{Op: m.newOp(pendingOp{reply: r.Reply, kind: "put", name: op.Name, created: !existed, tasks: tasks}), Writes: ws})
	case DeleteConnector:
		if m.leaderOnly(r) {
			return
		}
		if _, ok := m.snap.Connectors[op.Name]; !ok {
			m.fail(r.Reply, errorf(404, "Connector %s not found", op.Name))
			return
		}
		m.emit(WriteConfigs{Op: m.newOp(pendingOp{reply: r.Reply, kind: "delete", name: op.Name}),
			Writes: []Write{{Kind: WriteConnector, Name: op.Name}}})
	case SetTarget:
		if op.Target == Stopped && m.leaderOnly(r) {
			return
		}
		cs, ok := m.snap.Connectors[op.Name]
		if !ok {
			m.fail(r.Reply, errorf(404, "Unknown connector %s", op.Name))
			return
		}
		var ws []Write
		if op.Target == Stopped && len(cs.Tasks) > 0 {
			ws = append(ws, Write{Kind: WriteTasks, Name: op.Name})
		}
		if cs.Target != op.Target || cs.Problem != "" && !cs.OffsetsProblem {
			// (A new record mends one that could not be read.)
			ws = append(ws, Write{Kind: WriteTarget, Name: op.Name, Target: op.Target})
		}
		if len(ws) == 0 {
			m.reply(r.Reply, Result{})
			return
		}
		m.emit(WriteConfigs{Op: m.newOp(pendingOp{reply: r.Reply, kind: "target", name: op.Name}), Writes: ws})
	case RestartConnector:
		cs, ok := m.snap.Connectors[op.Name]
		if !ok {
			m.fail(r.Reply, errorf(404, "Unknown connector: %s", op.Name))
			return
		}
		if !op.IncludeTasks && !op.OnlyFailed {
			// Just the connector: its owner restarts it and answers once
			// it started again, as Kafka Connect does.
			if !m.active() {
				m.hold(r)
				return
			}
			if m.ownConns[op.Name] {
				if cs.Target == Started && m.restartConnector(op.Name, false) {
					m.waitStart(op.Name, -1, r.Reply)
					return
				}
				m.reply(r.Reply, Result{})
				return
			}
			if !m.leader {
				m.leaderOnly(r)
				return
			}
			if url := m.connOwners[op.Name]; url != "" {
				m.fail(r.Reply, &Error{Code: 409, Message: msgConflict, Forward: url})
				return
			}
			m.fail(r.Reply, errorf(409, "Connector %s is not assigned to any worker yet: "+msgConflict, op.Name))
			return
		}
		if m.leaderOnly(r) {
			return
		}
		m.emit(WriteConfigs{Op: m.newOp(pendingOp{reply: r.Reply, kind: "restart", name: op.Name}),
			Writes: []Write{{Kind: WriteRestart, Name: op.Name, IncludeTasks: op.IncludeTasks, OnlyFailed: op.OnlyFailed}}})
	case RestartTask:
		cs, ok := m.snap.Connectors[op.ID.Connector]
		if !ok {
			m.fail(r.Reply, errorf(404, "Unknown connector: %s", op.ID.Connector))
			return
		}
		if op.ID.Task < 0 || op.ID.Task >= len(cs.Tasks) {
			m.fail(r.Reply, errorf(404, "Unknown task: %s", op.ID))
			return
		}
		if !m.active() {
			m.hold(r)
			return
		}
		if m.ownTasks[op.ID] {
			m.restartTask(op.ID, false)
			if cs.Target == Stopped {
				m.reply(r.Reply, Result{})
				return
			}
			m.waitStart(op.ID.Connector, op.ID.Task, r.Reply)
			return
		}
		if !m.leader {
			m.leaderOnly(r)
			return
		}
		if url := m.taskOwners[op.ID]; url != "" {
			m.fail(r.Reply, &Error{Code: 409, Message: msgConflict, Forward: url})
			return
		}
		m.fail(r.Reply, errorf(409, "Task %s is not assigned to any worker yet: "+msgConflict, op.ID))
	case PutTaskConfigs:
		if m.leaderOnly(r) {
			return
		}
		cs, ok := m.snap.Connectors[op.Name]
		if !ok {
			m.fail(r.Reply, errorf(404, "Connector %s not found", op.Name))
			return
		}
		if len(op.Configs) > 0 && cs.Target == Stopped {
			m.fail(r.Reply, errorf(400, "Cannot submit non-empty set of task configs for stopped connector %s", op.Name))
			return
		}
		if tasksEqual(op.Configs, cs.Tasks) && !cs.Inconsistent && maps.Equal(cs.applied(), cs.Config) {
			m.reply(r.Reply, Result{})
			return
		}
		m.log.Info("writing task configs sent by a follower", "connector", op.Name, "tasks", len(op.Configs))
		m.emit(WriteConfigs{Op: m.newOp(pendingOp{reply: r.Reply, kind: "tasks", name: op.Name}),
			Writes: []Write{{Kind: WriteTasks, Name: op.Name, Tasks: op.Configs}}})
	case ModifyOffsets:
		if m.leaderOnly(r) {
			return
		}
		cs, ok := m.modifiableOffsets(r, op.Name)
		if !ok {
			return
		}
		if m.cfg.ExactlyOnce && cs.Source {
			// A round of zombie fencing first: no task of the connector may
			// commit offsets once they are changed.
			m.log.Debug("fencing zombie tasks before modifying offsets", "connector", op.Name)
			m.fence(op.Name, cs, fenceWaiter{offsets: &r})
			return
		}
		m.modifyOffsets(r, op, cs)
	case FenceZombies:
		if m.leaderOnly(r) {
			return
		}
		cs, ok := m.snap.Connectors[op.Name]
		switch {
		case !ok:
			m.fail(r.Reply, errorf(404, "Connector %s not found", op.Name))
		case !cs.Source:
			m.fail(r.Reply, errorf(400, "Connector %s is not a source connector", op.Name))
		default:
			m.fence(op.Name, cs, fenceWaiter{reply: r.Reply})
		}
	case VerifyTask:
		if !m.active() {
			m.hold(r)
			return
		}
		if cs, ok := m.snap.Connectors[op.ID.Connector]; !ok || cs.Generation != op.Generation {
			m.fail(r.Reply, errorf(409, "Cannot start source task %s with exactly-once support as the connector has already generated a new set of task configs", op.ID))
			return
		}
		if !m.ownTasks[op.ID] {
			m.fail(r.Reply, errorf(409, "Cannot start source task %s as it has already been revoked from this worker", op.ID))
			return
		}
		m.reply(r.Reply, Result{})
	default:
		m.fail(r.Reply, errorf(500, "unknown request %T", r.Op))
	}
}

// modifiableOffsets returns the connector of a ModifyOffsets request if its
// offsets may be changed now (it exists and is stopped), else answers the
// request.
func (m *Machine) modifiableOffsets(r Request, name string) (Connector, bool) {
	cs, ok := m.snap.Connectors[name]
	if !ok {
		m.fail(r.Reply, errorf(404, "Connector %s not found", name))
		return cs, false
	}
	if cs.Target != Stopped || len(cs.Tasks) > 0 {
		m.fail(r.Reply, errorf(400, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name))
		return cs, false
	}
	return cs, true
}

func (m *Machine) modifyOffsets(r Request, op ModifyOffsets, cs Connector) {
	m.emit(ModifyOffsetsAction{Op: m.newOp(pendingOp{reply: r.Reply, kind: "offsets", name: op.Name}), Name: op.Name,
		Config: maps.Clone(cs.Config), Payload: op.Payload})
}

func (m *Machine) onDone(d Done) {
	p, ok := m.ops[d.Op]
	if !ok {
		return
	}
	delete(m.ops, d.Op)
	var err *Error
	if d.Err != nil {
		err = errorf(500, "%v", d.Err)
		if e, ok := d.Err.(*Error); ok {
			err = e
		}
	}
	switch p.kind {
	case "put":
		if m.creating[p.name]--; m.creating[p.name] <= 0 {
			delete(m.creating, p.name)
		}
		m.reply(p.reply, Result{Err: err, Created: p.created, Tasks: p.tasks})
	case "send":
		c := m.conns[p.name]
		if c == nil || c.sendOp != d.Op {
			return
		}
		c.sendOp = 0
		if err != nil {
			m.log.Warn("sending task configs to the leader failed; retrying", "connector", p.name, "err", err.Message, "in", m.cfg.RetryBackoff)
			c.sendRetry = m.now.Add(m.cfg.RetryBackoff)
			return
		}
		c.send = nil
	case "key":
		m.keyOp = 0
		// Also after a success: the key is read back from the topic soon.
		m.keyRetry = m.now.Add(m.cfg.RetryBackoff)
		if err != nil {
			m.log.Warn("writing a session key failed; retrying", "err", err.Message, "in", m.cfg.RetryBackoff)
		}
	case "offsets":
		m.reply(p.reply, Result{Err: err, Message: d.Result})
	case "fence":
		m.onFenced(p.name, d.Op, err)
	case "fencerecord":
		m.onFenceRecorded(p.name, d.Op, err)
	default:
		m.reply(p.reply, Result{Err: err})
	}
}

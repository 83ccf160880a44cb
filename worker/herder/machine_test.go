package herder

import (
	"testing"
	"time"
)

// A lone leader: create a connector, generate and commit its tasks, run
// them; reconfigure it; pause and resume; restart; delete.
func TestTraceConnectorLifecycle(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(0, cfgs{}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true}, "clean-statuses", "reply 100 ok")

	// Create: the leader writes the config and answers once it is written.
	tr.step(Request{Reply: 1, Op: PutConfig{Name: "a", Config: cfgOf("a", "1")}}, "write op=1 [connector a v=1]")
	tr.step(Request{Reply: 2, Op: PutConfig{Name: "a", Config: cfgOf("a", "1")}}, `reply 2 409 "Connector a already exists"`)
	tr.step(Done{Op: 1}, "reply 1 created")
	tr.step(snapshot(1, cfgs{"a": {v: "1"}}), "rejoin")
	tr.step(Assigned{Reply: 101, Generation: 2, Protocol: Compatible, Leader: true, Connectors: []string{"a"}},
		"start a run=1", "clean-statuses", "reply 101 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=2", "generate a run=1 gen=1 max=3")
	tr.step(TaskConfigsGenerated{Name: "a", Run: 1, Gen: 1, Configs: taskCfgs("1", 2)}, "write op=0 [tasks a n=2]")
	tr.step(snapshot(4, cfgs{"a": {v: "1", tasks: 2}}), "rejoin")
	tr.step(Assigned{Reply: 102, Generation: 3, Protocol: Compatible, Leader: true, Connectors: []string{"a"}, Tasks: tasks("a", 0, 1)},
		"start a-0 run=2 conn=1 task=1-0", "start a-1 run=3 conn=1 task=1-1", "clean-statuses", "reply 102 ok")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=3")
	tr.step(TaskStarted{ID: TaskID{"a", 1}, Run: 3}, "status a-1 RUNNING gen=3")

	// Reconfigure: the connector restarts at once; its tasks keep running
	// until task configs for the new config are committed, even unchanged
	// ones (KAFKA-9228), and then restart with the new connector config.
	tr.step(Request{Reply: 3, Op: PutConfig{Name: "a", Config: cfgOf("a", "2"), AllowReplace: true}}, "write op=2 [connector a v=2]")
	tr.step(Done{Op: 2}, "reply 3 ok")
	tr.step(snapshot(5, cfgs{"a": {v: "2", tasks: 2, applied: "1"}}), "stop a run=1")
	tr.step(ConnectorStopped{Name: "a", Run: 1}, "start a run=4")
	tr.step(ConnectorStarted{Name: "a", Run: 4}, "generate a run=4 gen=1 max=3")
	tr.step(TaskConfigsGenerated{Name: "a", Run: 4, Gen: 1, Configs: taskCfgs("1", 2)}, "write op=0 [tasks a n=2]")
	tr.step(snapshot(8, cfgs{"a": {v: "2", tasks: 2, applied: "2"}}), "stop a-0 run=2", "stop a-1 run=3")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 2}, "start a-0 run=5 conn=2 task=2-0")
	tr.step(TaskStopped{ID: TaskID{"a", 1}, Run: 3}, "start a-1 run=6 conn=2 task=2-1")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 5})
	tr.step(TaskStarted{ID: TaskID{"a", 1}, Run: 6})

	// Pause: any worker writes the target state; tasks pause in place and
	// the connector instance stops.
	tr.step(Request{Reply: 4, Op: SetTarget{Name: "a", Target: Paused}}, "write op=3 [target a PAUSED]")
	tr.step(Done{Op: 3}, "reply 4 ok")
	tr.step(snapshot(9, cfgs{"a": {v: "2", tasks: 2, target: Paused}}),
		"stop a run=4", "pause a-0", "status a-0 PAUSED gen=3", "pause a-1", "status a-1 PAUSED gen=3")
	tr.step(ConnectorStopped{Name: "a", Run: 4}, "status a PAUSED gen=3")
	tr.step(Request{Reply: 5, Op: SetTarget{Name: "a", Target: Started}}, "write op=4 [target a STARTED]")
	tr.step(Done{Op: 4}, "reply 5 ok")
	tr.step(snapshot(10, cfgs{"a": {v: "2", tasks: 2}}),
		"start a run=7", "resume a-0", "status a-0 RUNNING gen=3", "resume a-1", "status a-1 RUNNING gen=3")
	tr.step(ConnectorStarted{Name: "a", Run: 7}, "status a RUNNING gen=3", "generate a run=7 gen=1 max=3")
	tr.step(TaskConfigsGenerated{Name: "a", Run: 7, Gen: 1, Configs: taskCfgs("2", 2)})

	// A task fails; it stays FAILED until a restart request for failed
	// work, which the owner acts on when it reads it.
	tr.step(TaskFailed{ID: TaskID{"a", 1}, Run: 6, Trace: "boom\nat x"}, `status a-1 FAILED "boom" gen=3`, "stop a-1 run=6")
	tr.step(TaskStopped{ID: TaskID{"a", 1}, Run: 6})
	tr.step(Request{Reply: 6, Op: RestartConnector{Name: "a", IncludeTasks: true, OnlyFailed: true}}, "write op=5 [restart a tasks=true failed=true]")
	tr.step(Done{Op: 5}, "reply 6 ok")
	tr.step(RestartRequested{Connector: "a", IncludeTasks: true, OnlyFailed: true},
		"status a-1 RESTARTING gen=3", "start a-1 run=8 conn=2 task=2-1")
	tr.step(TaskStarted{ID: TaskID{"a", 1}, Run: 8}, "status a-1 RUNNING gen=3")
	// A task restart on its owner, answered once it runs again.
	tr.step(Request{Reply: 7, Op: RestartTask{ID: TaskID{"a", 0}}}, "status a-0 RESTARTING gen=3", "stop a-0 run=5")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 5}, "start a-0 run=9 conn=2 task=2-0")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 9}, "status a-0 RUNNING gen=3", "reply 7 ok")

	// Delete: everything stops (UNASSIGNED, as Kafka Connect's onShutdown);
	// the leader tombstones the statuses after the rebalance that follows,
	// when no worker of the previous generation can write them any more.
	tr.step(Request{Reply: 8, Op: DeleteConnector{Name: "a"}}, "write op=6 [delete a]")
	tr.step(Done{Op: 6}, "reply 8 ok")
	tr.step(snapshot(11, cfgs{}), "rejoin", "stop a run=7", "stop a-0 run=9", "stop a-1 run=8")
	tr.step(Request{Reply: 9, Op: DeleteConnector{Name: "a"}}, `reply 9 404 "Connector a not found"`)
	tr.step(ConnectorStopped{Name: "a", Run: 7}, "status a UNASSIGNED gen=3")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 9}, "status a-0 UNASSIGNED gen=3")
	tr.step(TaskStopped{ID: TaskID{"a", 1}, Run: 8}, "status a-1 UNASSIGNED gen=3")
	tr.step(JoinPrepare{Reply: 103}, "reply 103 ok")
	tr.step(Assigned{Reply: 104, Generation: 4, Protocol: Compatible, Leader: true, ConfigOffset: 11}, "clean-statuses", "reply 104 ok")
}

// A follower forwards leader-only writes to the leader; pause and resume it
// writes itself. Writes during a rebalance wait for it to end, up to the
// hold timeout, then get Kafka Connect's 409.
func TestTraceFollowerForwardsAndHolds(t *testing.T) {
	tr := newTrace(t, Config{HoldTimeout: 10 * time.Second})
	tr.step(snapshot(3, cfgs{"a": {v: "1", tasks: 1}}))
	// Before the first assignment: held.
	tr.step(Request{Reply: 1, Op: PutConfig{Name: "b", Config: cfgOf("b", "1")}})
	tr.step(Request{Reply: 2, Op: Leader{}})
	tr.at(2*time.Second).step(Assigned{Reply: 100, Generation: 5, Protocol: Compatible, LeaderURL: "http://w2:8083", ConfigOffset: 3},
		"reply 1 forward=http://w2:8083", "reply 2 leader=http://w2:8083", "reply 100 ok")
	tr.step(Request{Reply: 3, Op: DeleteConnector{Name: "a"}}, "reply 3 forward=http://w2:8083")
	tr.step(Request{Reply: 4, Op: SetTarget{Name: "a", Target: Stopped}}, "reply 4 forward=http://w2:8083")
	tr.step(Request{Reply: 5, Op: SetTarget{Name: "a", Target: Paused}}, "write op=1 [target a PAUSED]")
	tr.step(Request{Reply: 6, Op: RestartTask{ID: TaskID{"a", 0}}}, "reply 6 forward=http://w2:8083")
	tr.step(Request{Reply: 7, Op: RestartTask{ID: TaskID{"a", 3}}}, `reply 7 404 "Unknown task: a-3"`)
	tr.step(Request{Reply: 11, Op: RestartConnector{Name: "a"}}, "reply 11 forward=http://w2:8083")
	tr.step(Request{Reply: 12, Op: RestartConnector{Name: "a", OnlyFailed: true}}, "reply 12 forward=http://w2:8083")
	// A rebalance: requests wait.
	tr.at(3*time.Second).step(JoinPrepare{Reply: 101}, "reply 101 ok")
	tr.step(Request{Reply: 8, Op: PutConfig{Name: "b", Config: cfgOf("b", "1")}})
	tr.at(5 * time.Second).step(Request{Reply: 9, Op: ModifyOffsets{Name: "a"}})
	if d := tr.m.NextDeadline(); !d.Equal(t0.Add(13 * time.Second)) {
		t.Fatalf("next deadline %v", d)
	}
	// ... and the one that waited too long gets the 409.
	tr.at(13*time.Second).step(Tick{}, `reply 8 409 "`+msgNoLeader+`"`)
	// This worker became the leader: it does the waiting request itself.
	tr.at(14*time.Second).step(Assigned{Reply: 102, Generation: 6, Protocol: Compatible, Leader: true, ConfigOffset: 3},
		`reply 9 400 "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/a/stop' endpoint"`, "clean-statuses", "reply 102 ok")
	tr.step(Request{Reply: 10, Op: Leader{}}, "reply 10 ok")
}

// The leader sends a task's or a connector's restart to the worker that
// owns it (the second and last hop).
func TestTraceLeaderForwardsToOwner(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(3, cfgs{"a": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 2, Protocol: Compatible, Leader: true, ConfigOffset: 3,
		ConnectorOwners: map[string]string{"a": "http://w3"}, TaskOwners: map[TaskID]string{{"a", 0}: "http://w2"}},
		"clean-statuses", "reply 100 ok")
	tr.step(Request{Reply: 1, Op: RestartTask{ID: TaskID{"a", 0}}}, "reply 1 forward=http://w2")
	tr.step(Request{Reply: 2, Op: RestartConnector{Name: "a"}}, "reply 2 forward=http://w3")
}

// A member behind the leader's config offset reads the config topic before
// it starts its assignment; revoked work stops before the reply.
func TestTraceCatchUpAndRevoke(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(4, cfgs{"a": {v: "1", tasks: 2}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 4, Connectors: []string{"a"}, Tasks: tasks("a", 0, 1)},
		"start a run=1", "start a-0 run=2 conn=1 task=1-0", "start a-1 run=3 conn=1 task=1-1", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=1", "generate a run=1 gen=1 max=3")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=1")
	tr.step(TaskStarted{ID: TaskID{"a", 1}, Run: 3}, "status a-1 RUNNING gen=1")
	// The connector's new task configs: a follower sends them to the leader.
	tr.step(TaskConfigsGenerated{Name: "a", Run: 1, Gen: 1, Configs: taskCfgs("1b", 3)}, "send op=1 a n=3 to=http://w2")
	tr.step(Done{Op: 1, Err: &Error{Code: 503, Message: "leader busy"}})
	tr.at(time.Second).step(Tick{}, "send op=2 a n=3 to=http://w2")
	tr.step(Done{Op: 2})
	// A cooperative rebalance: nothing stops at JoinPrepare.
	tr.step(JoinPrepare{Reply: 101}, "reply 101 ok")
	// The leader is at offset 9 and moves a-1 away and a-2 here: a-1 stops
	// before the reply; a-2 waits until this member has read to 9.
	tr.step(Assigned{Reply: 102, Generation: 2, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 9, Connectors: []string{"a"}, Tasks: tasks("a", 0, 2)},
		"read-configs", "stop a-1 run=3")
	tr.step(TaskStopped{ID: TaskID{"a", 1}, Run: 3}, "status a-1 UNASSIGNED gen=2", "reply 102 ok")
	tr.step(snapshot(9, cfgs{"a": {v: "1", tasks: 3, applied: "1"}}), "rejoin", "start a-2 run=4 conn=1 task=1-2")
}

// A member that lost its membership stops everything, writes no status
// (another worker may own the work already), and answers only then.
func TestTraceLostMembership(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(2, cfgs{"a": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 2, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"start a run=1", "start a-0 run=2 conn=1 task=1-0", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=1", "generate a run=1 gen=1 max=3")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=1")
	tr.step(JoinPrepare{Reply: 101, Lost: true}, "stop a run=1", "stop a-0 run=2")
	tr.step(TaskFailed{ID: TaskID{"a", 0}, Run: 2, Trace: "late failure"}) // nothing written
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 2})
	tr.step(Request{Reply: 1, Op: PutConfig{Name: "b", Config: cfgOf("b", "1")}}) // held
	tr.step(ConnectorStopped{Name: "a", Run: 1}, "reply 101 ok")
	// Back in the group with the same work: it starts again and says so.
	tr.step(Assigned{Reply: 102, Generation: 3, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 2, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"reply 1 forward=http://w2", "start a run=3", "start a-0 run=4 conn=1 task=1-0", "reply 102 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 3}, "status a RUNNING gen=3", "generate a run=3 gen=1 max=3")
}

// A connector whose plugin is slow to start or hangs in taskConfigs holds
// up nothing: another connector's REST write goes through at once, and the
// hung call fails its connector after the timeout.
func TestTraceSlowPluginBlocksNothing(t *testing.T) {
	tr := newTrace(t, Config{TaskConfigsTimeout: 30 * time.Second})
	tr.step(snapshot(1, cfgs{"slow": {v: "1"}, "hung": {v: "1"}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 1, Connectors: []string{"hung", "slow"}},
		"start hung run=1", "start slow run=2", "clean-statuses", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "hung", Run: 1}, "status hung RUNNING gen=1", "generate hung run=1 gen=1 max=3")
	// slow has not answered its start; hung not its taskConfigs.
	tr.at(time.Second).step(Request{Reply: 1, Op: PutConfig{Name: "other", Config: cfgOf("other", "1")}}, "write op=1 [connector other v=1]")
	tr.step(Done{Op: 1}, "reply 1 created")
	tr.step(Request{Reply: 2, Op: Ping{}}, "reply 2 ok")
	if d := tr.m.NextDeadline(); !d.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("next deadline %v", d)
	}
	tr.at(30*time.Second).step(Tick{},
		`status hung FAILED "The connector hung did not return its task configurations within 30s (taskConfigs blocked); it is failed and stopped. Restart it once the cause is fixed." gen=1`,
		"stop hung run=1")
	tr.step(TaskConfigsGenerated{Name: "hung", Run: 1, Gen: 1}) // too late: ignored
	tr.step(ConnectorStopped{Name: "hung", Run: 1})
	// It stays failed until restarted.
	// The connector alone: its owner restarts it, and answers once it runs.
	tr.step(Request{Reply: 3, Op: RestartConnector{Name: "hung"}}, "status hung RESTARTING gen=1", "start hung run=3")
	tr.step(ConnectorStarted{Name: "hung", Run: 3}, "status hung RUNNING gen=1", "generate hung run=3 gen=1 max=3", "reply 3 ok")
	// With flags, a restart request record that the owners act on.
	tr.step(Request{Reply: 4, Op: RestartConnector{Name: "hung", IncludeTasks: true}}, "write op=2 [restart hung tasks=true failed=false]")
}

// The leader of a sessioned group writes a session key when there is none
// and when it is older than its TTL.
func TestTraceSessionKey(t *testing.T) {
	tr := newTrace(t, Config{KeyTTL: time.Hour, RetryBackoff: time.Second})
	tr.step(snapshot(0, cfgs{}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Sessioned, Leader: true}, "write op=1 [session-key]", "clean-statuses", "reply 100 ok")
	tr.step(Done{Op: 1})
	tr.step(Configs{Snapshot: Snapshot{Offset: 1, SessionKey: &SessionKey{Key: []byte("k"), Created: t0}}})
	if d := tr.m.NextDeadline(); !d.Equal(t0.Add(time.Hour)) {
		t.Fatalf("next deadline %v, want the key's expiry", d)
	}
	tr.at(time.Hour).step(Tick{}, "write op=2 [session-key]")
}

// An eager rebalance stops everything first (as Kafka Connect's default
// protocol), writing UNASSIGNED.
func TestTraceEagerRebalance(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(1, cfgs{"a": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Eager, LeaderURL: "http://w2", ConfigOffset: 1, Tasks: tasks("a", 0)},
		"start a-0 run=1 conn=1 task=1-0", "reply 100 ok")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 1}, "status a-0 RUNNING gen=1")
	tr.step(JoinPrepare{Reply: 101, Eager: true}, "stop a-0 run=1")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 1}, "status a-0 UNASSIGNED gen=1", "reply 101 ok")
}

// Shutdown stops everything, writing UNASSIGNED, and nothing starts again
// even if a late assignment comes.
func TestTraceShutdown(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(1, cfgs{"a": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 1, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"start a run=1", "start a-0 run=2 conn=1 task=1-0", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=1", "generate a run=1 gen=1 max=3")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=1")
	tr.step(Shutdown{Reply: 101}, "stop a run=1", "stop a-0 run=2")
	tr.step(Assigned{Reply: 102, Generation: 2, Protocol: Compatible, LeaderURL: "http://w2", ConfigOffset: 1, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"reply 102 ok")
	tr.step(ConnectorStopped{Name: "a", Run: 1}, "status a UNASSIGNED gen=1")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 2}, "status a-0 UNASSIGNED gen=1", "reply 101 ok")
}

// The leader tombstones a deleted connector's statuses only once its work
// here has stopped and written UNASSIGNED, even when an assignment computed
// before the delete comes meanwhile.
func TestTraceCleanAfterUnassigned(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(1, cfgs{"a": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 1, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"start a run=1", "start a-0 run=2 conn=1 task=1-0", "clean-statuses", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=1", "generate a run=1 gen=1 max=3")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=1")
	tr.step(snapshot(2, cfgs{}), "rejoin", "stop a run=1", "stop a-0 run=2")
	tr.step(JoinPrepare{Reply: 101}, "reply 101 ok")
	// A generation that still gives this worker "a" (computed before the
	// delete): no cleanup while a and a-0 are stopping.
	tr.step(Assigned{Reply: 102, Generation: 2, Protocol: Compatible, Leader: true, ConfigOffset: 1, Connectors: []string{"a"}, Tasks: tasks("a", 0)},
		"reply 102 ok")
	tr.step(ConnectorStopped{Name: "a", Run: 1}, "status a UNASSIGNED gen=2")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 2}, "status a-0 UNASSIGNED gen=2", "clean-statuses")
}

// Connectors the worker cannot run as the internal topics hold them (a
// record it cannot apply) are not assigned and run nowhere; the leader
// reports them FAILED with the reason. One whose offsets cannot be read is
// assigned, and its worker reports it FAILED instead of starting it. A
// problem appearing stops the work; one mended lets it run again.
func TestTraceProblemConnectors(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(3, cfgs{"a": {v: "1", tasks: 1}, "b": {v: "1", problem: "bad record"}, "c": {v: "1", tasks: 1, problem: "bad offsets", offsetsProblem: true}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 3, Connectors: []string{"a", "c"}, Tasks: []TaskID{{"a", 0}, {"c", 0}}},
		"start a run=1", `status b FAILED "bad record" gen=1`, `status c FAILED "bad offsets" gen=1`, "start a-0 run=2 conn=1 task=1-0", "clean-statuses", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1}, "status a RUNNING gen=1", "generate a run=1 gen=1 max=3")
	tr.step(TaskStarted{ID: TaskID{"a", 0}, Run: 2}, "status a-0 RUNNING gen=1")

	// a's config record turns unreadable: its work stops, FAILED, and the
	// leader rebalances without it.
	tr.step(snapshot(4, cfgs{"a": {v: "1", tasks: 1, problem: "bad record"}, "b": {v: "1", problem: "bad record"}, "c": {v: "1", tasks: 1, problem: "bad offsets", offsetsProblem: true}}),
		"rejoin", "stop a run=1", "stop a-0 run=2")
	tr.step(ConnectorStopped{Name: "a", Run: 1}, `status a FAILED "bad record" gen=1`)
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 2})

	// b mended (a new config record): it is work to assign again.
	tr.step(snapshot(5, cfgs{"a": {v: "1", tasks: 1, problem: "bad record"}, "b": {v: "2"}, "c": {v: "1", tasks: 1, problem: "bad offsets", offsetsProblem: true}}), "rejoin")
	tr.step(Assigned{Reply: 101, Generation: 2, Protocol: Compatible, Leader: true, ConfigOffset: 5, Connectors: []string{"b", "c"}, Tasks: []TaskID{{"c", 0}}},
		"start b run=3", "clean-statuses", "reply 101 ok")
	tr.step(ConnectorStarted{Name: "b", Run: 3}, "status b RUNNING gen=2", "generate b run=3 gen=1 max=3")
}

// A new config record restarts a connector even when the config is equal,
// as in Kafka Connect: a FAILED connector runs again after a PUT of the
// same config; other records leave it FAILED.
func TestTraceEqualConfigRestarts(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(1, cfgs{"a": {v: "1", cfgOffset: 0}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 1, Connectors: []string{"a"}},
		"start a run=1", "clean-statuses", "reply 100 ok")
	tr.step(ConnectorStarted{Name: "a", Run: 1, Err: "boom"}, `status a FAILED "boom" gen=1`)
	tr.step(snapshot(2, cfgs{"a": {v: "1", cfgOffset: 0}}))
	tr.step(snapshot(3, cfgs{"a": {v: "1", cfgOffset: 2}}), "start a run=2")
	tr.step(ConnectorStarted{Name: "a", Run: 2}, "status a RUNNING gen=1", "generate a run=2 gen=1 max=3")
	tr.step(snapshot(4, cfgs{"a": {v: "1", cfgOffset: 3}}), "stop a run=2")
	tr.step(ConnectorStopped{Name: "a", Run: 2}, "start a run=3")
}

// A PATCH writes only if the connector's config is still the one it was
// applied to: after another write (in flight, or read back) the caller is
// told to patch the new config, so that no change is lost.
func TestTracePatchOnTheCurrentConfig(t *testing.T) {
	tr := newTrace(t, Config{})
	tr.step(snapshot(1, cfgs{"a": {v: "1"}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 1, Connectors: []string{"a"}},
		"start a run=1", "clean-statuses", "reply 100 ok")
	patch := func(reply Token, name, v, base string) Event {
		return Request{Reply: reply, Op: PutConfig{Name: name, Config: cfgOf(name, v), AllowReplace: true, Base: cfgOf(name, base)}}
	}
	tr.step(patch(1, "a", "2", "1"), "write op=1 [connector a v=2]")
	tr.step(patch(2, "a", "3", "1"), "reply 2 stale") // the first is in flight
	tr.step(snapshot(2, cfgs{"a": {v: "2"}}), "stop a run=1")
	tr.step(Done{Op: 1}, "reply 1 ok")
	tr.step(patch(3, "a", "3", "1"), "reply 3 stale") // based on the old config
	tr.step(patch(4, "a", "3", "2"), "write op=2 [connector a v=3]")
	tr.step(patch(5, "b", "1", "1"), `reply 5 404 "Connector b not found"`)
}

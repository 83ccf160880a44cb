package herder

import "testing"

// The leader fences zombie tasks before a new generation of an
// exactly-once source connector's tasks starts: nothing to fence the first
// time (only the task count record is written), nor from one task to one;
// from three tasks to two, the three old producers are fenced, then two
// recorded. Requests during a round share it; a task's verify checks its
// generation and assignment.
func TestTraceZombieFencing(t *testing.T) {
	tr := newTrace(t, Config{ExactlyOnce: true, TransactionalLeader: true})
	tr.step(snapshot(3, cfgs{"a": {v: "1", tasks: 1, source: true, pending: true, gen: 1}, "s": {v: "1", tasks: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 3, Tasks: tasks("a", 0)},
		"claim-writes", "start a-0 run=1 eos taskgen=1 conn=1 task=1-0", "clean-statuses", "reply 100 ok")
	// First start with exactly-once: no record yet, nothing to fence.
	tr.step(Request{Reply: 1, Op: FenceZombies{Name: "a"}}, "write op=1 [task-count a n=1]")
	tr.step(Request{Reply: 2, Op: FenceZombies{Name: "a"}})
	tr.step(Done{Op: 1}, "reply 1 ok", "reply 2 ok")
	tr.step(snapshot(4, cfgs{"a": {v: "1", tasks: 1, source: true, taskCount: 1, gen: 1}, "s": {v: "1", tasks: 1}}))
	tr.step(Request{Reply: 3, Op: FenceZombies{Name: "a"}}, "reply 3 ok")
	tr.step(Request{Reply: 4, Op: VerifyTask{ID: TaskID{"a", 0}, Generation: 1}}, "reply 4 ok")
	tr.step(Request{Reply: 5, Op: VerifyTask{ID: TaskID{"a", 1}, Generation: 1}}, `reply 5 409 "Cannot start source task a-1 as it has already been revoked from this worker"`)
	tr.step(Request{Reply: 6, Op: VerifyTask{ID: TaskID{"a", 0}, Generation: 0}}, `reply 6 409 "Cannot start source task a-0 with exactly-once support as the connector has already generated a new set of task configs"`)
	tr.step(Request{Reply: 7, Op: FenceZombies{Name: "s"}}, `reply 7 400 "Connector s is not a source connector"`)
	tr.step(Request{Reply: 8, Op: FenceZombies{Name: "nope"}}, `reply 8 404 "Connector nope not found"`)
	// One task to one: the new task's own producer fences the old one.
	tr.step(snapshot(6, cfgs{"a": {v: "1", tasks: 1, applied: "1", source: true, taskCount: 1, pending: true, gen: 2}, "s": {v: "1", tasks: 1}}))
	tr.step(Request{Reply: 9, Op: FenceZombies{Name: "a"}}, "write op=2 [task-count a n=1]")
	tr.step(Done{Op: 2}, "reply 9 ok")
	// Three tasks recorded, two now: fence the three.
	tr.step(snapshot(9, cfgs{"a": {v: "1", tasks: 2, source: true, taskCount: 3, pending: true, gen: 3}, "s": {v: "1", tasks: 1}}), "rejoin")
	tr.step(Request{Reply: 10, Op: FenceZombies{Name: "a"}}, "fence op=3 a tasks=3")
	tr.step(Request{Reply: 11, Op: FenceZombies{Name: "a"}})
	tr.step(Done{Op: 3}, "write op=4 [task-count a n=2]")
	tr.step(Done{Op: 4}, "reply 10 ok", "reply 11 ok")
	// A fencing that fails answers every waiter.
	tr.step(snapshot(12, cfgs{"a": {v: "1", tasks: 2, source: true, taskCount: 2, pending: true, gen: 4}, "s": {v: "1", tasks: 1}}))
	tr.step(Request{Reply: 12, Op: FenceZombies{Name: "a"}}, "fence op=5 a tasks=2")
	tr.step(Done{Op: 5, Err: &Error{Code: 500, Message: "coordinator unavailable"}},
		`reply 12 500 "Failed to perform round of zombie fencing for connector a: coordinator unavailable"`)
	// New task configs while fencing: 409, the round's answer ignored.
	tr.step(Request{Reply: 13, Op: FenceZombies{Name: "a"}}, "fence op=6 a tasks=2")
	tr.step(snapshot(15, cfgs{"a": {v: "1", tasks: 3, source: true, taskCount: 2, pending: true, gen: 5}, "s": {v: "1", tasks: 1}}),
		`reply 13 409 "Failed to complete zombie fencing because a new set of task configs was generated"`, "rejoin")
	tr.step(Done{Op: 6})
	// Configs generated again after the producers were fenced, before the
	// record: 409 too.
	tr.step(Request{Reply: 14, Op: FenceZombies{Name: "a"}}, "fence op=7 a tasks=2")
	tr.step(snapshot(16, cfgs{"a": {v: "1", tasks: 3, source: true, taskCount: 2, pending: true, gen: 6}, "s": {v: "1", tasks: 1}}),
		`reply 14 409 "Failed to complete zombie fencing because a new set of task configs was generated"`)
	// A rebalance abandons a round; the leadership moves.
	tr.step(Request{Reply: 15, Op: FenceZombies{Name: "a"}}, "fence op=8 a tasks=2")
	tr.step(JoinPrepare{Reply: 101}, `reply 15 409 "`+msgConflict+`"`, "reply 101 ok")
	tr.step(Done{Op: 8})
	tr.step(Assigned{Reply: 102, Generation: 2, Protocol: Compatible, LeaderURL: "http://w2:8083", ConfigOffset: 16},
		"relinquish-writes", "stop a-0 run=1")
	tr.step(TaskStopped{ID: TaskID{"a", 0}, Run: 1}, "status a-0 UNASSIGNED gen=2", "reply 102 ok")
	tr.step(Request{Reply: 16, Op: FenceZombies{Name: "a"}}, "reply 16 forward=http://w2:8083")
}

// Offsets of an exactly-once source connector change only after a round
// of zombie fencing; a failed round changes nothing.
func TestTraceFencingBeforeOffsets(t *testing.T) {
	tr := newTrace(t, Config{ExactlyOnce: true})
	tr.step(snapshot(3, cfgs{"a": {v: "1", target: Stopped, source: true, taskCount: 2, pending: true, gen: 2},
		"b": {v: "1", target: Stopped, source: true, taskCount: 1, gen: 1}}))
	tr.step(Assigned{Reply: 100, Generation: 1, Protocol: Compatible, Leader: true, ConfigOffset: 3, Connectors: []string{"a", "b"}},
		"status a STOPPED gen=1", "status b STOPPED gen=1", "clean-statuses", "reply 100 ok")
	tr.step(Request{Reply: 1, Op: ModifyOffsets{Name: "a"}}, "fence op=1 a tasks=2")
	tr.step(Done{Op: 1}, "write op=2 [task-count a n=0]")
	tr.step(Done{Op: 2}, "offsets op=3 a")
	tr.step(Done{Op: 3, Result: "done"}, `reply 1 "done"`)
	tr.step(snapshot(4, cfgs{"a": {v: "1", target: Stopped, source: true, taskCount: 0, pending: true, gen: 2},
		"b": {v: "1", target: Stopped, source: true, taskCount: 1, gen: 1}}))
	// Nothing pending: straight to the offsets.
	tr.step(Request{Reply: 2, Op: ModifyOffsets{Name: "b"}}, "offsets op=4 b")
	tr.step(Request{Reply: 3, Op: ModifyOffsets{Name: "a"}}, "write op=5 [task-count a n=0]")
	tr.step(Done{Op: 5, Err: &Error{Code: 500, Message: "fenced"}},
		`reply 3 500 "Failed to perform zombie fencing for source connector prior to modifying offsets: fenced"`)
}

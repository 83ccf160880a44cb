// Package herder is the decision core of a connect worker in a cluster: a
// single-threaded state machine in the style of etcd/raft and the broker's
// group coordinator (package broker/group). It has no goroutines, no clock
// and no I/O. It takes events, each with the current time (Machine.Step),
// and answers with a batch of actions (Machine.Ready) that a driver
// performs off the machine's loop, reporting their outcome as new events.
//
// Events are what the worker observes: the config topic (Snapshot,
// RestartRequested), the group (JoinPrepare, Assigned), the runtime
// (ConnectorStarted, TaskFailed, TaskConfigsGenerated, …), completed
// writes (Done), REST requests (Request) and the passing of time (Tick).
// Actions are what it must do: start or stop a connector or a task, ask a
// connector for its task configs, write config or status records, send
// task configs to the leader, read the config topic, rejoin the group, and
// reply to a request or to a group callback waiting for work to stop.
//
// The driver must, for every batch:
//
//  1. perform the actions for one connector or task in the order given
//     (start before stop), each off the loop, so that a slow plugin holds
//     up nothing else;
//  2. perform status writes in order, and config writes in order;
//  3. report every started, stopped, failed and generated result, with the
//     Run (and Gen) it was given, as an event: the machine ignores results
//     of runs it has replaced;
//  4. call Step(now, Tick{}) at Machine.NextDeadline.
//
// Only the leader writes connector configs, task configs and restart
// requests; a follower answers such requests with an Error whose Forward
// is the leader's URL, and a request that comes during a rebalance, or
// while no leader is known, is held until one is (Config.HoldTimeout), then
// answered 409. A member never runs work outside its assignment: revoked
// work is stopped before the reply to Assigned, and all work before the
// reply to JoinPrepare when the membership was lost or the protocol is
// eager. Status writes carry the generation.
//
// Usage sketch (the driver's loop):
//
//	m := herder.New(herder.Config{WorkerID: id, URL: url, HoldTimeout: 30 * time.Second})
//	for ev := range events {
//		m.Step(time.Now(), ev)
//		for _, a := range m.Ready() { perform(a) } // off the loop; results come back as events
//	}
package herder

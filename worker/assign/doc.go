// Package assign is the connect group leader's assignor: a pure function
// from the members (with what each owns now) and the work (connectors and
// their task counts) to where everything should run. No I/O, no clocks.
//
// Connectors and tasks are balanced separately, round robin in sorted
// order, sticky (work stays with its owner while the balance allows), and
// the output is sorted, so equal inputs give equal assignments and churn
// causes no needless moves. For Kafka Connect's incremental cooperative
// protocols the result also says what each member gets newly (Assigned)
// and must stop (Revoked); work being moved is withheld from its new owner
// until the old owner has revoked it and rejoined.
//
// Plan adds the scheduled rebalance delay of Kafka's
// IncrementalCooperativeAssignor (KIP-415): the work of a member that left
// is held back for scheduled.rebalance.max.delay.ms, unless the same worker
// (same URL) comes back first. Time is an input (Input.Now), and what the
// leader remembers between rounds is too (State), so Plan is tested with
// scripted timelines and no clock.
//
// Usage sketch (on the leader, inside member.Config.Assign):
//
//	res := assign.Plan(assign.Input{Members: ms, Work: map[string]int{"src": 2, "sink": 1},
//		Now: now, MaxDelay: delay, State: remembered})
//	remembered = res.State
//	for id, a := range res.Assigned { ... encode with res.Revoked[id] and res.Delay ... }
package assign

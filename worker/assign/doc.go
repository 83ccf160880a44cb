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
// Usage sketch (on the leader, inside member.Config.Assign):
//
//	res := assign.Assign(members, map[string]int{"src": 2, "sink": 1})
//	for id, a := range res.Assigned { ... encode with res.Revoked[id] ... }
//
// The scheduled rebalance delay of Kafka's IncrementalCooperativeAssignor
// (holding a departed member's work for scheduled.rebalance.max.delay.ms)
// is not implemented yet: lost work is reassigned at once.
package assign

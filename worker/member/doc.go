// Package member is a connect worker's membership in its worker group: a
// Kafka group with protocol type "connect", driven with raw JoinGroup,
// SyncGroup, Heartbeat and LeaveGroup requests through franz-go, and Kafka
// Connect's member metadata and assignment encodings (ConnectProtocol v0,
// "default"; IncrementalCooperativeConnectProtocol v1 "compatible" and v2
// "sessioned"), so Tributary workers could share a group with Java ones.
//
// The broker elects the leader; the leader's Assign callback (the herder,
// using package assign) computes every member's assignment. The caller
// must, in order:
//
//  1. in OnJoinPrepare, stop all work when lost is true (membership lost)
//     or the protocol is eager: another member may be given it;
//  2. in OnAssigned, stop revoked work and start assigned work (hand off
//     quickly: heartbeats wait); on ConfigMismatch, read the config topic
//     to the end first (the member rejoins after);
//  3. tag status writes with Generation() (putSafe fencing), and write
//     none once Lease() is over;
//  4. call Rejoin when the config changed and the leader must reassign.
//
// No zombies: the member keeps a lease, renewed by every request the
// coordinator answers, that ends StopTimeout before the session could
// expire (counted from the request's send, which the coordinator received
// later). A member whose lease ends, because heartbeats go unanswered or
// the process was suspended, calls OnJoinPrepare with lost set, so its work
// has stopped before the coordinator can hand it to another member.
//
// An assignment with a delay (scheduled.rebalance.max.delay.ms) makes the
// member rejoin when the delay is over, so that the leader can assign the
// work it held back.
//
// Usage sketch:
//
//	m, err := member.New(member.Config{Client: cl, GroupID: "connect-cluster", URL: url,
//		ConfigOffset: configs.Offset, Assign: leaderAssign, OnAssigned: herder.assigned})
//	go m.Run(ctx) // returns after leaving the group when ctx ends
package member

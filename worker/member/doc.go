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
//  3. tag status writes with Generation() (putSafe fencing);
//  4. call Rejoin when the config changed and the leader must reassign.
//
// Usage sketch:
//
//	m, err := member.New(member.Config{Client: cl, GroupID: "connect-cluster", URL: url,
//		ConfigOffset: configs.Offset, Assign: leaderAssign, OnAssigned: herder.assigned})
//	go m.Run(ctx) // returns after leaving the group when ctx ends
package member

// Package group is the broker's group coordinator for Kafka's classic group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups,
// ListGroups, DeleteGroups), the consumer group protocol of KIP-848
// (ConsumerGroupHeartbeat, ConsumerGroupDescribe; consumer.go, with the
// server-side assignors of assign.go) and the committed offsets of groups
// (OffsetCommit, OffsetFetch, OffsetDelete).
//
// It is a pure state machine in the style of etcd/raft: no goroutines, no
// clock, no I/O. The protocol type and the protocols' metadata and
// assignments are opaque bytes, so "consumer" groups and Kafka Connect style
// "connect" groups work alike. Every input carries the time; requests carry
// an opaque token identifying the caller, and their responses, possibly much
// later (a JoinGroup completes when the rebalance does), come out of Ready
// together with the records to persist.
//
// The caller (package broker) must, in order, for every batch of work:
//
//  1. call one method (a request, or Tick when NextDeadline has passed);
//  2. take Ready: append Ready.Records to the group metadata log
//     (__consumer_offsets) in order, before handling the next input;
//  3. send the replies marked Durable only after those records are on disk,
//     the others at once;
//  4. arrange to call Tick again at NextDeadline.
//
// On start, feed every record of the log to Replay, in log order, before any
// request, and give the broker's topics to SetTopics (again whenever topics
// are created, deleted or grown). Committed offsets and each classic group's
// generation and protocol type are restored, its members are not (they
// rejoin, as after a coordinator move in Kafka); consumer-protocol groups
// come back whole, members, epochs and assignments included.
//
// Usage:
//
//	c := group.New(group.DefaultConfig())
//	for _, rec := range logRecords { c.Replay(rec.Key, rec.Value) }
//	c.Join(now, token, joinReq, clientID, clientHost)
//	rd := c.Ready() // append rd.Records, then deliver rd.Replies
//
// A Coordinator is not safe for concurrent use; the caller serializes calls.
package group

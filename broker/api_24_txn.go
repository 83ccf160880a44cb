package broker

import (
	"slices"

	"github.com/tributary-dev/tributary/broker/acl"

	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/tributary-dev/tributary/broker/txn"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The transaction APIs, answered by the transaction coordinator (package
// txn, driven by txns.go):
//
//   - AddPartitionsToTxn (24): v0-5; v4+ batch several transactions and
//     may be verify-only (KIP-890).
//   - AddOffsetsToTxn (25): v0-4; the group's __consumer_offsets partition
//     joins the transaction.
//   - EndTxn (26): v0-5; answered once the markers are durable. v5+ bumps
//     the producer epoch (KIP-890 part 2).
//   - TxnOffsetCommit (28): v0-5; checked against the transaction (v5+ adds
//     the offsets partition implicitly), then written by the group
//     coordinator as a transactional batch that takes effect at the commit
//     marker.
//   - DescribeTransactions (65): v0; ListTransactions (66): v0-2.

func handleAddPartitionsToTxn(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	if r := c.addPartitionsDenied(req); r != nil {
		return r
	}
	return c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.AddPartitions(now, to, req) })
}

func handleAddOffsetsToTxn(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	if !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID) || !c.allowedGroup(acl.OpRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		if !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID) {
			resp.ErrorCode = errTxnIDAuthorizationFailed
		}
		return &reply{resp: resp}
	}
	return c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.AddOffsets(now, to, req) })
}

func handleEndTxn(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.EndTxnRequest)
	if !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = errTxnIDAuthorizationFailed
		return &reply{resp: resp}
	}
	return c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.EndTxn(now, to, req) })
}

func handleTxnOffsetCommit(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	tp := txn.TopicPartition{Topic: offsetsTopic, Partition: 0}
	code := errNone
	switch {
	case !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID):
		code = errTxnIDAuthorizationFailed
	case !c.allowedGroup(acl.OpRead, req.Group):
		code = errGroupAuthorizationFailed
	}
	for _, rt := range req.Topics {
		if code == errNone && !c.allowedTopic(acl.OpRead, rt.Topic) {
			code = errTopicAuthorizationFailed
		}
	}
	if code == errNone {
		code = c.b.checkTxnPartition(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp, req.Version >= 5, req.Version)
	}
	if code != errNone {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return &reply{resp: resp}
	}
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) { co.TxnCommit(now, to, req) })
}

func handleDescribeTransactions(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	if c.b.sec.authorizer() == nil {
		return c.txnReply(func(co *txn.Coordinator, _ time.Time, to any) { co.Describe(to, req) })
	}
	// Transactional ids without DESCRIBE: TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
	return c.then(c.txnReply(func(co *txn.Coordinator, _ time.Time, to any) { co.Describe(to, req) }), func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeTransactionsResponse)
		for i := range resp.TransactionStates {
			s := &resp.TransactionStates[i]
			if !c.allowed(acl.OpDescribe, acl.ResourceTransactionalID, s.TransactionalID) {
				id := s.TransactionalID
				*s = kmsg.NewDescribeTransactionsResponseTransactionState()
				s.TransactionalID, s.ErrorCode = id, errTxnIDAuthorizationFailed
			}
		}
	})
}

func handleListTransactions(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ListTransactionsRequest)
	if c.b.sec.authorizer() == nil {
		return c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.List(now, to, req) })
	}
	// Only the transactional ids the principal may DESCRIBE are listed.
	return c.then(c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.List(now, to, req) }), func(r kmsg.Response) {
		resp := r.(*kmsg.ListTransactionsResponse)
		resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
			return !c.allowed(acl.OpDescribe, acl.ResourceTransactionalID, s.TransactionalID)
		})
	})
}

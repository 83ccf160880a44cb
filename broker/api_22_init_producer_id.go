package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"math"
	"time"

	"github.com/tributary-dev/tributary/broker/txn"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId: v0-5. With a transactional id the transaction coordinator
// answers (package txn: epoch bumps, fencing, KIP-360); without one this is
// an idempotent producer: a producer that passes its current id and epoch
// (KIP-360, v3+) gets the epoch bumped. Ids are never reused across
// restarts.

func handleInitProducerID(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.InitProducerIDRequest)
	b := c.b
	if req.TransactionalID != nil && !c.allowed(acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = -1, -1, errTxnIDAuthorizationFailed
		return &reply{resp: resp}
	}
	if req.TransactionalID == nil && !c.allowedCluster(acl.OpIdempotentWrite) && !c.allowedAny(acl.OpWrite, acl.ResourceTopic) {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = -1, -1, errClusterAuthorizationFailed
		return &reply{resp: resp}
	}
	if req.TransactionalID != nil {
		return c.txnReply(func(co *txn.Coordinator, now time.Time, to any) { co.InitProducerID(now, to, req) })
	}
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < math.MaxInt16-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return &reply{resp: resp}
	}
	id, err := b.pids.allocate()
	if err != nil {
		b.logger.Error("allocating a producer id failed", "err", err)
		resp.ErrorCode = errKafkaStorageError
		return &reply{resp: resp}
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return &reply{resp: resp}
}

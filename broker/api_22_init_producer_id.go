package broker

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId: v0-5, idempotent producers only (transactional ids are
// refused: this broker has no transaction coordinator). A producer that
// passes its current id and epoch (KIP-360, v3+) gets the epoch bumped; ids
// are never reused across restarts.

func handleInitProducerID(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.InitProducerIDRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = errInvalidRequest
		return &reply{resp: resp}
	}
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

package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator: v0-4 (v4 batches keys). Every group's coordinator is this
// node. Transaction coordinators (key type 1) are answered with
// COORDINATOR_NOT_AVAILABLE: this broker does not support transactions.

func handleFindCoordinator(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Host, co.Port = key, b.cfg.NodeID, b.advHost, b.advPort
		var msg string
		switch req.CoordinatorType {
		case 0:
			return co
		case 1:
			co.ErrorCode, msg = kerr.CoordinatorNotAvailable.Code, "transactions are not supported by this broker"
		default:
			co.ErrorCode, msg = errInvalidRequest, "unknown coordinator key type"
		}
		co.NodeID, co.Host, co.Port = -1, "", -1
		co.ErrorMessage = &msg
		return co
	}
	if req.Version >= 4 {
		for _, k := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, answer(k))
		}
		return &reply{resp: resp}
	}
	co := answer(req.CoordinatorKey)
	resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = co.ErrorCode, co.ErrorMessage, co.NodeID, co.Host, co.Port
	return &reply{resp: resp}
}

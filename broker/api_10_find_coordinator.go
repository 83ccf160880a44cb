package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator: v0-4 (v4 batches keys). Every group's and every
// transactional id's coordinator is this node.

func handleFindCoordinator(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	answer := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Host, co.Port = key, b.cfg.NodeID, b.advHost, b.advPort
		var msg string
		switch req.CoordinatorType {
		case 0, 1:
			return co
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

package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

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
		co.Key, co.NodeID, co.Host, co.Port = key, b.cfg.NodeID, c.l.advHost, c.l.advPort
		var msg string
		switch req.CoordinatorType {
		case 0:
			if c.allowedGroup(acl.OpDescribe, key) {
				return co
			}
			co.ErrorCode, msg = errGroupAuthorizationFailed, "Group authorization failed."
		case 1:
			if c.allowed(acl.OpDescribe, acl.ResourceTransactionalID, key) {
				return co
			}
			co.ErrorCode, msg = errTxnIDAuthorizationFailed, "Transactional Id authorization failed."
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

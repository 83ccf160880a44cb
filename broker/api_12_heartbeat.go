package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat: v0-4. REBALANCE_IN_PROGRESS tells a member to rejoin.

func handleHeartbeat(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.HeartbeatRequest)
	if !c.allowedGroup(acl.OpRead, req.Group) {
		return groupDenied(req)
	}
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) { co.Heartbeat(now, to, req) })
}

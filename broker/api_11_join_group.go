package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup: v0-9, classic protocol for any protocol type (package group).
// v4+ new members get MEMBER_ID_REQUIRED and join again with the id; v5+
// static members (group.instance.id) skip that round trip. The response
// waits for the end of the join phase (all members rejoined, the rebalance
// timeout, or group.initial.rebalance.delay.ms for a new group).

func handleJoinGroup(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.JoinGroupRequest)
	if !c.allowedGroup(acl.OpRead, req.Group) {
		return groupDenied(req)
	}
	host := c.clientHost()
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) {
		co.Join(now, to, req, c.client, host)
	})
}

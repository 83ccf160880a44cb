package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup: v0-5; v3+ removes a batch of members, by member id or by
// group.instance.id (as kadm's RemoveMembers does with an empty member id).

func handleLeaveGroup(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.LeaveGroupRequest)
	if !c.allowedGroup(acl.OpRead, req.Group) {
		return groupDenied(req)
	}
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) { co.Leave(now, to, req) })
}

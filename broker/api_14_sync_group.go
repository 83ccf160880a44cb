package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup: v0-5. Followers wait for the leader's assignments, which are
// passed through as opaque bytes and answered once the group metadata
// record is fsynced.

func handleSyncGroup(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.SyncGroupRequest)
	if !c.allowedGroup(acl.OpRead, req.Group) {
		return groupDenied(req)
	}
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) { co.Sync(now, to, req) })
}

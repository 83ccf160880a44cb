package broker

import (
	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete: v0. Allowed for empty groups, and for live "consumer" groups
// on topics none of their members subscribes to (GROUP_SUBSCRIBED_TO_TOPIC).

func handleOffsetDelete(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.DeleteOffsets(to, req) })
}

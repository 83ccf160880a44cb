package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetDelete: v0. Allowed for empty groups, and for live "consumer" groups
// on topics none of their members subscribes to (GROUP_SUBSCRIBED_TO_TOPIC).

func handleOffsetDelete(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	return c.offsetDelete(req)
}

package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// ListGroups: v0-5 with the states (v4+) and types (v5+) filters; a group is
// of type "classic" or "consumer" (KIP-848).

func handleListGroups(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ListGroupsRequest)
	return c.listGroups(req)
}

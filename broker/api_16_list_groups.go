package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// ListGroups: v0-5 with the states (v4+) and types (v5+) filters; every group
// is a "classic" group.

func handleListGroups(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ListGroupsRequest)
	return c.listGroups(req)
}

package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// DeleteGroups: v0-2. Only groups without members (NON_EMPTY_GROUP
// otherwise); tombstones for the group and its offsets are fsynced before
// the answer.

func handleDeleteGroups(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	return c.deleteGroups(req)
}

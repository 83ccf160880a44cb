package broker

import (
	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups: v0-5. Unknown groups are reported in state Dead without an
// error, as Kafka does before v6. Authorized operations (v3+) are all of
// them, as Kafka without an authorizer reports them.

func handleDescribeGroups(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.Describe(to, req) })
}

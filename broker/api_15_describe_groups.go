package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeGroups: v0-5. Unknown groups are reported in state Dead without an
// error, as Kafka does before v6. Authorized operations (v3+) are all of
// them, as Kafka without an authorizer reports them.

func handleDescribeGroups(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	return c.describeGroups(req)
}

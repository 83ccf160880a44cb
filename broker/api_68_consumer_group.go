package broker

import (
	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69): v0-1, the
// consumer group protocol of KIP-848 (group.protocol=consumer), run by the
// group coordinator (package group) with server-side assignors uniform and
// range and broker-side regex subscriptions. A heartbeat that changed the
// group is answered once its record is on disk.
//
// ShareGroupHeartbeat (76) and ShareGroupDescribe (77): v1, refused with
// UNSUPPORTED_VERSION: this broker has no share groups (KIP-932), so a share
// consumer fails on its first heartbeat.

func handleConsumerGroupHeartbeat(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	clientID, host := c.client, c.clientHost()
	return c.groupReply(func(co *group.Coordinator, now time.Time, to any) {
		co.ConsumerHeartbeat(now, to, req, clientID, host)
	})
}

func handleConsumerGroupDescribe(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.ConsumerDescribe(to, req) })
}

func handleShareGroupHeartbeat(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ShareGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.ErrorCode = errUnsupportedVersion
	return &reply{resp: resp}
}

func handleShareGroupDescribe(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, g := range req.GroupIDs {
		sg := kmsg.NewShareGroupDescribeResponseGroup()
		sg.GroupID, sg.ErrorCode, sg.AuthorizedOperations = g, errUnsupportedVersion, notAuthorizedOps
		resp.Groups = append(resp.Groups, sg)
	}
	return &reply{resp: resp}
}

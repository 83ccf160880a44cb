package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69): v0-1,
// advertised and refused with UNSUPPORTED_VERSION, exactly as Apache Kafka
// 4.4 does with group.coordinator.rebalance.protocols=classic. A KIP-848
// consumer (group.protocol=consumer) therefore fails at once with a clear,
// fatal error instead of waiting for a heartbeat answer that never comes;
// classic consumers are unaffected.
//
// ShareGroupHeartbeat (76) and ShareGroupDescribe (77): v1, refused the same
// way: this broker has no share groups (KIP-932), so a share consumer fails
// on its first heartbeat.

func handleConsumerGroupHeartbeat(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.ErrorCode = errUnsupportedVersion
	return &reply{resp: resp}
}

func handleConsumerGroupDescribe(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, g := range req.Groups {
		sg := kmsg.NewConsumerGroupDescribeResponseGroup()
		sg.Group, sg.ErrorCode, sg.AuthorizedOperations = g, errUnsupportedVersion, notAuthorizedOps
		resp.Groups = append(resp.Groups, sg)
	}
	return &reply{resp: resp}
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

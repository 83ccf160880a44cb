package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// DescribeCluster: v0-1 (brokers endpoint type only). Authorized operations
// are all of them, as Kafka without an authorizer reports them.

func handleDescribeCluster(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeClusterRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = errUnsupportedVersion
		msg := "only the brokers endpoint type is supported"
		resp.ErrorMessage = &msg
		return &reply{resp: resp}
	}
	resp.EndpointType = 1
	resp.ClusterID = b.clusterID
	resp.ControllerID = b.cfg.NodeID
	resp.ClusterAuthorizedOperations = notAuthorizedOps
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if c.allowedCluster(acl.OpDescribe) {
			resp.ClusterAuthorizedOperations = c.authorizedOps(acl.ResourceCluster, acl.ClusterName)
		}
	}
	br := kmsg.NewDescribeClusterResponseBroker()
	br.NodeID, br.Host, br.Port = b.cfg.NodeID, c.l.advHost, c.l.advPort
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{br}
	return &reply{resp: resp}
}

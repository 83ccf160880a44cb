package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// DescribeClientQuotas (48): v0-1. The broker enforces no quotas and none
// can be set, so every filter matches nothing; answering (rather than not
// advertising the API) lets kafka-configs.sh --describe --entity-type users
// show users' SCRAM credentials, which it asks for together with their
// quotas. Needs DESCRIBE_CONFIGS on the cluster, as in Kafka.

func handleDescribeClientQuotas(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !c.allowedCluster(acl.OpDescribeConfigs) {
		msg := clusterAuthFailedMsg
		resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
		return &reply{resp: resp}
	}
	for _, comp := range req.Components {
		var bad string
		switch {
		case comp.MatchType < 0 || comp.MatchType > 2:
			bad = "Unknown match type: " + comp.MatchType.String()
		case comp.MatchType == 0 && comp.Match == nil:
			bad = "Unspecified match for an exact component filter"
		case comp.EntityType != "user" && comp.EntityType != "client-id" && comp.EntityType != "ip":
			bad = "Custom entity type '" + comp.EntityType + "' not supported"
		}
		if bad != "" {
			resp.ErrorCode, resp.ErrorMessage = errInvalidRequest, &bad
			return &reply{resp: resp}
		}
	}
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	return &reply{resp: resp}
}

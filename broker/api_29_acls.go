package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeAcls (29), CreateAcls (30), DeleteAcls (31): v1-3. This broker has
// no authorizer, so like Apache Kafka without authorizer.class.name it
// answers every ACL request with SECURITY_DISABLED and Kafka's messages.

func handleDescribeACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	msg := "No Authorizer is configured on the broker"
	resp.ErrorCode, resp.ErrorMessage = errSecurityDisabled, &msg
	return &reply{resp: resp}
}

func handleCreateACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		msg := "No Authorizer is configured."
		r.ErrorCode, r.ErrorMessage = errSecurityDisabled, &msg
		resp.Results = append(resp.Results, r)
	}
	return &reply{resp: resp}
}

func handleDeleteACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		msg := "No Authorizer is configured."
		r.ErrorCode, r.ErrorMessage = errSecurityDisabled, &msg
		resp.Results = append(resp.Results, r)
	}
	return &reply{resp: resp}
}

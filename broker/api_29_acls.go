package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// DescribeAcls (29, needs DESCRIBE on the cluster), CreateAcls (30) and
// DeleteAcls (31, both ALTER on the cluster): v1-3. Without an authorizer
// (authorizer.class.name unset) they are answered SECURITY_DISABLED with
// Kafka's messages. ACLs are stored in security.json and in force as soon
// as the response is sent.

const clusterAuthFailedMsg = "Cluster authorization failed."

func handleDescribeACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if !c.b.cfg.Authorizer {
		msg := "No Authorizer is configured on the broker"
		resp.ErrorCode, resp.ErrorMessage = errSecurityDisabled, &msg
		return &reply{resp: resp}
	}
	if !c.allowedCluster(acl.OpDescribe) {
		msg := clusterAuthFailedMsg
		resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
		return &reply{resp: resp}
	}
	f := acl.Filter{ResourceType: acl.ResourceType(req.ResourceType), ResourceName: req.ResourceName, PatternType: acl.PatternType(req.ResourcePatternType),
		Principal: req.Principal, Host: req.Host, Operation: acl.Operation(req.Operation), Permission: acl.Permission(req.PermissionType)}
	if err := f.Validate(); err != nil {
		msg := err.Error()
		resp.ErrorCode, resp.ErrorMessage = errInvalidRequest, &msg
		return &reply{resp: resp}
	}
	type key struct {
		rt   acl.ResourceType
		name string
		pt   acl.PatternType
	}
	byRes := map[key]int{}
	for _, b := range c.b.sec.acls() {
		if !f.Matches(b) {
			continue
		}
		k := key{b.ResourceType, b.ResourceName, b.PatternType}
		i, ok := byRes[k]
		if !ok {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(b.ResourceType), b.ResourceName, kmsg.ACLResourcePatternType(b.PatternType)
			resp.Resources = append(resp.Resources, r)
			i = len(resp.Resources) - 1
			byRes[k] = i
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, a)
	}
	return &reply{resp: resp}
}

func handleCreateACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	fail := func(code int16, msg string) *reply {
		for range req.Creations {
			r := kmsg.NewCreateACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = code, &msg
			resp.Results = append(resp.Results, r)
		}
		return &reply{resp: resp}
	}
	if !c.b.cfg.Authorizer {
		return fail(errSecurityDisabled, "No Authorizer is configured.")
	}
	if !c.allowedCluster(acl.OpAlter) {
		return fail(errClusterAuthorizationFailed, clusterAuthFailedMsg)
	}
	var add []acl.Binding
	for _, cr := range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		b := acl.Binding{ResourceType: acl.ResourceType(cr.ResourceType), ResourceName: cr.ResourceName, PatternType: acl.PatternType(cr.ResourcePatternType),
			Principal: cr.Principal, Host: cr.Host, Operation: acl.Operation(cr.Operation), Permission: acl.Permission(cr.PermissionType)}
		if err := b.Validate(); err != nil {
			msg := err.Error()
			r.ErrorCode, r.ErrorMessage = errInvalidRequest, &msg
		} else {
			add = append(add, b)
		}
		resp.Results = append(resp.Results, r)
	}
	if len(add) > 0 {
		if err := c.b.sec.addACLs(add); err != nil {
			c.logger.Error("storing ACLs failed", "err", err)
			for i := range resp.Results {
				if resp.Results[i].ErrorCode == 0 {
					msg := err.Error()
					resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = errUnknownServerError, &msg
				}
			}
		} else {
			c.logger.Info("created ACLs", "principal", c.principal, "count", len(add))
		}
	}
	return &reply{resp: resp}
}

func handleDeleteACLs(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	fail := func(code int16, msg string) *reply {
		resp.Results = resp.Results[:0] // one result per filter, whatever was filled before
		for range req.Filters {
			r := kmsg.NewDeleteACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = code, &msg
			resp.Results = append(resp.Results, r)
		}
		return &reply{resp: resp}
	}
	if !c.b.cfg.Authorizer {
		return fail(errSecurityDisabled, "No Authorizer is configured.")
	}
	if !c.allowedCluster(acl.OpAlter) {
		return fail(errClusterAuthorizationFailed, clusterAuthFailedMsg)
	}
	filters := make([]*acl.Filter, len(req.Filters))
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i, rf := range req.Filters {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
		f := acl.Filter{ResourceType: acl.ResourceType(rf.ResourceType), ResourceName: rf.ResourceName, PatternType: acl.PatternType(rf.ResourcePatternType),
			Principal: rf.Principal, Host: rf.Host, Operation: acl.Operation(rf.Operation), Permission: acl.Permission(rf.PermissionType)}
		if err := f.Validate(); err != nil {
			msg := err.Error()
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = errInvalidRequest, &msg
			continue
		}
		filters[i] = &f
	}
	deleted, err := c.b.sec.deleteACLs(func(b acl.Binding) int {
		return slices.IndexFunc(filters, func(f *acl.Filter) bool { return f != nil && f.Matches(b) })
	})
	if err != nil {
		c.logger.Error("storing ACLs failed", "err", err)
		return fail(errUnknownServerError, err.Error())
	}
	for _, d := range deleted {
		// A binding matching several filters is reported under each, as Kafka does.
		for i, f := range filters {
			if f == nil || !f.Matches(d) {
				continue
			}
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(d.ResourceType), d.ResourceName, kmsg.ACLResourcePatternType(d.PatternType)
			m.Principal, m.Host, m.Operation, m.PermissionType = d.Principal, d.Host, kmsg.ACLOperation(d.Operation), kmsg.ACLPermissionType(d.Permission)
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
		}
	}
	if len(deleted) > 0 {
		c.logger.Info("deleted ACLs", "principal", c.principal, "count", len(deleted))
	}
	return &reply{resp: resp}
}

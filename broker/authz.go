package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// Authorized operations as Apache Kafka reports them without an authorizer:
// every operation the resource type supports, as a bit field with bit n set
// for ACL operation code n (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
// DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
// IDEMPOTENT_WRITE 12). Values checked against Apache Kafka 4.4 by the
// differential test (integration/broker_failfast_diff_test.go).
const (
	// topicAuthorizedOps: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE,
	// DESCRIBE_CONFIGS, ALTER_CONFIGS.
	topicAuthorizedOps int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	// clusterAuthorizedOps: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION,
	// DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
	clusterAuthorizedOps int32 = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
	// notAuthorizedOps is what Kafka answers when operations were not asked for.
	notAuthorizedOps int32 = -2147483648
)

// errSecurityDisabled is SECURITY_DISABLED, Kafka's answer to ACL requests
// when no authorizer is configured.
const errSecurityDisabled int16 = 54

// Authorization error codes.
var (
	errTopicAuthorizationFailed   = kerr.TopicAuthorizationFailed.Code
	errGroupAuthorizationFailed   = kerr.GroupAuthorizationFailed.Code
	errClusterAuthorizationFailed = kerr.ClusterAuthorizationFailed.Code
	errTxnIDAuthorizationFailed   = kerr.TransactionalIDAuthorizationFailed.Code
)

// allowed reports whether the connection's principal may do op on the
// resource; always true without an authorizer.
func (c *conn) allowed(op acl.Operation, rt acl.ResourceType, name string) bool {
	a := c.b.sec.authorizer()
	if a == nil {
		return true
	}
	ok := a.Authorize(acl.Request{Principal: c.principal, Host: c.host, Operation: op, ResourceType: rt, ResourceName: name})
	if !ok {
		c.logger.Debug("authorization denied", "principal", c.principal, "operation", op, "resource_type", rt, "resource", name)
	}
	return ok
}

func (c *conn) allowedTopic(op acl.Operation, name string) bool {
	return c.allowed(op, acl.ResourceTopic, name)
}

func (c *conn) allowedGroup(op acl.Operation, name string) bool {
	return c.allowed(op, acl.ResourceGroup, name)
}

func (c *conn) allowedCluster(op acl.Operation) bool {
	return c.allowed(op, acl.ResourceCluster, acl.ClusterName)
}

// allowedAny reports whether the principal may do op on some resource of
// the type (idempotent producers without IDEMPOTENT_WRITE need WRITE on
// some topic).
func (c *conn) allowedAny(op acl.Operation, rt acl.ResourceType) bool {
	a := c.b.sec.authorizer()
	if a == nil {
		return true
	}
	return a.AuthorizeAny(acl.Request{Principal: c.principal, Host: c.host, Operation: op, ResourceType: rt})
}

// authorizedOps is the authorized-operations bit field of a resource for
// the connection's principal: every supported operation without an
// authorizer.
func (c *conn) authorizedOps(rt acl.ResourceType, name string) int32 {
	a := c.b.sec.authorizer()
	if a == nil {
		switch rt {
		case acl.ResourceTopic:
			return topicAuthorizedOps
		case acl.ResourceCluster:
			return clusterAuthorizedOps
		}
		var bits int32
		for _, op := range acl.Operations(rt) {
			bits |= 1 << op
		}
		return bits
	}
	return a.AuthorizedOperations(acl.Request{Principal: c.principal, Host: c.host, ResourceType: rt, ResourceName: name})
}

// configDenied checks a config resource: a topic's against the topic, a
// broker's (and broker logger's) against the cluster.
func (c *conn) configDenied(rt kmsg.ConfigResourceType, name string, op acl.Operation) (int16, bool) {
	if rt == resourceTopic {
		if !c.allowedTopic(op, name) {
			return errTopicAuthorizationFailed, true
		}
		return 0, false
	}
	if !c.allowedCluster(op) {
		return errClusterAuthorizationFailed, true
	}
	return 0, false
}

// addPartitionsDenied answers an AddPartitionsToTxn (v0-3) the principal
// may not make: without WRITE on the transactional id every partition gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; topics without WRITE get
// TOPIC_AUTHORIZATION_FAILED and the others OPERATION_NOT_ATTEMPTED, as
// Kafka answers. nil: allowed.
func (c *conn) addPartitionsDenied(req *kmsg.AddPartitionsToTxnRequest) *reply {
	if c.b.sec.authorizer() == nil || req.Version >= 4 {
		return nil
	}
	txnOK := c.allowed(acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID)
	denied := map[string]bool{}
	for _, t := range req.Topics {
		if !c.allowedTopic(acl.OpWrite, t.Topic) {
			denied[t.Topic] = true
		}
	}
	if txnOK && len(denied) == 0 {
		return nil
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition = p
			switch {
			case !txnOK:
				rp.ErrorCode = errTxnIDAuthorizationFailed
			case denied[t.Topic]:
				rp.ErrorCode = errTopicAuthorizationFailed
			default:
				rp.ErrorCode = kerr.OperationNotAttempted.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return &reply{resp: resp}
}

package broker

import (
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
	"github.com/tributary-dev/tributary/broker/group"
)

// Authorization of the group APIs (KafkaApis): the coordinator (package
// group) knows nothing of principals, so requests are checked, and
// narrowed to what is allowed, before it sees them, and the refused parts
// are added to its answer.

// groupReplyThen is groupReply with then applied to the coordinator's
// response before it is sent.
func (c *conn) groupReplyThen(fn func(co *group.Coordinator, now time.Time, to any), then func(kmsg.Response)) *reply {
	return c.then(c.groupReply(fn), then)
}

// then returns a reply that is inner's response with then applied to it.
func (c *conn) then(inner *reply, then func(kmsg.Response)) *reply {
	r := &reply{ready: make(chan struct{})}
	go func() {
		defer close(r.ready)
		select {
		case <-inner.ready:
		case <-c.b.ctx.Done():
			r.fail = errors.New("broker shutting down")
			return
		}
		if inner.resp != nil {
			then(inner.resp)
		}
		r.resp, r.fail = inner.resp, inner.fail
	}()
	return r
}

// groupDenied answers a group membership request (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup) whose principal may not READ the group.
func groupDenied(req kmsg.Request) *reply {
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ErrorCode, r.Generation = errGroupAuthorizationFailed, -1
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = errGroupAuthorizationFailed
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = errGroupAuthorizationFailed
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = errGroupAuthorizationFailed
	}
	return &reply{resp: resp}
}

// offsetCommit checks READ on the group and on each topic; the coordinator
// gets only the allowed topics.
func (c *conn) offsetCommit(req *kmsg.OffsetCommitRequest) *reply {
	groupOK := c.allowedGroup(acl.OpRead, req.Group)
	var denied []kmsg.OffsetCommitRequestTopic
	allowed := req.Topics[:0:0]
	for _, t := range req.Topics {
		if groupOK && c.allowedTopic(acl.OpRead, t.Topic) {
			allowed = append(allowed, t)
		} else {
			denied = append(denied, t)
		}
	}
	addDenied := func(resp *kmsg.OffsetCommitResponse) {
		code := errTopicAuthorizationFailed
		if !groupOK {
			code = errGroupAuthorizationFailed
		}
		for _, t := range denied {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	if !groupOK || len(allowed) == 0 {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		addDenied(resp)
		return &reply{resp: resp}
	}
	if len(denied) == 0 {
		return c.groupReply(func(co *group.Coordinator, now time.Time, to any) { co.Commit(now, to, req) })
	}
	narrowed := *req
	narrowed.Topics = allowed
	return c.groupReplyThen(func(co *group.Coordinator, now time.Time, to any) { co.Commit(now, to, &narrowed) },
		func(r kmsg.Response) { addDenied(r.(*kmsg.OffsetCommitResponse)) })
}

// offsetFetch checks DESCRIBE on each group; topics the principal may not
// DESCRIBE are answered TOPIC_AUTHORIZATION_FAILED when asked for by name
// and left out of "all topics" answers.
func (c *conn) offsetFetch(req *kmsg.OffsetFetchRequest) *reply {
	if c.b.sec.authorizer() == nil {
		return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.FetchOffsets(to, req) })
	}
	if req.Version < 8 && !c.allowedGroup(acl.OpDescribe, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return &reply{resp: resp}
	}
	return c.groupReplyThen(func(co *group.Coordinator, _ time.Time, to any) { co.FetchOffsets(to, req) }, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetFetchResponse)
		if req.Version < 8 {
			all := req.Topics == nil
			resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool {
				return all && !c.allowedTopic(acl.OpDescribe, t.Topic)
			})
			for i := range resp.Topics {
				if !c.allowedTopic(acl.OpDescribe, resp.Topics[i].Topic) {
					for j := range resp.Topics[i].Partitions {
						p := &resp.Topics[i].Partitions[j]
						p.Offset, p.Metadata, p.ErrorCode = -1, nil, errTopicAuthorizationFailed
					}
				}
			}
			return
		}
		for gi := range resp.Groups {
			g := &resp.Groups[gi]
			if !c.allowedGroup(acl.OpDescribe, g.Group) {
				g.Topics, g.ErrorCode = nil, errGroupAuthorizationFailed
				continue
			}
			all := true
			for _, rg := range req.Groups {
				if rg.Group == g.Group && rg.Topics != nil {
					all = false
				}
			}
			g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
				return all && !c.allowedTopic(acl.OpDescribe, t.Topic)
			})
			for i := range g.Topics {
				if !c.allowedTopic(acl.OpDescribe, g.Topics[i].Topic) {
					for j := range g.Topics[i].Partitions {
						p := &g.Topics[i].Partitions[j]
						p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, errTopicAuthorizationFailed
					}
				}
			}
		}
	})
}

// describeGroups checks DESCRIBE on each group and fills the authorized
// operations (v3+).
func (c *conn) describeGroups(req *kmsg.DescribeGroupsRequest) *reply {
	narrowed := *req
	var denied []string
	narrowed.Groups, denied = c.splitGroups(acl.OpDescribe, req.Groups)
	then := func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeGroupsResponse)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if req.IncludeAuthorizedOperations && req.Version >= 3 && g.ErrorCode == 0 {
				g.AuthorizedOperations = c.authorizedOps(acl.ResourceGroup, g.Group)
			}
		}
		for _, name := range denied {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = name, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, g)
		}
	}
	if len(narrowed.Groups) == 0 {
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		then(resp)
		return &reply{resp: resp}
	}
	return c.groupReplyThen(func(co *group.Coordinator, _ time.Time, to any) { co.Describe(to, &narrowed) }, then)
}

// listGroups lists every group with DESCRIBE on the cluster, else the
// groups the principal may DESCRIBE.
func (c *conn) listGroups(req *kmsg.ListGroupsRequest) *reply {
	if c.allowedCluster(acl.OpDescribe) {
		return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.List(to, req) })
	}
	return c.groupReplyThen(func(co *group.Coordinator, _ time.Time, to any) { co.List(to, req) }, func(r kmsg.Response) {
		resp := r.(*kmsg.ListGroupsResponse)
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !c.allowedGroup(acl.OpDescribe, g.Group) })
	})
}

// deleteGroups checks DELETE on each group.
func (c *conn) deleteGroups(req *kmsg.DeleteGroupsRequest) *reply {
	narrowed := *req
	var denied []string
	narrowed.Groups, denied = c.splitGroups(acl.OpDelete, req.Groups)
	then := func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteGroupsResponse)
		for _, name := range denied {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = name, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, g)
		}
	}
	if len(narrowed.Groups) == 0 {
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		then(resp)
		return &reply{resp: resp}
	}
	return c.groupReplyThen(func(co *group.Coordinator, _ time.Time, to any) { co.DeleteGroups(to, &narrowed) }, then)
}

// offsetDelete checks DELETE on the group and READ on each topic.
func (c *conn) offsetDelete(req *kmsg.OffsetDeleteRequest) *reply {
	if !c.allowedGroup(acl.OpDelete, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return &reply{resp: resp}
	}
	var denied []kmsg.OffsetDeleteRequestTopic
	narrowed := *req
	narrowed.Topics = nil
	for _, t := range req.Topics {
		if c.allowedTopic(acl.OpRead, t.Topic) {
			narrowed.Topics = append(narrowed.Topics, t)
		} else {
			denied = append(denied, t)
		}
	}
	if len(denied) == 0 {
		return c.groupReply(func(co *group.Coordinator, _ time.Time, to any) { co.DeleteOffsets(to, req) })
	}
	return c.groupReplyThen(func(co *group.Coordinator, _ time.Time, to any) { co.DeleteOffsets(to, &narrowed) }, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetDeleteResponse)
		for _, t := range denied {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	})
}

// after returns inner with then applied to its response once it is ready
// (at once for a reply that is ready already).
func (c *conn) after(inner *reply, then func(kmsg.Response)) *reply {
	if inner.ready == nil {
		if inner.resp != nil {
			then(inner.resp)
		}
		return inner
	}
	return c.then(inner, then)
}

// consumerGroupHeartbeatAuthz checks READ on the group of a KIP-848
// heartbeat before the group coordinator sees it.
func consumerGroupHeartbeatAuthz(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	if !c.allowedGroup(acl.OpRead, req.Group) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		msg := "Group authorization failed."
		resp.ErrorCode, resp.ErrorMessage = errGroupAuthorizationFailed, &msg
		return &reply{resp: resp}
	}
	return handleConsumerGroupHeartbeat(c, kreq)
}

// consumerGroupDescribeAuthz checks DESCRIBE on each group of a
// ConsumerGroupDescribe and fills the authorized operations.
func consumerGroupDescribeAuthz(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	if c.b.sec.authorizer() == nil {
		return handleConsumerGroupDescribe(c, kreq)
	}
	narrowed := *req
	var denied []string
	narrowed.Groups, denied = c.splitGroups(acl.OpDescribe, req.Groups)
	then := func(r kmsg.Response) {
		resp := r.(*kmsg.ConsumerGroupDescribeResponse)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if req.IncludeAuthorizedOperations && g.ErrorCode == 0 {
				g.AuthorizedOperations = c.authorizedOps(acl.ResourceGroup, g.Group)
			}
		}
		for _, name := range denied {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode, g.AuthorizedOperations = name, errGroupAuthorizationFailed, notAuthorizedOps
			resp.Groups = append(resp.Groups, g)
		}
	}
	if len(narrowed.Groups) == 0 {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		then(resp)
		return &reply{resp: resp}
	}
	return c.after(handleConsumerGroupDescribe(c, &narrowed), then)
}

// splitGroups parts groups into those the principal may perform op on and
// the others, each in the request's order.
func (c *conn) splitGroups(op acl.Operation, groups []string) (allowed, denied []string) {
	for _, g := range groups {
		if c.allowedGroup(op, g) {
			allowed = append(allowed, g)
		} else {
			denied = append(denied, g)
		}
	}
	return allowed, denied
}

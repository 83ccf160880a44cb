package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata: v0-12. Authorized operations (v8+) are all of them, as Kafka
// without an authorizer reports them. This broker is the only node, leader of every partition
// with leader epoch 0. Unknown topics are created when
// auto.create.topics.enable is true and the request allows it (v4+; always
// before v4), with num.partitions partitions.

func handleMetadata(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.MetadataRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	br := kmsg.NewMetadataResponseBroker()
	br.NodeID, br.Host, br.Port = b.cfg.NodeID, c.l.advHost, c.l.advPort
	resp.Brokers = []kmsg.MetadataResponseBroker{br}
	cid := b.clusterID
	resp.ClusterID = &cid
	resp.ControllerID = b.cfg.NodeID
	resp.AuthorizedOperations = notAuthorizedOps
	if req.IncludeClusterAuthorizedOperations && req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = c.authorizedOps(acl.ResourceCluster, acl.ClusterName)
	}

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		b.mu.RLock()
		names := make([]string, 0, len(b.topics))
		for n := range b.topics {
			names = append(names, n)
		}
		b.mu.RUnlock()
		sort.Strings(names)
		for _, n := range names {
			if t := b.topic(n); t != nil && c.allowedTopic(acl.OpDescribe, n) {
				resp.Topics = append(resp.Topics, c.metadataTopic(req, t))
			}
		}
		return &reply{resp: resp}
	}
	autoCreate := b.cfg.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)
	// As Kafka: topics refused creation, then topics refused DESCRIBE,
	// come after the others.
	var createDenied, describeDenied []kmsg.MetadataResponseTopic
	topicOps := req.IncludeTopicAuthorizedOperations && req.Version >= 8
	for _, rt := range req.Topics {
		var t *topic
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
			t = b.topic(name)
		} else if req.Version >= 10 {
			b.mu.RLock()
			t = b.topicIDs[rt.TopicID]
			b.mu.RUnlock()
		}
		if t != nil {
			name = t.name
		}
		if (rt.Topic != nil || t != nil) && !c.allowedTopic(acl.OpDescribe, name) {
			// Kafka does not disclose whether the topic exists.
			st := kmsg.NewMetadataResponseTopic()
			if rt.Topic != nil {
				st.Topic = &name
			}
			st.TopicID = rt.TopicID
			st.ErrorCode = errTopicAuthorizationFailed
			st.AuthorizedOperations = notAuthorizedOps
			describeDenied = append(describeDenied, st)
			continue
		}
		if t == nil && autoCreate && rt.Topic != nil && !c.allowedCluster(acl.OpCreate) && !c.allowedTopic(acl.OpCreate, name) {
			st := kmsg.NewMetadataResponseTopic()
			st.Topic, st.ErrorCode = &name, errTopicAuthorizationFailed
			createDenied = append(createDenied, st)
			continue
		}
		if t == nil && autoCreate && rt.Topic != nil {
			if err := validateTopicName(name); err != nil {
				st := kmsg.NewMetadataResponseTopic()
				st.Topic, st.ErrorCode = &name, errInvalidTopic
				resp.Topics = append(resp.Topics, st)
				continue
			}
			var err error
			t, err = b.createTopic(name, b.cfg.NumPartitions, nil)
			if err == errTopicExists {
				t = b.topic(name)
			} else if err != nil {
				b.logger.Error("auto-creating topic failed", "topic", name, "err", err)
			}
		}
		if t == nil {
			st := kmsg.NewMetadataResponseTopic()
			if rt.Topic != nil {
				st.Topic = &name
				st.ErrorCode = errUnknownTopicOrPartition
				if validateTopicName(name) != nil {
					st.ErrorCode = errInvalidTopic
				}
				if topicOps {
					st.AuthorizedOperations = c.authorizedOps(acl.ResourceTopic, name)
				}
			} else {
				st.TopicID = rt.TopicID
				st.ErrorCode = errUnknownTopicID
			}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		resp.Topics = append(resp.Topics, c.metadataTopic(req, t))
	}
	resp.Topics = append(append(resp.Topics, createDenied...), describeDenied...)
	return &reply{resp: resp}
}

func (c *conn) metadataTopic(req *kmsg.MetadataRequest, t *topic) kmsg.MetadataResponseTopic {
	b := c.b
	st := kmsg.NewMetadataResponseTopic()
	name := t.name
	st.Topic = &name
	st.TopicID = t.id
	st.IsInternal = t.internal
	st.AuthorizedOperations = notAuthorizedOps
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		st.AuthorizedOperations = c.authorizedOps(acl.ResourceTopic, t.name)
	}
	for _, p := range t.partitions() {
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = p.index
		sp.Leader = b.cfg.NodeID
		sp.LeaderEpoch = 0
		sp.Replicas = []int32{b.cfg.NodeID}
		sp.ISR = []int32{b.cfg.NodeID}
		sp.OfflineReplicas = []int32{}
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

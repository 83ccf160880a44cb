package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopics: v0-7. Replication factor must be 1 (or -1 for the default);
// manual assignments must name this node only. Configs are validated with
// Kafka's rules and messages; validate_only creates nothing. From v5 the
// response carries the topic's effective configs.

func handleCreateTopics(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.CreateTopicsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	answered := map[string]bool{}
	clusterCreate := c.allowedCluster(acl.OpCreate)
	for _, rt := range req.Topics {
		if seen[rt.Topic] > 1 && answered[rt.Topic] {
			continue // like Kafka: one answer per duplicated name
		}
		answered[rt.Topic] = true
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		fail := func(code int16, msg string) {
			st.ErrorCode = code
			if req.Version >= 1 {
				st.ErrorMessage = &msg
			}
		}
		if seen[rt.Topic] == 1 && !clusterCreate && !c.allowedTopic(acl.OpCreate, rt.Topic) {
			fail(errTopicAuthorizationFailed, "Authorization failed.")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		parts, code, msg := b.checkNewTopic(&rt, seen[rt.Topic])
		if code != errNone {
			fail(code, msg)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		configs := map[string]string{}
		for _, cfg := range rt.Configs {
			if cfg.Value == nil {
				continue
			}
			configs[cfg.Name] = *cfg.Value
		}
		if !req.ValidateOnly {
			t, err := b.createTopic(rt.Topic, parts, configs)
			if err == errTopicExists {
				fail(errTopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", rt.Topic))
				resp.Topics = append(resp.Topics, st)
				continue
			}
			if err != nil {
				fail(errUnknownServerError, err.Error())
				resp.Topics = append(resp.Topics, st)
				continue
			}
			st.TopicID = t.id
		}
		st.NumPartitions, st.ReplicationFactor = parts, 1
		if req.Version >= 5 {
			for _, name := range sortedConfigNames() {
				v, src := b.effectiveTopicConfig(configs, name)
				cc := kmsg.NewCreateTopicsResponseTopicConfig()
				cc.Name = name
				val := v
				cc.Value = &val
				cc.Source = int8(src)
				st.Configs = append(st.Configs, cc)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}

// checkNewTopic validates a CreateTopics entry and returns its partition count.
func (b *Broker) checkNewTopic(rt *kmsg.CreateTopicsRequestTopic, occurrences int) (int32, int16, string) {
	if occurrences > 1 {
		return 0, errInvalidRequest, "Duplicate topic name."
	}
	if err := validateTopicName(rt.Topic); err != nil {
		return 0, errInvalidTopic, err.Error()
	}
	if b.topic(rt.Topic) != nil {
		return 0, errTopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", rt.Topic)
	}
	parts := rt.NumPartitions
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return 0, errInvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."
		}
		for i, a := range rt.ReplicaAssignment {
			if a.Partition != int32(i) {
				return 0, errInvalidReplicaAssignment, "Partitions should be numbered consecutively from 0."
			}
			if len(a.Replicas) != 1 || a.Replicas[0] != b.cfg.NodeID {
				return 0, errInvalidReplicaAssignment, fmt.Sprintf("Replica assignment %v names brokers other than the only broker %d.", a.Replicas, b.cfg.NodeID)
			}
		}
		parts = int32(len(rt.ReplicaAssignment))
	} else {
		if parts == -1 {
			parts = b.cfg.NumPartitions
		}
		if parts <= 0 {
			return 0, errInvalidPartitions, "Number of partitions was set to an invalid non-positive value."
		}
		if rf := rt.ReplicationFactor; rf != -1 && rf != 1 {
			if rf <= 0 {
				return 0, errInvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value."
			}
			return 0, errInvalidReplicationFactor, "Unable to replicate the partition " + strconv.Itoa(int(rf)) + " time(s): The target replication factor of " + strconv.Itoa(int(rf)) + " cannot be reached because only 1 broker(s) are registered."
		}
	}
	if parts > maxPartitionsPerTopic {
		return 0, errInvalidPartitions, fmt.Sprintf("Number of partitions %d is above this broker's limit of %d per topic.", parts, maxPartitionsPerTopic)
	}
	for _, cfg := range rt.Configs {
		if cfg.Value == nil {
			return 0, errInvalidConfig, fmt.Sprintf("Null value not supported for topic configs: %s", cfg.Name)
		}
		if err := validateTopicConfig(cfg.Name, *cfg.Value); err != nil {
			return 0, errInvalidConfig, err.Error()
		}
	}
	return parts, errNone, ""
}

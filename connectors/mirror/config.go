package mirror

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// CommonConfig holds the keys of Kafka's MirrorConnectorConfig, shared by
// the three connectors. The client settings of each cluster are not
// fields: they are the source.cluster.* and target.cluster.* keys (and
// the consumer., producer., admin., source.consumer., target.producer.,
// source.admin. and target.admin. prefixes), read by ClientProps.
type CommonConfig struct {
	SourceAlias       string   `key:"source.cluster.alias" importance:"high" validate:"nonempty" doc:"Alias of source cluster"`
	TargetAlias       string   `key:"target.cluster.alias" default:"target" importance:"high" doc:"Alias of target cluster. Used in metrics reporting."`
	Enabled           bool     `key:"enabled" default:"true" importance:"low" doc:"Whether to replicate source->target."`
	AdminTimeoutMs    int64    `key:"admin.timeout.ms" default:"60000" importance:"low" doc:"Timeout for administrative tasks, e.g. detecting new topics."`
	PolicyClass       string   `key:"replication.policy.class" default:"org.apache.kafka.connect.mirror.DefaultReplicationPolicy" importance:"low" doc:"Class which defines the remote topic naming convention: DefaultReplicationPolicy or IdentityReplicationPolicy."`
	Separator         string   `key:"replication.policy.separator" default:"." importance:"low" doc:"Separator used in remote topic naming convention."`
	InternalSeparator bool     `key:"replication.policy.internal.topic.separator.enabled" default:"true" importance:"low" doc:"Whether to use replication.policy.separator to control the names of topics used for checkpoints and offset syncs. By default, custom separators are used in these topic names; however, if upgrading MirrorMaker 2 from older versions that did not support custom separators, set this property to false in order to continue using the same names for these topics."`
	ForwardingAdmin   string   `key:"forwarding.admin.class" default:"org.apache.kafka.clients.admin.ForwardingAdmin" importance:"low" doc:"Class which extends ForwardingAdmin to define custom cluster resource management (e.g. topics, configs, etc). Only the default is supported."`
	OffsetSyncsLoc    string   `key:"offset-syncs.topic.location" default:"source" validate:"enum=source|target" importance:"low" doc:"The location (source/target) of the offset-syncs topic."`
	EmitOffsetSyncs   bool     `key:"emit.offset-syncs.enabled" default:"true" importance:"low" doc:"Whether to store the new offset of the replicated records in offset-syncs topic or not. MirrorCheckpointConnector will not be able to sync group offsets or emit checkpoints if emit.checkpoints.enabled and/or sync.group.offsets.enabled are enabled while this is false."`
	TopicFilterClass  string   `key:"topic.filter.class" default:"org.apache.kafka.connect.mirror.DefaultTopicFilter" importance:"low" doc:"TopicFilter to use. Selects topics to replicate. Only the default is supported."`
	Topics            []string `key:"topics" default:".*" importance:"high" doc:"Topics to replicate. Supports comma-separated topic names and regexes."`
	TopicsExclude     []string `key:"topics.exclude" default:"mm2.*\\.internal, .*\\.replica, __.*" importance:"high" doc:"List of topics and/or regexes that should not be replicated."`
	PollTimeoutMs     int64    `key:"consumer.poll.timeout.ms" default:"1000" importance:"low" doc:"Timeout when polling source cluster."`
}

// Validate implements sdk.Validator for the keys every connector shares.
func (c *CommonConfig) validate() []sdk.FieldError {
	var errs []sdk.FieldError
	if _, err := NewPolicy(c.PolicyClass, c.Separator, c.InternalSeparator, c.SourceAlias); err != nil {
		errs = append(errs, sdk.FieldError{Key: "replication.policy.class", Message: err.Error()})
	}
	if c.ForwardingAdmin != "org.apache.kafka.clients.admin.ForwardingAdmin" {
		errs = append(errs, sdk.FieldError{Key: "forwarding.admin.class", Message: "only org.apache.kafka.clients.admin.ForwardingAdmin is supported"})
	}
	if c.TopicFilterClass != "org.apache.kafka.connect.mirror.DefaultTopicFilter" {
		errs = append(errs, sdk.FieldError{Key: "topic.filter.class", Message: "only org.apache.kafka.connect.mirror.DefaultTopicFilter is supported"})
	}
	if _, err := CompilePattern(c.Topics); err != nil {
		errs = append(errs, sdk.FieldError{Key: "topics", Message: err.Error()})
	}
	if _, err := CompilePattern(c.TopicsExclude); err != nil {
		errs = append(errs, sdk.FieldError{Key: "topics.exclude", Message: err.Error()})
	}
	return errs
}

// Policy is the replication policy the configuration names.
func (c *CommonConfig) Policy() ReplicationPolicy {
	p, err := NewPolicy(c.PolicyClass, c.Separator, c.InternalSeparator, c.SourceAlias)
	if err != nil {
		return DefaultPolicy{Separator: c.Separator}
	}
	return p
}

// TopicFilter is the topics/topics.exclude filter.
func (c *CommonConfig) TopicFilter() Filter {
	f, _ := NewFilter(c.Topics, c.TopicsExclude)
	return f
}

// OffsetSyncsTopic is the offset-syncs topic's name: on the source it is
// named after the target alias, on the target after the source alias.
func (c *CommonConfig) OffsetSyncsTopic() string {
	if c.OffsetSyncsLoc == "target" {
		return c.Policy().OffsetSyncsTopic(c.SourceAlias)
	}
	return c.Policy().OffsetSyncsTopic(c.TargetAlias)
}

func (c *CommonConfig) adminTimeout() time.Duration {
	return time.Duration(max(c.AdminTimeoutMs, 1)) * time.Millisecond
}

// SourceConfig is MirrorSourceConnector's configuration.
type SourceConfig struct {
	CommonConfig
	ConfigExclude       []string `key:"config.properties.exclude" default:"follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas" importance:"high" doc:"Topic config properties that should not be replicated. Supports comma-separated property names and regexes."`
	ConfigFilterClass   string   `key:"config.property.filter.class" default:"org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter" importance:"low" doc:"ConfigPropertyFilter to use. Selects topic config properties to replicate. Only the default is supported."`
	UseDefaultsFrom     string   `key:"use.defaults.from" default:"target" validate:"enum=source|target" importance:"medium" doc:"Which cluster's defaults (source or target) to use when syncing topic configurations that have default values."`
	ReplicationFactor   int32    `key:"replication.factor" default:"2" importance:"low" doc:"Replication factor for newly created remote topics."`
	SyncsRF             int16    `key:"offset-syncs.topic.replication.factor" default:"3" importance:"low" doc:"Replication factor for offset-syncs topic."`
	RefreshTopics       bool     `key:"refresh.topics.enabled" default:"true" importance:"low" doc:"Whether to periodically check for new topics and partitions."`
	RefreshTopicsSec    int64    `key:"refresh.topics.interval.seconds" default:"600" importance:"low" doc:"Frequency of topic refresh."`
	SyncConfigs         bool     `key:"sync.topic.configs.enabled" default:"true" importance:"low" doc:"Whether to periodically configure remote topics to match their corresponding upstream topics."`
	SyncConfigsSec      int64    `key:"sync.topic.configs.interval.seconds" default:"600" importance:"low" doc:"Frequency of topic config sync."`
	SyncACLs            bool     `key:"sync.topic.acls.enabled" default:"true" importance:"low" doc:"Whether to periodically configure remote topic ACLs to match their corresponding upstream topics."`
	SyncACLsSec         int64    `key:"sync.topic.acls.interval.seconds" default:"600" importance:"low" doc:"Frequency of topic ACL sync."`
	OffsetLagMax        int64    `key:"offset.lag.max" default:"100" importance:"low" doc:"How out-of-sync a remote partition can be before it is resynced."`
	HeartbeatsReplicate bool     `key:"heartbeats.replication.enabled" default:"true" importance:"low" doc:"Whether to replicate the heartbeat topics even if the topic filter does not include them. If disabled, heartbeat topics could still be replicated if included by the topic filter. Note that if this property is set to false, neither the heartbeat topic replication will be disabled nor will the heartbeat topics be excluded."`
	AssignedPartitions  []string `key:"task.assigned.partitions" default:"" importance:"low" doc:"Partitions of the task (set by the connector)."`
}

// Validate implements sdk.Validator.
func (c *SourceConfig) Validate() []sdk.FieldError {
	errs := c.validate()
	if _, err := CompilePattern(c.ConfigExclude); err != nil {
		errs = append(errs, sdk.FieldError{Key: "config.properties.exclude", Message: err.Error()})
	}
	if c.ConfigFilterClass != "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter" {
		errs = append(errs, sdk.FieldError{Key: "config.property.filter.class", Message: "only org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter is supported"})
	}
	if c.OffsetLagMax < 0 {
		errs = append(errs, sdk.FieldError{Key: "offset.lag.max", Message: "must be at least 0"})
	}
	return errs
}

// shouldReplicateTopic is MirrorSourceConnector.shouldReplicateTopic.
func (c *SourceConfig) shouldReplicateTopic(p ReplicationPolicy, f Filter, topic string) bool {
	return (f.Accepts(topic) || (c.HeartbeatsReplicate && IsHeartbeatsTopic(p, topic))) &&
		!p.IsInternalTopic(topic) && !IsCycle(p, topic, c.TargetAlias)
}

// CheckpointConfig is MirrorCheckpointConnector's configuration.
type CheckpointConfig struct {
	CommonConfig
	Groups             []string `key:"groups" default:".*" importance:"high" doc:"Consumer groups to replicate. Supports comma-separated group IDs and regexes."`
	GroupsExclude      []string `key:"groups.exclude" default:"console-consumer-.*, connect-.*, __.*" importance:"high" doc:"Exclude groups. Supports comma-separated group IDs and regexes."`
	GroupFilterClass   string   `key:"group.filter.class" default:"org.apache.kafka.connect.mirror.DefaultGroupFilter" importance:"low" doc:"GroupFilter to use. Selects consumer groups to replicate. Only the default is supported."`
	CheckpointsRF      int16    `key:"checkpoints.topic.replication.factor" default:"3" importance:"low" doc:"Replication factor for checkpoints topic."`
	RefreshGroups      bool     `key:"refresh.groups.enabled" default:"true" importance:"low" doc:"Whether to periodically check for new consumer groups."`
	RefreshGroupsSec   int64    `key:"refresh.groups.interval.seconds" default:"600" importance:"low" doc:"Frequency of group refresh."`
	EmitCheckpoints    bool     `key:"emit.checkpoints.enabled" default:"true" importance:"low" doc:"Whether to replicate consumer offsets to target cluster."`
	EmitCheckpointsSec int64    `key:"emit.checkpoints.interval.seconds" default:"60" importance:"low" doc:"Frequency of checkpoints."`
	SyncGroupOffsets   bool     `key:"sync.group.offsets.enabled" default:"false" importance:"low" doc:"Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, as long as no active consumers in that group are connected to the target cluster"`
	SyncGroupSec       int64    `key:"sync.group.offsets.interval.seconds" default:"60" importance:"low" doc:"Frequency of consumer group offset sync."`
	AssignedGroups     []string `key:"task.assigned.groups" default:"" importance:"low" doc:"Consumer groups of the task (set by the connector)."`
}

// Validate implements sdk.Validator.
func (c *CheckpointConfig) Validate() []sdk.FieldError {
	errs := c.validate()
	for k, v := range map[string][]string{"groups": c.Groups, "groups.exclude": c.GroupsExclude} {
		if _, err := CompilePattern(v); err != nil {
			errs = append(errs, sdk.FieldError{Key: k, Message: err.Error()})
		}
	}
	if c.GroupFilterClass != "org.apache.kafka.connect.mirror.DefaultGroupFilter" {
		errs = append(errs, sdk.FieldError{Key: "group.filter.class", Message: "only org.apache.kafka.connect.mirror.DefaultGroupFilter is supported"})
	}
	if !c.EmitCheckpoints && !c.SyncGroupOffsets {
		errs = append(errs, sdk.FieldError{Key: "emit.checkpoints.enabled", Message: "MirrorCheckpointConnector can't run with both emit.checkpoints.enabled, sync.group.offsets.enabled set to false"})
	}
	if !c.EmitOffsetSyncs {
		errs = append(errs, sdk.FieldError{Key: "emit.offset-syncs.enabled", Message: "MirrorCheckpointConnector can't run without offset syncs"})
	}
	return errs
}

// GroupFilter is the groups/groups.exclude filter.
func (c *CheckpointConfig) GroupFilter() Filter {
	f, _ := NewFilter(c.Groups, c.GroupsExclude)
	return f
}

// HeartbeatConfig is MirrorHeartbeatConnector's configuration.
type HeartbeatConfig struct {
	CommonConfig
	EmitHeartbeats    bool  `key:"emit.heartbeats.enabled" default:"true" importance:"low" doc:"Whether to emit heartbeats to target cluster."`
	EmitHeartbeatsSec int64 `key:"emit.heartbeats.interval.seconds" default:"1" importance:"low" doc:"Frequency of heartbeats."`
	HeartbeatsRF      int16 `key:"heartbeats.topic.replication.factor" default:"3" importance:"low" doc:"Replication factor for heartbeats topic."`
}

// Validate implements sdk.Validator.
func (c *HeartbeatConfig) Validate() []sdk.FieldError { return c.validate() }

// clientKeys are the common client settings source.cluster.* and
// target.cluster.* give (MirrorClientConfig's CLIENT_CONFIG_DEF).
func isClientKey(k string) bool {
	return k == "bootstrap.servers" || k == "client.dns.lookup" || k == "client.id" || strings.HasPrefix(k, "security.") ||
		strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "metadata.") ||
		strings.HasPrefix(k, "request.") || strings.HasPrefix(k, "retry.") || strings.HasPrefix(k, "reconnect.") ||
		strings.HasPrefix(k, "connections.") || strings.HasPrefix(k, "socket.")
}

// Role is a client of a mirror task.
type Role struct {
	// Cluster is "source" or "target".
	Cluster string
	// Kind is "consumer", "producer" or "admin".
	Kind string
}

// ClientProps returns the Kafka client properties of one client of a
// connector: the cluster's common settings (source.cluster.* or
// target.cluster.*, also the unprefixed bootstrap.servers and security
// keys for lack of them), then consumer./producer./admin., then
// source.consumer. (and the like). Later layers win.
func ClientProps(raw map[string]string, r Role) map[string]string {
	out := map[string]string{}
	layer := func(prefix string, only func(string) bool) {
		for k, v := range raw {
			if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" && (only == nil || only(rest)) {
				out[rest] = v
			}
		}
	}
	layer(r.Cluster+".cluster.", isClientKey)
	layer(r.Kind+".", nil)
	layer(r.Cluster+"."+r.Kind+".", nil)
	// Keys of the connector itself that look like client prefixes.
	for _, k := range []string{"poll.timeout.ms"} {
		delete(out, k)
	}
	return out
}

// clientID tags a client like Kafka's MirrorConnectorConfig.addClientId:
// "<user id>|<src>-><tgt>|<connector>|<role>".
func clientID(props map[string]string, c *CommonConfig, connector, role string) string {
	base := props["client.id"]
	return fmt.Sprintf("%s|%s->%s|%s|%s", base, c.SourceAlias, c.TargetAlias, connector, role)
}

func copyMap(m map[string]string) map[string]string { return maps.Clone(m) }

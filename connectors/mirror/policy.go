package mirror

import (
	"fmt"
	"strings"
)

// ReplicationPolicy names remote topics and recognises them, like Kafka's
// org.apache.kafka.connect.mirror.ReplicationPolicy. Implementations must
// be safe for concurrent use.
type ReplicationPolicy interface {
	// FormatRemoteTopic is the name on the target of topic from the
	// cluster sourceAlias.
	FormatRemoteTopic(sourceAlias, topic string) string
	// TopicSource is the alias of the cluster topic came from, "" when it
	// is not a remote topic.
	TopicSource(topic string) string
	// UpstreamTopic is topic's name on the cluster it came from, "" when
	// it is not a remote topic.
	UpstreamTopic(topic string) string
	// OffsetSyncsTopic and CheckpointsTopic name the internal topics for
	// the cluster alias.
	OffsetSyncsTopic(alias string) string
	CheckpointsTopic(alias string) string
	// IsInternalTopic reports whether topic is never replicated.
	IsInternalTopic(topic string) bool
}

// HeartbeatsTopic is the topic MirrorHeartbeatConnector writes to.
const HeartbeatsTopic = "heartbeats"

// OriginalTopic strips every remote prefix of topic (Kafka's
// ReplicationPolicy.originalTopic).
func OriginalTopic(p ReplicationPolicy, topic string) string {
	for range 1000 {
		up := p.UpstreamTopic(topic)
		if up == "" || up == topic {
			return topic
		}
		topic = up
	}
	return topic
}

// IsHeartbeatsTopic reports whether topic is a heartbeats topic, local or
// remote.
func IsHeartbeatsTopic(p ReplicationPolicy, topic string) bool {
	return OriginalTopic(p, topic) == HeartbeatsTopic
}

// IsCycle reports whether topic already comes from the cluster target
// (MirrorSourceConnector.isCycle): replicating it there would loop.
func IsCycle(p ReplicationPolicy, topic, target string) bool {
	for range 1000 {
		src := p.TopicSource(topic)
		if src == "" {
			return false
		}
		if src == target {
			return true
		}
		up := p.UpstreamTopic(topic)
		if up == "" || up == topic {
			return false
		}
		topic = up
	}
	return false
}

// DefaultPolicy is org.apache.kafka.connect.mirror.DefaultReplicationPolicy:
// the remote topic is <source alias><separator><topic>.
type DefaultPolicy struct {
	// Separator is replication.policy.separator ("." when empty).
	Separator string
	// NoInternalSeparator is
	// replication.policy.internal.topic.separator.enabled=false: internal
	// topics use "." whatever the separator.
	NoInternalSeparator bool
}

func (p DefaultPolicy) sep() string {
	if p.Separator == "" {
		return "."
	}
	return p.Separator
}

func (p DefaultPolicy) internalSep() string {
	if p.NoInternalSeparator {
		return "."
	}
	return p.sep()
}

// FormatRemoteTopic implements ReplicationPolicy.
func (p DefaultPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	return sourceAlias + p.sep() + topic
}

// TopicSource implements ReplicationPolicy: the part before the first
// separator. Java's String.split drops trailing empty strings, so "a." has
// no source, and a leading separator gives the source "".
func (p DefaultPolicy) TopicSource(topic string) string {
	parts := strings.Split(topic, p.sep())
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 2 {
		return ""
	}
	return parts[0]
}

// UpstreamTopic implements ReplicationPolicy.
func (p DefaultPolicy) UpstreamTopic(topic string) string {
	src := p.TopicSource(topic)
	if src == "" {
		return ""
	}
	return topic[len(src)+len(p.sep()):]
}

// OffsetSyncsTopic implements ReplicationPolicy.
func (p DefaultPolicy) OffsetSyncsTopic(alias string) string {
	return "mm2-offset-syncs" + p.internalSep() + alias + p.internalSep() + "internal"
}

// CheckpointsTopic implements ReplicationPolicy.
func (p DefaultPolicy) CheckpointsTopic(alias string) string {
	return alias + p.internalSep() + "checkpoints" + p.internalSep() + "internal"
}

// IsInternalTopic implements ReplicationPolicy: Kafka's
// ReplicationPolicy.isInternalTopic of connect-mirror-client 4.3.1, true
// for MirrorMaker 2's internal topics (mm2…<sep>internal and the
// checkpoints topics) and for __… and .… topics. Other topics ending in
// .internal or -internal (Kafka Connect's of a worker on the source, for
// example) are not internal to MirrorMaker 2, as in Kafka.
func (p DefaultPolicy) IsInternalTopic(topic string) bool {
	internal := p.internalSep() + "internal"
	return strings.HasPrefix(topic, "mm2") && strings.HasSuffix(topic, internal) ||
		strings.HasSuffix(topic, p.internalSep()+"checkpoints"+internal) ||
		strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".")
}

// IdentityPolicy is org.apache.kafka.connect.mirror.IdentityReplicationPolicy:
// remote topics keep their names, except heartbeats topics, which are
// prefixed as by DefaultPolicy. It cannot prevent cycles: use it for
// one-way flows and migrations.
type IdentityPolicy struct {
	DefaultPolicy
	// SourceAlias is source.cluster.alias, every topic's TopicSource.
	SourceAlias string
}

func looksLikeHeartbeat(topic string) bool { return strings.HasSuffix(topic, HeartbeatsTopic) }

// FormatRemoteTopic implements ReplicationPolicy.
func (p IdentityPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultPolicy.FormatRemoteTopic(sourceAlias, topic)
	}
	return topic
}

// TopicSource implements ReplicationPolicy.
func (p IdentityPolicy) TopicSource(topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultPolicy.TopicSource(topic)
	}
	return p.SourceAlias
}

// UpstreamTopic implements ReplicationPolicy.
func (p IdentityPolicy) UpstreamTopic(topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultPolicy.UpstreamTopic(topic)
	}
	return topic
}

// Class names of the policies replication.policy.class accepts.
const (
	DefaultPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// NewPolicy builds the policy replication.policy.class names (the class
// or its simple name).
func NewPolicy(class, separator string, internalSeparator bool, sourceAlias string) (ReplicationPolicy, error) {
	d := DefaultPolicy{Separator: separator, NoInternalSeparator: !internalSeparator}
	switch class {
	case "", DefaultPolicyClass, "DefaultReplicationPolicy":
		return d, nil
	case IdentityPolicyClass, "IdentityReplicationPolicy":
		return IdentityPolicy{DefaultPolicy: d, SourceAlias: sourceAlias}, nil
	}
	return nil, fmt.Errorf("replication.policy.class=%s: only %s and %s are available", class, DefaultPolicyClass, IdentityPolicyClass)
}

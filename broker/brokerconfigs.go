package broker

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// typeShort is Kafka's SHORT config type (DescribeConfigs v3+).
const typeShort int8 = 4

// brokerSetting is one broker property that DescribeConfigs reports: the
// names are Apache Kafka 4.4's, limited to the settings that mean something
// for this single-node broker. value returns the effective value (nil for
// Kafka's null) and whether it was set explicitly.
type brokerSetting struct {
	name  string
	typ   int8
	value func(b *Broker) (v *string, set bool)
	doc   string
}

func str(s string) *string { return &s }

// fixed reports a value this broker does not let one change.
func fixed(v string) func(*Broker) (*string, bool) {
	return func(*Broker) (*string, bool) { return str(v), false }
}

// topicDefault reports the broker-level default of a topic config.
func topicDefault(topicKey string) func(*Broker) (*string, bool) {
	return func(b *Broker) (*string, bool) {
		v, src := b.effectiveTopicConfig(nil, topicKey)
		return str(v), src == sourceStaticBroker
	}
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// given reports a property's value as given in server.properties, or Kafka's
// null when it was not set (the coarse spellings of retention and roll).
func given(name string, def *string) func(*Broker) (*string, bool) {
	return func(b *Broker) (*string, bool) {
		if v, ok := b.cfg.Given[name]; ok {
			return str(v), true
		}
		return def, false
	}
}

var brokerSettings = []brokerSetting{
	{"advertised.listeners", typeList, func(b *Broker) (*string, bool) {
		var out []string
		for _, l := range b.lns {
			out = append(out, l.cfg.Name+"://"+net.JoinHostPort(l.advHost, strconv.Itoa(int(l.advPort))))
		}
		_, given := b.cfg.Given["advertised.listeners"]
		return str(strings.Join(out, ",")), given || b.cfg.Advertised != ""
	}, "The listeners clients are told to connect to."},
	{"authorizer.class.name", typeString, given("authorizer.class.name", str("")), "Any value turns ACL authorization on (StandardAuthorizer semantics)."},
	{"auto.create.topics.enable", typeBoolean, func(b *Broker) (*string, bool) {
		return str(strconv.FormatBool(b.cfg.AutoCreateTopics)), !b.cfg.AutoCreateTopics
	}, "Create unknown topics on Metadata requests."},
	{"broker.id", typeInt, func(b *Broker) (*string, bool) { return str(strconv.Itoa(int(b.cfg.NodeID))), b.cfg.NodeID != 1 }, "Id of this broker (same as node.id)."},
	{"compression.gzip.level", typeInt, topicDefault("compression.gzip.level"), ""},
	{"compression.lz4.level", typeInt, topicDefault("compression.lz4.level"), ""},
	{"compression.type", typeString, topicDefault("compression.type"), "Batches are stored as the producer sent them."},
	{"compression.zstd.level", typeInt, topicDefault("compression.zstd.level"), ""},
	{"default.replication.factor", typeInt, fixed("1"), "Single node: every topic has one replica."},
	{"delete.topic.enable", typeBoolean, func(b *Broker) (*string, bool) {
		return str(strconv.FormatBool(b.cfg.DeleteTopicEnable)), !b.cfg.DeleteTopicEnable
	}, "Allow DeleteTopics."},
	{"group.consumer.assignors", typeList, func(b *Broker) (*string, bool) {
		return str(strings.Join(b.cfg.ConsumerAssignors, ",")), strings.Join(b.cfg.ConsumerAssignors, ",") != "uniform,range"
	}, "Server-side assignors of consumer-protocol groups; the first is the default."},
	{"group.consumer.heartbeat.interval.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.ConsumerHeartbeatInterval)), b.cfg.ConsumerHeartbeatInterval != 5*time.Second
	}, "Heartbeat interval of consumer-protocol group members."},
	{"group.consumer.session.timeout.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.ConsumerSessionTimeout)), b.cfg.ConsumerSessionTimeout != 45*time.Second
	}, "Session timeout of consumer-protocol group members."},
	{"group.coordinator.rebalance.protocols", typeList, fixed("classic,consumer"), "Classic groups and KIP-848 consumer groups."},
	{"group.initial.rebalance.delay.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.GroupInitialRebalanceDelay)), b.cfg.GroupInitialRebalanceDelay != 3*time.Second
	}, "How long the first rebalance of an empty group waits for more members."},
	{"group.max.session.timeout.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.GroupMaxSessionTimeout)), b.cfg.GroupMaxSessionTimeout != 30*time.Minute
	}, "Largest session timeout a group member may ask for."},
	{"group.max.size", typeInt, fixed("2147483647"), ""},
	{"group.min.session.timeout.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.GroupMinSessionTimeout)), b.cfg.GroupMinSessionTimeout != 6*time.Second
	}, "Smallest session timeout a group member may ask for."},
	{"listeners", typeList, func(b *Broker) (*string, bool) {
		var out []string
		for _, l := range b.lns {
			out = append(out, l.cfg.Name+"://"+l.ln.Addr().String())
		}
		return str(strings.Join(out, ",")), true
	}, "The listeners this broker binds."},
	{"log.cleaner.backoff.ms", typeLong, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.CleanerBackoff)), b.cfg.CleanerBackoff != 15*time.Second
	}, "Pause between compaction passes."},
	{"log.cleaner.delete.retention.ms", typeLong, topicDefault("delete.retention.ms"), ""},
	{"log.cleaner.enable", typeBoolean, func(b *Broker) (*string, bool) {
		return str(strconv.FormatBool(b.cfg.CleanerEnable)), !b.cfg.CleanerEnable
	}, "Run log compaction for topics with cleanup.policy=compact."},
	{"log.cleaner.max.compaction.lag.ms", typeLong, topicDefault("max.compaction.lag.ms"), ""},
	{"log.cleaner.min.cleanable.ratio", typeDouble, topicDefault("min.cleanable.dirty.ratio"), ""},
	{"log.cleaner.min.compaction.lag.ms", typeLong, topicDefault("min.compaction.lag.ms"), ""},
	{"log.cleanup.policy", typeList, topicDefault("cleanup.policy"), ""},
	{"log.dirs", typeList, func(b *Broker) (*string, bool) { return str(b.cfg.LogDir), true }, "Directory of the partition logs and metadata."},
	{"log.flush.interval.messages", typeLong, topicDefault("flush.messages"), "acks=all writes are fsynced before they are acknowledged regardless."},
	{"log.flush.interval.ms", typeLong, func(b *Broker) (*string, bool) {
		if v, ok := b.cfg.TopicDefaults["flush.ms"]; ok {
			return str(v), true
		}
		return nil, false
	}, ""},
	{"log.index.interval.bytes", typeInt, topicDefault("index.interval.bytes"), ""},
	{"log.index.size.max.bytes", typeInt, topicDefault("segment.index.bytes"), ""},
	{"log.message.timestamp.type", typeString, topicDefault("message.timestamp.type"), ""},
	{"log.preallocate", typeBoolean, topicDefault("preallocate"), ""},
	{"log.retention.bytes", typeLong, topicDefault("retention.bytes"), ""},
	{"log.retention.check.interval.ms", typeLong, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.RetentionCheckInterval)), b.cfg.RetentionCheckInterval != 5*time.Minute
	}, "How often retention is applied."},
	{"log.retention.hours", typeInt, given("log.retention.hours", str("168")), ""},
	{"log.retention.minutes", typeInt, given("log.retention.minutes", nil), ""},
	{"log.retention.ms", typeLong, func(b *Broker) (*string, bool) {
		if v, ok := b.cfg.TopicDefaults["retention.ms"]; ok {
			return str(v), true
		}
		return nil, false
	}, ""},
	{"log.roll.hours", typeInt, given("log.roll.hours", str("168")), ""},
	{"log.roll.ms", typeLong, func(b *Broker) (*string, bool) {
		if v, ok := b.cfg.TopicDefaults["segment.ms"]; ok {
			return str(v), true
		}
		return nil, false
	}, ""},
	{"log.segment.bytes", typeInt, topicDefault("segment.bytes"), ""},
	{"message.max.bytes", typeInt, topicDefault("max.message.bytes"), ""},
	{"min.insync.replicas", typeInt, topicDefault("min.insync.replicas"), ""},
	{"node.id", typeInt, func(b *Broker) (*string, bool) { return str(strconv.Itoa(int(b.cfg.NodeID))), b.cfg.NodeID != 1 }, "Id of this broker."},
	{"num.partitions", typeInt, func(b *Broker) (*string, bool) {
		return str(strconv.Itoa(int(b.cfg.NumPartitions))), b.cfg.NumPartitions != 1
	}, "Default number of partitions of new topics."},
	{"offset.metadata.max.bytes", typeInt, fixed("4096"), ""},
	{"offsets.topic.num.partitions", typeInt, fixed("1"), "__consumer_offsets has one partition: this broker is the only coordinator."},
	{"offsets.topic.replication.factor", typeShort, fixed("1"), ""},
	{"socket.request.max.bytes", typeInt, func(b *Broker) (*string, bool) {
		return str(strconv.Itoa(int(b.cfg.MaxRequestBytes))), b.cfg.MaxRequestBytes != 100<<20
	}, "Largest request frame accepted."},
	{"transaction.abort.timed.out.transaction.cleanup.interval.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.TransactionAbortInterval)), b.cfg.TransactionAbortInterval != 10*time.Second
	}, "How often transactions past their timeout are aborted."},
	{"transaction.max.timeout.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.TransactionMaxTimeout)), b.cfg.TransactionMaxTimeout != 15*time.Minute
	}, "Longest transaction.timeout.ms a producer may ask for."},
	{"transaction.partition.verification.enable", typeBoolean, fixed("true"), "Transactional batches are accepted only for partitions added to the transaction."},
	{"transaction.state.log.min.isr", typeInt, fixed("1"), ""},
	{"transaction.state.log.num.partitions", typeInt, fixed("1"), "__transaction_state has one partition."},
	{"transaction.state.log.replication.factor", typeShort, fixed("1"), ""},
	{"transactional.id.expiration.ms", typeInt, func(b *Broker) (*string, bool) {
		return str(ms(b.cfg.TransactionalIDExpiration)), b.cfg.TransactionalIDExpiration != 7*24*time.Hour
	}, "How long a transactional id without transactions is kept."},
	{"tributary.acks1.fsync", typeBoolean, func(b *Broker) (*string, bool) {
		return str(strconv.FormatBool(b.cfg.Acks1WaitsForFsync)), b.cfg.Acks1WaitsForFsync
	}, "If true, acks=1 produce requests also wait for fsync."},
}

func init() {
	sort.Slice(brokerSettings, func(i, j int) bool { return brokerSettings[i].name < brokerSettings[j].name })
}

// brokerConfigs lists this broker's settings for DescribeConfigs: the value
// in force, STATIC_BROKER_CONFIG when it was set in the broker's properties
// (or differs from the default), DEFAULT_CONFIG otherwise.
func (b *Broker) brokerConfigs() []kmsg.DescribeConfigsResponseResourceConfig {
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, s := range brokerSettings {
		v, set := s.value(b)
		src := sourceDefault
		if _, ok := b.cfg.Given[s.name]; set || ok {
			src = sourceStaticBroker
		}
		rc := kmsg.NewDescribeConfigsResponseResourceConfig()
		rc.Name, rc.Value, rc.ReadOnly = s.name, v, true
		rc.Source, rc.IsDefault = kmsg.ConfigSource(src), src == sourceDefault
		rc.ConfigType = kmsg.ConfigType(s.typ)
		if s.doc != "" {
			rc.Documentation = str(s.doc)
		}
		syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		syn.Name, syn.Value, syn.Source = s.name, v, kmsg.ConfigSource(src)
		rc.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{syn}
		out = append(out, rc)
	}
	return out
}

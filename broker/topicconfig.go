package broker

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/broker/log"
)

// Kafka's config types as DescribeConfigs v3+ reports them.
const (
	typeBoolean int8 = 1
	typeString  int8 = 2
	typeInt     int8 = 3
	typeLong    int8 = 5
	typeDouble  int8 = 6
	typeList    int8 = 7
)

type topicConfigDef struct {
	name    string
	typ     int8
	def     string
	min     float64 // numeric lower bound, inclusive
	valid   []string
	doc     string
	applied bool // false: accepted and reported, without effect on this single-node broker
}

const maxLong = "9223372036854775807"

// topicConfigDefs are Kafka 4.x's topic configs with their defaults.
var topicConfigDefs = []topicConfigDef{
	{name: "cleanup.policy", typ: typeList, def: "delete", valid: []string{"compact", "delete"}, doc: "delete, compact or both", applied: true},
	{name: "compression.type", typ: typeString, def: "producer", valid: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, doc: "Only producer (batches kept as sent) is applied"},
	{name: "compression.gzip.level", typ: typeInt, def: "-1", min: -1}, // -1: zlib default; Kafka accepts -1 or 1..9
	{name: "compression.lz4.level", typ: typeInt, def: "9", min: 1},
	{name: "compression.zstd.level", typ: typeInt, def: "3", min: -131072},
	{name: "errors.deadletterqueue.group.enable", typ: typeBoolean, def: "false"},
	{name: "delete.retention.ms", typ: typeLong, def: "86400000", min: 0, applied: true},
	{name: "file.delete.delay.ms", typ: typeLong, def: "60000", min: 0},
	{name: "flush.messages", typ: typeLong, def: maxLong, min: 1, doc: "Every acks=all write is fsynced before it is acknowledged regardless"},
	{name: "flush.ms", typ: typeLong, def: maxLong, min: 0},
	{name: "follower.replication.throttled.replicas", typ: typeList, def: ""},
	{name: "index.interval.bytes", typ: typeInt, def: "4096", min: 0, applied: true},
	{name: "leader.replication.throttled.replicas", typ: typeList, def: ""},
	{name: "local.retention.bytes", typ: typeLong, def: "-2", min: -2},
	{name: "local.retention.ms", typ: typeLong, def: "-2", min: -2},
	{name: "max.compaction.lag.ms", typ: typeLong, def: maxLong, min: 1, applied: true},
	{name: "max.decompressed.message.bytes", typ: typeInt, def: "2147483639", min: 1},
	{name: "max.message.bytes", typ: typeInt, def: "1048588", min: 0, applied: true},
	{name: "message.timestamp.after.max.ms", typ: typeLong, def: "3600000", min: 0},
	{name: "message.timestamp.before.max.ms", typ: typeLong, def: maxLong, min: 0},
	{name: "message.timestamp.type", typ: typeString, def: "CreateTime", valid: []string{"CreateTime", "LogAppendTime"}, applied: true},
	{name: "min.cleanable.dirty.ratio", typ: typeDouble, def: "0.5", min: 0, applied: true},
	{name: "min.compaction.lag.ms", typ: typeLong, def: "0", min: 0, applied: true},
	{name: "min.insync.replicas", typ: typeInt, def: "1", min: 1},
	{name: "preallocate", typ: typeBoolean, def: "false"},
	{name: "remote.copy.lag.bytes", typ: typeLong, def: "-1", min: -1},
	{name: "remote.copy.lag.ms", typ: typeLong, def: "0", min: -1},
	{name: "remote.log.copy.disable", typ: typeBoolean, def: "false"},
	{name: "remote.log.delete.on.disable", typ: typeBoolean, def: "false"},
	{name: "remote.storage.enable", typ: typeBoolean, def: "false"},
	{name: "retention.bytes", typ: typeLong, def: "-1", min: math.Inf(-1), applied: true},
	{name: "retention.ms", typ: typeLong, def: "604800000", min: -1, applied: true},
	{name: "segment.bytes", typ: typeInt, def: "1073741824", min: 1048576, applied: true},
	{name: "segment.index.bytes", typ: typeInt, def: "10485760", min: 4},
	{name: "segment.jitter.ms", typ: typeLong, def: "0", min: 0},
	{name: "segment.ms", typ: typeLong, def: "604800000", min: 1, applied: true},
	{name: "unclean.leader.election.enable", typ: typeBoolean, def: "false"},
}

var topicConfigByName = func() map[string]*topicConfigDef {
	m := make(map[string]*topicConfigDef, len(topicConfigDefs))
	for i := range topicConfigDefs {
		m[topicConfigDefs[i].name] = &topicConfigDefs[i]
	}
	return m
}()

// brokerKeyForTopic is the inverse of topicKeyForBroker: the broker-level
// synonym of each topic config.
var brokerKeyForTopic = func() map[string]string {
	m := map[string]string{}
	for b, t := range topicKeyForBroker {
		m[t] = b
	}
	return m
}()

func typeName(t int8) string {
	switch t {
	case typeBoolean:
		return "BOOLEAN"
	case typeString:
		return "STRING"
	case typeInt:
		return "INT"
	case typeLong:
		return "LONG"
	case typeDouble:
		return "DOUBLE"
	case typeList:
		return "LIST"
	}
	return "UNKNOWN"
}

// topicConfigMax are the upper bounds of bounded integer topic configs.
var topicConfigMax = map[string]int64{
	"compression.lz4.level":  17,
	"compression.zstd.level": 22,
}

// validateTopicConfig checks a topic config value with Kafka's rules and
// messages.
func validateTopicConfig(name, value string) error {
	d, ok := topicConfigByName[name]
	if !ok {
		return kafkaMessage("Unknown topic config name: " + name)
	}
	bad := func(why string) error {
		return kafkaMessage(fmt.Sprintf("Invalid value %s for configuration %s: %s", value, name, why))
	}
	v := strings.TrimSpace(value)
	switch d.typ {
	case typeBoolean:
		if _, err := parseBool(strings.ToLower(v)); err != nil {
			return bad("Expected value to be either true or false")
		}
	case typeInt, typeLong:
		bits := 64
		if d.typ == typeInt {
			bits = 32
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return bad("Not a number of type " + typeName(d.typ))
		}
		if float64(n) < d.min {
			return bad(fmt.Sprintf("Value must be at least %v", int64(d.min)))
		}
		if name == "compression.gzip.level" && n != -1 && (n < 1 || n > 9) {
			return bad("Value must be between 1 and 9 or equal to -1")
		}
		if hi, ok := topicConfigMax[name]; ok && n > hi {
			return bad(fmt.Sprintf("Value must be no more than %d", hi))
		}
	case typeDouble:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad("Not a number of type DOUBLE")
		}
		if f < d.min {
			return bad(fmt.Sprintf("Value must be at least %v", d.min))
		}
		if name == "min.cleanable.dirty.ratio" && f > 1 {
			return bad("Value must be no more than 1")
		}
	case typeString:
		if len(d.valid) > 0 && !containsFold(d.valid, v) {
			return bad("String must be one of: " + strings.Join(d.valid, ", "))
		}
	case typeList:
		if len(d.valid) > 0 {
			for _, item := range strings.Split(v, ",") {
				if !containsFold(d.valid, strings.TrimSpace(item)) {
					return bad("String must be one of: " + strings.Join(d.valid, ", "))
				}
			}
		}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// kafkaMessage is an error whose text is exactly the message Apache Kafka
// gives clients (capitalised, unlike Go error strings).
type kafkaMessage string

func (m kafkaMessage) Error() string { return string(m) }

// configSource says where an effective topic config value came from.
type configSource int8

// Kafka's DescribeConfigs source codes.
const (
	sourceDynamicTopic configSource = 1
	sourceStaticBroker configSource = 4
	sourceDefault      configSource = 5
)

// effectiveTopicConfig resolves a topic config: the topic's own value, the
// broker's default, or Kafka's default.
func (b *Broker) effectiveTopicConfig(overrides map[string]string, name string) (string, configSource) {
	if v, ok := overrides[name]; ok {
		return v, sourceDynamicTopic
	}
	if v, ok := b.cfg.TopicDefaults[name]; ok {
		return v, sourceStaticBroker
	}
	if d, ok := topicConfigByName[name]; ok {
		return d.def, sourceDefault
	}
	return "", sourceDefault
}

// logConfig derives a partition log's settings from topic configs.
func (b *Broker) logConfig(overrides map[string]string) log.Config {
	get := func(name string) int64 {
		v, _ := b.effectiveTopicConfig(overrides, name)
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n
	}
	ms := func(name string) time.Duration {
		n := get(name)
		if n < 0 {
			return -1
		}
		if n > math.MaxInt64/int64(time.Millisecond) {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(n) * time.Millisecond
	}
	return log.Config{
		SegmentBytes:       get("segment.bytes"),
		SegmentAge:         ms("segment.ms"),
		RetentionAge:       ms("retention.ms"),
		RetentionBytes:     get("retention.bytes"),
		IndexIntervalBytes: max(get("index.interval.bytes"), 1),
	}
}

// topicHasPolicy reports whether cleanup.policy includes p.
func (b *Broker) topicHasPolicy(overrides map[string]string, p string) bool {
	v, _ := b.effectiveTopicConfig(overrides, "cleanup.policy")
	for _, x := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(x), p) {
			return true
		}
	}
	return false
}

func sortedConfigNames() []string {
	names := make([]string, 0, len(topicConfigDefs))
	for _, d := range topicConfigDefs {
		names = append(names, d.name)
	}
	sort.Strings(names)
	return names
}

func (b *Broker) intTopicConfig(overrides map[string]string, name string) int64 {
	v, _ := b.effectiveTopicConfig(overrides, name)
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}

func (b *Broker) strTopicConfig(overrides map[string]string, name string) string {
	v, _ := b.effectiveTopicConfig(overrides, name)
	return strings.TrimSpace(v)
}

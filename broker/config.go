package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tributary-dev/tributary/internal/properties"
)

// Config is the broker's configuration. Field comments name the Kafka
// property each one is read from; FromProperties does the mapping.
type Config struct {
	// Listener is the host:port to bind (listeners, default PLAINTEXT://127.0.0.1:9092).
	Listener string
	// Advertised is the host:port clients are told to dial (advertised.listeners;
	// defaults to Listener, with a wildcard host replaced by WildcardHost).
	Advertised string
	// WildcardHost replaces a wildcard host (0.0.0.0, ::, none) of the
	// listener when advertised.listeners is unset; "" means 127.0.0.1. In
	// the container image it is the container's host name, which the other
	// containers of a user-defined network resolve.
	WildcardHost string
	// LogDir holds all partitions and metadata (log.dirs, default ./data/broker).
	LogDir string
	// NodeID is this broker's id (node.id or broker.id, default 1).
	NodeID int32
	// NumPartitions for auto-created topics and CreateTopics with -1 (num.partitions, default 1).
	NumPartitions int32
	// AutoCreateTopics on Metadata requests (auto.create.topics.enable, default true).
	AutoCreateTopics bool
	// DeleteTopicEnable allows DeleteTopics (delete.topic.enable, default true).
	DeleteTopicEnable bool
	// MaxRequestBytes is the largest accepted request frame (socket.request.max.bytes, default 100 MiB).
	MaxRequestBytes int32
	// RetentionCheckInterval is how often retention runs (log.retention.check.interval.ms, default 5 min).
	RetentionCheckInterval time.Duration
	// Acks1WaitsForFsync makes acks=1 produce requests wait for the fsync like
	// acks=all (tributary.acks1.fsync, default false: acks=1 is answered after
	// the write to the page cache; the data is fsynced by the next group commit).
	Acks1WaitsForFsync bool
	// CleanerEnable runs log compaction (log.cleaner.enable, default true).
	CleanerEnable bool
	// CleanerBackoff is the pause between compaction passes (log.cleaner.backoff.ms, default 15 s).
	CleanerBackoff time.Duration
	// GroupInitialRebalanceDelay delays the first rebalance of an empty group
	// (group.initial.rebalance.delay.ms, default 3s).
	GroupInitialRebalanceDelay time.Duration
	// GroupMinSessionTimeout and GroupMaxSessionTimeout bound members' session
	// timeouts (group.min.session.timeout.ms, default 6s;
	// group.max.session.timeout.ms, default 30 min).
	GroupMinSessionTimeout, GroupMaxSessionTimeout time.Duration
	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are the session
	// timeout and heartbeat interval of consumer-protocol (KIP-848) group
	// members (group.consumer.session.timeout.ms, default 45s;
	// group.consumer.heartbeat.interval.ms, default 5s).
	ConsumerSessionTimeout, ConsumerHeartbeatInterval time.Duration
	// ConsumerAssignors are the server-side assignors of consumer-protocol
	// groups, the first the default (group.consumer.assignors, default
	// uniform,range).
	ConsumerAssignors []string
	// TransactionMaxTimeout is the longest transaction.timeout.ms a
	// transactional producer may ask for (transaction.max.timeout.ms,
	// default 15 min).
	TransactionMaxTimeout time.Duration
	// TransactionAbortInterval is how often transactions past their timeout
	// are looked for and aborted
	// (transaction.abort.timed.out.transaction.cleanup.interval.ms, default 10 s).
	TransactionAbortInterval time.Duration
	// TransactionalIDExpiration removes a transactional id that has had no
	// transaction for this long (transactional.id.expiration.ms, default 7 days).
	TransactionalIDExpiration time.Duration
	// Given holds the broker properties that were set explicitly, as given
	// (filled by FromProperties); DescribeConfigs reports them as
	// STATIC_BROKER_CONFIG.
	Given map[string]string
	// TopicDefaults are the broker-level defaults of topic configs
	// (log.retention.ms, log.segment.bytes, message.max.bytes, …), by topic config name.
	TopicDefaults map[string]string
	// Logger receives the broker's logs; nil discards them.
	Logger *slog.Logger
	// Metrics is where the broker registers its Prometheus series; nil:
	// nowhere. The command creates it.
	Metrics prometheus.Registerer
	// Listeners are the named listeners (listeners,
	// listener.security.protocol.map, advertised.listeners and the
	// listener.name.<l>.* settings); empty: one PLAINTEXT listener on
	// Listener, advertised as Advertised.
	Listeners []ListenerConfig
	// FailedAuthDelay delays the answer to a failed SASL authentication and
	// the close that follows (connection.failed.authentication.delay.ms,
	// default 100 ms).
	FailedAuthDelay time.Duration
	// Authorizer turns ACL authorization on (authorizer.class.name set).
	Authorizer bool
	// SuperUsers are principals allowed everything (super.users).
	SuperUsers []string
	// AllowEveryoneIfNoACL allows operations on resources no ACL matches
	// (allow.everyone.if.no.acl.found).
	AllowEveryoneIfNoACL bool
	// SCRAMUsers are SCRAM credentials created at start when the user has
	// none for the mechanism (tributary.scram.credentials): the way to
	// create the first (admin) user, as kafka-storage.sh format --add-scram.
	SCRAMUsers []SCRAMUser
	// MetricsListener is the host:port where `tributary broker` serves GET
	// /metrics (tributary.metrics.listener, Tributary's own: http://host:port,
	// default http://127.0.0.1:9404; empty: not served).
	MetricsListener string
}

// DefaultConfig returns the defaults of DESIGN.md's command-line table.
func DefaultConfig() Config {
	return Config{
		Listener:               "127.0.0.1:9092",
		LogDir:                 "./data/broker",
		NodeID:                 1,
		NumPartitions:          1,
		AutoCreateTopics:       true,
		DeleteTopicEnable:      true,
		MaxRequestBytes:        100 << 20,
		RetentionCheckInterval: 5 * time.Minute,
		CleanerEnable:          true,
		CleanerBackoff:         15 * time.Second,
		TopicDefaults:          map[string]string{},

		GroupInitialRebalanceDelay: 3 * time.Second,
		GroupMinSessionTimeout:     6 * time.Second,
		GroupMaxSessionTimeout:     30 * time.Minute,
		ConsumerSessionTimeout:     45 * time.Second,
		ConsumerHeartbeatInterval:  5 * time.Second,
		ConsumerAssignors:          []string{"uniform", "range"},

		TransactionMaxTimeout:     15 * time.Minute,
		TransactionAbortInterval:  10 * time.Second,
		TransactionalIDExpiration: 7 * 24 * time.Hour,

		MetricsListener: "127.0.0.1:9404",
		FailedAuthDelay: 100 * time.Millisecond,
	}
}

// brokerKeys are the broker properties this broker reads, with their
// defaults as DescribeConfigs reports them.
var brokerKeys = []struct{ name, def, doc string }{
	{"listeners", "PLAINTEXT://127.0.0.1:9092", "Listeners to bind: NAME://host:port,..."},
	{"advertised.listeners", "", "Addresses clients of each listener are told to connect to; defaults to listeners."},
	{"log.dirs", "./data/broker", "Directory for partition logs and metadata (the first entry is used)."},
	{"log.dir", "./data/broker", "Used when log.dirs is not set."},
	{"node.id", "1", "Id of this broker."},
	{"broker.id", "1", "Alias of node.id."},
	{"num.partitions", "1", "Default number of partitions for new topics."},
	{"default.replication.factor", "1", "Accepted for compatibility; this broker has one replica."},
	{"auto.create.topics.enable", "true", "Create unknown topics on Metadata requests."},
	{"delete.topic.enable", "true", "Allow DeleteTopics."},
	{"socket.request.max.bytes", "104857600", "Largest request frame accepted."},
	{"log.retention.check.interval.ms", "300000", "How often retention is applied."},
	{"tributary.acks1.fsync", "false", "If true, acks=1 produce requests also wait for fsync."},
	{"tributary.metrics.listener", "http://127.0.0.1:9404", "Where tributary broker serves GET /metrics (Prometheus text); empty: not served."},
	{"group.initial.rebalance.delay.ms", "3000", "How long the first rebalance of an empty group waits for more members."},
	{"group.min.session.timeout.ms", "6000", "Smallest session timeout a group member may ask for."},
	{"group.max.session.timeout.ms", "1800000", "Largest session timeout a group member may ask for."},
	{"group.consumer.session.timeout.ms", "45000", "Session timeout of consumer-protocol (KIP-848) group members."},
	{"group.consumer.heartbeat.interval.ms", "5000", "Heartbeat interval of consumer-protocol (KIP-848) group members."},
	{"group.consumer.assignors", "uniform,range", "Server-side assignors of consumer-protocol groups; the first is the default."},
	{"log.cleaner.enable", "true", "Run log compaction for topics with cleanup.policy=compact."},
	{"log.cleaner.backoff.ms", "15000", "Pause between compaction passes."},
	{"transaction.max.timeout.ms", "900000", "Longest transaction timeout a producer may ask for."},
	{"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10000", "How often timed-out transactions are aborted."},
	{"transactional.id.expiration.ms", "604800000", "How long an idle transactional id is kept."},
}

// topicKeyForBroker maps broker properties to the topic config they default.
var topicKeyForBroker = map[string]string{
	"log.cleanup.policy":                "cleanup.policy",
	"log.retention.ms":                  "retention.ms",
	"log.retention.bytes":               "retention.bytes",
	"log.segment.bytes":                 "segment.bytes",
	"log.roll.ms":                       "segment.ms",
	"log.index.interval.bytes":          "index.interval.bytes",
	"log.index.size.max.bytes":          "segment.index.bytes",
	"message.max.bytes":                 "max.message.bytes",
	"log.message.timestamp.type":        "message.timestamp.type",
	"compression.type":                  "compression.type",
	"log.cleaner.delete.retention.ms":   "delete.retention.ms",
	"log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
	"log.cleaner.max.compaction.lag.ms": "max.compaction.lag.ms",
	"log.cleaner.min.cleanable.ratio":   "min.cleanable.dirty.ratio",
	"min.insync.replicas":               "min.insync.replicas",
	"log.flush.interval.messages":       "flush.messages",
	"log.flush.interval.ms":             "flush.ms",
	"log.preallocate":                   "preallocate",
}

// hourAndMinuteKeys are Kafka's coarser spellings of two millisecond settings.
var hourAndMinuteKeys = map[string]struct {
	ms   string
	unit time.Duration
}{
	"log.retention.hours":   {"log.retention.ms", time.Hour},
	"log.retention.minutes": {"log.retention.ms", time.Minute},
	"log.roll.hours":        {"log.roll.ms", time.Hour},
}

// FromProperties builds a Config from Kafka server properties. Unknown keys
// are returned as warnings; invalid values are errors.
func FromProperties(p properties.Properties) (Config, []string, error) {
	c := DefaultConfig()
	var warnings []string
	var errs []error
	known := map[string]bool{}
	for _, k := range brokerKeys {
		known[k.name] = true
	}
	// Coarse units first, so an explicit .ms wins as in Kafka.
	for _, k := range p.Keys() {
		if hm, ok := hourAndMinuteKeys[k]; ok {
			n, err := strconv.ParseInt(p[k], 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not an integer", k, p[k]))
				continue
			}
			if _, explicit := p[hm.ms]; !explicit {
				c.TopicDefaults[topicKeyForBroker[hm.ms]] = strconv.FormatInt((time.Duration(n) * hm.unit).Milliseconds(), 10)
			}
		}
	}
	c.Given = map[string]string{}
	for _, k := range p.Keys() {
		c.Given[k] = strings.TrimSpace(p[k])
	}
	for _, k := range p.Keys() {
		v := strings.TrimSpace(p[k])
		var err error
		switch k {
		case "listeners", "advertised.listeners":
			// parseSecurity
		case "log.dirs", "log.dir":
			if k == "log.dir" && p["log.dirs"] != "" {
				break
			}
			dirs := strings.Split(v, ",")
			c.LogDir = strings.TrimSpace(dirs[0])
			if len(dirs) > 1 {
				warnings = append(warnings, fmt.Sprintf("log.dirs: only the first directory (%s) is used", c.LogDir))
			}
			if c.LogDir == "" {
				err = errors.New("must not be empty")
			}
		case "node.id", "broker.id":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			if err == nil && n < 0 {
				err = errors.New("must be >= 0")
			}
			c.NodeID = int32(n)
		case "num.partitions":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			if err == nil && n < 1 {
				err = errors.New("must be >= 1")
			}
			c.NumPartitions = int32(n)
		case "default.replication.factor":
			if v != "1" {
				warnings = append(warnings, "default.replication.factor: this broker is single-node; topics get 1 replica")
			}
		case "auto.create.topics.enable":
			c.AutoCreateTopics, err = parseBool(v)
		case "delete.topic.enable":
			c.DeleteTopicEnable, err = parseBool(v)
		case "socket.request.max.bytes":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			if err == nil && n < 1024 {
				err = errors.New("must be >= 1024")
			}
			c.MaxRequestBytes = int32(n)
		case "log.retention.check.interval.ms":
			var n int64
			n, err = strconv.ParseInt(v, 10, 64)
			if err == nil && n < 1 {
				err = errors.New("must be >= 1")
			}
			c.RetentionCheckInterval = time.Duration(n) * time.Millisecond
		case "tributary.acks1.fsync":
			c.Acks1WaitsForFsync, err = parseBool(v)
		case "tributary.metrics.listener":
			c.MetricsListener, err = parseMetricsListener(v)
		case "group.initial.rebalance.delay.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms",
			"group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms":
			err = setGroupDuration(&c, k, v)
		case "group.consumer.assignors":
			c.ConsumerAssignors, err = parseAssignors(v)
		case "log.cleaner.enable":
			c.CleanerEnable, err = parseBool(v)
		case "transaction.max.timeout.ms", "transaction.abort.timed.out.transaction.cleanup.interval.ms", "transactional.id.expiration.ms":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			if err == nil && n < 1 {
				err = errors.New("must be >= 1")
			}
			d := time.Duration(n) * time.Millisecond
			switch k {
			case "transaction.max.timeout.ms":
				c.TransactionMaxTimeout = d
			case "transactional.id.expiration.ms":
				c.TransactionalIDExpiration = d
			default:
				c.TransactionAbortInterval = d
			}
		case "log.cleaner.backoff.ms":
			var n int64
			n, err = strconv.ParseInt(v, 10, 64)
			if err == nil && n < 1 {
				err = errors.New("must be >= 1")
			}
			c.CleanerBackoff = time.Duration(n) * time.Millisecond
		default:
			if tk, ok := topicKeyForBroker[k]; ok {
				if verr := validateTopicConfig(tk, v); verr != nil {
					err = verr
				} else {
					c.TopicDefaults[tk] = v
				}
				break
			}
			if _, ok := hourAndMinuteKeys[k]; ok {
				break
			}
			if !known[k] && !securityKey(k) {
				warnings = append(warnings, fmt.Sprintf("unknown broker property %q is ignored", k))
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", k, v, err))
		}
	}
	w, serrs := parseSecurity(p, &c)
	warnings = append(warnings, w...)
	errs = append(errs, serrs...)
	return c, warnings, errors.Join(errs...)
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", v)
}

func (c *Config) validate() error {
	if len(c.Listeners) == 0 {
		if c.Listener == "" {
			return errors.New("broker: no listener configured")
		}
		c.Listeners = []ListenerConfig{{Name: ProtocolPlaintext, Protocol: ProtocolPlaintext, Addr: c.Listener, Advertised: c.Advertised}}
	}
	names := map[string]bool{}
	for i := range c.Listeners {
		l := &c.Listeners[i]
		if l.Name == "" {
			l.Name = l.Protocol
		}
		if names[l.Name] {
			return fmt.Errorf("broker: listener name %s is used twice", l.Name)
		}
		names[l.Name] = true
		switch l.Protocol {
		case ProtocolPlaintext, ProtocolSASLPlaintext:
		case ProtocolSSL, ProtocolSASLSSL:
			if l.TLS == nil {
				return fmt.Errorf("broker: listener %s (%s) has no TLS configuration (ssl.keystore.*)", l.Name, l.Protocol)
			}
		default:
			return fmt.Errorf("broker: listener %s: unknown security protocol %q", l.Name, l.Protocol)
		}
		if l.sasl() && len(l.Mechanisms) == 0 {
			return fmt.Errorf("broker: listener %s (%s) has no SASL mechanism (sasl.enabled.mechanisms)", l.Name, l.Protocol)
		}
		if _, err := parsePrincipalRules(l.PrincipalRules); err != nil {
			return fmt.Errorf("broker: listener %s: ssl.principal.mapping.rules: %w", l.Name, err)
		}
	}
	if c.FailedAuthDelay < 0 {
		c.FailedAuthDelay = 0
	}
	if c.LogDir == "" {
		return errors.New("broker: log.dirs is empty")
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = 100 << 20
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
	if c.TransactionMaxTimeout <= 0 {
		c.TransactionMaxTimeout = 15 * time.Minute
	}
	if c.TransactionAbortInterval <= 0 {
		c.TransactionAbortInterval = 10 * time.Second
	}
	if c.TransactionalIDExpiration <= 0 {
		c.TransactionalIDExpiration = 7 * 24 * time.Hour
	}
	if c.TopicDefaults == nil {
		c.TopicDefaults = map[string]string{}
	}
	for k, v := range c.TopicDefaults {
		if err := validateTopicConfig(k, v); err != nil {
			return fmt.Errorf("broker: default for topic config %s: %w", k, err)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// advertisedHostPort returns the address put in Metadata, given the address
// the listener actually bound (which resolves port 0).
func (c *Config) advertisedHostPort(bound net.Addr) (string, int32) {
	return c.advertise(c.Advertised, bound)
}

// advertise returns the address put in Metadata for a listener advertised
// as adv ("": the bound address).
func (c *Config) advertise(adv string, bound net.Addr) (string, int32) {
	if adv == "" {
		adv = bound.String()
	}
	host, port, _ := net.SplitHostPort(adv)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = c.WildcardHost
		if host == "" {
			host = "127.0.0.1"
		}
	}
	n, _ := strconv.Atoi(port)
	if n == 0 {
		_, bp, _ := net.SplitHostPort(bound.String())
		n, _ = strconv.Atoi(bp)
	}
	return host, int32(n)
}

// parseMetricsListener reads tributary.metrics.listener: http://host:port,
// or empty (not served); it returns host:port.
func parseMetricsListener(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", errors.New("must be http://host:port, or empty")
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", errors.New("must be http://host:port, or empty")
	}
	return u.Host, nil
}

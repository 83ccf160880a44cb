package worker

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/stats"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// Config is a worker's configuration, read from Kafka Connect's
// connect-distributed.properties keys (see FromProperties).
type Config struct {
	BootstrapServers []string // bootstrap.servers [localhost:9092]
	GroupID          string   // group.id (required)

	ConfigTopic             string // config.storage.topic (required)
	OffsetTopic             string // offset.storage.topic (required)
	StatusTopic             string // status.storage.topic (required)
	ConfigReplication       int16  // config.storage.replication.factor [3; -1 broker default]
	OffsetReplication       int16  // offset.storage.replication.factor [3]
	StatusReplication       int16  // status.storage.replication.factor [3]
	OffsetPartitions        int32  // offset.storage.partitions [25]
	StatusPartitions        int32  // status.storage.partitions [5]
	ConfigTopicSettings     map[string]string
	OffsetTopicSettings     map[string]string
	StatusTopicSettings     map[string]string
	KeyConverter            string            // key.converter (required)
	ValueConverter          string            // value.converter (required)
	HeaderConverter         string            // header.converter [SimpleHeaderConverter]
	KeyConverterConfig      map[string]string // key.converter.* without the prefix
	ValueConverterConfig    map[string]string // value.converter.* without the prefix
	HeaderConverterConfig   map[string]string // header.converter.* without the prefix
	PluginPath              []string          // plugin.path
	Listener                string            // listeners: host:port [:8083]
	AdvertisedHost          string            // rest.advertised.host.name
	AdvertisedPort          int               // rest.advertised.port
	OffsetFlushInterval     time.Duration     // offset.flush.interval.ms [60000]
	OffsetFlushTimeout      time.Duration     // offset.flush.timeout.ms [5000]
	TaskShutdownTimeout     time.Duration     // task.shutdown.graceful.timeout.ms [5000]
	SessionTimeout          time.Duration     // session.timeout.ms [10000]
	HeartbeatInterval       time.Duration     // heartbeat.interval.ms [1000; Kafka Connect's is 3000]
	RebalanceTimeout        time.Duration     // rebalance.timeout.ms [60000]
	ScheduledRebalanceDelay time.Duration     // scheduled.rebalance.max.delay.ms [300000]
	ConnectProtocol         string            // connect.protocol [sessioned]
	KeyTTL                  time.Duration     // inter.worker.key.ttl.ms [3600000]
	// RequestHold is how long a REST write waits for a rebalance in
	// progress, or for a leader to be known, before it is answered 409
	// (rest.rebalance.hold.ms, Tributary's own; 0 answers at once, as Kafka
	// Connect does) [30000].
	RequestHold        time.Duration
	TopicTracking      bool              // topic.tracking.enable [true]
	TopicTrackingReset bool              // topic.tracking.allow.reset [true]
	ProducerConfig     map[string]string // producer.* without the prefix
	ConsumerConfig     map[string]string // consumer.* without the prefix
	AdminConfig        map[string]string // admin.* without the prefix
	ClientConfig       map[string]string // unprefixed client settings (security, client.id, …)

	// MetricsWindow is metrics.sample.window.ms [30000] and
	// metrics.num.samples [2]: the window of the *-rate, *-avg and *-max
	// series.
	MetricsWindow stats.Window
	// MetricsNaming names the Prometheus series (tributary.metrics.naming,
	// Tributary's own): strimzi [default] or confluent.
	MetricsNaming metrics.Style

	// TaskConfigsTimeout bounds a connector's TaskConfigs: the driver waits
	// for it off the herder's loop, then the connector fails. No Kafka
	// Connect property; 0 means TaskConfigsTimeout.
	TaskConfigsTimeout time.Duration
}

// DefaultScheduledRebalanceDelay is Tributary's default for
// scheduled.rebalance.max.delay.ms (Kafka Connect's is 5 minutes). A dead
// worker's session expires at most session.timeout.ms (10 s) after its last
// heartbeat, the others learn of it at their next heartbeat (within
// heartbeat.interval.ms, 1 s), and its work waits this delay: its tasks are
// assigned again at most 10 + 1 + 1 = 12 s after its death and run well
// within 15 s. A worker restarted within the delay (same advertised URL)
// gets its own work back without it moving.
const DefaultScheduledRebalanceDelay = time.Second

// DefaultHeartbeatInterval is Tributary's default for
// heartbeat.interval.ms (Kafka Connect's is 3 s): the others learn of a
// dead worker sooner, and a worker's membership lease (session.timeout.ms
// minus the time to stop its tasks, see package worker/member) tolerates a
// missed heartbeat.
const DefaultHeartbeatInterval = time.Second

// workerKeys are the keys FromProperties understands, besides the prefixed
// families; anything else produces a warning.
var workerKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		"bootstrap.servers", "group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic",
		"config.storage.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
		"offset.storage.partitions", "status.storage.partitions", "key.converter", "value.converter",
		"header.converter", "plugin.path", "plugin.discovery", "listeners", "rest.advertised.host.name",
		"rest.advertised.port", "rest.advertised.listener", "offset.flush.interval.ms", "offset.flush.timeout.ms",
		"task.shutdown.graceful.timeout.ms", "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms",
		"scheduled.rebalance.max.delay.ms", "connect.protocol", "rest.rebalance.hold.ms", "topic.tracking.enable", "topic.tracking.allow.reset",
		"topic.creation.enable", "connector.client.config.override.policy", "worker.sync.timeout.ms",
		"worker.unsync.backoff.ms", "exactly.once.source.support", "inter.worker.key.generation.algorithm",
		"inter.worker.key.size", "inter.worker.key.ttl.ms", "inter.worker.signature.algorithm",
		"inter.worker.verification.algorithms", "config.providers", "access.control.allow.origin",
		"access.control.allow.methods", "admin.listeners", "rest.extension.classes", "client.id",
		"metrics.sample.window.ms", "metrics.num.samples", "metrics.recording.level", "metric.reporters",
		"key.converter.schemas.enable", "value.converter.schemas.enable", "response.http.headers.config",
		"tributary.metrics.naming",
	} {
		m[k] = true
	}
	return m
}()

// clientKeys are unprefixed Kafka client settings that apply to every client.
var clientKeys = map[string]bool{
	"security.protocol": true, "client.id": true, "sasl.mechanism": true, "sasl.jaas.config": true,
	"request.timeout.ms": true, "retry.backoff.ms": true, "metadata.max.age.ms": true,
	"connections.max.idle.ms": true, "reconnect.backoff.ms": true, "reconnect.backoff.max.ms": true,
	"send.buffer.bytes": true, "receive.buffer.bytes": true, "client.dns.lookup": true,
}

// Short names of Kafka's converters, accepted wherever a class is.
const (
	JSONConverter         = "org.apache.kafka.connect.json.JsonConverter"
	StringConverter       = "org.apache.kafka.connect.storage.StringConverter"
	ByteArrayConverter    = "org.apache.kafka.connect.converters.ByteArrayConverter"
	SimpleHeaderConverter = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
	BooleanConverter      = "org.apache.kafka.connect.converters.BooleanConverter"
	DoubleConverter       = "org.apache.kafka.connect.converters.DoubleConverter"
	FloatConverter        = "org.apache.kafka.connect.converters.FloatConverter"
	IntegerConverter      = "org.apache.kafka.connect.converters.IntegerConverter"
	LongConverter         = "org.apache.kafka.connect.converters.LongConverter"
	ShortConverter        = "org.apache.kafka.connect.converters.ShortConverter"
)

// DefaultConfig returns Kafka Connect's defaults for the optional settings.
func DefaultConfig() Config {
	return Config{
		BootstrapServers:        []string{"localhost:9092"},
		ConfigReplication:       3,
		OffsetReplication:       3,
		StatusReplication:       3,
		OffsetPartitions:        25,
		StatusPartitions:        5,
		HeaderConverter:         SimpleHeaderConverter,
		Listener:                ":8083",
		OffsetFlushInterval:     60 * time.Second,
		OffsetFlushTimeout:      5 * time.Second,
		TaskShutdownTimeout:     5 * time.Second,
		SessionTimeout:          10 * time.Second,
		HeartbeatInterval:       DefaultHeartbeatInterval,
		RebalanceTimeout:        60 * time.Second,
		ScheduledRebalanceDelay: DefaultScheduledRebalanceDelay,
		ConnectProtocol:         "sessioned",
		KeyTTL:                  time.Hour,
		RequestHold:             30 * time.Second,
		MetricsWindow:           stats.DefaultWindow,
		TopicTracking:           true,
		TopicTrackingReset:      true,
		ConfigTopicSettings:     map[string]string{},
		OffsetTopicSettings:     map[string]string{},
		StatusTopicSettings:     map[string]string{},
		KeyConverterConfig:      map[string]string{},
		ValueConverterConfig:    map[string]string{},
		HeaderConverterConfig:   map[string]string{},
		ProducerConfig:          map[string]string{},
		ConsumerConfig:          map[string]string{},
		AdminConfig:             map[string]string{},
		ClientConfig:            map[string]string{},
	}
}

// FromProperties parses worker properties. Unknown keys come back as
// warnings; invalid or missing required values are errors naming the key.
func FromProperties(p properties.Properties) (Config, []string, error) {
	c := DefaultConfig()
	var warnings []string
	var errs []error
	bad := func(k string, why string) { errs = append(errs, fmt.Errorf("%s=%q: %s", k, p[k], why)) }
	for _, req := range []string{"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic", "key.converter", "value.converter"} {
		if strings.TrimSpace(p[req]) == "" {
			errs = append(errs, fmt.Errorf("%s: missing required configuration (it has no default)", req))
		}
	}
	durMs := func(k string, dst *time.Duration, min int64) {
		n, err := strconv.ParseInt(strings.TrimSpace(p[k]), 10, 64)
		if err != nil || n < min {
			bad(k, fmt.Sprintf("must be an integer >= %d (milliseconds)", min))
			return
		}
		*dst = time.Duration(n) * time.Millisecond
	}
	boolean := func(k string, dst *bool) {
		switch strings.ToLower(strings.TrimSpace(p[k])) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			bad(k, "must be true or false")
		}
	}
	rf := func(k string, dst *int16) {
		n, err := strconv.ParseInt(strings.TrimSpace(p[k]), 10, 16)
		if err != nil || n == 0 || n < -1 {
			bad(k, "must be a positive replication factor or -1 for the broker default")
			return
		}
		*dst = int16(n)
	}
	parts := func(k string, dst *int32) {
		n, err := strconv.ParseInt(strings.TrimSpace(p[k]), 10, 32)
		if err != nil || n == 0 || n < -1 {
			bad(k, "must be a positive number of partitions or -1 for the broker default")
			return
		}
		*dst = int32(n)
	}
	keys := p.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(p[k])
		switch k {
		case "bootstrap.servers":
			c.BootstrapServers = nil
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					if _, _, err := net.SplitHostPort(s); err != nil {
						bad(k, "each server must be host:port")
					}
					c.BootstrapServers = append(c.BootstrapServers, s)
				}
			}
			if len(c.BootstrapServers) == 0 {
				bad(k, "must list at least one host:port")
			}
		case "group.id":
			c.GroupID = v
		case "config.storage.topic":
			c.ConfigTopic = v
		case "offset.storage.topic":
			c.OffsetTopic = v
		case "status.storage.topic":
			c.StatusTopic = v
		case "config.storage.replication.factor":
			rf(k, &c.ConfigReplication)
		case "offset.storage.replication.factor":
			rf(k, &c.OffsetReplication)
		case "status.storage.replication.factor":
			rf(k, &c.StatusReplication)
		case "offset.storage.partitions":
			parts(k, &c.OffsetPartitions)
		case "status.storage.partitions":
			parts(k, &c.StatusPartitions)
		case "key.converter":
			c.KeyConverter = v
		case "value.converter":
			c.ValueConverter = v
		case "header.converter":
			c.HeaderConverter = v
		case "plugin.path":
			c.PluginPath = nil
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					c.PluginPath = append(c.PluginPath, d)
				}
			}
		case "listeners":
			l, err := parseRESTListener(v)
			if err != nil {
				bad(k, err.Error())
			}
			c.Listener = l
		case "rest.advertised.host.name":
			c.AdvertisedHost = v
		case "rest.advertised.port":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 65535 {
				bad(k, "must be a port number")
			}
			c.AdvertisedPort = n
		case "offset.flush.interval.ms":
			durMs(k, &c.OffsetFlushInterval, 1)
		case "offset.flush.timeout.ms":
			durMs(k, &c.OffsetFlushTimeout, 1)
		case "task.shutdown.graceful.timeout.ms":
			durMs(k, &c.TaskShutdownTimeout, 0)
		case "session.timeout.ms":
			durMs(k, &c.SessionTimeout, 1)
		case "heartbeat.interval.ms":
			durMs(k, &c.HeartbeatInterval, 1)
		case "rebalance.timeout.ms":
			durMs(k, &c.RebalanceTimeout, 1)
		case "scheduled.rebalance.max.delay.ms":
			durMs(k, &c.ScheduledRebalanceDelay, 0)
		case "rest.rebalance.hold.ms":
			durMs(k, &c.RequestHold, 0)
		case "inter.worker.key.ttl.ms":
			durMs(k, &c.KeyTTL, 1)
		case "inter.worker.signature.algorithm", "inter.worker.key.generation.algorithm":
			if v != signatureAlgorithm {
				bad(k, "only HmacSHA256 is supported")
			}
		case "inter.worker.verification.algorithms":
			ok := false
			for _, a := range strings.Split(v, ",") {
				ok = ok || strings.TrimSpace(a) == signatureAlgorithm
			}
			if !ok {
				bad(k, "must include HmacSHA256, the only algorithm supported")
			}
		case "connect.protocol":
			switch v {
			case "eager", "compatible", "sessioned":
				c.ConnectProtocol = v
			default:
				bad(k, "must be eager, compatible or sessioned")
			}
		case "metrics.sample.window.ms":
			durMs(k, &c.MetricsWindow.Size, 1)
		case "metrics.num.samples":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				bad(k, "must be an integer >= 1")
			} else {
				c.MetricsWindow.Samples = n
			}
		case "tributary.metrics.naming":
			st, err := metrics.ParseStyle(v)
			if err != nil {
				bad(k, "must be strimzi (Strimzi's JMX exporter rules) or confluent (Confluent's and Aiven's)")
			}
			c.MetricsNaming = st
		case "topic.tracking.enable":
			boolean(k, &c.TopicTracking)
		case "topic.tracking.allow.reset":
			boolean(k, &c.TopicTrackingReset)
		default:
			switch {
			case strings.HasPrefix(k, "config.storage."):
				c.ConfigTopicSettings[strings.TrimPrefix(k, "config.storage.")] = v
			case strings.HasPrefix(k, "offset.storage."):
				c.OffsetTopicSettings[strings.TrimPrefix(k, "offset.storage.")] = v
			case strings.HasPrefix(k, "status.storage."):
				c.StatusTopicSettings[strings.TrimPrefix(k, "status.storage.")] = v
			case strings.HasPrefix(k, "key.converter."):
				c.KeyConverterConfig[strings.TrimPrefix(k, "key.converter.")] = v
			case strings.HasPrefix(k, "value.converter."):
				c.ValueConverterConfig[strings.TrimPrefix(k, "value.converter.")] = v
			case strings.HasPrefix(k, "header.converter."):
				c.HeaderConverterConfig[strings.TrimPrefix(k, "header.converter.")] = v
			case strings.HasPrefix(k, "producer."):
				c.ProducerConfig[strings.TrimPrefix(k, "producer.")] = v
			case strings.HasPrefix(k, "consumer."):
				c.ConsumerConfig[strings.TrimPrefix(k, "consumer.")] = v
			case strings.HasPrefix(k, "admin."):
				c.AdminConfig[strings.TrimPrefix(k, "admin.")] = v
			case clientKeys[k]:
				c.ClientConfig[k] = v
			case strings.HasPrefix(k, "config.providers."), strings.HasPrefix(k, "listeners.https."), strings.HasPrefix(k, "ssl."):
				warnings = append(warnings, fmt.Sprintf("%s is not supported yet and is ignored", k))
			case !workerKeys[k]:
				warnings = append(warnings, fmt.Sprintf("unknown worker property %q is ignored", k))
			}
		}
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat.interval.ms (%d) must be lower than session.timeout.ms (%d)", c.HeartbeatInterval.Milliseconds(), c.SessionTimeout.Milliseconds()))
	}
	names := map[string]string{}
	for k, t := range map[string]string{"config.storage.topic": c.ConfigTopic, "offset.storage.topic": c.OffsetTopic, "status.storage.topic": c.StatusTopic} {
		if t == "" {
			continue
		}
		if other, dup := names[t]; dup {
			errs = append(errs, fmt.Errorf("%s and %s are both %q: the three internal topics must differ", other, k, t))
		}
		names[t] = k
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return c, warnings, errors.Join(errs...)
}

// parseRESTListener accepts "http://host:port" (the first of a list) and
// returns host:port.
func parseRESTListener(v string) (string, error) {
	first := strings.TrimSpace(strings.Split(v, ",")[0])
	u, err := url.Parse(first)
	if err != nil || u.Host == "" {
		return "", errors.New("must be http://host:port")
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("scheme %s is not supported (only http)", u.Scheme)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", errors.New("must be http://host:port")
	}
	return net.JoinHostPort(host, port), nil
}

// WorkerID is "<advertised host>:<advertised port>", as Kafka Connect names
// workers in statuses.
func (c *Config) WorkerID(bound net.Addr) string {
	host, port := c.AdvertisedHost, c.AdvertisedPort
	bh, bp, _ := net.SplitHostPort(bound.String())
	if host == "" {
		host = bh
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			if h, err := os.Hostname(); err == nil {
				host = h
			} else {
				host = "localhost"
			}
		}
	}
	if port == 0 {
		port, _ = strconv.Atoi(bp)
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

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

	"github.com/tributary-dev/tributary/internal/kafkaauth"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/stats"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// Config is a worker's configuration, read from Kafka Connect's
// connect-distributed.properties keys (see FromProperties).
type Config struct {
	BootstrapServers []string // bootstrap.servers [localhost:9092]
	GroupID          string   // group.id (required)

	ConfigTopic           string // config.storage.topic (required)
	OffsetTopic           string // offset.storage.topic (required)
	StatusTopic           string // status.storage.topic (required)
	ConfigReplication     int16  // config.storage.replication.factor [3; -1 broker default]
	OffsetReplication     int16  // offset.storage.replication.factor [3]
	StatusReplication     int16  // status.storage.replication.factor [3]
	OffsetPartitions      int32  // offset.storage.partitions [25]
	StatusPartitions      int32  // status.storage.partitions [5]
	ConfigTopicSettings   map[string]string
	OffsetTopicSettings   map[string]string
	StatusTopicSettings   map[string]string
	KeyConverter          string            // key.converter (required)
	ValueConverter        string            // value.converter (required)
	HeaderConverter       string            // header.converter [SimpleHeaderConverter]
	KeyConverterConfig    map[string]string // key.converter.* without the prefix
	ValueConverterConfig  map[string]string // value.converter.* without the prefix
	HeaderConverterConfig map[string]string // header.converter.* without the prefix
	PluginPath            []string          // plugin.path
	// PluginIsolation is which connectors share a plugin process
	// (plugin.isolation, Tributary's own): plugins.IsolationPlugin, one
	// process per plugin executable [the default], or
	// plugins.IsolationConnector, one per connector.
	PluginIsolation         plugins.Isolation
	Listener                string        // listeners: host:port [:8083]
	AdvertisedHost          string        // rest.advertised.host.name
	AdvertisedPort          int           // rest.advertised.port
	OffsetFlushInterval     time.Duration // offset.flush.interval.ms [60000]
	OffsetFlushTimeout      time.Duration // offset.flush.timeout.ms [5000]
	TaskShutdownTimeout     time.Duration // task.shutdown.graceful.timeout.ms [5000]
	SessionTimeout          time.Duration // session.timeout.ms [10000]
	HeartbeatInterval       time.Duration // heartbeat.interval.ms [1000; Kafka Connect's is 3000]
	RebalanceTimeout        time.Duration // rebalance.timeout.ms [60000]
	ScheduledRebalanceDelay time.Duration // scheduled.rebalance.max.delay.ms [300000]
	ConnectProtocol         string        // connect.protocol [sessioned]
	KeyTTL                  time.Duration // inter.worker.key.ttl.ms [3600000]
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

	// Listeners are listeners [http://:8083]; Listener is the first's
	// host:port.
	Listeners []RESTListener
	// AdminListeners is admin.listeners: nil when unset (the /admin
	// endpoints are served on Listeners), empty when set to "" (they are
	// served nowhere).
	AdminListeners []RESTListener
	// AdvertisedListener is rest.advertised.listener: http or https, the
	// scheme other workers reach this one by ["": the first listener's].
	AdvertisedListener string
	// HTTPS are the TLS settings (ssl.* keys) of the HTTPS listeners and
	// of the client that forwards requests to other workers: the
	// listeners.https.* settings if there is any (without their prefix),
	// else the top-level ssl.* ones, as Kafka Connect takes them
	// (all or nothing).
	HTTPS map[string]string
	// AdminHTTPS are the same for admin.listeners (admin.listeners.https.*).
	AdminHTTPS map[string]string
	// RESTExtensions is rest.extension.classes.
	RESTExtensions []string
	// JAASConfigFile is java.security.auth.login.config, Tributary's
	// worker property for what Kafka Connect takes as a JVM system
	// property (-Djava.security.auth.login.config in KAFKA_OPTS): the JAAS
	// file whose KafkaConnect section configures the basic-auth extension.
	JAASConfigFile string
	// HideSecrets is rest.hide.secrets, Tributary's own [false, as Kafka
	// Connect shows them]: GET /connectors/{name}/config and the other
	// answers that carry a stored config show the literal values of
	// secrets (PASSWORD keys, client security secrets) as [hidden];
	// ${provider:path:key} references are shown as they are.
	HideSecrets bool
	// OverridePolicy is connector.client.config.override.policy [All]
	// (with connector.client.config.override.allowlist).
	OverridePolicy OverridePolicy
	// ProviderSettings are config.providers and config.providers.*: the
	// config providers that resolve ${provider:path:key} references in
	// connector configs (the worker's own properties are resolved before
	// FromProperties; see ResolveReferences).
	ProviderSettings map[string]string

	// ExactlyOnceSource is exactly.once.source.support [disabled]
	// (KIP-618): preparing and enabled make the leader write the config
	// topic through a transactional producer (connect-cluster-<group.id>);
	// enabled also runs source tasks in transactions, fences zombie tasks
	// and reads the config and offsets topics read_committed.
	ExactlyOnceSource ExactlyOnceSource
}

// ExactlyOnceSource is a worker's exactly.once.source.support.
type ExactlyOnceSource string

// exactly.once.source.support values.
const (
	ExactlyOnceDisabled  ExactlyOnceSource = "disabled"
	ExactlyOncePreparing ExactlyOnceSource = "preparing"
	ExactlyOnceEnabled   ExactlyOnceSource = "enabled"
)

// Enabled reports whether source tasks run with exactly-once support.
func (e ExactlyOnceSource) Enabled() bool { return e == ExactlyOnceEnabled }

// TransactionalLeader reports whether the leader writes the config topic
// through its transactional producer (preparing or enabled).
func (e ExactlyOnceSource) TransactionalLeader() bool {
	return e == ExactlyOnceEnabled || e == ExactlyOncePreparing
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
		"header.converter", "plugin.path", "plugin.discovery", "plugin.isolation", "listeners", "rest.advertised.host.name",
		"rest.advertised.port", "rest.advertised.listener", "offset.flush.interval.ms", "offset.flush.timeout.ms",
		"task.shutdown.graceful.timeout.ms", "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms",
		"scheduled.rebalance.max.delay.ms", "connect.protocol", "rest.rebalance.hold.ms", "topic.tracking.enable", "topic.tracking.allow.reset",
		"topic.creation.enable", "connector.client.config.override.policy", "connector.client.config.override.allowlist", "worker.sync.timeout.ms",
		"worker.unsync.backoff.ms", "exactly.once.source.support", "inter.worker.key.generation.algorithm",
		"inter.worker.key.size", "inter.worker.key.ttl.ms", "inter.worker.signature.algorithm",
		"inter.worker.verification.algorithms", "config.providers", "access.control.allow.origin",
		"access.control.allow.methods", "admin.listeners", "rest.extension.classes", "client.id",
		"metrics.sample.window.ms", "metrics.num.samples", "metrics.recording.level", "metric.reporters",
		"key.converter.schemas.enable", "value.converter.schemas.enable", "response.http.headers.config",
		"rest.hide.secrets", "java.security.auth.login.config", "tributary.metrics.naming",
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
		PluginIsolation:         plugins.IsolationPlugin,
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
		OverridePolicy:          OverridePolicy{Name: "All"},
		ProviderSettings:        map[string]string{},
		ExactlyOnceSource:       ExactlyOnceDisabled,
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
		case "plugin.isolation":
			iso, err := plugins.ParseIsolation(v)
			if err != nil {
				bad(k, fmt.Sprintf("must be %s (one process per plugin) or %s (one per connector)", plugins.IsolationPlugin, plugins.IsolationConnector))
			} else {
				c.PluginIsolation = iso
			}
		case "listeners":
			ls, err := parseRESTListeners(v)
			if err != nil {
				bad(k, err.Error())
			} else if len(ls) == 0 {
				bad(k, "must list at least one http:// or https:// listener")
			} else {
				c.Listeners, c.Listener = ls, ls[0].Addr
			}
		case "admin.listeners":
			ls, err := parseRESTListeners(v)
			if err != nil {
				bad(k, err.Error())
			}
			c.AdminListeners = append([]RESTListener{}, ls...)
		case "rest.advertised.listener":
			switch strings.ToLower(v) {
			case "http", "https":
				c.AdvertisedListener = strings.ToLower(v)
			case "":
			default:
				bad(k, "must be http or https")
			}
		case "rest.extension.classes":
			c.RESTExtensions = splitList(v)
		case "java.security.auth.login.config":
			c.JAASConfigFile = v
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
		case "connector.client.config.override.policy":
			pol, err := ParseOverridePolicy(v)
			if err != nil {
				bad(k, err.Error())
			}
			c.OverridePolicy.Name = pol.Name
		case "rest.hide.secrets":
			boolean(k, &c.HideSecrets)
		case "connector.client.config.override.allowlist":
			c.OverridePolicy.Allowlist = splitList(v)
		case "config.providers":
			c.ProviderSettings[k] = v
		case "exactly.once.source.support":
			switch e := ExactlyOnceSource(v); e {
			case ExactlyOnceDisabled, ExactlyOncePreparing, ExactlyOnceEnabled:
				c.ExactlyOnceSource = e
			default:
				bad(k, "String must be one of: disabled, preparing, enabled") // Kafka's ValidString
			}
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
			case strings.HasPrefix(k, "admin.listeners.https."):
			case strings.HasPrefix(k, "admin."):
				c.AdminConfig[strings.TrimPrefix(k, "admin.")] = v
			case strings.HasPrefix(k, "config.providers."):
				c.ProviderSettings[k] = v
			case clientKeys[k], kafkaauth.IsSecurityKey(k):
				// ssl.* also serve the HTTPS listeners without their own
				// listeners.https.* settings.
				c.ClientConfig[k] = v
			case strings.HasPrefix(k, "listeners.https."), strings.HasPrefix(k, "admin.listeners.https."):
				// Read below, all or nothing.
			case !workerKeys[k]:
				warnings = append(warnings, fmt.Sprintf("unknown worker property %q is ignored", k))
			}
		}
	}
	c.HTTPS, c.AdminHTTPS = httpsSettings(p, "listeners.https."), httpsSettings(p, "admin.listeners.https.")
	if c.Listeners == nil {
		c.Listeners = []RESTListener{{Scheme: "http", Addr: c.Listener}}
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

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// RESTListener is one REST listener: its scheme (http or https) and the
// host:port it binds.
type RESTListener struct {
	Scheme, Addr string
}

// URL is the listener as listeners writes it.
func (l RESTListener) URL() string { return l.Scheme + "://" + l.Addr }

// parseRESTListeners reads a comma-separated list of http://host:port and
// https://host:port (Kafka Connect's listeners and admin.listeners).
func parseRESTListeners(v string) ([]RESTListener, error) {
	var out []RESTListener
	for _, item := range splitList(v) {
		u, err := url.Parse(item)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%q must be http://host:port or https://host:port", item)
		}
		scheme := strings.ToLower(u.Scheme)
		if scheme != "http" && scheme != "https" {
			return nil, fmt.Errorf("scheme %s is not supported (http and https are)", u.Scheme)
		}
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, fmt.Errorf("%q must be http://host:port or https://host:port", item)
		}
		out = append(out, RESTListener{Scheme: scheme, Addr: net.JoinHostPort(host, port)})
	}
	return out, nil
}

// httpsSettings are the TLS settings of HTTPS listeners: those under
// prefix (without it, as ssl.* keys) when there is any, else the top-level
// ssl.* settings (Kafka Connect's valuesWithPrefixAllOrNothing).
func httpsSettings(p properties.Properties, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	if len(out) > 0 {
		return out
	}
	for k, v := range p {
		if strings.HasPrefix(k, "ssl.") {
			out[k] = v
		}
	}
	return out
}

// AdvertisedScheme is the scheme other workers reach this one by:
// rest.advertised.listener, else the first listener's.
func (c *Config) AdvertisedScheme() string {
	if c.AdvertisedListener != "" {
		return c.AdvertisedListener
	}
	if len(c.Listeners) > 0 {
		return c.Listeners[0].Scheme
	}
	return "http"
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

package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/plugins"
)

func validProps() properties.Properties {
	return properties.Properties{
		"bootstrap.servers": "127.0.0.1:9092", "group.id": "g",
		"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": JSONConverter, "value.converter": JSONConverter,
	}
}

func TestFromPropertiesDefaultsAndPrefixes(t *testing.T) {
	p := validProps()
	p["value.converter.schemas.enable"] = "false"
	p["producer.linger.ms"] = "5"
	p["consumer.session.timeout.ms"] = "6000"
	p["offset.storage.cleanup.policy"] = "compact"
	p["listeners"] = "http://127.0.0.1:18083"
	p["offset.flush.interval.ms"] = "1000"
	p["no.such.key"] = "x"
	c, warnings, err := FromProperties(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.OffsetPartitions != 25 || c.StatusPartitions != 5 || c.ConfigReplication != 3 {
		t.Errorf("defaults: %+v", c)
	}
	if c.ValueConverterConfig["schemas.enable"] != "false" || c.ProducerConfig["linger.ms"] != "5" ||
		c.ConsumerConfig["session.timeout.ms"] != "6000" || c.OffsetTopicSettings["cleanup.policy"] != "compact" {
		t.Errorf("prefixed settings not split: %+v", c)
	}
	if c.Listener != "127.0.0.1:18083" || c.OffsetFlushInterval != time.Second {
		t.Errorf("listener %q flush %v", c.Listener, c.OffsetFlushInterval)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no.such.key") {
		t.Errorf("warnings %v", warnings)
	}
	// Tributary's cluster defaults (Kafka Connect's differ; see config.go).
	if c.HeartbeatInterval != time.Second || c.ScheduledRebalanceDelay != time.Second || c.RequestHold != 30*time.Second || c.KeyTTL != time.Hour {
		t.Errorf("cluster defaults: heartbeat %v delay %v hold %v key ttl %v", c.HeartbeatInterval, c.ScheduledRebalanceDelay, c.RequestHold, c.KeyTTL)
	}
	if c.PluginIsolation != plugins.IsolationPlugin {
		t.Errorf("plugin.isolation defaults to %q", c.PluginIsolation)
	}
	p["plugin.isolation"] = "connector"
	if c, _, err := FromProperties(p); err != nil || c.PluginIsolation != plugins.IsolationConnector {
		t.Errorf("plugin.isolation=connector: %v %q", err, c.PluginIsolation)
	}
	delete(p, "plugin.isolation")
	if c.ExactlyOnceSource != ExactlyOnceDisabled || c.ExactlyOnceSource.TransactionalLeader() {
		t.Errorf("exactly.once.source.support defaults to %q", c.ExactlyOnceSource)
	}
	for v, leader := range map[string]bool{"preparing": true, "enabled": true, "disabled": false} {
		p["exactly.once.source.support"] = v
		c, _, err := FromProperties(p)
		if err != nil || string(c.ExactlyOnceSource) != v || c.ExactlyOnceSource.TransactionalLeader() != leader || c.ExactlyOnceSource.Enabled() != (v == "enabled") {
			t.Errorf("exactly.once.source.support=%s: %v %q", v, err, c.ExactlyOnceSource)
		}
	}
	p["rest.rebalance.hold.ms"] = "0"
	p["scheduled.rebalance.max.delay.ms"] = "300000"
	p["inter.worker.key.ttl.ms"] = "60000"
	p["inter.worker.verification.algorithms"] = "HmacSHA1, HmacSHA256"
	if c, _, err = FromProperties(p); err != nil || c.RequestHold != 0 || c.ScheduledRebalanceDelay != 5*time.Minute || c.KeyTTL != time.Minute {
		t.Errorf("cluster settings: %v %+v", err, c)
	}
}

func TestFromPropertiesErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		key, value, want string
	}{
		"missing group":      {"group.id", "", "group.id: missing required"},
		"bad flush":          {"offset.flush.interval.ms", "soon", "offset.flush.interval.ms"},
		"bad listener":       {"listeners", "ftp://x:1", "http and https are"},
		"bad rf":             {"config.storage.replication.factor", "0", "replication factor"},
		"same topics":        {"status.storage.topic", "c", "must differ"},
		"bad protocol":       {"connect.protocol", "fast", "eager, compatible or sessioned"},
		"heartbeat too long": {"heartbeat.interval.ms", "20000", "lower than session.timeout.ms"},
		"bad hold":           {"rest.rebalance.hold.ms", "-1", "rest.rebalance.hold.ms"},
		"signature":          {"inter.worker.signature.algorithm", "HmacSHA512", "only HmacSHA256"},
		"verification":       {"inter.worker.verification.algorithms", "HmacSHA1", "must include HmacSHA256"},
		"exactly once":       {"exactly.once.source.support", "ENABLED", "String must be one of: disabled, preparing, enabled"},
		"isolation":          {"plugin.isolation", "task", "plugin (one process per plugin) or connector"},
	} {
		t.Run(name, func(t *testing.T) {
			p := validProps()
			p[tc.key] = tc.value
			_, _, err := FromProperties(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	p := EnvOverrides([]string{"CONNECT_BOOTSTRAP_SERVERS=b:9092", "CONNECT_CONFIG_STORAGE_TOPIC=cfg",
		"CONNECT_PRODUCER_CLIENT__ID=x", "CONNECT_A___B=y", "PATH=/bin"})
	want := map[string]string{"bootstrap.servers": "b:9092", "config.storage.topic": "cfg", "producer.client-id": "x", "a_b": "y"}
	if len(p) != len(want) {
		t.Fatalf("got %v", p)
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
}

func TestKafkaClientOpts(t *testing.T) {
	// Security settings are clientSettings's (package kafkaauth); an
	// unknown setting is reported.
	opts, ignored, err := kafkaClientOpts(map[string]string{"linger.ms": "5", "acks": "1", "compression.type": "zstd", "ssl.truststore.location": "/x", "frobnicate": "1"})
	if err != nil || len(opts) != 4 || len(ignored) != 1 {
		t.Fatalf("opts %d ignored %v err %v", len(opts), ignored, err)
	}
	if _, _, err := kafkaClientOpts(map[string]string{"acks": "2"}); err == nil {
		t.Fatal("acks=2 accepted")
	}
}

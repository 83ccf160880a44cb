package broker

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
)

func TestAdvertisedHostPort(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4zero, Port: 9092}
	cases := []struct {
		name       string
		advertised string
		wildcard   string
		bound      net.Addr
		host       string
		port       int32
	}{
		{name: "wildcard bind, outside a container", bound: bound, host: "127.0.0.1", port: 9092},
		{name: "wildcard bind in a container", bound: bound, wildcard: "broker", host: "broker", port: 9092},
		{name: "IPv6 wildcard in a container", bound: &net.TCPAddr{IP: net.IPv6unspecified, Port: 9093}, wildcard: "b", host: "b", port: 9093},
		{name: "a bound address is advertised as it is", bound: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9092}, wildcard: "broker", host: "10.0.0.7", port: 9092},
		{name: "advertised.listeners wins", advertised: "kafka.example:19092", bound: bound, wildcard: "broker", host: "kafka.example", port: 19092},
		{name: "advertised port 0 takes the bound one", advertised: "kafka.example:0", bound: &net.TCPAddr{IP: net.IPv4zero, Port: 40000}, host: "kafka.example", port: 40000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Advertised: c.advertised, WildcardHost: c.wildcard}
			host, port := cfg.advertisedHostPort(c.bound)
			if host != c.host || port != c.port {
				t.Errorf("advertised %s:%d, want %s:%d", host, port, c.host, c.port)
			}
		})
	}
}

func TestConsumerGroupProperties(t *testing.T) {
	c, warns, err := FromProperties(properties.Properties{
		"group.consumer.session.timeout.ms":    "10000",
		"group.consumer.heartbeat.interval.ms": "1000",
		"group.consumer.assignors":             "range, org.apache.kafka.coordinator.group.assignor.UniformAssignor",
	})
	if err != nil || len(warns) > 0 {
		t.Fatalf("FromProperties: %v %v", err, warns)
	}
	if c.ConsumerSessionTimeout != 10*time.Second || c.ConsumerHeartbeatInterval != time.Second ||
		!slices.Equal(c.ConsumerAssignors, []string{"range", "uniform"}) {
		t.Fatalf("parsed %v %v %v", c.ConsumerSessionTimeout, c.ConsumerHeartbeatInterval, c.ConsumerAssignors)
	}
	for k, v := range map[string]string{
		"group.consumer.assignors":             "sticky",
		"group.consumer.session.timeout.ms":    "0",
		"group.consumer.heartbeat.interval.ms": "x",
	} {
		if _, _, err := FromProperties(properties.Properties{k: v}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}

func TestListenerProperties(t *testing.T) {
	ok := properties.Properties{
		"listeners":                                      "PLAINTEXT://127.0.0.1:9092,CLIENT://0.0.0.0:9093,CONTROLLER://127.0.0.1:9094",
		"advertised.listeners":                           "PLAINTEXT://127.0.0.1:9092,CLIENT://kafka.example:9093",
		"listener.security.protocol.map":                 "PLAINTEXT:PLAINTEXT,CLIENT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"controller.listener.names":                      "CONTROLLER",
		"inter.broker.listener.name":                     "PLAINTEXT",
		"listener.name.client.sasl.enabled.mechanisms":   "SCRAM-SHA-512",
		"listener.name.client.connections.max.reauth.ms": "60000",
	}
	c, warnings, err := FromProperties(ok)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Listeners) != 2 || c.Listeners[1].Name != "CLIENT" || c.Listeners[1].Protocol != ProtocolSASLPlaintext ||
		c.Listeners[1].Advertised != "kafka.example:9093" || c.Listeners[1].ReauthAfter != time.Minute || c.Listeners[1].Mechanisms[0] != MechanismSCRAMSHA512 {
		t.Fatalf("%+v", c.Listeners)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "CONTROLLER is a controller listener") {
		t.Fatalf("warnings %v", warnings)
	}
	// Kafka's default listener names are not URL schemes.
	c, _, err = FromProperties(properties.Properties{"listeners": "SASL_PLAINTEXT://127.0.0.1:9093,SASL_SSL://[::1]:9094,PLAINTEXT://:9092",
		"sasl.enabled.mechanisms": "SCRAM-SHA-256", "ssl.keystore.type": "PEM"})
	if err == nil || !strings.Contains(err.Error(), "listener SASL_SSL") {
		t.Fatalf("SASL_SSL without a key store: %v", err)
	}
	if len(c.Listeners) != 3 || c.Listeners[0].Name != "SASL_PLAINTEXT" || c.Listeners[1].Addr != "[::1]:9094" || c.Listeners[2].Addr != ":9092" {
		t.Fatalf("%+v", c.Listeners)
	}
	for name, bad := range map[string]properties.Properties{
		"no protocol":          {"listeners": "FOO://127.0.0.1:1"},
		"unknown protocol":     {"listeners": "A://127.0.0.1:1", "listener.security.protocol.map": "A:KERBEROS"},
		"GSSAPI default":       {"listeners": "SASL_PLAINTEXT://127.0.0.1:1"},
		"PLAIN without users":  {"listeners": "SASL_PLAINTEXT://127.0.0.1:1", "sasl.enabled.mechanisms": "PLAIN"},
		"SSL without keystore": {"listeners": "SSL://127.0.0.1:1"},
		"advertised unknown":   {"listeners": "PLAINTEXT://127.0.0.1:1", "advertised.listeners": "OTHER://h:1"},
		"inter broker unknown": {"listeners": "PLAINTEXT://127.0.0.1:1", "inter.broker.listener.name": "OTHER"},
		"duplicate name":       {"listeners": "PLAINTEXT://127.0.0.1:1,PLAINTEXT://127.0.0.1:2"},
		"bad super user":       {"super.users": "admin"},
		"bad scram bootstrap":  {"tributary.scram.credentials": "SCRAM-SHA-1=[name=a,password=b]"},
		"bad mapping rule":     {"listeners": "PLAINTEXT://127.0.0.1:1", "ssl.principal.mapping.rules": "RULE:x"},
	} {
		c, _, err := FromProperties(bad)
		if err == nil {
			err = c.validate()
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

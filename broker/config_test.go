package broker

import (
	"net"
	"slices"
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

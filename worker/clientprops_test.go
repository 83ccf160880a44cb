package worker

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestConnectorClientOverrides(t *testing.T) {
	worker := map[string]string{"max.poll.records": "100", "fetch.max.wait.ms": "200"}
	conn := map[string]string{
		"consumer.override.max.poll.records":  "3",
		"consumer.override.auto.offset.reset": "latest",
		"producer.override.linger.ms":         "5",
		"consumer.override.":                  "ignored: no key",
	}
	got := withOverrides(worker, conn, consumerOverride)
	want := map[string]string{"max.poll.records": "3", "fetch.max.wait.ms": "200", "auto.offset.reset": "latest"}
	if !maps.Equal(got, want) {
		t.Errorf("consumer properties %v, want %v", got, want)
	}
	if worker["max.poll.records"] != "100" {
		t.Error("the worker's properties were modified")
	}
	if n, err := maxPollRecords(got); n != 3 || err != nil {
		t.Errorf("max.poll.records = %d, %v", n, err)
	}
	if n, err := maxPollRecords(nil); n != 0 || err != nil {
		t.Errorf("max.poll.records unset = %d, %v", n, err)
	}
	for _, bad := range []string{"0", "-1", "x"} {
		if _, err := maxPollRecords(map[string]string{"max.poll.records": bad}); err == nil {
			t.Errorf("max.poll.records=%s accepted", bad)
		}
	}
	errs := overrideErrors(map[string]string{
		"consumer.override.auto.offset.reset": "bogus",
		"consumer.override.max.poll.records":  "0",
		"producer.override.acks":              "all",
		"admin.override.request.timeout.ms":   "-5",
		"consumer.override.no.such.property":  "x", // no franz-go equivalent: logged at start, not refused
	}, OverridePolicy{}, nil, "")
	want = map[string]string{
		"consumer.override.auto.offset.reset": "must be earliest, latest or none",
		"consumer.override.max.poll.records":  "must be a positive integer",
		"admin.override.request.timeout.ms":   "not a non-negative number of milliseconds",
	}
	if !maps.Equal(errs, want) {
		t.Errorf("override errors %v, want %v", errs, want)
	}
}

// Kafka's clients take max.request.size and fetch sizes above 100 MiB;
// franz-go refuses them unless its request bounds grow with them.
func TestLargeRequestSizes(t *testing.T) {
	for _, props := range []map[string]string{
		{"max.request.size": "314572800"},
		{"batch.size": "16384"},
		{"fetch.max.bytes": "209715200", "max.partition.fetch.bytes": "157286400"},
	} {
		opts, _, err := kafkaClientOpts(props)
		if err != nil {
			t.Fatalf("%v: %v", props, err)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers("127.0.0.1:1"))...)
		if err != nil {
			t.Errorf("%v: %v", props, err)
			continue
		}
		cl.Close()
	}
}

func TestOverridePolicy(t *testing.T) {
	conn := map[string]string{
		"producer.override.sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="c1" password="p";`,
		"producer.override.linger.ms":         "5",
		"consumer.override.security.protocol": "SASL_SSL",
	}
	base := map[string]map[string]string{producerOverride: {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}}
	for policy, want := range map[string]map[string]string{
		"All": {"consumer.override.security.protocol": "sasl.mechanism is not set, and Kafka's default, GSSAPI (Kerberos), is not supported: set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM"},
		"None": {
			"producer.override.sasl.jaas.config":  "The 'None' policy does not allow 'sasl.jaas.config' to be overridden in the connector configuration.",
			"producer.override.linger.ms":         "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration.",
			"consumer.override.security.protocol": "The 'None' policy does not allow 'security.protocol' to be overridden in the connector configuration.",
		},
		"org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy": {
			"producer.override.linger.ms":         "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration.",
			"consumer.override.security.protocol": "sasl.mechanism is not set, and Kafka's default, GSSAPI (Kerberos), is not supported: set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM",
		},
	} {
		p, err := ParseOverridePolicy(policy)
		if err != nil {
			t.Fatal(err)
		}
		if got := overrideErrors(conn, p, base, ""); !maps.Equal(got, want) {
			t.Errorf("%s: %q, want %q", policy, got, want)
		}
	}
	if _, err := ParseOverridePolicy("Some"); err == nil {
		t.Error("policy Some accepted")
	}
	allow := OverridePolicy{Name: "Allowlist", Allowlist: []string{"linger.ms"}}
	if got := overrideErrors(map[string]string{"producer.override.linger.ms": "1", "producer.override.acks": "1"}, allow, nil, ""); len(got) != 1 || got["producer.override.acks"] == "" {
		t.Errorf("allowlist: %q", got)
	}
}

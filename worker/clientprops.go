package worker

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/internal/kafkaauth"
)

// kafkaClientOpts translates Java client properties (as they appear with
// the producer., consumer. and admin. prefixes, or unprefixed) into franz-go
// options. Properties without a franz-go equivalent are reported back.
func kafkaClientOpts(props map[string]string) ([]kgo.Opt, []string, error) {
	var opts []kgo.Opt
	var ignored []string
	// franz-go refuses batch and fetch sizes above its bounds on one
	// request and response (100 MiB); Kafka's clients take them.
	var writeMax, readMax int32
	ms := func(v string) (time.Duration, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not a non-negative number of milliseconds")
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	num := func(v string) (int32, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not a non-negative integer")
		}
		return int32(n), nil
	}
	for k, v := range props {
		var err error
		var d time.Duration
		var n int32
		switch k {
		case "client.id":
			opts = append(opts, kgo.ClientID(v))
		case "session.timeout.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.SessionTimeout(d))
			}
		case "heartbeat.interval.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.HeartbeatInterval(d))
			}
		case "max.poll.interval.ms", "rebalance.timeout.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.RebalanceTimeout(d))
			}
		case "fetch.max.wait.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.FetchMaxWait(d))
			}
		case "fetch.min.bytes":
			if n, err = num(v); err == nil {
				opts = append(opts, kgo.FetchMinBytes(n))
			}
		case "fetch.max.bytes":
			if n, err = num(v); err == nil {
				opts = append(opts, kgo.FetchMaxBytes(n))
				readMax = max(readMax, n)
			}
		case "max.partition.fetch.bytes":
			if n, err = num(v); err == nil {
				opts = append(opts, kgo.FetchMaxPartitionBytes(n))
				readMax = max(readMax, n)
			}
		case "isolation.level":
			switch v {
			case "read_committed":
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			case "read_uncommitted":
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
			default:
				err = fmt.Errorf("must be read_committed or read_uncommitted")
			}
		case "linger.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.ProducerLinger(d))
			}
		case "batch.size", "max.request.size":
			if n, err = num(v); err == nil {
				opts = append(opts, kgo.ProducerBatchMaxBytes(n))
				writeMax = max(writeMax, n)
			}
		case "compression.type":
			var c kgo.CompressionCodec
			switch v {
			case "none":
				c = kgo.NoCompression()
			case "gzip":
				c = kgo.GzipCompression()
			case "snappy":
				c = kgo.SnappyCompression()
			case "lz4":
				c = kgo.Lz4Compression()
			case "zstd":
				c = kgo.ZstdCompression()
			default:
				err = fmt.Errorf("must be none, gzip, snappy, lz4 or zstd")
			}
			if err == nil {
				opts = append(opts, kgo.ProducerBatchCompression(c))
			}
		case "acks":
			switch v {
			case "all", "-1":
				opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
			case "1":
				opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			case "0":
				opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
			default:
				err = fmt.Errorf("must be all, -1, 0 or 1")
			}
		case "enable.idempotence":
			if strings.EqualFold(v, "false") {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
		case "request.timeout.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.RequestTimeoutOverhead(d))
			}
		case "metadata.max.age.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.MetadataMaxAge(d))
			}
		case "auto.offset.reset":
			switch v {
			case "earliest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			case "latest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			case "none":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
			default:
				err = fmt.Errorf("must be earliest, latest or none")
			}
		case "max.poll.records":
			// Not a client option: the sink runner's batch size
			// (maxPollRecords), checked here.
			_, err = maxPollRecords(map[string]string{k: v})
		case "transaction.timeout.ms":
			// Used by a source task's transactional producer (exactly-once
			// support); the broker caps it (transaction.max.timeout.ms).
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.TransactionTimeout(d))
			}
		case "retry.backoff.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
			}
		default:
			if kafkaauth.Known(k) {
				continue // clientSettings reads the security settings
			}
			ignored = append(ignored, k)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s=%q: %w", k, v, err)
		}
	}
	if writeMax > 0 {
		opts = append(opts, kgo.BrokerMaxWriteBytes(requestBound(writeMax)))
	}
	if readMax > 0 {
		opts = append(opts, kgo.BrokerMaxReadBytes(requestBound(readMax)))
	}
	return opts, ignored, nil
}

// maxPollRecords is the max.poll.records of consumer properties (0 when
// unset): the most records a sink task's Put is given at a time.
func maxPollRecords(props map[string]string) (int, error) {
	v, ok := props["max.poll.records"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("must be a positive integer")
	}
	return int(n), nil
}

// Prefixes of a connector's client overrides (Kafka Connect's
// producer.override.*, consumer.override.* and admin.override.*, allowed
// by its default connector.client.config.override.policy, All).
const (
	producerOverride = "producer.override."
	consumerOverride = "consumer.override."
	adminOverride    = "admin.override."
)

// withOverrides returns the worker's client properties base with the
// connector's overrides (its keys under prefix, without it) on top.
func withOverrides(base, conn map[string]string, prefix string) map[string]string {
	out := make(map[string]string, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range conn {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// overrideErrors checks a connector's client overrides: by key, why the
// client refuses the value of each override key it refuses, or why the
// worker's override policy does not allow it. base holds the worker's own
// settings of each kind of client (by override prefix), with which the
// security overrides are checked: an override of sasl.jaas.config alone
// takes the mechanism from the worker's producer.* settings, say.
func overrideErrors(conn map[string]string, policy OverridePolicy, base map[string]map[string]string, jaasFile string) map[string]string {
	errs := map[string]string{}
	for _, prefix := range []string{producerOverride, consumerOverride, adminOverride} {
		security := false
		var secKeys []string
		for k, v := range conn {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok || rest == "" {
				continue
			}
			if msg := policy.refuses(rest); msg != "" {
				errs[k] = msg
				continue
			}
			if kafkaauth.Known(rest) {
				security = true
				secKeys = append(secKeys, k)
				continue
			}
			if _, _, err := kafkaClientOpts(map[string]string{rest: v}); err != nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner // without the key and value, which the caller names
				}
				errs[k] = err.Error()
			}
		}
		if security {
			merged := withOverrides(securityOnly(base[prefix]), conn, prefix)
			if _, err := kafkaauth.New(securityOnly(merged), kafkaauth.Options{JAASFile: jaasFile}); err != nil {
				slices.Sort(secKeys)
				errs[secKeys[0]] = err.Error()
			}
		}
	}
	return errs
}

// securityOnly returns the security settings of client properties.
func securityOnly(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if kafkaauth.Known(k) || kafkaauth.IsSecurityKey(k) {
			out[k] = v
		}
	}
	return out
}

// OverridePolicy is connector.client.config.override.policy: which client
// settings a connector may override (producer.override.*, …).
type OverridePolicy struct {
	// Name is All (Kafka Connect's default since 3.0), None, Principal
	// or Allowlist.
	Name string
	// Allowlist is connector.client.config.override.allowlist, for
	// Allowlist.
	Allowlist []string
}

// principalKeys are the settings the Principal policy allows.
var principalKeys = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

// ParseOverridePolicy reads the policy by its short name or Kafka's class
// name.
func ParseOverridePolicy(v string) (OverridePolicy, error) {
	name := strings.TrimSpace(v)
	name = strings.TrimPrefix(name, "org.apache.kafka.connect.connector.policy.")
	name = strings.TrimSuffix(name, "ConnectorClientConfigOverridePolicy")
	switch name {
	case "", "All":
		return OverridePolicy{Name: "All"}, nil
	case "None", "Principal", "Allowlist":
		return OverridePolicy{Name: name}, nil
	}
	return OverridePolicy{}, errors.New("must be All, None, Principal or Allowlist (or their class names)")
}

// refuses says why the policy does not allow overriding key ("" when it
// does), in Kafka Connect's words.
func (p OverridePolicy) refuses(key string) string {
	var ok bool
	switch p.Name {
	case "", "All":
		ok = true
	case "Principal":
		ok = slices.Contains(principalKeys, key)
	case "Allowlist":
		ok = slices.Contains(p.Allowlist, key)
	}
	if ok {
		return ""
	}
	return "The '" + p.Name + "' policy does not allow '" + key + "' to be overridden in the connector configuration."
}

// clientSettings are a Kafka client's franz-go options, from its
// properties, security included.
type clientSettings struct {
	opts    []kgo.Opt
	ignored []string // settings without a franz-go equivalent
	sec     *kafkaauth.Security
}

// newClientSettings translates props (see kafkaClientOpts) and builds the
// client's TLS and SASL configuration (package kafkaauth) from its
// security settings.
func newClientSettings(props map[string]string, environ []string, jaasFile string) (*clientSettings, error) {
	opts, ignored, err := kafkaClientOpts(props)
	if err != nil {
		return nil, err
	}
	sec, err := kafkaauth.New(securityOnly(props), kafkaauth.Options{Environ: environ, JAASFile: jaasFile})
	if err != nil {
		return nil, err
	}
	if sec.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(sec.TLS))
	}
	if sec.Mechanism != nil {
		opts = append(opts, kgo.SASL(sec.Mechanism))
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if kafkaauth.IsSecurityKey(k) && !kafkaauth.Known(k) {
			ignored = append(ignored, k)
		}
	}
	return &clientSettings{opts: opts, ignored: ignored, sec: sec}, nil
}

// requestBound is franz-go's bound on one request or response
// (BrokerMaxWriteBytes, BrokerMaxReadBytes) for n bytes of records: its
// default, 100 MiB, unless n and the framing need more (at most 1 GiB).
func requestBound(n int32) int32 {
	return int32(min(max(int64(n)+1<<20, 100<<20), 1<<30))
}

// explainConnError says, for a failure to talk to the Kafka cluster, which
// setting is likely wrong: a refused password, an untrusted or expired
// broker certificate, a client certificate the broker requires or refuses,
// a listener that speaks another protocol. "" when it has no idea.
func explainConnError(err error, sec *kafkaauth.Security) string {
	msg := err.Error()
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return fmt.Sprintf("the broker refused the credentials of %s (SASL %s): check the username and password of sasl.jaas.config", sec.Principal, sec.Mechanism.Name())
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Sprintf("the broker's listener does not enable sasl.mechanism=%s (see its sasl.enabled.mechanisms)", sec.Mechanism.Name())
	case errors.Is(err, kerr.IllegalSaslState):
		return "the broker's listener does not expect SASL: check security.protocol"
	case errors.As(err, &unknownCA):
		return "the broker's certificate is not signed by a CA this worker trusts: check ssl.truststore.location (or ssl.truststore.certificates)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "the broker's certificate has expired (or is not valid yet): " + invalid.Error()
	case errors.As(err, &hostname):
		return "the broker's certificate is not for the host this worker dialled: fix the certificate or advertised.listeners, or set ssl.endpoint.identification.algorithm= (empty) to skip the check"
	case strings.Contains(msg, "certificate required"),
		// Java's broker answers a missing certificate with this alert.
		strings.Contains(msg, "tls: bad certificate") && sec != nil && sec.TLS != nil && len(sec.TLS.Certificates) == 0:
		return "the broker requires a client certificate and this worker sent none: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)"
	case strings.Contains(msg, "tls: bad certificate"), strings.Contains(msg, "tls: certificate unknown"), strings.Contains(msg, "tls: unknown certificate authority"),
		strings.Contains(msg, "tls: certificate expired"), strings.Contains(msg, "tls: certificate revoked"):
		return "the broker refused this worker's client certificate (not signed by a CA it trusts, or expired): check ssl.keystore.*"
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the broker's listener does not speak TLS: check security.protocol (SSL or SASL_SSL against a PLAINTEXT or SASL_PLAINTEXT listener)"
	case sec != nil && sec.TLS == nil && (errors.Is(err, io.EOF) || strings.Contains(msg, "EOF")):
		return "the broker closed the connection: if its listener uses TLS or SASL, set security.protocol (SSL, SASL_PLAINTEXT or SASL_SSL) and the matching settings"
	}
	return ""
}

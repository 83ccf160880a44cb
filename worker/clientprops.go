package worker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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
		case "retry.backoff.ms":
			if d, err = ms(v); err == nil {
				opts = append(opts, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
			}
		default:
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
// client refuses the value of each override key it refuses.
func overrideErrors(conn map[string]string) map[string]string {
	errs := map[string]string{}
	for k, v := range conn {
		for _, prefix := range []string{producerOverride, consumerOverride, adminOverride} {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok || rest == "" {
				continue
			}
			if _, _, err := kafkaClientOpts(map[string]string{rest: v}); err != nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner // without the key and value, which the caller names
				}
				errs[k] = err.Error()
			}
		}
	}
	return errs
}

// requestBound is franz-go's bound on one request or response
// (BrokerMaxWriteBytes, BrokerMaxReadBytes) for n bytes of records: its
// default, 100 MiB, unless n and the framing need more (at most 1 GiB).
func requestBound(n int32) int32 {
	return int32(min(max(int64(n)+1<<20, 100<<20), 1<<30))
}

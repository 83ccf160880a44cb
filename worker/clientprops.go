package worker

import (
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
			}
		case "max.partition.fetch.bytes":
			if n, err = num(v); err == nil {
				opts = append(opts, kgo.FetchMaxPartitionBytes(n))
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
	return opts, ignored, nil
}

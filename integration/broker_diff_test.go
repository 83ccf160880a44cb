package integration

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// diffTarget is one of the two brokers a differential test runs against.
type diffTarget struct {
	name string // "kafka" or "tributary"
	bs   string
	cl   *kgo.Client // requests pinned to the versions Tributary advertises
}

// diffTargets starts Apache Kafka 4.4 and Tributary's broker, both with
// automatic topic creation off, and returns clients whose request versions
// are capped at what Tributary's broker advertises, so that both brokers
// answer the same request versions.
func diffTargets(t *testing.T, kafkaProps ...map[string]string) []diffTarget {
	t.Helper()
	opts := []harness.KafkaOption{harness.WithServerProperty("auto.create.topics.enable", "false")}
	for _, p := range kafkaProps {
		opts = append(opts, harness.WithServerProperties(p))
	}
	k := harness.ApacheKafka(t, opts...)
	b := harness.TributaryBroker(t, func(c *broker.Config) { c.AutoCreateTopics = false })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, newClient(t, b.Bootstrap()))
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	vs := kversion.FromApiVersionsResponse(av)
	return []diffTarget{
		{"kafka", k.Bootstrap(), newClient(t, k.Bootstrap(), kgo.MaxVersions(vs))},
		{"tributary", b.Bootstrap(), newClient(t, b.Bootstrap(), kgo.MaxVersions(vs))},
	}
}

// diff fails t when Kafka's result (first) differs from Tributary's.
func diff[T any](t *testing.T, what string, kafka, trib T) {
	t.Helper()
	if !reflect.DeepEqual(kafka, trib) {
		t.Errorf("%s differs:\n  kafka:     %+v\n  tributary: %+v", what, kafka, trib)
	}
}

// request issues req on tg's client and fails t on a transport error.
func request[R kmsg.Response](ctx context.Context, t *testing.T, tg diffTarget, req kmsg.Request) R {
	t.Helper()
	resp, err := tg.cl.Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %T: %v", tg.name, req, err)
	}
	return resp.(R)
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return fmt.Sprint(code)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// direct issues req to node 1 (the only broker of both targets) without
// franz-go's sharding, which would answer some requests for unknown topics
// from its metadata.
func direct[R kmsg.Response](ctx context.Context, t *testing.T, tg diffTarget, req kmsg.Request) R {
	t.Helper()
	resp, err := tg.cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %T: %v", tg.name, req, err)
	}
	return resp.(R)
}

// rawBatch encodes an uncompressed v2 record batch of values, all with
// timestamp ts.
func rawBatch(ts int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // Length 0 took one varint byte
		recs = r.AppendTo(recs)
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(values) - 1),
		FirstTimestamp:       ts,
		MaxTimestamp:         ts,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(values)),
		Records:              recs,
	}
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(raw[17:], crc)
	return raw
}

// TestBrokerDiff runs the same scenarios against Apache Kafka 4.4 and
// Tributary's broker and compares the results and error codes.
func TestBrokerDiff(t *testing.T) {
	t.Parallel()
	targets := diffTargets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("produce-consume-compression", func(t *testing.T) {
		type rec struct {
			Partition int32
			Offset    int64
			Key, Val  string
			Headers   string
			Codec     string
		}
		for _, codec := range []struct {
			name string
			c    kgo.CompressionCodec
		}{{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}, {"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()}} {
			var results [][]rec
			for _, tg := range targets {
				topic := "diff-codec-" + codec.name
				createTopic(ctx, t, tg.bs, topic, 3, nil)
				cl := newClient(t, tg.bs, kgo.ProducerBatchCompression(codec.c), kgo.RecordPartitioner(kgo.ManualPartitioner()))
				var recs []*kgo.Record
				for i := range 300 {
					recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 3),
						Key: fmt.Appendf(nil, "key-%d", i), Value: []byte(strings.Repeat(fmt.Sprintf("value-%d ", i), 5)),
						Headers: []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}}})
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					t.Fatalf("%s: produce: %v", tg.name, err)
				}
				var got []rec
				for _, r := range consumeRecords(ctx, t, tg.bs, topic, len(recs)) {
					var hs []string
					for _, h := range r.Headers {
						hs = append(hs, h.Key+"="+string(h.Value))
					}
					got = append(got, rec{r.Partition, r.Offset, string(r.Key), string(r.Value), strings.Join(hs, ","), codecName(r.Attrs.CompressionType())})
				}
				slices.SortFunc(got, func(a, b rec) int {
					if a.Partition != b.Partition {
						return int(a.Partition - b.Partition)
					}
					return int(a.Offset - b.Offset)
				})
				if len(got) != 300 || got[0].Codec != codec.name {
					t.Errorf("%s %s: %d records, first %+v", tg.name, codec.name, len(got), got[0])
				}
				results = append(results, got)
			}
			diff(t, "records with "+codec.name, results[0], results[1])
		}
	})

	t.Run("list-offsets", func(t *testing.T) {
		base := time.Now().Add(-time.Hour).UnixMilli()
		type po struct {
			Code      string
			Offset    int64
			Timestamp int64
			Epoch     int32
		}
		queries := []struct {
			name string
			ts   int64
		}{
			{"earliest", -2}, {"latest", -1}, {"max-timestamp", -3}, {"earliest-local", -4},
			{"before-start", base - 1000}, {"first", base}, {"exact-middle", base + 4000},
			{"between", base + 4500}, {"last", base + 9000}, {"after-end", base + 9001},
			{"far-future", base + 1e9},
		}
		var results []map[string]po
		for _, tg := range targets {
			topic := "diff-list-offsets"
			createTopic(ctx, t, tg.bs, topic, 1, nil)
			// Three batches, record i with timestamp base+i*1000, and an
			// out-of-order timestamp in the middle batch.
			cl := newClient(t, tg.bs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for _, r := range [][2]int{{0, 3}, {3, 7}, {7, 10}} {
				var recs []*kgo.Record
				for i := r[0]; i < r[1]; i++ {
					ts := base + int64(i)*1000
					if i == 5 {
						ts = base + 500 // earlier than its neighbours
					}
					recs = append(recs, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%d", i), Timestamp: time.UnixMilli(ts)})
				}
				if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					t.Fatalf("%s: produce: %v", tg.name, err)
				}
			}
			res := map[string]po{}
			for _, q := range queries {
				req := kmsg.NewPtrListOffsetsRequest()
				req.ReplicaID = -1
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = topic
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, q.ts, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				resp := request[*kmsg.ListOffsetsResponse](ctx, t, tg, req)
				p := resp.Topics[0].Partitions[0]
				res[q.name] = po{errName(p.ErrorCode), p.Offset, p.Timestamp, p.LeaderEpoch}
			}
			// The empty topic.
			createTopic(ctx, t, tg.bs, "diff-list-offsets-empty", 1, nil)
			for _, ts := range []int64{-2, -1, -3, base} {
				req := kmsg.NewPtrListOffsetsRequest()
				req.ReplicaID = -1
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "diff-list-offsets-empty"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp, rp.CurrentLeaderEpoch = ts, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				p := request[*kmsg.ListOffsetsResponse](ctx, t, tg, req).Topics[0].Partitions[0]
				res[fmt.Sprintf("empty %d", min(ts, 0))] = po{errName(p.ErrorCode), p.Offset, p.Timestamp, p.LeaderEpoch}
			}
			results = append(results, res)
		}
		for _, q := range sortedKeys((results[0])) {
			diff(t, "ListOffsets "+q, results[0][q], results[1][q])
		}
		// Sanity: by time in the middle is the first record at or after it.
		if got := results[1]["between"]; got.Offset != 6 && got.Offset != 5 {
			t.Errorf("tributary: offset for time between = %+v", got)
		}
	})

	t.Run("create-topics", func(t *testing.T) {
		str := func(s string) *string { return &s }
		type rt = kmsg.CreateTopicsRequestTopic
		mk := func(name string, parts int32, rf int16, cfgs ...string) rt {
			r := kmsg.NewCreateTopicsRequestTopic()
			r.Topic, r.NumPartitions, r.ReplicationFactor = name, parts, rf
			for i := 0; i+1 < len(cfgs); i += 2 {
				c := kmsg.NewCreateTopicsRequestTopicConfig()
				c.Name, c.Value = cfgs[i], str(cfgs[i+1])
				r.Configs = append(r.Configs, c)
			}
			return r
		}
		cases := []struct {
			name         string
			topics       []rt
			validateOnly bool
		}{
			{"with-configs", []rt{mk("ct-configs", 2, 1, "retention.ms", "3600000", "cleanup.policy", "compact", "segment.bytes", "1048576", "max.message.bytes", "2000000")}, false},
			{"defaults", []rt{mk("ct-defaults", -1, -1)}, false},
			{"validate-only", []rt{mk("ct-validate-only", 4, 1)}, true},
			{"partitions-0", []rt{mk("ct-p0", 0, 1)}, false},
			{"partitions-neg", []rt{mk("ct-p-5", -5, 1)}, false},
			{"rf-3", []rt{mk("ct-rf3", 1, 3)}, false},
			{"rf-0", []rt{mk("ct-rf0", 1, 0)}, false},
			{"rf-neg", []rt{mk("ct-rf-5", 1, -5)}, false},
			{"unknown-config", []rt{mk("ct-unknown-cfg", 1, 1, "no.such.config", "1")}, false},
			{"retention-abc", []rt{mk("ct-retention-abc", 1, 1, "retention.ms", "abc")}, false},
			{"segment-bytes-100", []rt{mk("ct-segment-100", 1, 1, "segment.bytes", "100")}, false},
			{"cleanup-policy-bad", []rt{mk("ct-policy-bad", 1, 1, "cleanup.policy", "shred")}, false},
			{"gzip-level-0", []rt{mk("ct-gzip0", 1, 1, "compression.gzip.level", "0")}, true},
			{"gzip-level-minus-1", []rt{mk("ct-gzip-1", 1, 1, "compression.gzip.level", "-1")}, true},
			{"gzip-level-10", []rt{mk("ct-gzip10", 1, 1, "compression.gzip.level", "10")}, true},
			{"dlq-enable-bad", []rt{mk("ct-dlq", 1, 1, "errors.deadletterqueue.group.enable", "maybe")}, true},
			{"max-decompressed-neg", []rt{mk("ct-maxdec", 1, 1, "max.decompressed.message.bytes", "-1")}, true},
			{"max-decompressed-0", []rt{mk("ct-maxdec0", 1, 1, "max.decompressed.message.bytes", "0")}, true},
			{"remote-copy-lag-bytes-neg2", []rt{mk("ct-rclb", 1, 1, "remote.copy.lag.bytes", "-2")}, true},
			{"remote-copy-lag-bytes-neg1", []rt{mk("ct-rclb1", 1, 1, "remote.copy.lag.bytes", "-1")}, true},
			{"remote-copy-lag-ms-neg1", []rt{mk("ct-rclm", 1, 1, "remote.copy.lag.ms", "-1")}, true},
			{"remote-copy-lag-ms-neg2", []rt{mk("ct-rclm2", 1, 1, "remote.copy.lag.ms", "-2")}, true},
			{"lz4-level-0", []rt{mk("ct-lz40", 1, 1, "compression.lz4.level", "0")}, true},
			{"lz4-level-18", []rt{mk("ct-lz418", 1, 1, "compression.lz4.level", "18")}, true},
			{"zstd-level-23", []rt{mk("ct-zstd23", 1, 1, "compression.zstd.level", "23")}, true},
			{"zstd-level-min", []rt{mk("ct-zstdmin", 1, 1, "compression.zstd.level", "-131073")}, true},
			{"retention-ms-neg2", []rt{mk("ct-ret-2", 1, 1, "retention.ms", "-2")}, true},
			{"max-message-bytes-neg", []rt{mk("ct-mmb", 1, 1, "max.message.bytes", "-1")}, true},
			{"min-insync-0", []rt{mk("ct-isr0", 1, 1, "min.insync.replicas", "0")}, true},
			{"min-insync-2", []rt{mk("ct-isr2", 1, 1, "min.insync.replicas", "2")}, true},
			{"timestamp-type-bad", []rt{mk("ct-tst", 1, 1, "message.timestamp.type", "Now")}, true},
			{"dirty-ratio-2", []rt{mk("ct-ratio", 1, 1, "min.cleanable.dirty.ratio", "2")}, true},
			{"bad-name", []rt{mk("bad/name", 1, 1)}, false},
			{"dot-name", []rt{mk("..", 1, 1)}, false},
			{"long-name", []rt{mk(strings.Repeat("x", 250), 1, 1)}, false},
			{"empty-name", []rt{mk("", 1, 1)}, false},
			{"exists", []rt{mk("ct-configs", 1, 1)}, false},
			{"exists-validate-only", []rt{mk("ct-configs", 1, 1)}, true},
			{"duplicate-in-request", []rt{mk("ct-dup", 1, 1), mk("ct-dup", 1, 1)}, false},
			{"assignment", []rt{func() rt {
				r := mk("ct-assign", -1, -1)
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = 0, []int32{1}
				r.ReplicaAssignment = append(r.ReplicaAssignment, a)
				return r
			}()}, false},
			{"assignment-other-broker", []rt{func() rt {
				r := mk("ct-assign-bad", -1, -1)
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = 0, []int32{7}
				r.ReplicaAssignment = append(r.ReplicaAssignment, a)
				return r
			}()}, false},
		}
		type res struct {
			Topic string
			Code  string
			Parts int32
			RF    int16
		}
		for _, c := range cases {
			var results [][]res
			var msgs [][]string
			for _, tg := range targets {
				req := kmsg.NewPtrCreateTopicsRequest()
				req.TimeoutMillis = 30000
				req.Topics = c.topics
				req.ValidateOnly = c.validateOnly
				resp := request[*kmsg.CreateTopicsResponse](ctx, t, tg, req)
				var rs []res
				var ms []string
				for _, st := range resp.Topics {
					rs = append(rs, res{st.Topic, errName(st.ErrorCode), st.NumPartitions, st.ReplicationFactor})
					ms = append(ms, deref(st.ErrorMessage))
				}
				results = append(results, rs)
				msgs = append(msgs, ms)
			}
			diff(t, "CreateTopics "+c.name, results[0], results[1])
			if !slices.Equal(msgs[0], msgs[1]) {
				t.Logf("CreateTopics %s messages:\n  kafka:     %q\n  tributary: %q", c.name, msgs[0], msgs[1])
			}
		}
		// The created topics are visible with their partition counts.
		var parts []map[string]int
		for _, tg := range targets {
			td, err := newAdmin(t, tg.bs).ListTopics(ctx)
			if err != nil {
				t.Fatalf("%s: list topics: %v", tg.name, err)
			}
			m := map[string]int{}
			for _, d := range td {
				if strings.HasPrefix(d.Topic, "ct-") {
					m[d.Topic] = len(d.Partitions)
				}
			}
			parts = append(parts, m)
		}
		diff(t, "topics after CreateTopics", parts[0], parts[1])
	})

	t.Run("describe-configs", func(t *testing.T) {
		type cfg struct {
			Value     string
			Source    kmsg.ConfigSource
			ReadOnly  bool
			Sensitive bool
			Type      kmsg.ConfigType
			Synonyms  string
		}
		overrides := map[string]*string{}
		for k, v := range map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact", "max.message.bytes": "2000000", "segment.bytes": "1048576"} {
			overrides[k] = &v
		}
		var results []map[string]map[string]cfg
		for _, tg := range targets {
			createTopic(ctx, t, tg.bs, "dc-default", 1, nil)
			createTopic(ctx, t, tg.bs, "dc-overridden", 1, overrides)
			byTopic := map[string]map[string]cfg{}
			for _, topic := range []string{"dc-default", "dc-overridden"} {
				req := kmsg.NewPtrDescribeConfigsRequest()
				req.IncludeSynonyms = true
				rr := kmsg.NewDescribeConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
				req.Resources = append(req.Resources, rr)
				resp := request[*kmsg.DescribeConfigsResponse](ctx, t, tg, req)
				r := resp.Resources[0]
				if r.ErrorCode != 0 {
					t.Fatalf("%s: DescribeConfigs %s: %s %s", tg.name, topic, errName(r.ErrorCode), deref(r.ErrorMessage))
				}
				m := map[string]cfg{}
				for _, c := range r.Configs {
					var syn []string
					for _, s := range c.ConfigSynonyms {
						syn = append(syn, fmt.Sprintf("%s=%s(%d)", s.Name, deref(s.Value), s.Source))
					}
					m[c.Name] = cfg{deref(c.Value), c.Source, c.ReadOnly, c.IsSensitive, c.ConfigType, strings.Join(syn, " ")}
				}
				byTopic[topic] = m
			}
			results = append(results, byTopic)
		}
		for _, topic := range []string{"dc-default", "dc-overridden"} {
			k, tr := results[0][topic], results[1][topic]
			for _, name := range sortedKeys((k)) {
				kc, ok := tr[name]
				if !ok {
					if reason, known := missingTopicConfigs[name]; known {
						t.Logf("%s: %s not reported by tributary (known: %s)", topic, name, reason)
						continue
					}
					t.Errorf("%s: config %s = %+v on kafka, missing on tributary", topic, name, k[name])
					continue
				}
				a, b := k[name], kc
				if a.Synonyms != b.Synonyms {
					t.Logf("%s: %s synonyms differ:\n  kafka:     %s\n  tributary: %s", topic, name, a.Synonyms, b.Synonyms)
				}
				a.Synonyms, b.Synonyms = "", ""
				if reason, known := topicConfigDeviations[name]; known && !reflect.DeepEqual(a, b) {
					t.Logf("%s: config %s differs (known: %s):\n  kafka:     %+v\n  tributary: %+v", topic, name, reason, a, b)
					continue
				}
				diff(t, topic+" config "+name, a, b)
			}
			for _, name := range sortedKeys((tr)) {
				if _, ok := k[name]; !ok {
					t.Errorf("%s: config %s reported by tributary only", topic, name)
				}
			}
		}
	})

	t.Run("unknown-topics", func(t *testing.T) {
		const topic = "no-such-topic"
		type res map[string]string
		var results []res
		for _, tg := range targets {
			r := res{}
			// Metadata, allowing auto-creation (which is off on both).
			// Later requests go straight to node 1 (both brokers' id), so
			// that franz-go does not answer from its own metadata.
			mreq := kmsg.NewPtrMetadataRequest()
			mreq.AllowAutoTopicCreation = true
			for _, n := range []string{topic, "bad/name"} {
				mt := kmsg.NewMetadataRequestTopic()
				mt.Topic = kmsg.StringPtr(n)
				mreq.Topics = append(mreq.Topics, mt)
			}
			for _, st := range request[*kmsg.MetadataResponse](ctx, t, tg, mreq).Topics {
				r["metadata "+deref(st.Topic)] = fmt.Sprintf("%s partitions=%d", errName(st.ErrorCode), len(st.Partitions))
			}

			// Produce.
			preq := kmsg.NewPtrProduceRequest()
			preq.Acks, preq.TimeoutMillis = -1, 10000
			pt := kmsg.NewProduceRequestTopic()
			pt.Topic = topic
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Records = rawBatch(time.Now().UnixMilli(), "a", "b")
			pt.Partitions = append(pt.Partitions, pp)
			preq.Topics = append(preq.Topics, pt)
			for _, st := range direct[*kmsg.ProduceResponse](ctx, t, tg, preq).Topics {
				for _, sp := range st.Partitions {
					r[fmt.Sprintf("produce %s[%d]", st.Topic, sp.Partition)] = fmt.Sprintf("%s offset=%d", errName(sp.ErrorCode), sp.BaseOffset)
				}
			}

			// ListOffsets.
			lreq := kmsg.NewPtrListOffsetsRequest()
			lreq.ReplicaID = -1
			lt := kmsg.NewListOffsetsRequestTopic()
			lt.Topic = topic
			lp := kmsg.NewListOffsetsRequestTopicPartition()
			lp.Timestamp, lp.CurrentLeaderEpoch = -1, -1
			lt.Partitions = append(lt.Partitions, lp)
			lreq.Topics = append(lreq.Topics, lt)
			for _, st := range direct[*kmsg.ListOffsetsResponse](ctx, t, tg, lreq).Topics {
				for _, sp := range st.Partitions {
					r["list-offsets"] = fmt.Sprintf("%s offset=%d ts=%d", errName(sp.ErrorCode), sp.Offset, sp.Timestamp)
				}
			}

			// DescribeConfigs.
			dreq := kmsg.NewPtrDescribeConfigsRequest()
			dr := kmsg.NewDescribeConfigsRequestResource()
			dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			dreq.Resources = append(dreq.Resources, dr)
			for _, sr := range request[*kmsg.DescribeConfigsResponse](ctx, t, tg, dreq).Resources {
				r["describe-configs"] = fmt.Sprintf("%s configs=%d", errName(sr.ErrorCode), len(sr.Configs))
				t.Logf("%s: DescribeConfigs unknown topic message: %q", tg.name, deref(sr.ErrorMessage))
			}

			// DeleteTopics.
			delreq := kmsg.NewPtrDeleteTopicsRequest()
			delreq.TimeoutMillis = 10000
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.Topic = kmsg.StringPtr(topic)
			delreq.Topics = append(delreq.Topics, dt)
			delreq.TopicNames = []string{topic}
			for _, st := range request[*kmsg.DeleteTopicsResponse](ctx, t, tg, delreq).Topics {
				r["delete-topics"] = errName(st.ErrorCode)
				t.Logf("%s: DeleteTopics unknown topic message: %q", tg.name, deref(st.ErrorMessage))
			}

			// CreatePartitions.
			cpreq := kmsg.NewPtrCreatePartitionsRequest()
			cpreq.TimeoutMillis = 10000
			ct := kmsg.NewCreatePartitionsRequestTopic()
			ct.Topic, ct.Count = topic, 3
			cpreq.Topics = append(cpreq.Topics, ct)
			for _, st := range request[*kmsg.CreatePartitionsResponse](ctx, t, tg, cpreq).Topics {
				r["create-partitions"] = errName(st.ErrorCode)
				t.Logf("%s: CreatePartitions unknown topic message: %q", tg.name, deref(st.ErrorMessage))
			}
			results = append(results, r)
		}
		for _, k := range sortedKeys((results[0])) {
			diff(t, k, results[0][k], results[1][k])
		}
		for _, k := range sortedKeys((results[1])) {
			if _, ok := results[0][k]; !ok {
				t.Errorf("%s: only tributary answered: %s", k, results[1][k])
			}
		}
	})

	t.Run("create-partitions", func(t *testing.T) {
		type res struct {
			Code, Message string
			Parts         int
		}
		cases := []struct {
			name         string
			count        int32
			validateOnly bool
		}{
			{"reduce", 2, false}, {"same", 3, false}, {"validate-only", 6, true}, {"grow", 5, false}, {"zero", 0, false},
		}
		var results []map[string]res
		for _, tg := range targets {
			createTopic(ctx, t, tg.bs, "cp-topic", 3, nil)
			m := map[string]res{}
			for _, c := range cases {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.TimeoutMillis, req.ValidateOnly = 10000, c.validateOnly
				ct := kmsg.NewCreatePartitionsRequestTopic()
				ct.Topic, ct.Count = "cp-topic", c.count
				req.Topics = append(req.Topics, ct)
				st := request[*kmsg.CreatePartitionsResponse](ctx, t, tg, req).Topics[0]
				var parts int
				deadline := time.Now().Add(10 * time.Second)
				for {
					td, err := newAdmin(t, tg.bs).ListTopics(ctx, "cp-topic")
					if err != nil {
						t.Fatalf("%s: list topics: %v", tg.name, err)
					}
					parts = len(td["cp-topic"].Partitions)
					// Kafka's metadata catches up asynchronously after a grow.
					if c.name != "grow" || parts == 5 || time.Now().After(deadline) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				m[c.name] = res{errName(st.ErrorCode), deref(st.ErrorMessage), parts}
			}
			results = append(results, m)
		}
		for _, c := range cases {
			diff(t, "CreatePartitions "+c.name, results[0][c.name], results[1][c.name])
		}
	})
}

// missingTopicConfigs are topic configs Apache Kafka 4.4 reports that
// Tributary's broker does not, with the reason.
var missingTopicConfigs = map[string]string{}

// topicConfigDeviations are topic configs whose DescribeConfigs entry
// differs from Apache Kafka 4.4's, with the reason. (Synonym lists are only
// logged, not compared: Kafka lists the broker property that holds each
// default, e.g. log.retention.hours for retention.ms, which depends on its
// own property layout.)
var topicConfigDeviations = map[string]string{
	"min.insync.replicas": "KRaft Kafka 4.x records a cluster-level dynamic min.insync.replicas=1 when the storage is formatted, " +
		"so it reports source DYNAMIC_DEFAULT_BROKER_CONFIG; Tributary has no dynamic broker configs and reports DEFAULT_CONFIG with the same value",
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

package integration

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// txnBatch encodes an uncompressed transactional v2 batch of values for a
// producer, starting at sequence seq.
func txnBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	raw := rawBatch(time.Now().UnixMilli(), values...)
	binary.BigEndian.PutUint16(raw[21:], 0x10) // transactional
	binary.BigEndian.PutUint64(raw[43:], uint64(pid))
	binary.BigEndian.PutUint16(raw[51:], uint16(epoch))
	binary.BigEndian.PutUint32(raw[53:], uint32(seq))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// failFastTargets starts Apache Kafka 4.4 with classic and consumer
// (KIP-848) groups (as this broker has them) and Tributary's broker;
// clients are capped at the versions Tributary advertises.
func failFastTargets(t *testing.T) []diffTarget {
	t.Helper()
	k := harness.ApacheKafka(t, harness.WithServerProperties(map[string]string{
		"auto.create.topics.enable":                                   "false",
		"group.coordinator.rebalance.protocols":                       "classic,consumer",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
	}))
	b := harness.TributaryBroker(t, func(c *broker.Config) {
		c.AutoCreateTopics = false
		c.TransactionAbortInterval = time.Second
	})
	return []diffTarget{
		{"kafka", k.Bootstrap(), newClient(t, k.Bootstrap())},
		{"tributary", b.Bootstrap(), newClient(t, b.Bootstrap())},
	}
}

// TestBrokerTxnDiff runs the same transactional and fail-fast scenarios
// against Apache Kafka 4.4 and Tributary's broker and compares error codes,
// last stable offsets, aborted transaction lists and visible records.
func TestBrokerTxnDiff(t *testing.T) {
	t.Parallel()
	targets := failFastTargets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("fail-fast", func(t *testing.T) {
		var results []map[string]string
		for _, tg := range targets {
			res := map[string]string{}
			createTopic(ctx, t, tg.bs, "ff-diff", 1, nil)
			cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			cgh.Group, cgh.MemberID, cgh.MemberEpoch, cgh.RebalanceTimeoutMillis = "g", "m0000000000000000000000", 0, 30000
			cgh.SubscribedTopicNames = []string{"ff-diff"}
			res["ConsumerGroupHeartbeat"] = errName(direct[*kmsg.ConsumerGroupHeartbeatResponse](ctx, t, tg, cgh).ErrorCode)
			cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
			cgd.Groups = []string{"g"}
			// Kafka answers NOT_COORDINATOR until __consumer_offsets exists
			// (FindCoordinator creates it).
			for {
				code := direct[*kmsg.ConsumerGroupDescribeResponse](ctx, t, tg, cgd).Groups[0].ErrorCode
				if (code != 14 && code != 15 && code != 16) || ctx.Err() != nil {
					res["ConsumerGroupDescribe"] = errName(code)
					break
				}
				fc := kmsg.NewPtrFindCoordinatorRequest()
				fc.CoordinatorKeys = []string{"g"}
				direct[*kmsg.FindCoordinatorResponse](ctx, t, tg, fc)
				time.Sleep(200 * time.Millisecond)
			}

			da := kmsg.NewPtrDescribeACLsRequest()
			da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 1, 1, 1, 1
			dar := direct[*kmsg.DescribeACLsResponse](ctx, t, tg, da)
			res["DescribeAcls"] = errName(dar.ErrorCode) + " " + deref(dar.ErrorMessage)
			ca := kmsg.NewPtrCreateACLsRequest()
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType, c.Principal, c.Host, c.Operation, c.PermissionType = 2, "t", 3, "User:x", "*", 3, 3
			ca.Creations = append(ca.Creations, c)
			car := direct[*kmsg.CreateACLsResponse](ctx, t, tg, ca)
			res["CreateAcls"] = errName(car.Results[0].ErrorCode) + " " + deref(car.Results[0].ErrorMessage)
			dl := kmsg.NewPtrDeleteACLsRequest()
			f := kmsg.NewDeleteACLsRequestFilter()
			f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = 1, 1, 1, 1
			dl.Filters = append(dl.Filters, f)
			dlr := direct[*kmsg.DeleteACLsResponse](ctx, t, tg, dl)
			res["DeleteAcls"] = errName(dlr.Results[0].ErrorCode) + " " + deref(dlr.Results[0].ErrorMessage)

			md := kmsg.NewPtrMetadataRequest()
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr("ff-diff")
			md.Topics = append(md.Topics, mt)
			md.IncludeTopicAuthorizedOperations = true
			res["Metadata topic operations"] = fmt.Sprint(direct[*kmsg.MetadataResponse](ctx, t, tg, md).Topics[0].AuthorizedOperations)
			dc := kmsg.NewPtrDescribeClusterRequest()
			dc.IncludeClusterAuthorizedOperations = true
			res["DescribeCluster operations"] = fmt.Sprint(direct[*kmsg.DescribeClusterResponse](ctx, t, tg, dc).ClusterAuthorizedOperations)
			// A group that exists: a simple offset commit creates it.
			adm := newAdmin(t, tg.bs)
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: "ff-diff", Partition: 0, At: 0, LeaderEpoch: -1})
			if _, err := adm.CommitOffsets(ctx, "ops-group", os); err != nil {
				t.Fatalf("%s: commit: %v", tg.name, err)
			}
			dg := kmsg.NewPtrDescribeGroupsRequest()
			dg.Groups, dg.IncludeAuthorizedOperations = []string{"ops-group"}, true
			dgr := request[*kmsg.DescribeGroupsResponse](ctx, t, tg, dg)
			res["DescribeGroups operations"] = fmt.Sprint(dgr.Groups[0].AuthorizedOperations)

			ldr := direct[*kmsg.DescribeLogDirsResponse](ctx, t, tg, kmsg.NewPtrDescribeLogDirsRequest())
			var parts []string
			for _, d := range ldr.Dirs {
				for _, dt := range d.Topics {
					if dt.Topic == "ff-diff" {
						for _, p := range dt.Partitions {
							parts = append(parts, fmt.Sprintf("%d size=0:%v", p.Partition, p.Size == 0))
						}
					}
				}
				res["DescribeLogDirs volume sizes known"] = fmt.Sprint(d.TotalBytes > 0 && d.UsableBytes > 0)
			}
			res["DescribeLogDirs dirs"] = fmt.Sprint(len(ldr.Dirs))
			res["DescribeLogDirs ff-diff"] = strings.Join(parts, ",")
			results = append(results, res)
		}
		for _, k := range sortedKeys(results[0]) {
			diff(t, k, results[0][k], results[1][k])
		}
	})

	t.Run("broker-configs", func(t *testing.T) {
		var got []map[string]kmsg.DescribeConfigsResponseResourceConfig
		for _, tg := range targets {
			req := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = 4, "1"
			req.Resources = append(req.Resources, rr)
			req.IncludeDocumentation = true
			m := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
			for _, c := range direct[*kmsg.DescribeConfigsResponse](ctx, t, tg, req).Resources[0].Configs {
				m[c.Name] = c
			}
			got = append(got, m)
		}
		kafka, trib := got[0], got[1]
		t.Logf("broker configs: kafka %d, tributary %d", len(kafka), len(trib))
		for name, tc := range trib {
			if strings.HasPrefix(name, "tributary.") {
				continue
			}
			kc, ok := kafka[name]
			if !ok {
				t.Errorf("tributary reports %s, which Apache Kafka 4.4 does not have", name)
				continue
			}
			diff(t, name+" type", kc.ConfigType, tc.ConfigType)
		}
		// Settings both brokers have at the same value here.
		for _, name := range []string{
			"broker.id", "node.id", "num.partitions", "default.replication.factor", "auto.create.topics.enable",
			"delete.topic.enable", "log.retention.hours", "log.retention.ms", "log.retention.bytes",
			"log.segment.bytes", "log.roll.hours", "message.max.bytes", "log.cleanup.policy",
			"log.cleaner.enable", "log.cleaner.min.cleanable.ratio", "log.cleaner.delete.retention.ms",
			"log.index.interval.bytes", "compression.type", "min.insync.replicas", "group.min.session.timeout.ms",
			"group.max.session.timeout.ms", "transaction.max.timeout.ms", "transactional.id.expiration.ms",
			"transaction.state.log.num.partitions", "offsets.topic.num.partitions", "group.coordinator.rebalance.protocols",
			"socket.request.max.bytes", "authorizer.class.name", "log.message.timestamp.type",
		} {
			kc, tc := kafka[name], trib[name]
			diff(t, name+" value", deref(kc.Value), deref(tc.Value))
		}
	})

	t.Run("transactions", func(t *testing.T) {
		var results []map[string]string
		for _, tg := range targets {
			results = append(results, txnScenario(ctx, t, tg))
		}
		for _, k := range sortedKeys(results[0]) {
			diff(t, k, results[0][k], results[1][k])
		}
	})
}

// txnScenario drives one broker through a fixed sequence of raw
// transactional requests and reports what each answered, in terms that do
// not depend on the broker's producer ids.
func txnScenario(ctx context.Context, t *testing.T, tg diffTarget) map[string]string {
	t.Helper()
	res := map[string]string{}
	topic := "txn-diff"
	createTopic(ctx, t, tg.bs, topic, 2, nil)
	// Requests at fixed versions: transaction version 1 (Produce v11,
	// EndTxn v4) and 2 (Produce v12, EndTxn v5); Fetch v12 (topic names).
	pinned := func(produce, endTxn int16) diffTarget {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(0, produce)
		vs.SetMaxKeyVersion(1, 12)
		vs.SetMaxKeyVersion(24, 3)
		vs.SetMaxKeyVersion(26, endTxn)
		return diffTarget{tg.name, tg.bs, newClient(t, tg.bs, kgo.MaxVersions(vs))}
	}
	tv1, tv2 := pinned(11, 4), pinned(12, 5)

	// Apache Kafka answers COORDINATOR_NOT_AVAILABLE while it creates
	// __transaction_state on the first request; both end up answering.
	for {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, "t1", []string{"t1"}
		fcr := request[*kmsg.FindCoordinatorResponse](ctx, t, tg, fc)
		code := fcr.ErrorCode
		if len(fcr.Coordinators) > 0 {
			code = fcr.Coordinators[0].ErrorCode
		}
		if code == 0 || ctx.Err() != nil {
			res["FindCoordinator(transaction)"] = errName(code)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// InitProducerId: a timeout above transaction.max.timeout.ms, then a
	// good one (Kafka may need a moment to load __transaction_state).
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr("t1"), 1_000_000
	res["InitProducerId timeout too large"] = errName(request[*kmsg.InitProducerIDResponse](ctx, t, tg, ip).ErrorCode)
	var pid int64
	var epoch int16
	ip.TransactionTimeoutMillis = 60000
	for {
		r := request[*kmsg.InitProducerIDResponse](ctx, t, tg, ip)
		if r.ErrorCode == 0 {
			pid, epoch = r.ProducerID, r.ProducerEpoch
			res["InitProducerId"] = fmt.Sprintf("NONE epoch=%d", epoch)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: InitProducerId: %s", tg.name, errName(r.ErrorCode))
		}
		time.Sleep(100 * time.Millisecond)
	}

	add := func(name, id string, p int64, e int16, parts ...int32) {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, p, e
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = topic, parts
		req.Topics = append(req.Topics, rt)
		resp := request[*kmsg.AddPartitionsToTxnResponse](ctx, t, tv1, req)
		var codes []string
		for _, st := range resp.Topics {
			for _, sp := range st.Partitions {
				codes = append(codes, fmt.Sprintf("%d:%s", sp.Partition, errName(sp.ErrorCode)))
			}
		}
		slices.Sort(codes) // Kafka answers in no particular order
		res[name] = strings.Join(codes, ",")
	}
	add("AddPartitionsToTxn unknown transactional id", "nope", pid, epoch, 0)
	add("AddPartitionsToTxn stale epoch", "t1", pid, epoch-1, 0)
	add("AddPartitionsToTxn unknown partition", "t1", pid, epoch, 0, 7)
	add("AddPartitionsToTxn wrong producer id", "t1", pid+1000, epoch, 0)

	// A transactional produce to a partition not added (v11, KIP-890 part 1).
	produce := func(name string, version int16, e int16, seq int32, partition int32, values ...string) {
		on := tv1
		if version >= 12 {
			on = tv2
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 10000
		req.TransactionID = kmsg.StringPtr("t1")
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = partition, txnBatch(pid, e, seq, values...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := direct[*kmsg.ProduceResponse](ctx, t, on, req)
		res[name] = errName(resp.Topics[0].Partitions[0].ErrorCode)
	}
	produce("Produce to a partition outside the transaction", 11, epoch, 0, 1, "x")

	end := func(name string, version int16, e int16, commit bool) (int64, int16) {
		on := tv1
		if version >= 5 {
			on = tv2
		}
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "t1", pid, e, commit
		for {
			resp := request[*kmsg.EndTxnResponse](ctx, t, on, req)
			if resp.ErrorCode == 51 && ctx.Err() == nil { // CONCURRENT_TRANSACTIONS: markers being written
				time.Sleep(50 * time.Millisecond)
				continue
			}
			res[name] = errName(resp.ErrorCode)
			if version >= 5 && resp.ErrorCode == 0 {
				res[name] += fmt.Sprintf(" epoch+%d samepid=%v", resp.ProducerEpoch-e, resp.ProducerID == pid)
			}
			return resp.ProducerID, resp.ProducerEpoch
		}
	}
	end("EndTxn(commit) with no transaction, v4", 4, epoch, true)

	// settled waits until t1's markers are written: Kafka answers EndTxn v4
	// once the transaction is PrepareCommit/PrepareAbort and writes the
	// markers after, so a produce sent at once can land before them (and
	// be aborted with the previous transaction).
	settled := func() {
		dt := kmsg.NewPtrDescribeTransactionsRequest()
		dt.TransactionalIDs = []string{"t1"}
		for {
			s := request[*kmsg.DescribeTransactionsResponse](ctx, t, tg, dt).TransactionStates[0].State
			if s == "CompleteCommit" || s == "CompleteAbort" || s == "Empty" {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: t1 still %s", tg.name, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Transaction A: 3 records in partition 0, committed (TV1: v4).
	add("AddPartitionsToTxn", "t1", pid, epoch, 0)
	produce("Produce A", 11, epoch, 0, 0, "a1", "a2", "a3")
	end("EndTxn(commit) A, v4", 4, epoch, true)
	end("EndTxn(commit) A retried, v4", 4, epoch, true)
	end("EndTxn(abort) after a commit, v4", 4, epoch, false)
	settled()
	// Transaction B: 2 records, aborted.
	add("AddPartitionsToTxn B", "t1", pid, epoch, 0)
	produce("Produce B", 11, epoch, 3, 0, "b1", "b2")
	end("EndTxn(abort) B, v4", 4, epoch, false)
	settled()
	// Transaction C: TV2 (Produce v12 adds the partition, EndTxn v5
	// bumps the epoch), left open while we fetch.
	produce("Produce C v12 (implicit add)", 12, epoch, 5, 0, "c1")

	fetch := func(name string, isolation int8) {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 100, 1, 1<<20
		req.IsolationLevel = isolation
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = topic
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, 0, 1<<20, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		resp := direct[*kmsg.FetchResponse](ctx, t, tv1, req)
		p := resp.Topics[0].Partitions[0]
		var aborted []string
		for _, a := range p.AbortedTransactions {
			aborted = append(aborted, fmt.Sprintf("first=%d samepid=%v", a.FirstOffset, a.ProducerID == pid))
		}
		var recs []string
		for raw := p.RecordBatches; len(raw) >= 61; {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(raw); err != nil {
				break
			}
			kind := "data"
			if rb.Attributes&0x20 != 0 {
				kind = "control"
			}
			recs = append(recs, fmt.Sprintf("%d+%d %s", rb.FirstOffset, rb.LastOffsetDelta, kind))
			raw = raw[12+int(rb.Length):]
		}
		res[name] = fmt.Sprintf("%s hwm=%d lso=%d aborted=%v batches=%v", errName(p.ErrorCode), p.HighWatermark, p.LastStableOffset, aborted, recs)
	}
	fetch("Fetch read_committed with C open", 1)
	fetch("Fetch read_uncommitted with C open", 0)

	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"t1", "unknown"}
	dtr := request[*kmsg.DescribeTransactionsResponse](ctx, t, tg, dt)
	for _, s := range dtr.TransactionStates {
		var tps []string
		for _, tt := range s.Topics {
			tps = append(tps, fmt.Sprintf("%s%v", tt.Topic, tt.Partitions))
		}
		res["DescribeTransactions "+s.TransactionalID] = fmt.Sprintf("%s %s timeout=%d started=%v partitions=%v",
			errName(s.ErrorCode), s.State, s.TimeoutMillis, s.StartTimestamp > 0, tps)
	}
	lt := kmsg.NewPtrListTransactionsRequest()
	lt.StateFilters = []string{"Ongoing", "Bogus"}
	ltr := request[*kmsg.ListTransactionsResponse](ctx, t, tg, lt)
	var listed []string
	for _, s := range ltr.TransactionStates {
		listed = append(listed, s.TransactionalID+"="+s.TransactionState)
	}
	slices.Sort(listed)
	res["ListTransactions Ongoing"] = fmt.Sprintf("%s %v unknown=%v", errName(ltr.ErrorCode), listed, ltr.UnknownStateFilters)

	// InitProducerId while C is open fences it: CONCURRENT_TRANSACTIONS,
	// then a retry gets a later epoch and C is aborted.
	ip.ProducerID, ip.ProducerEpoch = -1, -1
	first := request[*kmsg.InitProducerIDResponse](ctx, t, tg, ip)
	res["InitProducerId with a transaction open"] = errName(first.ErrorCode)
	for {
		r := request[*kmsg.InitProducerIDResponse](ctx, t, tg, ip)
		if r.ErrorCode == 0 {
			res["InitProducerId retried"] = fmt.Sprintf("NONE samepid=%v epoch+%d", r.ProducerID == pid, r.ProducerEpoch-epoch)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: InitProducerId retry: %s", tg.name, errName(r.ErrorCode))
		}
		time.Sleep(50 * time.Millisecond)
	}
	end("EndTxn by the fenced producer", 5, epoch, true)
	fetch("Fetch read_committed after the fence", 1)

	// A whole TV2 transaction with franz-go and a read_committed consumer.
	prod := newClient(t, tg.bs, kgo.TransactionalID("t2"), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i, commit := range []bool{true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: fmt.Appendf(nil, "t2-%d", i)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", tg.name, err)
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("%s: end: %v", tg.name, err)
		}
	}
	var vals []string
	for _, r := range pollRecords(ctx, t, tg.bs, topic, 5, 10*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
		vals = append(vals, fmt.Sprintf("%s@%d/%d", r.Value, r.Partition, r.Offset))
	}
	slices.Sort(vals)
	res["franz-go read_committed"] = strings.Join(vals, " ")
	return res
}

// pollRecords reads topic from the start until n records arrived or d
// passed, and returns what arrived.
func pollRecords(ctx context.Context, t *testing.T, bootstrap, topic string, n int, d time.Duration, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cl := newClient(t, bootstrap, append([]kgo.Opt{kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	return got
}

package integration

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/connectors/mirror"
	"github.com/tributary-dev/tributary/integration/harness"
)

// byteArrayConverters are the converters connect-mirror-maker.sh forces
// for MirrorMaker 2; on a plain Kafka Connect cluster each MM2 connector
// sets them (Tributary's worker forces them too, and takes them as given).
var byteArrayConverters = map[string]string{
	"key.converter":    "org.apache.kafka.connect.converters.ByteArrayConverter",
	"value.converter":  "org.apache.kafka.connect.converters.ByteArrayConverter",
	"header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
}

// TestMirrorDifferentialMM2 runs Kafka's MirrorMaker 2 (the connect-mirror
// 4.3.1 connectors in Kafka Connect 4.4) and Tributary's mirror side by
// side from one source cluster A (Apache Kafka 4.4) with one workload: MM2
// mirrors A to B, Tributary mirrors A to C (B and C are bundled brokers,
// so their topic configs compare), with the same connector configs. Both
// must give the same remote topic names, partition counts and configs,
// the same records, the same internal topics (offset syncs on A,
// checkpoints and heartbeats on the target) with the same configs,
// offset-sync, checkpoint and heartbeat records in the same byte format,
// the same offset syncs and checkpoints where the workload makes them
// deterministic (the first and last sync of each partition; groups at the
// start and the end of each partition), and the same offsets synced into
// the target's groups.
func TestMirrorDifferentialMM2(t *testing.T) {
	t.Parallel()
	a := harness.ApacheKafka(t).Bootstrap()
	if jars, _ := filepath.Glob(filepath.Join(harness.JarsDir(), "connect-mirror-[0-9]*.jar")); len(jars) == 0 {
		t.Fatalf("no connect-mirror jar in %s: run bash integration/fetch-jars.sh", harness.JarsDir())
	}
	b := harness.TributaryBroker(t).Bootstrap()
	c := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, b, harness.WithConnectGroup("mm2-diff"),
		harness.WithWorkerProperty("offset.flush.interval.ms", "1000"))
	mm2 := rest{t, kc.URL()}

	// The workload on A, before either mirror starts.
	const perPartition = 1000
	src := mirrorClient(t, a)
	retention, maxBytes, minISR := "123456789", "2000000", "1"
	mirrorCreateTopic(t, src, "orders", 3, map[string]*string{"retention.ms": &retention, "max.message.bytes": &maxBytes, "min.insync.replicas": &minISR})
	mirrorCreateTopic(t, src, "events", 1, nil)
	mirrorCreateTopic(t, src, "skip.internal", 1, nil) // copied since Kafka 4.x
	mirrorCreateTopic(t, src, "skip.replica", 1, nil)  // excluded by topics.exclude
	mirrorProduce(t, src, "orders", 3, 0, 3*perPartition)
	mirrorProduce(t, src, "events", 1, 0, 50)
	mirrorProduce(t, src, "skip.internal", 1, 0, 10)
	mirrorProduce(t, src, "skip.replica", 1, 0, 10)
	groups := map[string]map[int32]int64{
		"zero": {0: 0, 1: 0, 2: 0},
		"tail": {0: perPartition, 1: perPartition, 2: perPartition},
		"app":  {0: 400, 1: 777, 2: 5},
	}
	for g, offs := range groups {
		commitGroupMeta(t, a, g, "orders", offs, "meta-"+g)
	}

	cfgs := func(tgt, tgtAddr string) map[string]map[string]string {
		return mirrorConfigs("A", a, tgt, tgtAddr, byteArrayConverters)
	}
	startMirror(mm2, "mm2", cfgs("B", b))
	ours, w, _ := mirrorWorker(t, c, "mirror-ac")
	startMirror(ours, "trib", cfgs("C", c))
	// The same task split: the partitions, and the three groups, over
	// tasks.max = 2 tasks; one heartbeat task.
	for prefix, r := range map[string]rest{"mm2": mm2, "trib": ours} {
		r.waitState(prefix+"-source", "RUNNING", 2)
		r.waitState(prefix+"-checkpoint", "RUNNING", 2)
		r.waitState(prefix+"-heartbeat", "RUNNING", 1)
	}

	// Records: the same copies in the same partitions on both targets.
	want := 3 * perPartition
	javaOrders := readPartitions(t, b, "A.orders", want, 60*time.Second)
	ourOrders := readPartitions(t, c, "A.orders", want, 60*time.Second)
	for p := range int32(3) {
		if len(javaOrders[p]) != len(ourOrders[p]) {
			t.Fatalf("A.orders-%d: MM2 copied %d records, Tributary %d", p, len(javaOrders[p]), len(ourOrders[p]))
		}
		for i := range javaOrders[p] {
			if d := sameRecord(javaOrders[p][i], ourOrders[p][i]); d != "" {
				t.Fatalf("A.orders-%d record %d: MM2's copy and Tributary's differ: %s", p, i, d)
			}
			if javaOrders[p][i].Offset != ourOrders[p][i].Offset {
				t.Fatalf("A.orders-%d record %d at offset %d (MM2) and %d (Tributary)", p, i, javaOrders[p][i].Offset, ourOrders[p][i].Offset)
			}
		}
	}
	for _, addr := range []string{b, c} {
		readPartitions(t, addr, "A.events", 50, 30*time.Second)
		readPartitions(t, addr, "A.skip.internal", 10, 30*time.Second)
	}

	// Checkpoints: wait until both have checkpointed every group, with the
	// deterministic ones exact.
	var javaCPs, ourCPs map[string]*kgo.Record
	for _, side := range []struct {
		addr string
		cps  *map[string]*kgo.Record
	}{{b, &javaCPs}, {c, &ourCPs}} {
		mirrorWait(t, 60*time.Second, "checkpoints on "+side.addr, func() string {
			*side.cps = latestCheckpoints(t, side.addr)
			for g, offs := range groups {
				for p, u := range offs {
					rec, ok := (*side.cps)[fmt.Sprintf("%s/A.orders-%d", g, p)]
					if !ok {
						return fmt.Sprintf("no checkpoint of %s/A.orders-%d (have %v)", g, p, mirrorKeys(*side.cps))
					}
					cp, _ := mirror.DecodeCheckpoint(rec.Key, rec.Value)
					if cp.Upstream != u || (g != "app" && cp.Downstream != u) {
						return fmt.Sprintf("checkpoint %+v not yet at %d", cp, u)
					}
				}
			}
			return ""
		})
	}
	if ks, ko := mirrorKeys(javaCPs), mirrorKeys(ourCPs); !slices.Equal(ks, ko) {
		t.Errorf("checkpointed group partitions: MM2 %v, Tributary %v", ks, ko)
	}
	for _, k := range mirrorKeys(javaCPs) {
		jr, or := javaCPs[k], ourCPs[k]
		if or == nil {
			continue
		}
		jc, jerr := mirror.DecodeCheckpoint(jr.Key, jr.Value)
		oc, oerr := mirror.DecodeCheckpoint(or.Key, or.Value)
		if jerr != nil || oerr != nil {
			t.Fatalf("checkpoint %s: decoding MM2's: %v, Tributary's: %v", k, jerr, oerr)
		}
		// The byte format: each side's record is what the other's fields
		// encode to.
		if !bytes.Equal(jr.Key, jc.Key()) || !bytes.Equal(jr.Value, jc.Value()) {
			t.Errorf("checkpoint %s: MM2's bytes %x/%x are not the encoding of %+v", k, jr.Key, jr.Value, jc)
		}
		if !bytes.Equal(or.Key, oc.Key()) || !bytes.Equal(or.Value, oc.Value()) {
			t.Errorf("checkpoint %s: Tributary's bytes %x/%x are not the encoding of %+v", k, or.Key, or.Value, oc)
		}
		if !bytes.Equal(jr.Key, or.Key) {
			t.Errorf("checkpoint %s: keys differ: MM2 %x, Tributary %x", k, jr.Key, or.Key)
		}
		if jc.Downstream > jc.Upstream || oc.Downstream > oc.Upstream {
			t.Errorf("checkpoint %s: downstream past upstream: MM2 %+v, Tributary %+v", k, jc, oc)
		}
		if strings.HasPrefix(k, "app/") {
			// Mid-partition: the translation depends on which syncs each
			// store kept (timing), so only the upstream side must agree.
			if jc.Upstream != oc.Upstream || jc.Metadata != oc.Metadata {
				t.Errorf("checkpoint %s: MM2 %+v, Tributary %+v", k, jc, oc)
			}
			t.Logf("checkpoint %s: MM2 downstream %d, Tributary %d (upstream %d)", k, jc.Downstream, oc.Downstream, jc.Upstream)
			continue
		}
		if jc != oc || !bytes.Equal(jr.Value, or.Value) {
			t.Errorf("checkpoint %s: MM2 %+v (%x), Tributary %+v (%x)", k, jc, jr.Value, oc, or.Value)
		}
	}

	// Offset syncs on A: one topic per target, partition 0, the same
	// format; a copy from empty keeps downstream == upstream, and the first
	// and last sync of each partition are the same.
	javaSyncs := offsetSyncs(t, a, "mm2-offset-syncs.B.internal")
	ourSyncs := offsetSyncs(t, a, "mm2-offset-syncs.C.internal")
	for p := range int32(3) {
		tp := fmt.Sprintf("orders-%d", p)
		js, ts := javaSyncs[tp], ourSyncs[tp]
		if len(js) == 0 || len(ts) == 0 {
			t.Fatalf("offset syncs of %s: %d from MM2, %d from Tributary", tp, len(js), len(ts))
		}
		for _, s := range slices.Concat(js, ts) {
			if s.Downstream != s.Upstream {
				t.Errorf("offset sync %+v: downstream != upstream", s)
			}
		}
		if js[0] != ts[0] || js[len(js)-1] != ts[len(ts)-1] {
			t.Errorf("offset syncs of %s: MM2 from %+v to %+v, Tributary from %+v to %+v", tp, js[0], js[len(js)-1], ts[0], ts[len(ts)-1])
		}
		if last := js[len(js)-1]; last.Upstream != perPartition-1 {
			t.Errorf("MM2's last offset sync of %s: %+v, want upstream %d", tp, last, perPartition-1)
		}
		t.Logf("offset syncs of %s: MM2 %d, Tributary %d (MM2 %v; Tributary %v)", tp, len(js), len(ts), upstreams(js), upstreams(ts))
	}

	// Heartbeats on each target: the same format, with each flow's aliases.
	for _, side := range []struct{ name, addr, target string }{{"MM2", b, "B"}, {"Tributary", c, "C"}} {
		hbs := readPartitions(t, side.addr, "heartbeats", 1, 30*time.Second)
		rec := hbs[0][len(hbs[0])-1]
		h, err := mirror.DecodeHeartbeat(rec.Key, rec.Value)
		if err != nil || h.Source != "A" || h.Target != side.target {
			t.Errorf("%s's heartbeat %+v: %v", side.name, h, err)
		}
		if !bytes.Equal(rec.Key, h.Key()) || !bytes.Equal(rec.Value, h.Value()) || len(rec.Value) != 10 {
			t.Errorf("%s's heartbeat bytes %x/%x are not Kafka's encoding of %+v", side.name, rec.Key, rec.Value, h)
		}
		if d := time.UnixMilli(h.Timestamp).Sub(rec.Timestamp); d < -time.Second || d > time.Second {
			t.Errorf("%s's heartbeat: timestamp %d in the value, record timestamp %v", side.name, h.Timestamp, rec.Timestamp)
		}
	}

	// Topics: the same names and partition counts on both targets (but
	// for each worker's own internal topics), and the same configs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	javaTopics := mirroredTopics(ctx, t, b, "mm2-diff-")
	ourTopics := mirroredTopics(ctx, t, c, "mirror-ac-")
	if !maps.Equal(javaTopics, ourTopics) {
		t.Errorf("topics on the target (name: partitions): MM2 %v, Tributary %v", javaTopics, ourTopics)
	}
	t.Logf("topics on both targets: %v", javaTopics)
	for _, topic := range mirrorKeys(javaTopics) {
		jc, oc := topicConfigs(ctx, t, b, topic), topicConfigs(ctx, t, c, topic)
		if !maps.Equal(jc, oc) {
			t.Errorf("configs of %s: MM2 %v, Tributary %v", topic, jc, oc)
		}
		t.Logf("configs of %s: %v", topic, jc)
	}
	if jc, oc := topicConfigs(ctx, t, a, "mm2-offset-syncs.B.internal"), topicConfigs(ctx, t, a, "mm2-offset-syncs.C.internal"); !maps.Equal(jc, oc) {
		t.Errorf("configs of the offset-syncs topic: MM2 %v, Tributary %v", jc, oc)
	}

	// Group offsets synced into each target's groups (unknown there, so
	// written whole): the same for the groups whose checkpoints agree.
	for _, g := range []string{"zero", "tail"} {
		mirrorWait(t, 30*time.Second, g+"'s offsets synced", func() string {
			jo, jerr := kadmClient(t, b).FetchOffsets(ctx, g)
			oo, oerr := kadmClient(t, c).FetchOffsets(ctx, g)
			if jerr != nil || oerr != nil {
				return fmt.Sprintf("MM2: %v, Tributary: %v", jerr, oerr)
			}
			for p, u := range groups[g] {
				j, jok := jo.Lookup("A.orders", p)
				o, ook := oo.Lookup("A.orders", p)
				if !jok || !ook || j.At != u || o.At != u {
					return fmt.Sprintf("partition %d: MM2 %v (%v), Tributary %v (%v), want %d", p, j.At, jok, o.At, ook, u)
				}
			}
			return ""
		})
	}
	if t.Failed() {
		t.Logf("Tributary worker log: %s", w.LogPath())
	}
}

// commitGroupMeta commits offsets of topic for group on addr with the
// commit metadata meta (which checkpoints carry).
func commitGroupMeta(t *testing.T, addr, group, topic string, offsets map[int32]int64, meta string) {
	t.Helper()
	offs := kadm.Offsets{}
	for p, o := range offsets {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1, Metadata: meta})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadmClient(t, addr).CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// latestCheckpoints reads A.checkpoints.internal on addr: the last record
// per group, topic and partition, undecoded.
func latestCheckpoints(t *testing.T, addr string) map[string]*kgo.Record {
	t.Helper()
	out := map[string]*kgo.Record{}
	for _, rec := range readPartitionsNow(t, addr, "A.checkpoints.internal")[0] {
		cp, err := mirror.DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil {
			t.Fatalf("checkpoint at %d on %s: %v", rec.Offset, addr, err)
		}
		out[fmt.Sprintf("%s/%s-%d", cp.Group, cp.Topic, cp.Partition)] = rec
	}
	return out
}

// offsetSyncs reads the offset-syncs topic on addr, by topic-partition in
// order, checking that every record is the encoding of what it decodes to
// and is in partition 0.
func offsetSyncs(t *testing.T, addr, topic string) map[string][]mirror.OffsetSync {
	t.Helper()
	out := map[string][]mirror.OffsetSync{}
	for p, recs := range readPartitionsNow(t, addr, topic) {
		for _, rec := range recs {
			s, err := mirror.DecodeOffsetSync(rec.Key, rec.Value)
			if err != nil || p != 0 || !bytes.Equal(rec.Key, s.Key()) || !bytes.Equal(rec.Value, s.Value()) {
				t.Fatalf("%s partition %d offset %d: %x/%x decodes to %+v (%v)", topic, p, rec.Offset, rec.Key, rec.Value, s, err)
			}
			tp := fmt.Sprintf("%s-%d", s.Topic, s.Partition)
			out[tp] = append(out[tp], s)
		}
	}
	return out
}

func upstreams(ss []mirror.OffsetSync) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = s.Upstream
	}
	return out
}

// mirroredTopics lists the topics on addr with their partition counts,
// but for internal ones (__…) and the worker's own (workerPrefix…).
func mirroredTopics(ctx context.Context, t *testing.T, addr, workerPrefix string) map[string]int {
	t.Helper()
	topics, err := kadmClient(t, addr).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for name, d := range topics {
		if !strings.HasPrefix(name, "__") && !strings.HasPrefix(name, workerPrefix) {
			out[name] = len(d.Partitions)
		}
	}
	return out
}

// topicConfigs returns the configs set on topic (not the broker's
// defaults).
func topicConfigs(ctx context.Context, t *testing.T, addr, topic string) map[string]string {
	t.Helper()
	rc, err := kadmClient(t, addr).DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := rc.On(topic, nil)
	if err != nil {
		t.Fatalf("configs of %s: %v", topic, err)
	}
	out := map[string]string{}
	for _, c := range cs.Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
			out[c.Key] = *c.Value
		}
	}
	return out
}

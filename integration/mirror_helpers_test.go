package integration

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/mirror"
	"github.com/tributary-dev/tributary/integration/harness"
)

// mirrorClient is a franz-go client of one side of a mirror test.
func mirrorClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// mirrorWorker starts a worker process whose Kafka is target, for the
// mirror connectors.
func mirrorWorker(t *testing.T, target, group string) (rest, *harness.WorkerProcess, func() *harness.WorkerProcess) {
	t.Helper()
	return mirrorWorkerWith(t, target, group, nil)
}

// mirrorWorkerWith is mirrorWorker with extra worker properties.
func mirrorWorkerWith(t *testing.T, target, group string, extra map[string]string) (rest, *harness.WorkerProcess, func() *harness.WorkerProcess) {
	t.Helper()
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "worker-"+group)
	props := harness.WorkerProps(t, target, group, extra)
	w := harness.StartWorkerProcess(t, bin, dir, props)
	restart := func() *harness.WorkerProcess { return harness.StartWorkerProcess(t, bin, dir, props) }
	return rest{t, w.URL()}, w, restart
}

// mirrorConfigs returns the configs of the three connectors mirroring
// the cluster alias src at srcAddr to tgt at tgtAddr, with intervals of a
// second and replication factor 1; extra is added to each.
func mirrorConfigs(src, srcAddr, tgt, tgtAddr string, extra map[string]string) map[string]map[string]string {
	common := map[string]string{
		"source.cluster.alias": src, "target.cluster.alias": tgt,
		"source.cluster.bootstrap.servers": srcAddr, "target.cluster.bootstrap.servers": tgtAddr,
		"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
		"refresh.topics.interval.seconds": "1", "refresh.groups.interval.seconds": "1",
		"sync.topic.configs.interval.seconds": "1", "emit.checkpoints.interval.seconds": "1",
		"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1",
		"emit.heartbeats.interval.seconds": "1", "tasks.max": "2",
	}
	out := map[string]map[string]string{}
	for _, class := range []string{mirror.SourceClass, mirror.CheckpointClass, mirror.HeartbeatClass} {
		c := map[string]string{"connector.class": class}
		for k, v := range common {
			c[k] = v
		}
		for k, v := range extra {
			c[k] = v
		}
		out[class] = c
	}
	return out
}

// startMirror creates the three connectors (named <prefix>-source, …) on r.
func startMirror(r rest, prefix string, cfgs map[string]map[string]string) {
	r.t.Helper()
	for class, name := range map[string]string{mirror.SourceClass: prefix + "-source", mirror.CheckpointClass: prefix + "-checkpoint", mirror.HeartbeatClass: prefix + "-heartbeat"} {
		r.must("PUT", "/connectors/"+name+"/config", cfgs[class], 201)
	}
}

// mirrorCreateTopic creates topic with partitions and configs.
func mirrorCreateTopic(t *testing.T, cl *kgo.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// mirrorProduce writes n records spread over partitions, each with a key
// (null for every tenth), a value, two headers and a timestamp an hour in
// the past (so a copy by the target's clock would show, while the records
// stay within the retention.ms the tests sync to the target: older ones
// would be deleted there by time), and returns them.
func mirrorProduce(t *testing.T, cl *kgo.Client, topic string, partitions int32, from, n int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		j := from + i
		r := &kgo.Record{Topic: topic, Partition: int32(j) % partitions, Value: fmt.Appendf(nil, "value-%07d", j),
			Timestamp: base.Add(time.Duration(j) * time.Millisecond),
			Headers:   []kgo.RecordHeader{{Key: "h1", Value: []byte{0, 1, 2, byte(j)}}, {Key: "h2", Value: nil}}}
		if j%10 != 0 {
			r.Key = fmt.Appendf(nil, "key-%d", j)
		}
		recs[i] = r
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	return recs
}

// readPartitions reads every record of topic up to want in total, by
// partition in offset order, within a deadline.
func readPartitions(t *testing.T, addr, topic string, want int, within time.Duration) map[int32][]*kgo.Record {
	t.Helper()
	cl := mirrorClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := map[int32][]*kgo.Record{}
	n := 0
	deadline := time.Now().Add(within)
	for n < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d records within %v", topic, n, want, within)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], r); n++ })
	}
	return out
}

// sameRecord reports how a copy differs from its original ("" when it is
// the same bytes).
func sameRecord(a, b *kgo.Record) string {
	switch {
	case !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil):
		return fmt.Sprintf("key %q != %q", a.Key, b.Key)
	case !bytes.Equal(a.Value, b.Value):
		return fmt.Sprintf("value %q != %q", a.Value, b.Value)
	case !a.Timestamp.Equal(b.Timestamp):
		return fmt.Sprintf("timestamp %v != %v", a.Timestamp, b.Timestamp)
	case a.Partition != b.Partition:
		return fmt.Sprintf("partition %d != %d", a.Partition, b.Partition)
	case len(a.Headers) != len(b.Headers):
		return fmt.Sprintf("headers %v != %v", a.Headers, b.Headers)
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Sprintf("header %d %v != %v", i, a.Headers[i], b.Headers[i])
		}
	}
	return ""
}

// readCheckpoints decodes the checkpoints topic of alias on addr: the
// latest checkpoint per group, topic and partition.
func readCheckpoints(t *testing.T, addr, topic string) map[string]mirror.Checkpoint {
	t.Helper()
	cl := mirrorClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil
	}
	end, _ := ends.Lookup(topic, 0)
	out := map[string]mirror.Checkpoint{}
	pos := int64(0)
	for pos < end.Offset && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			pos = r.Offset + 1
			cp, err := mirror.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				t.Errorf("checkpoint at %d: %v", r.Offset, err)
				return
			}
			out[fmt.Sprintf("%s/%s-%d", cp.Group, cp.Topic, cp.Partition)] = cp
		})
	}
	return out
}

// commitGroup commits offsets of topic for group on addr.
func commitGroup(t *testing.T, addr, group, topic string, offsets map[int32]int64) {
	t.Helper()
	commitGroupMeta(t, addr, group, topic, offsets, "")
}

// waitFor polls cond every 200 ms until it returns "" or within passes.
func mirrorWait(t *testing.T, within time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not reached within %v: %s", what, within, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mirrorKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func kadmClient(t *testing.T, addr string) *kadm.Client { return kadm.NewClient(mirrorClient(t, addr)) }

package integration

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/mirror"
	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMirrorBundledToApacheKafka mirrors the bundled broker (cluster A)
// to Apache Kafka 4.4 (cluster B) with the three MirrorMaker 2
// connectors on a worker whose Kafka is B: the remote topic A.orders gets
// the source's partition count and configs (and a partition added later),
// every record arrives byte for byte in its partition, internal and
// excluded topics stay behind, the offset syncs and checkpoints are
// Kafka's records, a consumer group's offsets are translated and synced
// into B, and the group moves to B and reads on from there with no record
// lost.
func TestMirrorBundledToApacheKafka(t *testing.T) {
	t.Parallel()
	a := harness.TributaryBroker(t).Bootstrap()
	b := harness.ApacheKafka(t).Bootstrap()
	mirrorScenario(t, a, b, true)
}

// TestMirrorBundledToBundled is the same scenario between two bundled
// brokers (without Java's RemoteClusterUtils): Tributary on both sides.
func TestMirrorBundledToBundled(t *testing.T) {
	t.Parallel()
	a := harness.TributaryBroker(t).Bootstrap()
	b := harness.TributaryBroker(t).Bootstrap()
	mirrorScenario(t, a, b, false)
}

// mirrorScenario mirrors a to b and checks what
// TestMirrorBundledToApacheKafka says; withJava also runs Java's
// RemoteClusterUtils against b.
func mirrorScenario(t *testing.T, a, b string, withJava bool) {
	src := mirrorClient(t, a)
	retention := "123456789"
	mirrorCreateTopic(t, src, "orders", 3, map[string]*string{"retention.ms": &retention})
	mirrorCreateTopic(t, src, "skip.replica", 1, nil)
	first := mirrorProduce(t, src, "orders", 3, 0, 3000)
	mirrorProduce(t, src, "skip.replica", 1, 0, 10)
	// The group "app" read part of each partition on A.
	committed := map[int32]int64{0: 400, 1: 1000, 2: 0}
	commitGroup(t, a, "app", "orders", committed)

	r, w, _ := mirrorWorker(t, b, "mirror-ab")
	startMirror(r, "ab", mirrorConfigs("A", a, "B", b, nil))
	r.waitState("ab-source", "RUNNING", 2)

	got := readPartitions(t, b, "A.orders", len(first), 60*time.Second)
	byPart := map[int32][]*kgo.Record{}
	for _, rec := range first {
		byPart[rec.Partition] = append(byPart[rec.Partition], rec)
	}
	for p, want := range byPart {
		if len(got[p]) != len(want) {
			t.Fatalf("A.orders-%d: %d records, want %d", p, len(got[p]), len(want))
		}
		for i := range want {
			if d := sameRecord(want[i], got[p][i]); d != "" {
				t.Fatalf("A.orders-%d record %d: %s", p, i, d)
			}
		}
	}

	tgt := kadm.NewClient(mirrorClient(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topics, err := tgt.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(topics["A.orders"].Partitions); n != 3 {
		t.Errorf("A.orders has %d partitions, want 3", n)
	}
	for _, name := range []string{"A.skip.replica", "skip.replica", "A.mm2-offset-syncs.B.internal"} {
		if topics.Has(name) {
			t.Errorf("%s was replicated", name)
		}
	}
	rc, err := tgt.DescribeTopicConfigs(ctx, "A.orders")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rc.On("A.orders", nil); err != nil || !hasConfig(c.Configs, "retention.ms", retention) {
		t.Errorf("A.orders configs: retention.ms not synced (%v)", err)
	}

	// The offset-syncs topic on A holds Kafka's records.
	syncs := readPartitions(t, a, "mm2-offset-syncs.B.internal", 3, 30*time.Second)
	for _, rec := range syncs[0] {
		s, err := mirror.DecodeOffsetSync(rec.Key, rec.Value)
		if err != nil || s.Topic != "orders" || s.Downstream != s.Upstream {
			t.Fatalf("offset sync %+v (%v): downstream must equal upstream for a topic copied from empty", s, err)
		}
	}

	// Checkpoints for "app", translated without loss: the downstream
	// offset is at or before the committed one (the copy's offsets equal
	// the source's here). How far before depends on the syncs the
	// OffsetSyncStore kept (Kafka's rules: coarser further from the end).
	// A group at the end of each partition ("tail") translates exactly.
	checkCheckpoints := func(group string, committed map[int32]int64, exact bool) map[string]mirror.Checkpoint {
		var cps map[string]mirror.Checkpoint
		mirrorWait(t, 60*time.Second, "checkpoints of "+group, func() string {
			cps = readCheckpoints(t, b, "A.checkpoints.internal")
			for p, u := range committed {
				cp, ok := cps[fmt.Sprintf("%s/A.orders-%d", group, p)]
				if !ok || cp.Upstream != u {
					return fmt.Sprintf("partition %d: %+v (have %v)", p, cp, mirrorKeys(cps))
				}
				if cp.Downstream > u {
					t.Fatalf("checkpoint %+v: downstream past upstream, records would be skipped", cp)
				}
				if exact && cp.Downstream != u {
					return fmt.Sprintf("checkpoint %+v not exact", cp)
				}
			}
			return ""
		})
		return cps
	}
	commitGroup(t, a, "tail", "orders", map[int32]int64{0: 1000, 1: 1000, 2: 1000})
	checkCheckpoints("tail", map[int32]int64{0: 1000, 1: 1000, 2: 1000}, true)
	checkCheckpoints("app", committed, false)

	// More records and a new partition on A, and the group moves on.
	adm := kadm.NewClient(src)
	if _, err := adm.UpdatePartitions(ctx, 4, "orders"); err != nil {
		t.Fatal(err)
	}
	second := mirrorProduce(t, mirrorClient(t, a), "orders", 4, 3000, 2000)
	committed = map[int32]int64{0: 1200, 1: 1300, 2: 5, 3: 300}
	commitGroup(t, a, "app", "orders", committed)
	cps := checkCheckpoints("app", committed, false)
	mirrorWait(t, 30*time.Second, "A.orders partitions", func() string {
		td, _ := tgt.ListTopics(ctx, "A.orders")
		if n := len(td["A.orders"].Partitions); n != 4 {
			return fmt.Sprintf("%d partitions", n)
		}
		return ""
	})

	// Group sync wrote the checkpoints into the (unknown) group on B.
	mirrorWait(t, 30*time.Second, "app's offsets synced to B", func() string {
		offs, err := tgt.FetchOffsets(ctx, "app")
		if err != nil {
			return err.Error()
		}
		for p := range committed {
			cp := cps[fmt.Sprintf("app/A.orders-%d", p)]
			if o, ok := offs.Lookup("A.orders", p); !ok || o.At != cp.Downstream {
				return fmt.Sprintf("partition %d at %v, checkpoint %d", p, o.At, cp.Downstream)
			}
		}
		return ""
	})

	// The group fails over to B: from its synced offsets it reads every
	// record A had after its committed offsets, none lost.
	want := map[string]bool{}
	for _, rec := range append(first, second...) {
		if rec.Offset >= committed[rec.Partition] {
			want[string(rec.Value)] = true
		}
	}
	wantN := len(want)
	cons := mirrorClient(t, b, kgo.ConsumerGroup("app"), kgo.ConsumeTopics("A.orders"), kgo.DisableAutoCommit())
	seen, dups := map[string]bool{}, 0
	deadline := time.Now().Add(60 * time.Second)
	for missing := len(want); missing > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("after failover to B: %d of %d records after the committed offsets missing (worker log %s)", missing, len(want), w.LogPath())
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cons.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(rec *kgo.Record) {
			v := string(rec.Value)
			if seen[v] {
				dups++
			}
			seen[v] = true
			if want[v] {
				delete(want, v)
				missing--
			}
		})
	}
	t.Logf("failover: %d records read, %d of them before the committed offsets (since the checkpoints' syncs)", len(seen), len(seen)-wantN)

	// Java's RemoteClusterUtils.translateOffsets reads the same offsets
	// from our checkpoints topic.
	if withJava {
		javaTranslation(t, b, "A", "app", func() map[string]int64 {
			out := map[string]int64{}
			for _, cp := range readCheckpoints(t, b, "A.checkpoints.internal") {
				if cp.Group == "app" {
					out[fmt.Sprintf("%s %d", cp.Topic, cp.Partition)] = cp.Downstream
				}
			}
			return out
		})
	}

	// Heartbeats on B, in Kafka's format.
	hbs := readPartitions(t, b, "heartbeats", 1, 30*time.Second)
	h, err := mirror.DecodeHeartbeat(hbs[0][0].Key, hbs[0][0].Value)
	if err != nil || h.Source != "A" || h.Target != "B" {
		t.Errorf("heartbeat %+v: %v", h, err)
	}
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}

// javaTranslation runs Kafka's RemoteClusterUtils.translateOffsets (from
// connect-mirror-client, fetched by fetch-jars.sh) against the target at
// addr and checks it agrees with ours (read again until both agree, as
// checkpoints may still move).
func javaTranslation(t *testing.T, addr, alias, group string, ours func() map[string]int64) {
	t.Helper()
	jars, _ := filepath.Glob(filepath.Join(harness.JarsDir(), "connect-mirror-client-*.jar"))
	if len(jars) == 0 {
		t.Fatalf("no connect-mirror-client jar in %s: run bash integration/fetch-jars.sh", harness.JarsDir())
	}
	var java map[string]int64
	var want map[string]int64
	for range 5 {
		java = map[string]int64{}
		out := harness.RunJavaProgram(t, filepath.Join("testdata", "mirror", "TranslateOffsets.java"), addr, alias, group)
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var topic string
			var p int32
			var off int64
			if _, err := fmt.Sscanf(line, "%s %d %d", &topic, &p, &off); err == nil {
				java[fmt.Sprintf("%s %d", topic, p)] = off
			}
		}
		want = ours()
		if len(java) > 0 && maps.Equal(java, want) {
			t.Logf("RemoteClusterUtils.translateOffsets agrees: %v", java)
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("RemoteClusterUtils.translateOffsets(%s, %s) = %v, our checkpoints %v", alias, group, java, want)
}

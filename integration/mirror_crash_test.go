package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMirrorWorkerKill9 SIGKILLs the mirroring worker twice while records
// stream into the source and restarts it: every record reaches the
// remote topic, in order within its partition (a record may be copied
// twice, never skipped).
func TestMirrorWorkerKill9(t *testing.T) {
	t.Parallel()
	mirrorKill9(t, false)
}

// TestMirrorWorkerKill9ExactlyOnce is TestMirrorWorkerKill9 with the
// worker's exactly-once support, read_committed upstream and
// exactly.once.support=required: a read_committed consumer of the remote
// topic sees every record exactly once.
func TestMirrorWorkerKill9ExactlyOnce(t *testing.T) {
	t.Parallel()
	mirrorKill9(t, true)
}

func mirrorKill9(t *testing.T, eos bool) {
	if testing.Short() {
		t.Skip("kills the worker")
	}
	a := harness.TributaryBroker(t).Bootstrap()
	b := harness.TributaryBroker(t).Bootstrap()
	src := mirrorClient(t, a)
	mirrorCreateTopic(t, src, "stream", 2, nil)
	var workerExtra, connExtra map[string]string
	group := "mirror-kill"
	if eos {
		group = "mirror-kill-eos"
		workerExtra = map[string]string{"exactly.once.source.support": "enabled"}
		// A kill can leave a task's transaction open on the worker's
		// offsets topic; the restarted worker reads that topic
		// read_committed to its end, as Kafka Connect's does, so it starts
		// once the broker has aborted the transaction: after
		// transaction.timeout.ms (Kafka's default is a minute, as long as
		// the harness waits for a worker to answer) plus the broker's
		// 10 s abort interval. A shorter timeout keeps that within the
		// wait.
		connExtra = map[string]string{"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed",
			"producer.override.transaction.timeout.ms": "10000"}
	}
	r, w, restart := mirrorWorkerWith(t, b, group, workerExtra)
	startMirror(r, "k", mirrorConfigs("A", a, "B", b, connExtra))
	r.waitState("k-source", "RUNNING", 2)

	const total = 20000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < total; i += 500 {
			mirrorProduce(t, src, "stream", 2, i, 500)
			time.Sleep(300 * time.Millisecond) // about 12 s of input: both kills land mid-stream
		}
	}()
	tgt := kadm.NewClient(mirrorClient(t, b))
	copied := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ends, err := tgt.ListEndOffsets(ctx, "A.stream")
		if err != nil {
			return 0
		}
		n := int64(0)
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}
	for k, at := range []int64{3000, 9000} {
		mirrorWait(t, 60*time.Second, "records copied before the kill", func() string {
			if n := copied(); n < at {
				return fmt.Sprintf("%d copied", n)
			}
			return ""
		})
		w.Kill()
		t.Logf("worker SIGKILL %d at %d records copied", k+1, copied())
		w = restart()
		r = rest{t, w.URL()}
	}
	<-done
	r.waitState("k-source", "RUNNING", 2)
	// Every record, in its partition's order (duplicates aside).
	got := map[int32][]*kgo.Record{}
	var opts []kgo.Opt
	if eos {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	mirrorWait(t, 90*time.Second, "every record on the target", func() string {
		got = readPartitionsNow(t, b, "A.stream", opts...)
		seen := map[string]bool{}
		for _, recs := range got {
			for _, rec := range recs {
				seen[string(rec.Value)] = true
			}
		}
		if len(seen) < total {
			return fmt.Sprintf("%d of %d distinct records (worker log %s)", len(seen), total, w.LogPath())
		}
		return ""
	})
	dups := 0
	for p, recs := range got {
		last := -1
		for _, rec := range recs {
			var j int
			fmt.Sscanf(string(rec.Value), "value-%d", &j)
			if j <= last {
				dups++
			} else if last >= 0 && j != last+2 {
				t.Fatalf("A.stream-%d: value-%d after value-%d: a record was skipped", p, j, last)
			}
			last = max(last, j)
		}
	}
	t.Logf("%d records copied twice after 2 kills (exactly-once: %v)", dups, eos)
	if eos && dups > 0 {
		t.Errorf("exactly-once: a read_committed consumer sees %d records twice", dups)
	}
}

// readPartitionsNow reads what topic holds now, by partition.
func readPartitionsNow(t *testing.T, addr, topic string, opts ...kgo.Opt) map[int32][]*kgo.Record {
	t.Helper()
	cl := mirrorClient(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	out := map[int32][]*kgo.Record{}
	n := int64(0)
	for n < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], r); n++ })
	}
	return out
}

// TestMirrorActiveActive runs A→B and B→A with the default policy: each
// side gets the other's topic with its prefix, and nothing comes back
// (no B.A.t on B, no A.B.t on A).
func TestMirrorActiveActive(t *testing.T) {
	t.Parallel()
	a := harness.TributaryBroker(t).Bootstrap()
	b := harness.TributaryBroker(t).Bootstrap()
	ca, cb := mirrorClient(t, a), mirrorClient(t, b)
	mirrorCreateTopic(t, ca, "t", 1, nil)
	mirrorCreateTopic(t, cb, "t", 1, nil)
	mirrorProduce(t, ca, "t", 1, 0, 100)
	mirrorProduce(t, cb, "t", 1, 1000, 50)
	rab, _, _ := mirrorWorker(t, b, "mirror-ab")
	rba, _, _ := mirrorWorker(t, a, "mirror-ba")
	startMirror(rab, "ab", mirrorConfigs("A", a, "B", b, nil))
	startMirror(rba, "ba", mirrorConfigs("B", b, "A", a, nil))
	readPartitions(t, b, "A.t", 100, 60*time.Second)
	readPartitions(t, a, "B.t", 50, 60*time.Second)
	// Heartbeats go both ways too, once each: A.heartbeats on B.
	readPartitions(t, b, "A.heartbeats", 1, 60*time.Second)
	readPartitions(t, a, "B.heartbeats", 1, 60*time.Second)
	time.Sleep(3 * time.Second) // three topic refreshes
	for addr, loops := range map[string][]string{a: {"A.B.t", "A.t", "A.B.heartbeats"}, b: {"B.A.t", "B.t", "B.A.heartbeats"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		topics, err := kadm.NewClient(mirrorClient(t, addr)).ListTopics(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range loops {
			if topics.Has(l) {
				t.Errorf("%s exists on %s: the mirror loops", l, addr)
			}
		}
	}
}

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/broker/log"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type ackedAt struct {
	partition int32
	offset    int64
}

func crashClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		// Find a restarted broker again at once (the default waits 5s
		// between metadata requests, most of a kill cycle).
		kgo.MetadataMinAge(100 * time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopicAt(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(crashClient(t, addr))
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
}

// pollGroup polls n records with the group consumer cons, failing t when
// ctx ends first. Given committed (each partition's committed offset), it
// fails t on a record below it too: one the group read again after the
// broker's restart.
func pollGroup(ctx context.Context, t *testing.T, cons *kgo.Client, n int, committed map[int32]int64) []*kgo.Record {
	t.Helper()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cons.PollRecords(ctx, n-len(recs))
		if ctx.Err() != nil {
			t.Fatalf("the group consumer got %d of %d records: %v", len(recs), n, ctx.Err())
		}
		recs = append(recs, fs.Records()...)
	}
	for _, r := range recs {
		if o, ok := committed[r.Partition]; ok && r.Offset < o {
			t.Fatalf("the group consumer re-read partition %d offset %d below the committed %d", r.Partition, r.Offset, o)
		}
	}
	return recs
}

// commitPolled commits recs with the group consumer cons and returns each
// partition's committed offset.
func commitPolled(ctx context.Context, t *testing.T, cons *kgo.Client, recs []*kgo.Record) map[int32]int64 {
	t.Helper()
	if err := cons.CommitRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	committed := map[int32]int64{}
	for _, r := range recs {
		committed[r.Partition] = max(committed[r.Partition], r.Offset+1)
	}
	return committed
}

// consumeAll reads every record of topic from the start up to the current
// end offsets.
func consumeAll(t *testing.T, addr, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(crashClient(t, addr))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("list end offsets: %v %v", err, ends.Error())
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl := crashClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := map[int32][]*kgo.Record{}
	done := func() bool {
		for p, end := range want {
			rs := out[p]
			if end > 0 && (len(rs) == 0 || rs[len(rs)-1].Offset < end-1) {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume: timed out; have %v of %v", countRecords(out), want)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Logf("fetch error %s/%d: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], r) })
	}
	return out
}

func countRecords(m map[int32][]*kgo.Record) map[int32]int {
	c := map[int32]int{}
	for p, rs := range m {
		c[p] = len(rs)
	}
	return c
}

// TestBrokerCrashRecovery runs the broker as a child process with several
// acks=all producers, kills it with SIGKILL at random moments and restarts
// it on the same data and port, then checks that every acknowledged record
// is there exactly once, at its acknowledged offset, with no offset gaps.
func TestBrokerCrashRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test runs ~40s")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("TRIBUTARY_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (set TRIBUTARY_CRASH_SEED to repeat the kill schedule)", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	const (
		topic      = "crash"
		partitions = 3
		producers  = 3
		cycles     = 20
	)
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	port := harness.FreePort(t)
	// Small segments so that kills also land around rolls and snapshots.
	overrides := []string{"log.segment.bytes=1048576"}
	bp := harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	addr := bp.Addr()
	createTopicAt(t, addr, topic, partitions)

	var (
		mu      sync.Mutex
		acked   = map[string]ackedAt{}
		failed  atomic.Int64
		lastErr atomic.Value
	)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var clients []*kgo.Client
	for i := 0; i < producers; i++ {
		cl := crashClient(t, addr,
			kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
			kgo.MaxBufferedRecords(2000),
			kgo.ProducerLinger(2*time.Millisecond),
		)
		clients = append(clients, cl)
		wg.Add(1)
		go func(i int, cl *kgo.Client) {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				if n%10 == 9 {
					// At most ~10k records/s per producer: enough to keep
					// many batches in flight at every kill, few enough to
					// verify quickly.
					time.Sleep(time.Millisecond)
				}
				v := fmt.Sprintf("p%d-%d-%s", i, n, "payload-payload-payload-payload-payload-payload")
				cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
					if err != nil {
						failed.Add(1)
						lastErr.Store(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if prev, dup := acked[string(r.Value)]; dup {
						t.Errorf("record %s acknowledged twice: %v and %d/%d", r.Value, prev, r.Partition, r.Offset)
					}
					acked[string(r.Value)] = ackedAt{r.Partition, r.Offset}
				})
			}
		}(i, cl)
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}

	start := time.Now()
	for c := 0; c < cycles; c++ {
		before := ackedCount()
		// Wait until this incarnation acknowledged something, then kill
		// it a random moment later.
		deadline := time.Now().Add(15 * time.Second)
		for ackedCount() == before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if ackedCount() == before {
			t.Fatalf("cycle %d: no acknowledgements in 15s (last produce error: %v)\n%s", c, lastErr.Load(), bp.LogPath())
		}
		time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
		bp.Kill()
		t.Logf("cycle %d: killed after %d acks total", c, ackedCount())
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		}
		bp = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	}
	// Let the producers finish what they have in flight on the last
	// incarnation, then stop them.
	time.Sleep(300 * time.Millisecond)
	stop()
	flushCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	for _, cl := range clients {
		if err := cl.Flush(flushCtx); err != nil {
			t.Logf("flush: %v", err)
		}
	}
	cancel()
	wg.Wait()
	for _, cl := range clients {
		cl.Close()
	}
	t.Logf("%d cycles in %v: %d records acknowledged, %d produce errors (last: %v)", cycles, time.Since(start).Round(time.Millisecond), ackedCount(), failed.Load(), lastErr.Load())

	// One more kill, so the final check also reads recovered data.
	bp.Kill()
	bp = harness.StartBrokerProcess(t, bin, dir, port, overrides...)

	got := consumeAll(t, bp.Addr(), topic)
	where := map[string]ackedAt{}
	for p := int32(0); p < partitions; p++ {
		for i, r := range got[p] {
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: record %d has offset %d (gap or reordering)", p, i, r.Offset)
			}
			if prev, ok := where[string(r.Value)]; ok {
				if _, wasAcked := acked[string(r.Value)]; wasAcked {
					t.Errorf("acknowledged record %s stored twice: %v and %d/%d", r.Value, prev, p, r.Offset)
				}
				continue
			}
			where[string(r.Value)] = ackedAt{p, r.Offset}
		}
	}
	missing := 0
	keys := make([]string, 0, len(acked))
	for v := range acked {
		keys = append(keys, v)
	}
	sort.Strings(keys)
	for _, v := range keys {
		a := acked[v]
		w, ok := where[v]
		switch {
		case !ok:
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged record %s (partition %d offset %d) is missing", v, a.partition, a.offset)
			}
		case w != a:
			t.Errorf("acknowledged record %s at %d/%d, stored at %d/%d", v, a.partition, a.offset, w.partition, w.offset)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged records missing; broker log: %s", missing, len(acked), bp.LogPath())
	}
	if len(acked) < 1000 {
		t.Errorf("only %d records acknowledged: the test did not exercise much", len(acked))
	}
}

// TestBrokerTornSegmentRecovery truncates the last segment file in the
// middle of its last batch while the broker is down: the broker restarts,
// serves the valid prefix and accepts new writes at the right offset.
func TestBrokerTornSegmentRecovery(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	port := harness.FreePort(t)
	bp := harness.StartBrokerProcess(t, bin, dir, port)
	const topic = "torn"
	createTopicAt(t, bp.Addr(), topic, 1)

	produce := func(addr, prefix string, batches, perBatch int) []int64 {
		cl := crashClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var offs []int64
		for b := 0; b < batches; b++ {
			var rs []*kgo.Record
			for i := 0; i < perBatch; i++ {
				rs = append(rs, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d-%d", prefix, b, i))})
			}
			// One ProduceSync call per batch: kgo sends them as one batch.
			res := cl.ProduceSync(ctx, rs...)
			if err := res.FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			for _, r := range res {
				offs = append(offs, r.Record.Offset)
			}
		}
		return offs
	}
	offs := produce(bp.Addr(), "before", 10, 5)
	if offs[len(offs)-1] != 49 {
		t.Fatalf("last offset %d, want 49", offs[len(offs)-1])
	}
	bp.Kill()

	segs, _ := filepath.Glob(filepath.Join(dir, topic+"-0", "*.log"))
	sort.Strings(segs)
	if len(segs) == 0 {
		t.Fatalf("no segment files in %s", filepath.Join(dir, topic+"-0"))
	}
	last := segs[len(segs)-1]
	raw, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	var positions []int
	var lastHdr log.BatchHeader
	for pos := 0; pos < len(raw); {
		h, err := log.ParseHeader(raw[pos:])
		if err != nil {
			t.Fatalf("segment before truncation: %v", err)
		}
		positions = append(positions, pos)
		lastHdr = h
		pos += h.Size()
	}
	cut := positions[len(positions)-1] + lastHdr.Size()/2
	if err := os.Truncate(last, int64(cut)); err != nil {
		t.Fatal(err)
	}
	lostFrom := lastHdr.BaseOffset
	t.Logf("cut %s at %d of %d bytes: batch at offset %d is torn", filepath.Base(last), cut, len(raw), lostFrom)

	bp = harness.StartBrokerProcess(t, bin, dir, port)
	got := consumeAll(t, bp.Addr(), topic)[0]
	if int64(len(got)) != lostFrom {
		t.Fatalf("after recovery %d records, want the %d before the torn batch", len(got), lostFrom)
	}
	for i, r := range got {
		want := fmt.Sprintf("before-%d-%d", i/5, i%5)
		if r.Offset != int64(i) || string(r.Value) != want {
			t.Fatalf("record %d: offset %d value %s, want %s", i, r.Offset, r.Value, want)
		}
	}
	more := produce(bp.Addr(), "after", 2, 3)
	if more[0] != lostFrom {
		t.Fatalf("first new record at offset %d, want %d", more[0], lostFrom)
	}
	got = consumeAll(t, bp.Addr(), topic)[0]
	if int64(len(got)) != lostFrom+6 || string(got[len(got)-1].Value) != "after-1-2" {
		t.Fatalf("after new writes: %d records, last %s", len(got), got[len(got)-1].Value)
	}
}

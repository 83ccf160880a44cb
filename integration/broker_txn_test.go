package integration

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// TestBrokerTxnETL is the shape of franz-go's TestTxnEtl against
// Tributary's broker: records are produced to an input topic, and
// consume-transform-produce workers (kgo.GroupTransactSession, one group,
// read_committed, a transaction per poll, offsets committed inside it) copy
// them to an output topic, one of them leaving halfway and another joining
// later (rebalances abort transactions midway), and a read_committed
// consumer then finds every input record in the output exactly once.
func TestBrokerTxnETL(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createTopic(ctx, t, bs, "etl-in", 3, nil)
	createTopic(ctx, t, bs, "etl-out", 3, nil)

	const n = 20000
	in := newClient(t, bs, kgo.DefaultProduceTopic("etl-in"))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(strconv.Itoa(i))})
	}
	if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce input: %v", err)
	}

	var copied sync.Map // input value -> true once committed in a transaction
	var wg sync.WaitGroup
	worker := func(id string, stopAfter int) {
		defer wg.Done()
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(bs),
			kgo.TransactionalID("etl-"+id),
			kgo.ConsumerGroup("etl"),
			kgo.ConsumeTopics("etl-in"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.DefaultProduceTopic("etl-out"),
			kgo.FetchMaxWait(200*time.Millisecond),
		)
		if err != nil {
			t.Errorf("worker %s: %v", id, err)
			return
		}
		defer sess.Close()
		done := 0
		idle := 0
		for ctx.Err() == nil && idle < 10 {
			pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
			fs := sess.PollFetches(pctx)
			pcancel()
			if fs.Empty() {
				idle++
				continue
			}
			idle = 0
			if err := sess.Begin(); err != nil {
				t.Errorf("worker %s: begin: %v", id, err)
				return
			}
			var batch []string
			fs.EachRecord(func(r *kgo.Record) {
				batch = append(batch, string(r.Value))
				sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: []byte("out-" + string(r.Value))}, func(_ *kgo.Record, err error) {
					if err != nil && !errors.Is(err, context.Canceled) {
						t.Logf("worker %s: produce: %v", id, err)
					}
				})
			})
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				t.Logf("worker %s: end (a rebalance aborts it; the records are read again): %v", id, err)
				continue
			}
			if committed {
				for _, v := range batch {
					copied.Store(v, true)
				}
				done += len(batch)
			}
			if stopAfter > 0 && done >= stopAfter {
				return // a worker leaving mid-stream: the other takes over
			}
		}
	}
	wg.Add(3)
	go worker("a", 0)
	go worker("b", n/4)
	go func() {
		time.Sleep(2 * time.Second)
		worker("c", 0)
	}()
	wg.Wait()

	out := pollRecords(ctx, t, bs, "etl-out", n+1, 20*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	missing, dup := 0, 0
	for i := range n {
		switch c := seen["out-"+strconv.Itoa(i)]; {
		case c == 0:
			missing++
		case c > 1:
			dup++
		}
	}
	if missing > 0 || dup > 0 || len(out) != n {
		t.Fatalf("read_committed output: %d records, %d inputs missing, %d duplicated; want each of %d once", len(out), missing, dup, n)
	}
	// The group's committed offsets cover every input record.
	adm := newAdmin(t, bs)
	offs, err := adm.FetchOffsets(ctx, "etl")
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	offs.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != n {
		t.Errorf("committed offsets sum to %d, want %d", total, n)
	}
	// read_uncommitted sees the output of aborted attempts too, if any.
	all := pollRecords(ctx, t, bs, "etl-out", n, 10*time.Second)
	t.Logf("%d records copied exactly once; read_uncommitted sees %d (aborted attempts included)", n, len(all))
}

// TestBrokerTxnIsolationFencingTimeout checks with franz-go: aborted records
// are invisible to read_committed and visible to read_uncommitted; a second
// producer with the same transactional id fences the first (whose open
// transaction is aborted); a transaction left open past its timeout is
// aborted by the broker and its producer fenced.
func TestBrokerTxnIsolationFencingTimeout(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t, func(c *broker.Config) { c.TransactionAbortInterval = 200 * time.Millisecond })
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createTopic(ctx, t, bs, "iso", 2, nil)

	run := func(cl *kgo.Client, commit bool, values ...string) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end: %v", err)
		}
	}
	values := func(recs []*kgo.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		slices.Sort(out)
		return out
	}
	p := newClient(t, bs, kgo.TransactionalID("iso"), kgo.DefaultProduceTopic("iso"))
	run(p, true, "c1", "c2")
	run(p, false, "a1", "a2", "a3")
	run(p, true, "c3")
	if got := values(pollRecords(ctx, t, bs, "iso", 4, 5*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted()))); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("read_committed: %q", got)
	}
	if got := values(pollRecords(ctx, t, bs, "iso", 6, 10*time.Second)); !slices.Equal(got, []string{"a1", "a2", "a3", "c1", "c2", "c3"}) {
		t.Fatalf("read_uncommitted: %q", got)
	}

	// Fencing: a zombie with an open transaction, then a new producer with
	// the same transactional id.
	zombie := newClient(t, bs, kgo.TransactionalID("fence"), kgo.DefaultProduceTopic("iso"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := newClient(t, bs, kgo.TransactionalID("fence"), kgo.DefaultProduceTopic("iso"))
	run(fresh, true, "fresh")
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("the fenced producer committed")
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Errorf("fenced producer's commit failed with %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if got := values(pollRecords(ctx, t, bs, "iso", 5, 5*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted()))); !slices.Equal(got, []string{"c1", "c2", "c3", "fresh"}) {
		t.Fatalf("read_committed after fencing: %q", got)
	}

	// Timeout: the broker aborts a transaction left open for longer than
	// transaction.timeout.ms.
	slow := newClient(t, bs, kgo.TransactionalID("slow"), kgo.DefaultProduceTopic("iso"), kgo.TransactionTimeout(time.Second))
	if err := slow.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := slow.ProduceSync(ctx, kgo.StringRecord("late")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := newAdmin(t, bs)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds, err := adm.DescribeTransactions(ctx, "slow")
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ds["slow"]; ok && d.State == "CompleteAbort" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction not aborted after its timeout: %+v", ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := slow.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("commit after the timeout succeeded")
	}
	if got := values(pollRecords(ctx, t, bs, "iso", 5, 5*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted()))); !slices.Equal(got, []string{"c1", "c2", "c3", "fresh"}) {
		t.Fatalf("read_committed after the timeout: %q", got)
	}
	// The LSO is back at the high watermark everywhere.
	ends, err := adm.ListEndOffsets(ctx, "iso")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.ListCommittedOffsets(ctx, "iso")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if c, _ := committed.Lookup(o.Topic, o.Partition); c.Offset != o.Offset {
			t.Errorf("partition %d: last stable offset %d, high watermark %d", o.Partition, c.Offset, o.Offset)
		}
	})

}

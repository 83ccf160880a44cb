package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// txnOutcome is what a producer knows about one of its transactions.
type txnOutcome int8

const (
	txnCommitted txnOutcome = iota // EndTransaction(commit) succeeded
	txnAborted                     // EndTransaction(abort) succeeded
	txnUnknown                     // it failed midway: all or nothing
)

// TestBrokerTxnCrashRecovery runs the broker as a child process with
// several transactional producers (commits and aborts, several partitions,
// small segments), kills it with SIGKILL at random moments at least 10
// times and restarts it on the same data. Afterwards, read_committed shows
// every committed transaction whole and exactly once, no aborted one, each
// transaction whose outcome the producer never learned either whole or not
// at all, and the last stable offset reaches the high watermark (every
// transaction open at a kill is completed or aborted).
func TestBrokerTxnCrashRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test runs ~1 min")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("TRIBUTARY_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (set TRIBUTARY_CRASH_SEED to repeat the kill schedule)", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	cycles := 10
	if s := os.Getenv("TRIBUTARY_TXN_CRASH_CYCLES"); s != "" {
		cycles, _ = strconv.Atoi(s)
	}
	const (
		topic      = "txcrash"
		partitions = 3
		producers  = 3
		perTxn     = 20
	)
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	port := harness.FreePort(t)
	overrides := []string{"log.segment.bytes=1048576", "transaction.abort.timed.out.transaction.cleanup.interval.ms=500"}
	bp := harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	addr := bp.Addr()
	createTopicAt(t, addr, topic, partitions)

	var (
		mu       sync.Mutex
		outcomes = map[string]txnOutcome{} // "p<i>-t<n>" -> outcome
		settled  int
	)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for i := range producers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			prng := rand.New(rand.NewPCG(uint64(seed), uint64(i+2)))
			newTxnClient := func() *kgo.Client {
				cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
					kgo.TransactionalID(fmt.Sprintf("crash-%d", i)),
					kgo.TransactionTimeout(5*time.Second),
					kgo.DefaultProduceTopic(topic),
					kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
					kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
					kgo.ProducerLinger(time.Millisecond),
				)
				if err != nil {
					t.Errorf("client: %v", err)
				}
				return cl
			}
			cl := newTxnClient()
			defer func() { cl.Close() }()
			for n := 0; ctx.Err() == nil; n++ {
				key := fmt.Sprintf("p%d-t%d", i, n)
				commit := prng.IntN(5) != 0
				outcome := txnUnknown
				func() {
					tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
					defer cancel()
					if err := cl.BeginTransaction(); err != nil {
						return
					}
					mu.Lock()
					outcomes[key] = txnUnknown
					mu.Unlock()
					var recs []*kgo.Record
					for j := range perTxn {
						recs = append(recs, &kgo.Record{Value: []byte(key + "-" + strconv.Itoa(j))})
					}
					if err := cl.ProduceSync(tctx, recs...).FirstErr(); err != nil {
						cl.EndTransaction(tctx, kgo.TryAbort)
						return
					}
					if err := cl.EndTransaction(tctx, kgo.TransactionEndTry(commit)); err != nil {
						return
					}
					outcome = txnAborted
					if commit {
						outcome = txnCommitted
					}
				}()
				mu.Lock()
				if _, begun := outcomes[key]; begun {
					outcomes[key] = outcome
					if outcome != txnUnknown {
						settled++
					}
				}
				mu.Unlock()
				if outcome == txnUnknown && ctx.Err() == nil {
					// Start over with a fresh producer: its
					// InitProducerId fences the old epoch and aborts
					// whatever is still open.
					cl.Close()
					cl = newTxnClient()
				}
			}
		}(i)
	}
	settledCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return settled
	}

	start := time.Now()
	for c := range cycles {
		before := settledCount()
		deadline := time.Now().Add(30 * time.Second)
		for settledCount() < before+2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if settledCount() == before {
			t.Fatalf("cycle %d: no transaction ended in 30s; broker log %s", c, bp.LogPath())
		}
		time.Sleep(time.Duration(rng.IntN(600)) * time.Millisecond)
		bp.Kill()
		t.Logf("cycle %d: killed with %d transactions settled", c, settledCount())
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		}
		bp = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	}
	time.Sleep(500 * time.Millisecond)
	stop()
	wg.Wait()
	bp.Kill()
	bp = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	t.Logf("%d cycles in %v: %d transactions begun, %d settled", cycles, time.Since(start).Round(time.Millisecond), len(outcomes), settledCount())

	// Every transaction open at the last kill ends (recovered markers or
	// the 5 s timeout): the LSO reaches the high watermark.
	adm := kadm.NewClient(crashClient(t, bp.Addr()))
	lctx, lcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer lcancel()
	var hwm kadm.ListedOffsets
	for {
		var err1, err2 error
		hwm, err1 = adm.ListEndOffsets(lctx, topic)
		lso, err2 := kadm.NewClient(crashClient(t, bp.Addr(), kgo.FetchIsolationLevel(kgo.ReadCommitted()))).ListEndOffsets(lctx, topic)
		if err1 == nil && err2 == nil {
			same := true
			hwm.Each(func(o kadm.ListedOffset) {
				if l, _ := lso.Lookup(o.Topic, o.Partition); l.Offset != o.Offset {
					same = false
				}
			})
			if same {
				break
			}
		}
		if lctx.Err() != nil {
			t.Fatalf("last stable offset never reached the high watermark: %v %v", err1, err2)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Read everything committed.
	want := int64(0)
	hwm.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl := crashClient(t, bp.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]int{} // value -> times
	perTxnSeen := map[string]int{}
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	idle := 0
	for idle < 4 && rctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(rctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			v := string(r.Value)
			seen[v]++
			k := v[:lastDash(v)]
			perTxnSeen[k]++
		})
		if n == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	for v, c := range seen {
		if c > 1 {
			t.Errorf("record %s visible %d times", v, c)
		}
	}
	var committed, aborted, unknownWhole, unknownNone int
	for k, o := range outcomes {
		got := perTxnSeen[k]
		switch {
		case o == txnCommitted && got != perTxn:
			t.Errorf("committed transaction %s: %d of %d records visible", k, got, perTxn)
		case o == txnAborted && got != 0:
			t.Errorf("aborted transaction %s: %d records visible to read_committed", k, got)
		case o == txnUnknown && got != 0 && got != perTxn:
			t.Errorf("transaction %s (outcome unknown to its producer) is partly visible: %d of %d", k, got, perTxn)
		}
		switch {
		case o == txnCommitted:
			committed++
		case o == txnAborted:
			aborted++
		case got == perTxn:
			unknownWhole++
		default:
			unknownNone++
		}
	}
	for k := range perTxnSeen {
		if _, ok := outcomes[k]; !ok {
			t.Errorf("records of transaction %s, which no producer began", k)
		}
	}
	t.Logf("read_committed: %d committed, %d aborted, outcome unknown: %d whole, %d absent", committed, aborted, unknownWhole, unknownNone)
	if committed < 10 || aborted == 0 {
		t.Errorf("only %d committed and %d aborted transactions: the test did not exercise much", committed, aborted)
	}
}

func lastDash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '-' {
			return i
		}
	}
	return len(s)
}

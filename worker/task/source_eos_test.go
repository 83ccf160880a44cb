package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// topicOffsets is an OffsetRecorder writing offsets as records of topic,
// keyed by partition (the test reads them back read_committed).
type topicOffsets struct{ topic string }

func (o topicOffsets) Topic() string { return o.topic }

func (o topicOffsets) Records(_ string, offs []sdk.SourceOffset) ([]*kgo.Record, error) {
	var out []*kgo.Record
	for _, so := range offs {
		v, err := json.Marshal(so.Offset)
		if err != nil {
			return nil, err
		}
		out = append(out, &kgo.Record{Topic: o.topic, Key: []byte(partitionKey(so.Partition)), Value: v})
	}
	return out, nil
}

// committedRecords reads topic read_committed until nothing more comes
// for a second.
func committedRecords(t testing.TB, addr, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		recs := fs.Records()
		if len(recs) == 0 {
			return out
		}
		out = append(out, recs...)
	}
}

// boundaryTask is a scripted source task that also reports boundaries
// (plugins.BoundarySource): a batch without records is a boundary.
type boundaryTask struct {
	scriptedTask
	mu         sync.Mutex
	boundaries []plugins.Boundary
	next       plugins.Boundary
}

func (b *boundaryTask) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	recs, err := b.scriptedTask.Poll(ctx)
	if err == nil && len(recs) == 0 {
		b.mu.Lock()
		b.next, b.boundaries = b.boundaries[0], b.boundaries[1:]
		b.mu.Unlock()
	}
	return recs, err
}

func (b *boundaryTask) Boundary() plugins.Boundary {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next
}

func eosRecords(topic string, from, n int) []sdk.SourceRecord {
	var out []sdk.SourceRecord
	for i := from; i < from+n; i++ {
		out = append(out, sdk.SourceRecord{Topic: topic, Partition: sdk.Partition{"p": "0"}, Offset: sdk.Offset{"n": int64(i)},
			Value: fmt.Sprintf("v%d", i), ValueSchema: nil})
	}
	return out
}

func values(recs []*kgo.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return out
}

// With poll boundaries every batch is a transaction holding its records
// and the offset they reach; read_committed consumers see both, the task
// is told of the commit after it, and the transaction sizes are recorded.
func TestSourceExactlyOncePollBoundaries(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "data", 2)
	createTopic(t, addr, "offs", 1)
	task := &scriptedTask{batches: [][]sdk.SourceRecord{eosRecords("data", 0, 3), eosRecords("data", 3, 2), nil, eosRecords("data", 5, 4)}}
	m := metrics.New(metrics.Config{WorkerID: "w:8083"})
	tm := m.StartTask(metrics.TaskID{Connector: "src", Task: 0}, metrics.Source)
	st := &statuses{}
	// The plugin's task starts after the fencing, the producer's
	// initialization and the check.
	var steps []string
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "src"}, Key: stringConvNoT(), Value: stringConvNoT(),
		StartTask:  func(context.Context) (plugins.SourceTask, error) { steps = append(steps, "start"); return task, nil },
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, Status: st, Logger: quietLogger(), Metrics: tm,
		ExactlyOnce: &ExactlyOnce{TransactionalID: "g-src-0", Offsets: topicOffsets{"offs"},
			Preflight: func(context.Context) error { steps = append(steps, "preflight"); return nil },
			Verify:    func(context.Context) error { steps = append(steps, "verify"); return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, 10*time.Second, "three commits", func() bool { return task.commitCount() == 3 })
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(steps, " ") != "preflight verify start" {
		t.Errorf("start-up steps %v, want preflight, verify (the producer initialized between), start", steps)
	}
	data := committedRecords(t, addr, "data")
	if len(data) != 9 {
		t.Fatalf("read_committed sees %d records: %v", len(data), values(data))
	}
	offs := values(committedRecords(t, addr, "offs"))
	if want := []string{`{"n":2}`, `{"n":4}`, `{"n":8}`}; strings.Join(offs, " ") != strings.Join(want, " ") {
		t.Errorf("offsets topic %v, want %v", offs, want)
	}
	for i, c := range task.commits {
		t.Logf("commit %d: %v", i, c)
	}
	if fmt.Sprint(st.all) != "[RUNNING]" {
		t.Errorf("statuses %v", st.all)
	}
	// (transaction-size-min is not among the attributes Strimzi's
	// exporter rules keep, the default naming.)
	var sizes []float64
	for _, s := range []string{"max", "avg"} {
		sizes = append(sizes, metricValue(t, m, "kafka_connect_source_task_transaction_size_"+s, "src"))
	}
	if fmt.Sprint(sizes) != "[4 3]" {
		t.Errorf("transaction sizes max/avg %v, want [4 3]", sizes)
	}
}

// A second instance of a task (same transactional id) fences the first:
// the first's open transaction is aborted, nothing of it is visible to
// read_committed consumers, and its next commit fails the task.
func TestSourceExactlyOnceZombieFenced(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "data", 1)
	createTopic(t, addr, "offs", 1)
	start := func(task plugins.SourceTask, st *statuses, boundary TransactionBoundary) *SourceRunner {
		r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "src"}, Task: task, Key: stringConvNoT(), Value: stringConvNoT(),
			ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, Status: st, Logger: quietLogger(),
			ExactlyOnce: &ExactlyOnce{TransactionalID: "g-src-0", Offsets: topicOffsets{"offs"}, Boundary: boundary, Interval: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		return r
	}
	// The zombie: interval boundaries an hour apart, so its transaction
	// stays open after its first batch; its second batch comes once the
	// new instance started.
	gate := make(chan struct{})
	zombie := &gatedTask{scriptedTask: scriptedTask{batches: [][]sdk.SourceRecord{eosRecords("data", 0, 5), eosRecords("data", 5, 5)}}, gate: gate, at: 1}
	zst := &statuses{}
	z := start(zombie, zst, BoundaryInterval)
	waitFor(t, 10*time.Second, "the zombie's first batch acked", func() bool {
		n, _ := endOffset(context.Background(), admin(t, addr), "data")
		return n >= 5
	})
	next := &scriptedTask{batches: [][]sdk.SourceRecord{eosRecords("data", 100, 2)}}
	nst := &statuses{}
	n := start(next, nst, BoundaryPoll)
	waitFor(t, 10*time.Second, "the new instance's commit", func() bool { return next.commitCount() == 1 })
	close(gate)
	waitFor(t, 10*time.Second, "the zombie failed", func() bool { return zst.last() == StateFailed })
	t.Logf("zombie: %s", zst.err.Message)
	_ = z.Stop(stopCtx(t))
	if err := n.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := values(committedRecords(t, addr, "data")); strings.Join(got, " ") != "v100 v101" {
		t.Errorf("read_committed sees %v, want only the new instance's v100 v101", got)
	}
	if got := values(committedRecords(t, addr, "offs")); strings.Join(got, " ") != `{"n":101}` {
		t.Errorf("offsets %v", got)
	}
}

// gatedTask waits for gate before returning batch at.
type gatedTask struct {
	scriptedTask
	gate <-chan struct{}
	at   int
}

func (g *gatedTask) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	if g.i == g.at {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.scriptedTask.Poll(ctx)
}

// Connector-defined boundaries: a commit ends a transaction where the task
// asks; an abort drops its records but still commits their offsets.
func TestSourceExactlyOnceConnectorBoundaries(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "data", 1)
	createTopic(t, addr, "offs", 1)
	task := &boundaryTask{scriptedTask: scriptedTask{batches: [][]sdk.SourceRecord{
		eosRecords("data", 0, 2), eosRecords("data", 2, 2), nil, // commit 0-3
		eosRecords("data", 4, 3), nil, // abort 4-6
		eosRecords("data", 7, 1), nil, // commit 7
		eosRecords("data", 8, 1), // left open: aborted at stop
	}}, boundaries: []plugins.Boundary{plugins.CommitBoundary, plugins.AbortBoundary, plugins.CommitBoundary}}
	st := &statuses{}
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "src"}, Task: task, Key: stringConvNoT(), Value: stringConvNoT(),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, Status: st, Logger: quietLogger(),
		ExactlyOnce: &ExactlyOnce{TransactionalID: "g-src-0", Offsets: topicOffsets{"offs"}, Boundary: BoundaryConnector}})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, 10*time.Second, "three commits", func() bool { return task.commitCount() == 3 })
	waitFor(t, 10*time.Second, "the last record produced", func() bool {
		n, _ := endOffset(context.Background(), admin(t, addr), "data")
		return n >= 9
	})
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := values(committedRecords(t, addr, "data")); strings.Join(got, " ") != "v0 v1 v2 v3 v7" {
		t.Errorf("read_committed sees %v", got)
	}
	if got := values(committedRecords(t, addr, "offs")); strings.Join(got, " ") != `{"n":3} {"n":6} {"n":7}` {
		t.Errorf("offsets %v", got)
	}
}

// A task may not write to its own offsets topic under exactly-once
// support, and a failing preflight fails the task before it polls.
func TestSourceExactlyOnceRefusals(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "offs", 1)
	run := func(task plugins.SourceTask, preflight func(context.Context) error) *statuses {
		st := &statuses{}
		r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "src"}, Task: task, Key: stringConvNoT(), Value: stringConvNoT(),
			ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, Status: st, Logger: quietLogger(),
			ExactlyOnce: &ExactlyOnce{TransactionalID: "g-src-0", Offsets: topicOffsets{"offs"}, Preflight: preflight}})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		waitFor(t, 10*time.Second, "the task failed", func() bool { return st.last() == StateFailed })
		_ = r.Stop(stopCtx(t))
		return st
	}
	st := run(&scriptedTask{batches: [][]sdk.SourceRecord{eosRecords("offs", 0, 1)}}, nil)
	if !strings.Contains(st.err.Message, ErrOwnOffsetsTopic.Error()) {
		t.Errorf("own offsets topic: %s", st.err.Message)
	}
	polled := &scriptedTask{batches: [][]sdk.SourceRecord{eosRecords("x", 0, 1)}}
	st = run(polled, func(context.Context) error { return errors.New("Failed to perform round of zombie fencing: boom") })
	if !strings.Contains(st.err.Message, "zombie fencing: boom") || polled.i != 0 || fmt.Sprint(st.all) != "[FAILED]" {
		t.Errorf("preflight failure: %v %s, polled %d", st.all, st.err.Message, polled.i)
	}
}

// A task's Poll may block until records come: the interval boundary and a
// pause still end the open transaction.
func TestSourceExactlyOnceCommitsWhilePollBlocks(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "offs", 1)
	for _, tc := range []struct {
		name     string
		interval time.Duration
		pause    bool
	}{{"interval", 300 * time.Millisecond, false}, {"pause", time.Hour, true}} {
		t.Run(tc.name, func(t *testing.T) {
			topic := "data-" + tc.name
			createTopic(t, addr, topic, 1)
			task := &scriptedTask{batches: [][]sdk.SourceRecord{eosRecords(topic, 0, 4)}} // then Poll blocks
			st := &statuses{}
			r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "src"}, Task: task, Key: stringConvNoT(), Value: stringConvNoT(),
				ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, Status: st, Logger: quietLogger(),
				ExactlyOnce: &ExactlyOnce{TransactionalID: "g-" + tc.name + "-0", Offsets: topicOffsets{"offs"}, Boundary: BoundaryInterval, Interval: tc.interval}})
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			waitFor(t, 10*time.Second, "the batch produced", func() bool {
				n, _ := endOffset(context.Background(), admin(t, addr), topic)
				return n >= 4
			})
			if tc.pause {
				r.Pause()
			}
			waitFor(t, 10*time.Second, "the transaction committed", func() bool { return task.commitCount() == 1 })
			if got := values(committedRecords(t, addr, topic)); len(got) != 4 {
				t.Errorf("read_committed sees %v", got)
			}
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

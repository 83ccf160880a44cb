package metrics

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/internal/stats"
)

// TaskID names a task.
type TaskID struct {
	Connector string
	Task      int
}

// Kind is a task's or connector's type.
type Kind string

// Kinds.
const (
	Source Kind = "source"
	Sink   Kind = "sink"
)

// States, as Kafka Connect's metrics write them (lower case).
const (
	StateUnassigned = "unassigned"
	StateRunning    = "running"
	StatePaused     = "paused"
	StateStopped    = "stopped"
	StateFailed     = "failed"
	StateDestroyed  = "destroyed"
	StateRestarting = "restarting"
)

// stateTracker is Kafka Connect's StateTracker: the current state and the
// time spent in each, for running-ratio and pause-ratio.
type stateTracker struct {
	mu    sync.Mutex
	state string
	since time.Time
	spent map[string]time.Duration
}

func (s *stateTracker) set(now time.Time, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == s.state {
		return
	}
	if s.state != "" {
		if s.spent == nil {
			s.spent = map[string]time.Duration{}
		}
		s.spent[s.state] += now.Sub(s.since)
	}
	s.state, s.since = state, now
}

func (s *stateTracker) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// ratio is the share of the time since the first state spent in state.
func (s *stateTracker) ratio(now time.Time, state string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == "" {
		return 0
	}
	cur := now.Sub(s.since)
	var total, in time.Duration
	for st, d := range s.spent {
		total += d
		if st == state {
			in += d
		}
	}
	total += cur
	if s.state == state {
		in += cur
	}
	if total <= 0 {
		return 0
	}
	return float64(in) / float64(total)
}

// Task holds the metrics of one task on this worker: Kafka Connect's
// connector-task-metrics, source-task-metrics or sink-task-metrics, and
// task-error-metrics groups. A task runner records into it; its methods
// are safe for concurrent use and cheap (atomics, or a short mutex once
// per batch). A nil *Task records nothing.
type Task struct {
	id   TaskID
	kind Kind
	now  func() time.Time
	cfg  *Config

	cmu     sync.Mutex
	clients []*Client // the task's Kafka clients

	state stateTracker

	// connector-task-metrics
	commitTime, commitResult, batchSize *stats.Sampled
	// source-task-metrics
	poll, write, pollTime, activeSource *stats.Sampled
	sourceActive                        atomic.Int64
	// txnSize is transaction-size-*, of a source task run in
	// transactions (exactly-once support) only, as Kafka Connect
	// registers them for those alone.
	txnSize       *stats.Sampled
	transactional atomic.Bool
	// sink-task-metrics
	read, send, putTime, commitDone, commitSkip, activeSink *stats.Sampled
	sinkActive, partitions, seqNo                           atomic.Int64
	lagMax                                                  atomic.Int64
	// task-error-metrics
	failures, errs, skipped, retries, logged, dlqRequests, dlqFailures atomic.Int64
	lastError                                                          atomic.Int64 // ms

	// plugin reports the plugin's own series (SetPluginMetrics).
	plugin atomic.Pointer[PluginReporter]
	// extra is a sink's lag and end-to-end latency.
	extra sinkExtra
}

func newTask(id TaskID, kind Kind, cfg *Config) *Task {
	s := func() *stats.Sampled { return stats.NewSampled(cfg.Window) }
	t := &Task{id: id, kind: kind, now: cfg.Now, cfg: cfg,
		commitTime: s(), commitResult: s(), batchSize: s()}
	switch kind {
	case Source:
		t.poll, t.write, t.pollTime, t.activeSource, t.txnSize = s(), s(), s(), s(), s()
	case Sink:
		t.read, t.send, t.putTime, t.commitDone, t.commitSkip, t.activeSink = s(), s(), s(), s(), s(), s()
		t.extra.init()
	}
	return t
}

// Client makes the metrics of one of the task's Kafka clients (its
// producer or consumer), kept and served with the task's; nil for a nil
// *Task.
func (t *Task) Client(kind, id string) *Client {
	if t == nil {
		return nil
	}
	c := newClient(kind, id, t.cfg)
	t.cmu.Lock()
	t.clients = append(t.clients, c)
	t.cmu.Unlock()
	return c
}

// ID is the task's id.
func (t *Task) ID() TaskID { return t.id }

// Kind is source or sink.
func (t *Task) Kind() Kind { return t.kind }

// State is the task's current state ("" before the first).
func (t *Task) State() string {
	if t == nil {
		return ""
	}
	return t.state.current()
}

// RecordBatch records a batch of records handed to the task (a sink's
// Put) or polled from it (a source's Poll): batch-size-max/avg.
func (t *Task) RecordBatch(n int) {
	if t == nil {
		return
	}
	t.batchSize.Record(t.now(), float64(n))
}

// RecordCommit records an offset commit: its duration when it succeeded,
// and its outcome (offset-commit-*-percentage).
func (t *Task) RecordCommit(d time.Duration, ok bool) {
	if t == nil {
		return
	}
	now := t.now()
	if ok {
		t.commitTime.Record(now, ms(d))
	}
	t.commitResult.Record(now, b2f(ok))
	if t.kind == Sink && ok {
		t.commitDone.Record(now, 1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

// RecordPoll records a batch of n records a source task returned, after d
// (source-record-poll-*, poll-batch-*-time-ms); the records are active
// until RecordWrite.
func (t *Task) RecordPoll(n int, d time.Duration) {
	if t == nil || t.kind != Source {
		return
	}
	now := t.now()
	t.poll.Record(now, float64(n))
	t.pollTime.Record(now, ms(d))
	t.activeSource.Record(now, float64(t.sourceActive.Add(int64(n))))
}

// RecordWrite records that a polled batch of n records is done: written
// records acknowledged by Kafka, skipped ones filtered out by a transform
// or tolerated errors (source-record-write-* counts n - skipped).
func (t *Task) RecordWrite(n, skipped int) {
	if t == nil || t.kind != Source {
		return
	}
	now := t.now()
	t.write.Record(now, float64(n-skipped))
	a := t.sourceActive.Add(-int64(n))
	if a < 0 {
		t.sourceActive.CompareAndSwap(a, 0)
		a = 0
	}
	t.activeSource.Record(now, float64(a))
}

// SetTransactional says the source task runs in transactions: its
// transaction-size-* series are served from now on.
func (t *Task) SetTransactional() {
	if t == nil || t.kind != Source {
		return
	}
	t.transactional.Store(true)
}

// RecordTransaction records a committed transaction of n records
// (transaction-size-min/max/avg).
func (t *Task) RecordTransaction(n int) {
	if t == nil || t.kind != Source {
		return
	}
	t.transactional.Store(true)
	t.txnSize.Record(t.now(), float64(n))
}

// RecordRead records n records read from Kafka (sink-record-read-*).
func (t *Task) RecordRead(n int) {
	if t == nil || t.kind != Sink {
		return
	}
	t.read.Record(t.now(), float64(n))
}

// RecordPut records a batch of n records (after transforms) put to the
// task in d (sink-record-send-*, put-batch-*-time-ms, batch-size-*).
func (t *Task) RecordPut(n int, d time.Duration) {
	if t == nil || t.kind != Sink {
		return
	}
	now := t.now()
	t.send.Record(now, float64(n))
	t.batchSize.Record(now, float64(n))
	t.putTime.Record(now, ms(d))
}

// SetPartitionCount sets partition-count.
func (t *Task) SetPartitionCount(n int) {
	if t != nil {
		t.partitions.Store(int64(n))
	}
}

// NextCommitSeq increments offset-commit-seq-no (a sink's commit attempt).
func (t *Task) NextCommitSeq() {
	if t != nil {
		t.seqNo.Add(1)
	}
}

// RecordCommitSkip records a commit answer that came too late.
func (t *Task) RecordCommitSkip() {
	if t != nil && t.kind == Sink {
		t.commitSkip.Record(t.now(), 1)
	}
}

// SetSinkActive records the records read and not yet committed
// (sink-record-active-count*): Kafka records it when offsets are consumed
// or committed.
func (t *Task) SetSinkActive(n int64) {
	if t == nil || t.kind != Sink {
		return
	}
	t.sinkActive.Store(n)
	t.activeSink.Record(t.now(), float64(n))
}

// Error handling (Kafka Connect's ErrorHandlingMetrics and
// RetryWithToleranceOperator): a failed operation on a record is a
// failure; a record that fails (tolerated or not) is an error; a tolerated
// one is skipped too.

// RecordFailure counts a failed record operation and sets
// last-error-timestamp.
func (t *Task) RecordFailure() {
	if t == nil {
		return
	}
	t.failures.Add(1)
	t.lastError.Store(t.now().UnixMilli())
}

// RecordError counts a record that failed processing.
func (t *Task) RecordError() {
	if t != nil {
		t.errs.Add(1)
	}
}

// RecordSkipped counts a record skipped by errors.tolerance=all.
func (t *Task) RecordSkipped() {
	if t != nil {
		t.skipped.Add(1)
	}
}

// RecordRetry counts an operation retried.
func (t *Task) RecordRetry() {
	if t != nil {
		t.retries.Add(1)
	}
}

// RecordErrorLogged counts an error logged (errors.log.enable).
func (t *Task) RecordErrorLogged() {
	if t != nil {
		t.logged.Add(1)
	}
}

// RecordDLQ counts a write to the dead letter queue, and its failure.
func (t *Task) RecordDLQ(ok bool) {
	if t == nil {
		return
	}
	t.dlqRequests.Add(1)
	if !ok {
		t.dlqFailures.Add(1)
	}
}

// collect writes the task's groups.
func (t *Task) collect(w *writer, now time.Time) {
	conn, task := t.id.Connector, strconv.Itoa(t.id.Task)
	tags := []tag{{"connector", conn}, {"task", task}}
	st := t.state.current()
	if st == "" {
		st = StateUnassigned
	}
	w.begin(bean{"connect", groupTask, tags})
	a := func(g, name string, v value) { w.attr(name, v, help(g, name)) }
	a(groupTask, "status", str(st))
	a(groupTask, "running-ratio", num(t.state.ratio(now, StateRunning)))
	a(groupTask, "pause-ratio", num(t.state.ratio(now, StatePaused)))
	a(groupTask, "offset-commit-max-time-ms", num(t.commitTime.Max(now)))
	a(groupTask, "offset-commit-avg-time-ms", num(t.commitTime.Avg(now)))
	a(groupTask, "batch-size-max", num(t.batchSize.Max(now)))
	a(groupTask, "batch-size-avg", num(t.batchSize.Avg(now)))
	a(groupTask, "offset-commit-failure-percentage", num(t.commitResult.FrequencyOf0(now)))
	a(groupTask, "offset-commit-success-percentage", num(t.commitResult.Frequency(now)))
	switch t.kind {
	case Source:
		w.begin(bean{"connect", groupSource, tags})
		a(groupSource, "source-record-poll-rate", num(t.poll.Rate(now)))
		a(groupSource, "source-record-poll-total", num(t.poll.Total()))
		a(groupSource, "source-record-write-rate", num(t.write.Rate(now)))
		a(groupSource, "source-record-write-total", num(t.write.Total()))
		a(groupSource, "poll-batch-max-time-ms", num(t.pollTime.Max(now)))
		a(groupSource, "poll-batch-avg-time-ms", num(t.pollTime.Avg(now)))
		a(groupSource, "source-record-active-count-max", num(t.activeSource.Max(now)))
		a(groupSource, "source-record-active-count-avg", num(t.activeSource.Avg(now)))
		a(groupSource, "source-record-active-count", num(float64(t.sourceActive.Load())))
		if t.transactional.Load() {
			a(groupSource, "transaction-size-min", num(t.txnSize.Min(now)))
			a(groupSource, "transaction-size-max", num(t.txnSize.Max(now)))
			a(groupSource, "transaction-size-avg", num(t.txnSize.Avg(now)))
		}
	case Sink:
		w.begin(bean{"connect", groupSink, tags})
		a(groupSink, "sink-record-read-rate", num(t.read.Rate(now)))
		a(groupSink, "sink-record-read-total", num(t.read.Total()))
		a(groupSink, "sink-record-send-rate", num(t.send.Rate(now)))
		a(groupSink, "sink-record-send-total", num(t.send.Total()))
		a(groupSink, "sink-record-lag-max", num(float64(t.lagMax.Load())))
		a(groupSink, "partition-count", num(float64(t.partitions.Load())))
		a(groupSink, "offset-commit-seq-no", num(float64(t.seqNo.Load())))
		a(groupSink, "offset-commit-completion-rate", num(t.commitDone.Rate(now)))
		a(groupSink, "offset-commit-completion-total", num(t.commitDone.Total()))
		a(groupSink, "offset-commit-skip-rate", num(t.commitSkip.Rate(now)))
		a(groupSink, "offset-commit-skip-total", num(t.commitSkip.Total()))
		a(groupSink, "put-batch-max-time-ms", num(t.putTime.Max(now)))
		a(groupSink, "put-batch-avg-time-ms", num(t.putTime.Avg(now)))
		a(groupSink, "sink-record-active-count-max", num(t.activeSink.Max(now)))
		a(groupSink, "sink-record-active-count-avg", num(t.activeSink.Avg(now)))
		a(groupSink, "sink-record-active-count", num(float64(t.sinkActive.Load())))
	}
	w.begin(bean{"connect", groupErrors, tags})
	a(groupErrors, "total-record-failures", num(float64(t.failures.Load())))
	a(groupErrors, "total-record-errors", num(float64(t.errs.Load())))
	a(groupErrors, "total-records-skipped", num(float64(t.skipped.Load())))
	a(groupErrors, "total-retries", num(float64(t.retries.Load())))
	a(groupErrors, "total-errors-logged", num(float64(t.logged.Load())))
	a(groupErrors, "deadletterqueue-produce-requests", num(float64(t.dlqRequests.Load())))
	a(groupErrors, "deadletterqueue-produce-failures", num(float64(t.dlqFailures.Load())))
	a(groupErrors, "last-error-timestamp", num(float64(t.lastError.Load())))
	w.flush()
	t.cmu.Lock()
	clients := slices.Clone(t.clients)
	t.cmu.Unlock()
	for _, c := range clients {
		c.collect(w, now, nil)
	}
	if w.ch != nil {
		t.collectExtra(w.ch)
	}
	if r := t.plugin.Load(); r != nil && w.ch != nil {
		writePlugin(w, (*r).PluginMetrics(), []string{"connector", "task"}, []string{conn, task})
	}
}

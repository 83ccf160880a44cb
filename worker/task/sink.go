package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// SinkConfig configures a SinkRunner.
type SinkConfig struct {
	Info sdk.TaskInfo
	Task plugins.SinkTask
	// Topics (the topics setting) or TopicsRegex (topics.regex); exactly
	// one must be set.
	Topics      []string
	TopicsRegex string
	Key, Value  convert.Converter
	Header      convert.HeaderConverter
	// Transform is the SMT chain, run after conversion; nil for none.
	Transform SinkTransform
	// Errors is the connector's errors.* policy for records that cannot
	// be converted.
	Errors ErrorPolicy
	// ClientOpts must hold kgo.SeedBrokers and carries the worker's
	// consumer. overrides. The group (connect-<connector>), manual commits
	// and the rebalance callbacks are always the runner's.
	ClientOpts []kgo.Opt
	Status     StatusReporter
	// FlushInterval is offset.flush.interval.ms; default 60 s.
	FlushInterval time.Duration
	// MaxPollRecords bounds a Put batch (max.poll.records, default 500).
	MaxPollRecords int
	Logger         *slog.Logger
	// LagInterval is how often the runner reads its partitions' end
	// offsets for the lag metrics; default 5 s.
	LagInterval time.Duration
	// Metrics receives the task's Kafka Connect metrics; nil records
	// nothing.
	Metrics *metrics.Task
}

// SinkRunner runs one sink task.
type SinkRunner struct {
	cfg      SinkConfig
	log      *slog.Logger
	client   *kgo.Client
	consumer *metrics.Client // the consumer's metrics

	// posMu guards pos, the consumed and committed offsets as last
	// published by the poll loop (the lag loop reads them without r.mu,
	// which a long Put holds).
	posMu sync.Mutex
	pos   map[sdk.TopicPartition]position
	// samples are (partition, offset, timestamp) of delivered records,
	// for the end-to-end latency once committed; r.mu held.
	samples []e2eSample
	// wireValues, when set, writes record values in the plugin wire
	// encoding with valueWriter (both belong to the poll loop).
	wireValues  convert.WireMaker
	valueWriter wire.ValueWriter

	runCtx    context.Context
	cancelRun context.CancelFunc
	pollCtx   context.Context // cancelled when stopping
	stopPoll  context.CancelFunc

	// mu serializes every call into the plugin task (poll loop and
	// rebalance callbacks) and guards the fields below.
	mu        sync.Mutex
	assigned  map[string][]int32
	consumed  map[sdk.TopicPartition]int64 // next offset to read
	committed map[sdk.TopicPartition]int64
	lastFlush time.Time
	closed    bool
	// failed is set under mu, and read without it by Pause and Resume.
	failed atomic.Bool
	// pmu guards paused, which Pause and Resume change without mu: the
	// poll loop holds mu while the task works on a batch (a Put that
	// retries through an outage may take minutes), and pausing must not
	// wait for that (nor hold up the herder that asks).
	pmu           sync.Mutex
	paused        bool
	statusMu      sync.Mutex
	startOnce     sync.Once
	stopOnce      sync.Once
	stopErr       error
	stopping      chan struct{}
	done          chan struct{}
	wg            sync.WaitGroup
	retryBackoff  time.Duration
	flushInterval time.Duration
}

// NewSink creates the runner and its consumer; Start starts consuming.
func NewSink(cfg SinkConfig) (*SinkRunner, error) {
	if cfg.Task == nil || cfg.Key == nil || cfg.Value == nil {
		return nil, errors.New("task: sink needs Task, Key and Value")
	}
	if (len(cfg.Topics) == 0) == (cfg.TopicsRegex == "") {
		return nil, errors.New("task: sink needs exactly one of topics and topics.regex")
	}
	if cfg.TopicsRegex != "" {
		if _, err := regexp.Compile(cfg.TopicsRegex); err != nil {
			return nil, fmt.Errorf("task: topics.regex: %w", err)
		}
	}
	if cfg.Header == nil {
		cfg.Header = convert.SimpleHeaderConverter{}
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = 500
	}
	if cfg.LagInterval <= 0 {
		cfg.LagInterval = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &SinkRunner{cfg: cfg, assigned: map[string][]int32{}, consumed: map[sdk.TopicPartition]int64{},
		committed: map[sdk.TopicPartition]int64{}, stopping: make(chan struct{}), done: make(chan struct{}),
		retryBackoff: 100 * time.Millisecond, flushInterval: cfg.FlushInterval,
		log: cfg.Logger.With("connector", cfg.Info.Connector, "task", cfg.Info.Task)}
	r.runCtx, r.cancelRun = context.WithCancel(context.Background())
	r.pollCtx, r.stopPoll = context.WithCancel(r.runCtx)
	id := clientID("connector-consumer", cfg.Info.Connector, cfg.Info.Task)
	r.consumer = cfg.Metrics.Client(metrics.ClientConsumer, id)
	opts := []kgo.Opt{
		kgo.ClientID(id),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	opts = append(opts, r.consumer.Opt()...)
	opts = append(opts, cfg.ClientOpts...)
	topics := cfg.Topics
	if cfg.TopicsRegex != "" {
		// Kafka Connect matches the whole topic name (Java's
		// Matcher.matches); the client's regexp finds it anywhere.
		topics = []string{AnchoredRegex(cfg.TopicsRegex)}
		opts = append(opts, kgo.ConsumeRegex())
	}
	opts = append(opts,
		kgo.ConsumerGroup("connect-"+cfg.Info.Connector),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(r.onAssigned),
		kgo.OnPartitionsRevoked(r.onRevoked),
		kgo.OnPartitionsLost(r.onLost),
		kgo.WithPools(&recordPool{}),
	)
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("task: sink consumer: %w", err)
	}
	r.client = client
	dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = setupDLQ(dctx, client, cfg.Errors)
	cancel()
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("task: %w", err)
	}
	// A converter that writes values straight into the wire encoding saves
	// building them as Go values for a plugin; transforms need those.
	if wm, ok := cfg.Value.(convert.WireMaker); ok && cfg.Transform == nil {
		if plugins.TakesEncodedValues(cfg.Task) {
			r.wireValues = wm
		}
	}
	return r, nil
}

// Start reports RUNNING and starts consuming.
func (r *SinkRunner) Start() {
	r.startOnce.Do(func() {
		r.report(StateRunning, nil)
		r.mu.Lock()
		r.lastFlush = time.Now()
		r.mu.Unlock()
		r.wg.Add(2)
		go func() { defer r.wg.Done(); defer close(r.done); r.loop() }()
		go func() { defer r.wg.Done(); r.lagLoop() }()
		if e, ok := r.cfg.Task.(plugins.EndingSink); ok && e.Done() != nil { // nil: a wrapper of a task that cannot end by itself
			r.wg.Add(1)
			go func() { defer r.wg.Done(); r.watch(e) }()
		}
	})
}

// watch fails the task as soon as it ends by itself (its plugin process
// exited), not at its next call: an idle task gets none until the next
// offset flush.
func (r *SinkRunner) watch(e plugins.EndingSink) {
	select {
	case <-e.Done():
	case <-r.stopping:
		return
	}
	r.mu.Lock()
	r.fail(e.Err(), "task")
	r.mu.Unlock()
	r.stopPoll() // ends the current poll; the loop sees failed and returns
}

// Done is closed when the task stopped consuming: it failed or is stopping.
func (r *SinkRunner) Done() <-chan struct{} { return r.done }

func (r *SinkRunner) report(s State, err *sdk.TaskError) {
	if r.cfg.Status == nil {
		return
	}
	r.statusMu.Lock()
	defer r.statusMu.Unlock()
	r.cfg.Status.ReportStatus(r.cfg.Info, s, err)
}

func (r *SinkRunner) isStopping() bool {
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

// fail reports FAILED; r.mu held.
func (r *SinkRunner) fail(err error, what string) {
	if r.failed.Load() {
		return
	}
	r.failed.Store(true)
	if r.isStopping() && (errors.Is(err, context.Canceled) || errors.Is(err, plugins.ErrStopped)) {
		return
	}
	te := taskError(err, what)
	r.log.Error("task failed", "err", te.Message)
	r.report(StateFailed, te)
}

// Pause stops fetching (the connector is PAUSED); offsets are still
// flushed and committed. It does not wait for the task: records already
// handed to it are processed, and those fetched but not yet delivered
// are dropped by the client (fetched again on Resume).
func (r *SinkRunner) Pause() {
	r.pmu.Lock()
	if r.paused || r.failed.Load() {
		r.pmu.Unlock()
		return
	}
	r.paused = true
	topics := r.cfg.Topics
	if r.cfg.TopicsRegex != "" {
		topics = r.client.GetConsumeTopics()
	}
	r.client.PauseFetchTopics(topics...)
	r.pmu.Unlock()
	r.report(StatePaused, nil)
}

// Resume resumes fetching.
func (r *SinkRunner) Resume() {
	r.pmu.Lock()
	if !r.paused || r.failed.Load() {
		r.pmu.Unlock()
		return
	}
	r.paused = false
	// Everything paused: the topics Pause named, and partitions assigned
	// while paused (onAssigned), which for topics.regex may be of topics
	// created since.
	r.client.ResumeFetchTopics(r.client.PauseFetchTopics()...)
	r.client.ResumeFetchPartitions(r.client.PauseFetchPartitions(nil))
	r.pmu.Unlock()
	r.report(StateRunning, nil)
}

func tps(m map[string][]int32) []sdk.TopicPartition {
	var out []sdk.TopicPartition
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, sdk.TopicPartition{Topic: t, Partition: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

func (r *SinkRunner) onAssigned(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
	if len(m) == 0 { // a cooperative rebalance that gave this task nothing new
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for t, ps := range m {
		r.assigned[t] = append(r.assigned[t], ps...)
	}
	r.cfg.Metrics.SetPartitionCount(len(tps(r.assigned)))
	r.pmu.Lock()
	if r.paused {
		cl.PauseFetchPartitions(m)
	}
	r.pmu.Unlock()
	r.consumer.SetAssignedPartitions(len(tps(r.assigned)))
	r.noteActive()
	if r.closed || r.failed.Load() {
		return
	}
	began := time.Now()
	if err := r.cfg.Task.Assigned(ctx, tps(m)); err != nil {
		r.fail(err, "assign partitions")
	}
	r.consumer.PartitionsCallback("assigned", time.Since(began))
}

func (r *SinkRunner) onRevoked(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	began := time.Now()
	r.revoke(ctx, m, true)
	r.consumer.PartitionsCallback("revoked", time.Since(began))
}

func (r *SinkRunner) onLost(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	began := time.Now()
	r.revoke(ctx, m, false)
	r.consumer.PartitionsCallback("lost", time.Since(began))
}

// revoke flushes and commits (unless the partitions were lost), then tells
// the task; r.mu held.
func (r *SinkRunner) revoke(ctx context.Context, m map[string][]int32, commit bool) {
	parts := tps(m)
	if !r.closed && !r.failed.Load() && len(parts) > 0 {
		// Rewinds the task asked for so far apply while the partitions
		// are still ours; later ones for them are ignored (applyRewinds).
		r.applyRewinds()
		if commit {
			if err := r.flushCommit(ctx, parts); err != nil {
				r.log.Warn("commit on revocation failed", "err", err)
			}
		}
		if err := r.cfg.Task.Revoked(ctx, parts); err != nil {
			r.fail(err, "revoke partitions")
		}
	}
	for _, tp := range parts {
		delete(r.consumed, tp)
		delete(r.committed, tp)
		r.consumer.ForgetPartition(tp.Topic, tp.Partition)
		r.cfg.Metrics.ForgetSinkPartition(tp.Topic, tp.Partition)
	}
	for t, ps := range m {
		keep := r.assigned[t][:0]
		for _, p := range r.assigned[t] {
			gone := false
			for _, q := range ps {
				gone = gone || p == q
			}
			if !gone {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			delete(r.assigned, t)
		} else {
			r.assigned[t] = keep
		}
	}
	r.cfg.Metrics.SetPartitionCount(len(tps(r.assigned)))
	r.consumer.SetAssignedPartitions(len(tps(r.assigned)))
	r.noteActive()
}

// noteActive records the records read and not yet committed
// (sink-record-active-count: the consumed position minus the committed
// offset, summed over the partitions), and publishes the positions for
// the lag loop; r.mu held.
func (r *SinkRunner) noteActive() {
	if r.cfg.Metrics == nil {
		return
	}
	pos := make(map[sdk.TopicPartition]position, len(r.consumed))
	for t, ps := range r.assigned {
		for _, p := range ps {
			tp := sdk.TopicPartition{Topic: t, Partition: p}
			c, hasC := r.consumed[tp]
			k, hasK := r.committed[tp]
			pos[tp] = position{consumed: c, committed: k, hasConsumed: hasC, hasCommitted: hasK}
		}
	}
	r.posMu.Lock()
	r.pos = pos
	r.posMu.Unlock()
	var n int64
	for tp, c := range r.consumed {
		if o, ok := r.committed[tp]; ok {
			n += max(c-o, 0)
		}
	}
	r.cfg.Metrics.SetSinkActive(n)
}

// flushCommit calls Flush with the consumed positions of parts (all when
// nil) and commits what the task reports durable; r.mu held.
func (r *SinkRunner) flushCommit(ctx context.Context, parts []sdk.TopicPartition) error {
	// Offsets the task asked to rewind must not be committed past.
	if _, err := r.settle(ctx); err != nil {
		return err
	}
	r.cfg.Metrics.NextCommitSeq()
	began := time.Now()
	offs := map[sdk.TopicPartition]int64{}
	if parts == nil {
		for tp, o := range r.consumed {
			offs[tp] = o
		}
	} else {
		for _, tp := range parts {
			if o, ok := r.consumed[tp]; ok {
				offs[tp] = o
			}
		}
	}
	r.lastFlush = time.Now()
	if len(offs) == 0 {
		return nil
	}
	durable, err := r.cfg.Task.Flush(ctx, offs)
	if err != nil {
		r.cfg.Metrics.RecordCommit(time.Since(began), false)
		if !flushFailed(err) {
			r.fail(err, "flush") // a panic, or the task ended
			return fmt.Errorf("task: flush: %w", err)
		}
		// Kafka Connect's WorkerSinkTask.commitOffsets: a failing
		// preCommit never fails the task. Closing (revocation, passing
		// parts, or stop) it only warns; otherwise the consumer goes back
		// to the last committed offsets, so that the task is given again
		// whatever its flush may have lost.
		if parts != nil || r.isStopping() {
			r.log.Warn("Offset commit failed during close", "err", err)
			return nil
		}
		r.log.Error("Offset commit failed, rewinding to last committed offsets", "err", err)
		if err := r.rewindToCommitted(ctx, offs); err != nil {
			r.fail(err, "rewind after a failed flush")
			return fmt.Errorf("task: %w", err)
		}
		return nil
	}
	commit := map[string]map[int32]kgo.EpochOffset{}
	next := map[sdk.TopicPartition]int64{}
	for tp, o := range durable {
		given, ok := offs[tp]
		if !ok {
			continue // not ours to commit
		}
		o = min(o, given)
		if c, ok := r.committed[tp]; ok && o <= c {
			continue
		}
		if commit[tp.Topic] == nil {
			commit[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
		next[tp] = o
	}
	if len(commit) == 0 {
		r.cfg.Metrics.RecordCommit(time.Since(began), true)
		return nil
	}
	var commitErr error
	committing := time.Now()
	defer func() { r.consumer.CommitSync(time.Since(committing)) }()
	r.client.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				tp := sdk.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				if p.ErrorCode != 0 {
					commitErr = fmt.Errorf("commit %s: error code %d", tp, p.ErrorCode)
					delete(next, tp)
				}
			}
		}
	})
	for tp, o := range next {
		if commitErr == nil || r.committed[tp] < o {
			r.committed[tp] = o
		}
	}
	r.cfg.Metrics.RecordCommit(time.Since(began), commitErr == nil)
	r.noteDurable()
	r.noteActive()
	if commitErr != nil {
		return fmt.Errorf("task: commit offsets: %w", commitErr)
	}
	return nil
}

// flushFailed reports whether err, from a task's Flush, is the task's
// Flush (preCommit) failing, which does not fail the task: a
// plugins.FlushError, or an error marked Retriable by a task of another
// kind. A panic, or the end of the task, is neither.
func flushFailed(err error) bool {
	_, ok := errors.AsType[*plugins.FlushError](err)
	return ok || sdk.IsRetriable(err)
}

// rewindToCommitted moves the consumer of the partitions in offs back to
// their last committed offsets, as Kafka Connect does when preCommit
// fails: records since then are delivered again; r.mu held.
func (r *SinkRunner) rewindToCommitted(ctx context.Context, offs map[sdk.TopicPartition]int64) error {
	to, err := r.lastCommitted(ctx, slices.Collect(maps.Keys(offs)))
	if err != nil {
		return err
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range to {
		r.log.Debug("rewinding topic partition", "topic", tp.Topic, "partition", tp.Partition, "offset", o)
		if set[tp.Topic] == nil {
			set[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
		r.consumed[tp] = o
	}
	r.client.SetOffsets(set)
	return nil
}

// lastCommitted returns where each of parts resumes from after a restart
// (Kafka Connect's lastCommittedOffsets): the offset this runner last
// committed for it; else the group's commit that the consumer started
// from when the partition was assigned (the client keeps what it fetched
// then); else, with no commit at all, the partition's first offset, where
// auto.offset.reset=earliest (the sink default) started. With reset
// latest, that redelivers records older than the start, never fewer;
// r.mu held.
func (r *SinkRunner) lastCommitted(ctx context.Context, parts []sdk.TopicPartition) (map[sdk.TopicPartition]int64, error) {
	out := make(map[sdk.TopicPartition]int64, len(parts))
	var group map[string]map[int32]kgo.EpochOffset
	var fromStart []string
	for _, tp := range parts {
		if o, ok := r.committed[tp]; ok {
			out[tp] = o
			continue
		}
		if group == nil {
			group = r.client.CommittedOffsets()
		}
		if eo, ok := group[tp.Topic][tp.Partition]; ok && eo.Offset >= 0 {
			out[tp] = eo.Offset
			continue
		}
		if !slices.Contains(fromStart, tp.Topic) {
			fromStart = append(fromStart, tp.Topic)
		}
	}
	if len(fromStart) == 0 {
		return out, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	starts, err := kadm.NewClient(r.client).ListStartOffsets(lctx, fromStart...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %v: %w", fromStart, err)
	}
	for _, tp := range parts {
		if _, ok := out[tp]; ok {
			continue
		}
		lo, ok := starts.Lookup(tp.Topic, tp.Partition)
		if !ok || lo.Err != nil {
			return nil, fmt.Errorf("no start offset for %s: %v", tp, lo.Err)
		}
		out[tp] = lo.Offset
	}
	return out, nil
}

// pollPuts bounds one poll to this many Puts of MaxPollRecords.
const pollPuts = 8

func (r *SinkRunner) loop() {
	for !r.isStopping() {
		r.mu.Lock()
		wait := time.Until(r.lastFlush.Add(r.flushInterval))
		r.mu.Unlock()
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		ctx, cancel := context.WithTimeout(r.pollCtx, wait)
		// A rewind the task asks for meanwhile ends the wait: it is
		// applied below, not at the next flush.
		if n, ok := r.cfg.Task.(plugins.RewindNotifier); ok && n.RewindRequested() != nil {
			go func(wake <-chan struct{}) {
				select {
				case <-wake:
					cancel()
				case <-ctx.Done():
				}
			}(n.RewindRequested())
		}
		// Take up to a few Puts' worth, not MaxPollRecords: the client
		// fetches again from a broker only once its buffered fetch is
		// drained, so draining it at once lets the next fetch run while
		// this one is converted and delivered (in Puts of MaxPollRecords).
		// The bound keeps a poll short enough for rebalances and stops.
		polling := time.Now()
		fetches := r.client.PollRecords(ctx, pollPuts*r.cfg.MaxPollRecords)
		cancel()
		r.consumer.Poll(polling, time.Now())
		if fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				r.log.Warn("fetch error", "topic", t, "partition", p, "err", err)
			}
		})
		r.mu.Lock()
		recs := fetches.Records()
		if len(recs) > 0 {
			r.cfg.Metrics.RecordRead(len(recs))
		}
		if len(recs) == 0 {
			r.applyRewinds() // none fetched in hand can be stale
		}
		ok := r.deliver(recs)
		if ok && time.Since(r.lastFlush) >= r.flushInterval {
			if err := r.flushCommit(r.runCtx, nil); err != nil && !r.isStopping() {
				r.log.Warn("offset commit failed", "err", err)
			}
		}
		failed := r.failed.Load()
		r.mu.Unlock()
		r.client.AllowRebalance()
		if failed {
			return
		}
	}
}

// deliver converts the records of one poll and Puts them in batches of
// MaxPollRecords; r.mu held. It returns false once the task failed.
//
// A plugin's Put returns once the batch is sent, so each batch is converted
// while the task works on earlier ones; the runner waits (Ready) only when
// the plugin has its window of batches. When the task asks to rewind a
// partition, the consumer is moved there and the partition's remaining
// records of this poll are stale: they are dropped, and fetched again from
// the rewound offset (what earlier Puts still carry of it, the plugin
// drops).
func (r *SinkRunner) deliver(recs []*kgo.Record) bool {
	var stale map[sdk.TopicPartition]int64
	isStale := func(topic string, partition int32) bool {
		_, ok := stale[sdk.TopicPartition{Topic: topic, Partition: partition}]
		return ok
	}
	addStale := func(rw map[sdk.TopicPartition]int64) {
		if len(rw) > 0 && stale == nil {
			stale = map[sdk.TopicPartition]int64{}
		}
		maps.Copy(stale, rw)
	}
	for len(recs) > 0 {
		if r.failed.Load() {
			return false
		}
		if r.isStopping() {
			return true // the rest is not consumed: fetched again after a restart
		}
		var chunk []*kgo.Record
		for len(recs) > 0 && len(chunk) < r.cfg.MaxPollRecords {
			if kr := recs[0]; !isStale(kr.Topic, kr.Partition) {
				chunk = append(chunk, kr)
			}
			recs = recs[1:]
		}
		batch := make([]sdk.SinkRecord, 0, len(chunk))
		// from[i] is the Kafka partition batch[i] was read from: rewinds
		// name Kafka partitions, and a transform may rename the topic.
		from := make([]sdk.TopicPartition, 0, len(chunk))
		for _, kr := range chunk {
			rec, err := r.fromKafka(kr)
			if err != nil {
				what := fmt.Sprintf("convert record %s-%d@%d", kr.Topic, kr.Partition, kr.Offset)
				if !r.cfg.Errors.TolerateAll {
					r.cfg.Metrics.RecordFailure()
					r.cfg.Metrics.RecordError()
					r.fail(err, what)
					return false
				}
				// Skipped: its offset is committed with the chunk's.
				if err := r.tolerateSink(r.runCtx, kr, fmt.Errorf("%s: %w", what, err)); err != nil {
					r.fail(err, what)
					return false
				}
				continue
			}
			keep := true
			if r.cfg.Transform != nil {
				if keep, err = r.cfg.Transform(&rec); err != nil {
					err = transformError(err)
					what := fmt.Sprintf("transform record %s-%d@%d", kr.Topic, kr.Partition, kr.Offset)
					if !r.cfg.Errors.TolerateAll {
						r.cfg.Metrics.RecordFailure()
						r.cfg.Metrics.RecordError()
						r.fail(err, what)
						return false
					}
					if err := r.tolerateSink(r.runCtx, kr, fmt.Errorf("%s: %w", what, err)); err != nil {
						r.fail(err, what)
						return false
					}
					continue
				}
			}
			if keep {
				batch = append(batch, rec)
				from = append(from, sdk.TopicPartition{Topic: kr.Topic, Partition: kr.Partition})
			}
		}
		// Wait until the task can take the batch (a plugin has a few
		// unacknowledged ones at most), then drop what it holds of the
		// partitions the task asked to rewind meanwhile.
		if err := r.cfg.Task.Ready(r.runCtx); err != nil {
			r.fail(err, "put")
			return false
		}
		if rw := r.applyRewinds(); len(rw) > 0 {
			addStale(rw)
			kept := batch[:0]
			for i, sr := range batch {
				if !isStale(from[i].Topic, from[i].Partition) {
					kept = append(kept, sr)
				}
			}
			clear(batch[len(kept):])
			batch = kept
			chunk = slices.DeleteFunc(chunk, func(kr *kgo.Record) bool { return isStale(kr.Topic, kr.Partition) })
		}
		putBegan := time.Now()
		for len(batch) > 0 {
			err := r.cfg.Task.Put(r.runCtx, batch)
			if err == nil {
				break
			}
			if !sdk.IsRetriable(err) || r.isStopping() {
				r.fail(err, "put")
				return false
			}
			r.log.Warn("put failed; retrying", "err", err)
			select {
			case <-time.After(r.retryBackoff):
			case <-r.stopping:
				return false
			}
		}
		// The task took the batch: a plugin's Put has encoded its values.
		r.valueWriter.Reuse()
		r.cfg.Metrics.RecordPut(len(batch), time.Since(putBegan))
		r.sample(chunk)
		for _, kr := range chunk {
			r.consumed[sdk.TopicPartition{Topic: kr.Topic, Partition: kr.Partition}] = kr.Offset + 1
			kr.Recycle()
		}
		r.noteActive()
		addStale(r.applyRewinds()) // a synchronous task's requests from this Put
	}
	return !r.failed.Load()
}

// settle waits until the task has processed every batch delivered, then
// applies the rewinds it requested, which it returns; r.mu held. An error
// (the last batch failed) fails the task.
func (r *SinkRunner) settle(ctx context.Context) (rewound map[sdk.TopicPartition]int64, err error) {
	if err := r.cfg.Task.Sync(ctx); err != nil {
		r.fail(err, "put")
		return nil, fmt.Errorf("task: put: %w", err)
	}
	return r.applyRewinds(), nil
}

// applyRewinds moves the consumer to the offsets the task asked to rewind
// to, and returns them; r.mu held.
func (r *SinkRunner) applyRewinds() map[sdk.TopicPartition]int64 {
	rw := r.cfg.Task.Rewinds()
	if len(rw) == 0 {
		return nil
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range rw {
		if !slices.Contains(r.assigned[tp.Topic], tp.Partition) {
			// Revoked meanwhile (its new owner starts from the committed
			// offset), or never ours: nothing to move.
			r.log.Warn("ignoring a rewind of a partition this task does not own", "topic", tp.Topic, "partition", tp.Partition, "offset", o)
			delete(rw, tp)
			continue
		}
		if set[tp.Topic] == nil {
			set[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
		r.consumed[tp] = o
	}
	if len(set) > 0 {
		r.client.SetOffsets(set)
	}
	return rw
}

// toConnect deserializes without copying where the converter can: the
// client never reuses the fetched bytes (recordPool lends it only the
// Record structs, and no decompression pool is configured), so string
// values may point into them, and they stay alive exactly as long as a
// value that needs them.
func toConnect(c convert.Converter, topic string, b []byte) (*schema.Schema, any, error) {
	if a, ok := c.(convert.Aliaser); ok {
		return a.ToConnectAliased(topic, b)
	}
	return c.ToConnect(topic, b)
}

// toConnectWire converts kr's value into the wire encoding when the
// runner does that; ok false means toConnect must.
func (r *SinkRunner) toConnectWire(kr *kgo.Record) (*schema.Schema, *wire.Raw, bool) {
	if r.wireValues == nil {
		return nil, nil, false
	}
	return r.wireValues.ToConnectWire(kr.Topic, kr.Value, &r.valueWriter)
}

func (r *SinkRunner) fromKafka(kr *kgo.Record) (sdk.SinkRecord, error) {
	rec := sdk.SinkRecord{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Timestamp: kr.Timestamp}
	var err error
	if rec.KeySchema, rec.Key, err = toConnect(r.cfg.Key, kr.Topic, kr.Key); err != nil {
		return rec, &stageError{stage: stageKeyConverter, err: fmt.Errorf("key: %w", err)}
	}
	if s, raw, ok := r.toConnectWire(kr); ok {
		rec.ValueSchema, rec.Value = s, raw
	} else if rec.ValueSchema, rec.Value, err = toConnect(r.cfg.Value, kr.Topic, kr.Value); err != nil {
		return rec, &stageError{stage: stageValueConverter, err: fmt.Errorf("value: %w", err)}
	}
	if len(kr.Headers) > 0 {
		rec.Headers = make([]sdk.Header, len(kr.Headers))
		for i, h := range kr.Headers {
			s, v, err := r.cfg.Header.ToConnectHeader(kr.Topic, h.Key, h.Value)
			if err != nil {
				return rec, &stageError{stage: stageHeaderConverter, err: fmt.Errorf("header %q: %w", h.Key, err)}
			}
			rec.Headers[i] = sdk.Header{Key: h.Key, Schema: s, Value: v}
		}
	}
	return rec, nil
}

// Stop stops consuming, flushes and commits what the task reports
// durable, closes the partitions (Revoked), stops the plugin task and
// leaves the group. ctx bounds the graceful part
// (task.shutdown.graceful.timeout.ms). Idempotent.
func (r *SinkRunner) Stop(ctx context.Context) error {
	r.stopOnce.Do(func() { r.stopErr = r.stop(ctx) })
	return r.stopErr
}

func (r *SinkRunner) stop(ctx context.Context) error {
	r.startOnce.Do(func() { close(r.done) })
	close(r.stopping)
	r.stopPoll()
	// Kafka Connect's isStopping: a Put retrying through an outage gives
	// its batch up now, rather than when ctx ends.
	if s, ok := r.cfg.Task.(plugins.StoppingSink); ok {
		s.BeginStop()
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		r.cancelRun()
		_ = r.cfg.Task.Stop(ctx)
		<-r.done
	}
	var errs []error
	r.mu.Lock()
	// A batch given up for the stop ended the loop quietly (fail): the
	// partitions are still closed, and nothing more is committed.
	if len(r.assigned) > 0 && (!r.failed.Load() || r.gaveUpBatch(ctx)) {
		if err := r.flushCommit(ctx, nil); errors.Is(err, plugins.ErrNotDelivered) {
			r.log.Info("a batch was given up to stop promptly: offsets are committed only up to the last commit, and the records after it will be delivered again", "err", err)
		} else if err != nil {
			errs = append(errs, err)
		}
		if err := r.cfg.Task.Revoked(ctx, tps(r.assigned)); err != nil && !errors.Is(err, plugins.ErrStopped) {
			errs = append(errs, fmt.Errorf("task: revoke: %w", err))
		}
	}
	r.closed = true
	r.mu.Unlock()
	if err := r.cfg.Task.Stop(ctx); err != nil && !errors.Is(err, plugins.ErrStopped) {
		errs = append(errs, fmt.Errorf("task: stop: %w", err))
	}
	r.client.AllowRebalance()
	r.client.Close()
	r.cancelRun()
	r.wg.Wait()
	return errors.Join(errs...)
}

// gaveUpBatch reports whether the task gave up a batch because it is
// stopping (plugins.StoppingSink); r.mu held. The task answers the batches
// after that one at once: the wait is bounded only in case it does not.
func (r *SinkRunner) gaveUpBatch(ctx context.Context) bool {
	if _, ok := r.cfg.Task.(plugins.StoppingSink); !ok {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return errors.Is(r.cfg.Task.Sync(sctx), plugins.ErrNotDelivered)
}

// recordPool lends the consumer the slices it decodes fetched records
// into; the runner recycles each record once delivered (values keep
// pointing into the fetched bytes, which are not pooled).
type recordPool struct{ p sync.Pool }

func (rp *recordPool) GetRecords(n int) []kgo.Record {
	if v, ok := rp.p.Get().(*[]kgo.Record); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]kgo.Record, n)
}

func (rp *recordPool) PutRecords(recs []kgo.Record) { rp.p.Put(&recs) }

// AnchoredRegex returns a topics.regex pattern that matches whole topic
// names only, as in Kafka Connect: "rx-a" takes topic rx-a, not rx-ab.
func AnchoredRegex(pattern string) string { return "^(?:" + pattern + ")$" }

// e2eSample is a delivered record: once its offset is committed, its
// end-to-end latency is a sample of tributary_sink_e2e_latency_seconds.
type e2eSample struct {
	tp     sdk.TopicPartition
	offset int64
	ts     time.Time
}

// maxSamples bounds the samples waiting for a commit.
const maxSamples = 4096

// sample keeps the first and last records of a chunk put to the task;
// r.mu held.
func (r *SinkRunner) sample(chunk []*kgo.Record) {
	if r.cfg.Metrics == nil || len(chunk) == 0 {
		return
	}
	for _, kr := range []*kgo.Record{chunk[0], chunk[len(chunk)-1]} {
		if kr.Timestamp.IsZero() {
			continue
		}
		if len(r.samples) >= maxSamples {
			r.samples = r.samples[1:]
		}
		r.samples = append(r.samples, e2eSample{sdk.TopicPartition{Topic: kr.Topic, Partition: kr.Partition}, kr.Offset, kr.Timestamp})
		if len(chunk) == 1 {
			break
		}
	}
}

// noteDurable turns the samples now committed into latencies; r.mu held.
func (r *SinkRunner) noteDurable() {
	if len(r.samples) == 0 {
		return
	}
	now := time.Now()
	kept := r.samples[:0]
	for _, s := range r.samples {
		if c, ok := r.committed[s.tp]; ok && s.offset < c {
			r.cfg.Metrics.E2E(now.Sub(s.ts))
			continue
		}
		kept = append(kept, s)
	}
	clear(r.samples[len(kept):])
	r.samples = kept
}

// lagLoop reads the end and start offsets of the task's partitions every
// LagInterval, for the lag metrics: the consumer's records-lag and
// records-lead, sink-record-lag-max, and tributary_sink_lag_records (end
// less committed). It reads them with a request of its own, so that the
// lag grows while the task is stuck or paused.
func (r *SinkRunner) lagLoop() {
	if r.cfg.Metrics == nil {
		return
	}
	t := time.NewTicker(r.cfg.LagInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stopping:
			return
		case <-t.C:
			r.measureLag()
		}
	}
}

func (r *SinkRunner) measureLag() {
	r.posMu.Lock()
	pos := r.pos
	r.posMu.Unlock()
	if len(pos) == 0 {
		return
	}
	var topics []string
	for tp := range pos {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	ctx, cancel := context.WithTimeout(r.runCtx, r.cfg.LagInterval)
	defer cancel()
	adm := kadm.NewClient(r.client)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return
	}
	starts, _ := adm.ListStartOffsets(ctx, topics...)
	group := r.client.CommittedOffsets() // where the consumer started
	var lagMax int64
	for tp, p := range pos {
		end, ok := ends.Lookup(tp.Topic, tp.Partition)
		if !ok || end.Err != nil {
			continue
		}
		start := int64(-1)
		if s, ok := starts.Lookup(tp.Topic, tp.Partition); ok && s.Err == nil {
			start = s.Offset
		}
		// Before this task consumed or committed: the group's commit it
		// starts from, else the log start (auto.offset.reset=earliest).
		from := start
		if eo, ok := group[tp.Topic][tp.Partition]; ok && eo.Offset >= 0 {
			from = eo.Offset
		}
		consumed, committed := p.consumed, p.committed
		if !p.hasConsumed {
			consumed = max(from, 0)
		}
		if !p.hasCommitted {
			committed = max(from, 0)
		}
		lead := int64(-1)
		if start >= 0 {
			lead = consumed - start
		}
		lag := max(end.Offset-consumed, 0)
		lagMax = max(lagMax, lag)
		r.consumer.Lag(tp.Topic, tp.Partition, lag, lead)
		r.cfg.Metrics.SinkLag(tp.Topic, tp.Partition, end.Offset, committed)
	}
	r.cfg.Metrics.SinkLagMax(lagMax)
}

// position is a partition's consumed and committed offsets.
type position struct {
	consumed, committed       int64
	hasConsumed, hasCommitted bool
}

package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/worker/convert"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// DefaultFlushInterval is Kafka Connect's offset.flush.interval.ms default.
const DefaultFlushInterval = 60 * time.Second

// SourceConfig configures a SourceRunner.
type SourceConfig struct {
	Info sdk.TaskInfo
	// Task is the plugin's task; or, with ExactlyOnce, StartTask starts it
	// once the transactional producer is initialized, as Kafka Connect
	// initializes the producer before the task: the task reads its
	// offsets as it starts, and a read of the offsets topic waits for a
	// transaction its previous instance left open, which only this
	// producer's initialization aborts (fences). Task is then nil.
	Task      plugins.SourceTask
	StartTask func(ctx context.Context) (plugins.SourceTask, error)
	// Key, Value and Header convert the records; Header defaults to
	// SimpleHeaderConverter.
	Key, Value convert.Converter
	Header     convert.HeaderConverter
	// Transform is the SMT chain, run before conversion; nil for none.
	Transform SourceTransform
	// Errors is the connector's errors.* policy for records that cannot
	// be converted (its dead letter queue settings are for sinks only).
	Errors ErrorPolicy
	// ClientOpts must hold kgo.SeedBrokers and carries the worker's
	// producer. overrides; they apply after the runner's defaults
	// (acks=all, client id connector-producer-<connector>-<task>).
	ClientOpts []kgo.Opt
	Offsets    OffsetWriter
	Status     StatusReporter
	// FlushInterval is offset.flush.interval.ms; default 60 s.
	FlushInterval time.Duration
	Logger        *slog.Logger
	// Metrics receives the task's Kafka Connect metrics; nil records
	// nothing.
	Metrics *metrics.Task
	// ExactlyOnce, when not nil, runs the task in producer transactions
	// (source_eos.go); Offsets is then not written to.
	ExactlyOnce *ExactlyOnce
}

// SourceRunner runs one source task.
type SourceRunner struct {
	cfg      SourceConfig
	log      *slog.Logger
	client   *kgo.Client
	producer *metrics.Client // the producer's metrics
	// keyBuf and valueBuf belong to the poll loop.
	keyBuf, valueBuf convBuf
	// rawValues: the value converter takes values left encoded (*wire.Raw)
	// and no transform needs them decoded.
	rawValues bool
	// encodedOffsets is the task when it hands over source offsets still
	// encoded and no transform needs them as maps: most records' offsets
	// are then never decoded, only each partition's committed one.
	encodedOffsets plugins.EncodedOffsetSource
	// produced is the promise method value, made once: every record
	// shares it.
	produced func(*kgo.Record, error)
	// eos is the transaction state with exactly-once support, else nil.
	eos *eosState

	runCtx    context.Context // cancelled on forced stop
	cancelRun context.CancelFunc
	pollCtx   context.Context // cancelled when stopping
	stopPoll  context.CancelFunc

	mu       sync.Mutex // guards the fields below
	parts    map[string]*partState
	paused   bool
	resumeCh chan struct{}
	failed   bool

	flushMu   sync.Mutex // one offset flush at a time
	statusMu  sync.Mutex
	startOnce sync.Once
	stopOnce  sync.Once
	stopErr   error
	stopping  chan struct{}
	done      chan struct{} // closed when the poll loop ended
	wg        sync.WaitGroup
}

type partState struct {
	part    sdk.Partition
	pending []*pendingRecord // in poll order
	// committable is the offset of the last record that, with all earlier
	// ones, was acked (still encoded when committableRaw is set); dirty
	// when not yet written.
	committable    sdk.Offset
	committableRaw []byte
	dirty          bool
}

// pendingRecord is a produced record's entry in its partition's queue. It
// is also the Kafka record's Context (franz-go's field for per-record
// data), from which the one promise function of the runner finds it and
// the partitioner reads explicit: a closure per record would cost an
// allocation each.
type pendingRecord struct {
	context.Context // context.Background(): Done is nil, so never cancels
	offset          sdk.Offset
	rawOffset       []byte // offset still encoded (plugins.EncodedOffsetSource)
	acked           bool
	explicit        bool        // the task chose the Kafka partition
	ps              *partState  // nil: the record has no source offset
	batch           *batchWrite // the polled batch the record is of
}

// batchWrite counts the records of a polled batch still to be acked:
// Kafka Connect records a batch's writes (source-record-write-*) once all
// of its records are written (SourceRecordWriteCounter).
type batchWrite struct {
	remaining atomic.Int64
	n         int // the batch's records
	skipped   int // dropped by a transform, or skipped by errors.tolerance
	m         *metrics.Task
}

// done counts k records of the batch as finished.
func (b *batchWrite) done(k int64) {
	if b != nil && b.remaining.Add(-k) == 0 {
		b.m.RecordWrite(b.n, b.skipped)
	}
}

// NewSource creates the runner and its producer; Start starts it.
func NewSource(cfg SourceConfig) (*SourceRunner, error) {
	if cfg.Task == nil && (cfg.StartTask == nil || cfg.ExactlyOnce == nil) || cfg.Key == nil || cfg.Value == nil || cfg.Offsets == nil {
		return nil, errors.New("task: source needs Task (or StartTask, with ExactlyOnce), Key, Value and Offsets")
	}
	if cfg.Header == nil {
		cfg.Header = convert.SimpleHeaderConverter{}
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	id := clientID("connector-producer", cfg.Info.Connector, cfg.Info.Task)
	producer := cfg.Metrics.Client(metrics.ClientProducer, id)
	opts := []kgo.Opt{
		kgo.ClientID(id),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(explicitPartitioner{kgo.StickyKeyPartitioner(nil)}),
		kgo.ProducerLinger(5 * time.Millisecond),
		// Kafka's producer defaults: compression.type=none (franz-go's is
		// snappy, which cost the worker and the broker CPU) and
		// buffer.memory=32 MiB (franz-go bounds records, not bytes).
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedBytes(32 << 20),
	}
	opts = append(opts, producer.Opt()...)
	var eos *eosState
	if e := cfg.ExactlyOnce; e != nil {
		if e.Offsets == nil || e.TransactionalID == "" {
			return nil, errors.New("task: exactly-once support needs Offsets and TransactionalID")
		}
		if e.Interval <= 0 {
			e.Interval = cfg.FlushInterval
		}
		eos = &eosState{cfg: *e}
		// Kafka's producer default transaction.timeout.ms (franz-go's is
		// 40 s); the connector's producer.override.* may change it.
		opts = append(opts, kgo.TransactionTimeout(time.Minute))
	}
	allOpts := append(opts, cfg.ClientOpts...)
	if eos != nil {
		// Forced, whatever the overrides say, as Kafka Connect does.
		allOpts = append(allOpts, kgo.TransactionalID(eos.cfg.TransactionalID))
	}
	client, err := kgo.NewClient(allOpts...)
	if err != nil {
		return nil, fmt.Errorf("task: source producer: %w", err)
	}
	producer.SetBuffer(func() (int64, int64) {
		const total = 32 << 20 // MaxBufferedBytes above
		return max(total-client.BufferedProduceBytes(), 0), total
	})
	r := &SourceRunner{cfg: cfg, client: client, producer: producer, parts: map[string]*partState{}, eos: eos,
		stopping: make(chan struct{}), done: make(chan struct{}), resumeCh: make(chan struct{}),
		log: cfg.Logger.With("connector", cfg.Info.Connector, "task", cfg.Info.Task)}
	r.runCtx, r.cancelRun = context.WithCancel(context.Background())
	r.pollCtx, r.stopPoll = context.WithCancel(r.runCtx)
	r.produced = r.promise
	if cfg.Task != nil {
		if err := r.attach(cfg.Task); err != nil {
			client.Close()
			return nil, err
		}
	}
	return r, nil
}

// attach sets the runner up for the plugin's task: before Start, or with
// StartTask once it started (before the poll loop).
func (r *SourceRunner) attach(t plugins.SourceTask) error {
	r.mu.Lock()
	r.cfg.Task = t
	r.mu.Unlock()
	if r.eos != nil && r.eos.cfg.Boundary == BoundaryConnector {
		bs, ok := t.(plugins.BoundarySource)
		if !ok {
			return errors.New("task: transaction.boundary=connector needs a task started with a transaction context")
		}
		r.eos.boundaries = bs
	}
	// Transformations may keep strings of the records they saw (a
	// router's last topic): a batch's memory is not lent back to the
	// plugin while they run.
	if r.cfg.Transform == nil {
		r.encodedOffsets = plugins.EncodesOffsets(t)
	}
	// A converter that writes values straight from the plugin's encoding
	// saves building them as Go values; transforms need those.
	if _, ok := r.cfg.Value.(convert.RawTaker); ok && r.cfg.Transform == nil {
		r.rawValues = true
		if rv, ok := t.(plugins.RawValueSource); ok {
			rv.KeepValuesEncoded()
		}
	}
	return nil
}

// plugin is the plugin's task, nil while StartTask has not started it.
func (r *SourceRunner) plugin() plugins.SourceTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.Task
}

// Start reports RUNNING and starts polling and the periodic offset flush.
// With exactly-once support it first initializes the transactional
// producer (initTransactions) and reports RUNNING after; offsets are then
// written with each transaction, not periodically.
func (r *SourceRunner) Start() {
	r.startOnce.Do(func() {
		if r.eos != nil {
			if r.eos.cfg.Boundary == BoundaryInterval {
				r.wg.Add(1)
				go func() { defer r.wg.Done(); r.intervalLoop() }()
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer close(r.done)
				if err := r.initTransactions(r.pollCtx); err != nil {
					if !r.isStopping() {
						r.fail(err, "exactly-once start")
					}
					return
				}
				if r.plugin() == nil {
					if r.isStopping() {
						return
					}
					t, err := r.cfg.StartTask(r.pollCtx)
					if err == nil {
						err = r.attach(t)
					}
					if err != nil {
						r.fail(err, "start")
						return
					}
				}
				r.mu.Lock()
				paused := r.paused
				r.mu.Unlock()
				if !paused {
					r.report(StateRunning, nil)
				}
				r.loop()
			}()
			return
		}
		r.report(StateRunning, nil)
		r.wg.Add(2)
		go func() { defer r.wg.Done(); defer close(r.done); r.loop() }()
		go func() { defer r.wg.Done(); r.flushLoop() }()
	})
}

// Done is closed when the task stopped polling: it failed or is stopping.
func (r *SourceRunner) Done() <-chan struct{} { return r.done }

func (r *SourceRunner) report(s State, err *sdk.TaskError) {
	if r.cfg.Status == nil {
		return
	}
	r.statusMu.Lock()
	defer r.statusMu.Unlock()
	r.cfg.Status.ReportStatus(r.cfg.Info, s, err)
}

// Pause stops polling (the connector is PAUSED); in-flight records are
// still acked and their offsets flushed.
func (r *SourceRunner) Pause() {
	r.mu.Lock()
	if r.paused || r.failed {
		r.mu.Unlock()
		return
	}
	r.paused = true
	r.resumeCh = make(chan struct{})
	r.mu.Unlock()
	r.report(StatePaused, nil)
	if r.eos != nil && !r.isStopping() {
		// The poll loop may be blocked in a Poll: the open transaction
		// is committed now, not when the next batch comes.
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.commitOnPause() }()
	}
}

// Resume resumes polling.
func (r *SourceRunner) Resume() {
	r.mu.Lock()
	if !r.paused || r.failed {
		r.mu.Unlock()
		return
	}
	r.paused = false
	close(r.resumeCh)
	r.mu.Unlock()
	r.report(StateRunning, nil)
}

func (r *SourceRunner) fail(err error, what string) {
	r.mu.Lock()
	if r.failed {
		r.mu.Unlock()
		return
	}
	r.failed = true
	r.mu.Unlock()
	select {
	case <-r.stopping:
		if errors.Is(err, context.Canceled) || errors.Is(err, plugins.ErrStopped) {
			return
		}
	default:
	}
	te := taskError(err, what)
	r.log.Error("task failed", "err", te.Message)
	r.report(StateFailed, te)
	r.stopPoll()
}

func (r *SourceRunner) isStopping() bool {
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

func (r *SourceRunner) loop() {
	for {
		r.mu.Lock()
		paused, resume, failed := r.paused, r.resumeCh, r.failed
		r.mu.Unlock()
		if failed || r.isStopping() {
			return
		}
		if paused {
			if !r.commitOnPause() {
				return
			}
			select {
			case <-resume:
			case <-r.stopping:
				return
			}
			continue
		}
		var recs []sdk.SourceRecord
		var offsets [][]byte
		var err error
		began := time.Now()
		if r.encodedOffsets != nil {
			recs, offsets, err = r.encodedOffsets.PollEncodedOffsets(r.pollCtx)
		} else {
			recs, err = r.cfg.Task.Poll(r.pollCtx)
		}
		if err == nil {
			r.cfg.Metrics.RecordPoll(len(recs), time.Since(began))
		}
		if err != nil {
			if r.isStopping() {
				return
			}
			r.fail(err, "poll")
			return
		}
		// A batch polled across a Pause waits for Resume: nothing is
		// produced while the task is paused.
		if !r.waitResumed() {
			return
		}
		r.keyBuf.mayAlias, r.valueBuf.mayAlias = false, false
		var headers bool
		if r.eos != nil {
			headers, err = r.sendTransactional(recs, offsets)
		} else {
			headers, err = r.send(recs, offsets)
		}
		if err != nil {
			if !r.isStopping() {
				r.fail(err, "send")
			}
			return
		}
		// Every key and value the producer holds is a copy (no header
		// either): nothing refers to the received batch any more.
		if r.encodedOffsets != nil && !headers && !r.keyBuf.mayAlias && !r.valueBuf.mayAlias {
			r.encodedOffsets.ReleaseBatch(recs)
		}
	}
}

// waitResumed blocks while paused; false when stopping.
func (r *SourceRunner) waitResumed() bool {
	for {
		r.mu.Lock()
		paused, resume := r.paused, r.resumeCh
		r.mu.Unlock()
		if !paused {
			return !r.isStopping()
		}
		if !r.commitOnPause() {
			return false
		}
		select {
		case <-resume:
		case <-r.stopping:
			return false
		}
	}
}

// commitOnPause commits the open transaction of a task with exactly-once
// support as it pauses, so that no transaction stays open (and times out)
// while it is paused; a connector's transactions end where it asks only.
// False when the commit failed the task.
func (r *SourceRunner) commitOnPause() bool {
	if r.eos == nil || r.eos.cfg.Boundary == BoundaryConnector {
		return true
	}
	r.eos.mu.Lock()
	defer r.eos.mu.Unlock()
	if !r.eos.open {
		return true
	}
	if err := r.commitTransaction(r.runCtx, false); err != nil {
		if !r.isStopping() {
			r.fail(err, "commit")
		}
		return false
	}
	return true
}

func partitionKey(p sdk.Partition) string {
	b, err := json.Marshal(p) // map keys sorted: a canonical key
	if err != nil {
		return fmt.Sprint(p)
	}
	return string(b)
}

// partKeyCache remembers the last source partition's canonical key: a
// task's records usually share one partition (often the very same map), so
// the JSON encoding of partitionKey runs once per partition change, not per
// record.
type partKeyCache struct {
	last sdk.Partition
	key  string
}

func (c *partKeyCache) keyOf(p sdk.Partition) string {
	if c.last != nil && samePartition(c.last, p) {
		return c.key
	}
	c.last, c.key = p, partitionKey(p)
	return c.key
}

// samePartition reports whether a and b hold the same scalar values; false
// (recompute the key) for anything else.
func samePartition(a, b sdk.Partition) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			return false
		}
		switch x := av.(type) {
		case string:
			if y, ok := bv.(string); !ok || x != y {
				return false
			}
		case int64:
			if y, ok := bv.(int64); !ok || x != y {
				return false
			}
		case int:
			if y, ok := bv.(int); !ok || x != y {
				return false
			}
		case int32:
			if y, ok := bv.(int32); !ok || x != y {
				return false
			}
		case bool:
			if y, ok := bv.(bool); !ok || x != y {
				return false
			}
		case float64:
			if y, ok := bv.(float64); !ok || x != y {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// track queues a record's offset (rec.Offset, or rawOffset when encoded)
// for its source partition; pr is where the pending entry is kept (one
// slice per batch). Records without a partition or offset are not queued
// (pr.ps stays nil).
func (r *SourceRunner) track(keys *partKeyCache, rec *sdk.SourceRecord, rawOffset []byte, pr *pendingRecord, acked bool) {
	if rec.Partition == nil || rec.Offset == nil && rawOffset == nil {
		return
	}
	key := keys.keyOf(rec.Partition)
	r.mu.Lock()
	defer r.mu.Unlock()
	ps := r.parts[key]
	if ps == nil {
		ps = &partState{part: rec.Partition}
		r.parts[key] = ps
	}
	pr.offset, pr.rawOffset, pr.acked, pr.ps = rec.Offset, rawOffset, acked, ps
	ps.pending = append(ps.pending, pr)
	if acked {
		ps.advance()
	}
}

// advance moves committable past the acked head of the queue; r.mu held.
func (ps *partState) advance() {
	n := 0
	for n < len(ps.pending) && ps.pending[n].acked {
		ps.committable, ps.committableRaw = ps.pending[n].offset, ps.pending[n].rawOffset
		ps.dirty = true
		n++
	}
	if n > 0 {
		clear(ps.pending[:n])
		ps.pending = ps.pending[n:]
	}
}

func (r *SourceRunner) ack(pr *pendingRecord) {
	if pr == nil || pr.ps == nil {
		return
	}
	r.mu.Lock()
	pr.acked = true
	pr.ps.advance()
	r.mu.Unlock()
}

// send converts and produces a polled batch; offsets, if not nil, holds
// the records' encoded source offsets (PollEncodedOffsets). It reports
// whether a produced record had headers.
func (r *SourceRunner) send(recs []sdk.SourceRecord, offsets [][]byte) (headers bool, err error) {
	produced := 0
	// One allocation per batch for the pending entries and the Kafka
	// records instead of one each per record.
	prs := make([]pendingRecord, len(recs))
	krs := make([]kgo.Record, len(recs))
	var keys partKeyCache
	m := r.cfg.Metrics
	m.RecordBatch(len(recs))
	var bw *batchWrite
	if m != nil && len(recs) > 0 {
		// Every record counts as outstanding until it is produced and
		// acked, or skipped; those not produced are counted off below.
		bw = &batchWrite{n: len(recs), m: m}
		bw.remaining.Store(int64(len(recs)) + 1)
		defer func() { bw.done(int64(len(recs)-produced) + 1) }()
	}
	for i := range recs {
		rec := recs[i]
		var rawOffset []byte
		if offsets != nil {
			rawOffset = offsets[i]
		}
		if raw, ok := rec.Value.(*wire.Raw); ok && !r.rawValues {
			v, err := raw.Decode()
			if err != nil {
				return headers, corruptRecord(i, fmt.Errorf("decode value for topic %s: %w", rec.Topic, err))
			}
			rec.Value = v
		}
		keep := true
		if r.cfg.Transform != nil && rec.Topic != "" {
			var err error
			if keep, err = r.cfg.Transform(&rec); err != nil {
				err = transformError(err)
				if !r.cfg.Errors.TolerateAll {
					m.RecordFailure()
					m.RecordError()
					return headers, err
				}
				// Skipped: its offset is committed as a dropped record's.
				r.tolerateSource(&rec, err)
				r.track(&keys, &recs[i], rawOffset, &prs[i], true)
				if bw != nil {
					bw.skipped++
				}
				continue
			}
		}
		if !keep || rec.Topic == "" {
			// Dropped records and heartbeats only advance the offset.
			r.track(&keys, &recs[i], rawOffset, &prs[i], true)
			if bw != nil {
				bw.skipped++
			}
			continue
		}
		if r.eos != nil && rec.Topic == r.eos.cfg.Offsets.Topic() {
			return headers, ErrOwnOffsetsTopic
		}
		kr := &krs[i]
		if err := r.toKafka(&rec, kr); err != nil {
			if !r.cfg.Errors.TolerateAll || errors.Is(err, wire.ErrCorrupt) {
				m.RecordFailure()
				m.RecordError()
				return headers, corruptRecord(i, err)
			}
			// Skipped: its offset is committed as a dropped record's.
			r.tolerateSource(&rec, err)
			r.track(&keys, &recs[i], rawOffset, &prs[i], true)
			if bw != nil {
				bw.skipped++
			}
			continue
		}
		headers = headers || len(kr.Headers) > 0
		pr := &prs[i]
		pr.Context, pr.explicit, pr.batch = context.Background(), rec.KafkaPartition != nil, bw
		kr.Context = pr
		r.track(&keys, &recs[i], rawOffset, pr, false)
		produced++
		if r.eos != nil {
			r.eos.records++
		}
		r.client.Produce(r.runCtx, kr, r.produced)
	}
	return headers, nil
}

// corruptRecord says which record of a polled batch err is about when it
// is a corrupt value from the plugin: values cut out of their batch by
// their length are checked only as they are converted, after the records
// before them in the batch were produced.
func corruptRecord(i int, err error) error {
	if errors.Is(err, wire.ErrCorrupt) {
		return fmt.Errorf("record %d of the batch the plugin sent: %w", i, err)
	}
	return err
}

// promise is the produce callback of every record: it acknowledges the
// record's offset (its pendingRecord is the record's Context) or fails the
// task.
func (r *SourceRunner) promise(kr *kgo.Record, err error) {
	if err != nil {
		r.producer.RecordError(kr.Topic)
		if r.eos != nil {
			// Fenced by a newer instance, or the transaction expired.
			err = r.txnError("produce to "+kr.Topic, err)
		}
		r.fail(err, "produce to "+kr.Topic)
		return
	}
	pr := kr.Context.(*pendingRecord)
	r.ack(pr)
	pr.batch.done(1)
}

func (r *SourceRunner) toKafka(rec *sdk.SourceRecord, kr *kgo.Record) error {
	key, err := r.keyBuf.convert(r.cfg.Key, rec.Topic, rec.KeySchema, rec.Key)
	if err != nil {
		return &stageError{stage: stageKeyConverter, err: fmt.Errorf("convert key for topic %s: %w", rec.Topic, err)}
	}
	val, err := r.valueBuf.convert(r.cfg.Value, rec.Topic, rec.ValueSchema, rec.Value)
	if err != nil {
		return &stageError{stage: stageValueConverter, err: fmt.Errorf("convert value for topic %s: %w", rec.Topic, err)}
	}
	*kr = kgo.Record{Topic: rec.Topic, Key: key, Value: val, Timestamp: rec.Timestamp}
	if rec.KafkaPartition != nil {
		kr.Partition = *rec.KafkaPartition
	}
	if len(rec.Headers) > 0 {
		kr.Headers = make([]kgo.RecordHeader, len(rec.Headers))
		for i, h := range rec.Headers {
			b, err := r.cfg.Header.FromConnectHeader(rec.Topic, h.Key, h.Schema, h.Value)
			if err != nil {
				return &stageError{stage: stageHeaderConverter, err: fmt.Errorf("convert header %q: %w", h.Key, err)}
			}
			kr.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: b}
		}
	}
	return nil
}

func (r *SourceRunner) flushLoop() {
	t := time.NewTicker(r.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stopping:
			return
		case <-t.C:
			if err := r.commitOffsets(r.runCtx); err != nil && !r.isStopping() {
				r.log.Warn("offset flush failed; retrying at the next interval", "err", err)
			}
		}
	}
}

// commitOffsets writes the committable offsets and then tells the task.
func (r *SourceRunner) commitOffsets(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	offs, keys, decodeErr := r.committable()
	if len(offs) == 0 {
		return decodeErr
	}
	began := time.Now()
	if err := r.cfg.Offsets.WriteOffsets(ctx, r.cfg.Info.Connector, offs); err != nil {
		r.cfg.Metrics.RecordCommit(time.Since(began), false)
		r.mu.Lock()
		for _, k := range keys {
			r.parts[k].dirty = true
		}
		r.mu.Unlock()
		return fmt.Errorf("task: write offsets: %w", err)
	}
	r.cfg.Metrics.RecordCommit(time.Since(began), true)
	if err := r.cfg.Task.Committed(ctx, offs); err != nil && !errors.Is(err, plugins.ErrStopped) {
		r.log.Warn("task rejected committed offsets", "err", err)
	}
	return decodeErr
}

// committable takes the offsets of the partitions whose committable offset
// changed since the last commit, clearing their dirty marks (keys are
// their partitions' keys, to mark again if the commit fails).
func (r *SourceRunner) committable() (offs []sdk.SourceOffset, keys []string, decodeErr error) {
	var dirty []string
	r.mu.Lock()
	for k, ps := range r.parts {
		if ps.dirty {
			dirty = append(dirty, k)
		}
	}
	sort.Strings(dirty)
	for _, k := range dirty {
		ps := r.parts[k]
		ps.dirty = false
		if ps.committableRaw != nil {
			off, err := wire.DecodeOffset(ps.committableRaw)
			if err != nil {
				// Cannot happen for an offset the decoder accepted; if it
				// did, this partition keeps its previous committed offset
				// (its records since are delivered again after a restart)
				// and the others are still written.
				ps.committableRaw = nil
				decodeErr = errors.Join(decodeErr, fmt.Errorf("task: decode the source offset of partition %s: %w", k, err))
				continue
			}
			ps.committable, ps.committableRaw = off, nil
		}
		keys = append(keys, k)
		offs = append(offs, sdk.SourceOffset{Partition: ps.part, Offset: ps.committable})
	}
	r.mu.Unlock()
	return offs, keys, decodeErr
}

// Stop stops polling, waits for in-flight records until ctx is done
// (task.shutdown.graceful.timeout.ms), writes the offsets of the acked
// records, stops the plugin task and closes the producer. It is
// idempotent and returns the first call's result.
func (r *SourceRunner) Stop(ctx context.Context) error {
	r.stopOnce.Do(func() { r.stopErr = r.stop(ctx) })
	return r.stopErr
}

func (r *SourceRunner) stop(ctx context.Context) error {
	r.startOnce.Do(func() { close(r.done) }) // never started
	close(r.stopping)
	r.stopPoll()
	select {
	case <-r.done:
	case <-ctx.Done():
		// A Poll that ignores cancellation: stop the plugin to unblock it.
		if t := r.plugin(); t != nil {
			_ = t.Stop(ctx)
		}
		r.cancelRun()
		<-r.done
	}
	var errs []error
	forced := r.runCtx.Err() != nil
	flushed := time.Now()
	if err := r.client.Flush(ctx); err != nil {
		errs = append(errs, fmt.Errorf("task: flush producer: %w", err))
	}
	r.producer.Flush(time.Since(flushed))
	if r.eos != nil {
		if err := r.finishTransactions(ctx, forced || ctx.Err() != nil); err != nil {
			errs = append(errs, err)
		}
	} else if err := r.commitOffsets(ctx); err != nil {
		errs = append(errs, err)
	}
	if t := r.plugin(); t != nil {
		if err := t.Stop(ctx); err != nil && !errors.Is(err, plugins.ErrStopped) {
			errs = append(errs, fmt.Errorf("task: stop: %w", err))
		}
	}
	r.cancelRun()
	r.client.Close()
	r.wg.Wait()
	return errors.Join(errs...)
}

// explicit reports whether the source task chose r's Kafka partition.
func explicit(r *kgo.Record) bool {
	pr, ok := r.Context.(*pendingRecord)
	return ok && pr.explicit
}

// explicitPartitioner honours SourceRecord.KafkaPartition and otherwise
// uses Kafka's default (murmur2 of the key, sticky for null keys).
type explicitPartitioner struct{ kgo.Partitioner }

func (p explicitPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	tp := p.Partitioner.ForTopic(topic)
	if nb, ok := tp.(kgo.TopicPartitionerOnNewBatch); ok {
		return explicitTopicPartitionerBatch{explicitTopicPartitioner{tp}, nb}
	}
	return explicitTopicPartitioner{tp}
}

type explicitTopicPartitioner struct{ kgo.TopicPartitioner }

func (p explicitTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return explicit(r) || p.TopicPartitioner.RequiresConsistency(r)
}

func (p explicitTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if explicit(r) {
		return int(r.Partition)
	}
	return p.TopicPartitioner.Partition(r, n)
}

type explicitTopicPartitionerBatch struct {
	explicitTopicPartitioner
	nb kgo.TopicPartitionerOnNewBatch
}

func (p explicitTopicPartitionerBatch) OnNewBatch() { p.nb.OnNewBatch() }

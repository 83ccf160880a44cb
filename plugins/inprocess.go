package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// InProcess is a Loader that runs sdk connectors in the calling process, on
// goroutines: no process boundary, no encoding. Panics in connector code are
// still caught and fail the task, but a connector that exits the process or
// corrupts memory takes the host with it, so the worker uses Host; tests and
// the overhead benchmark use InProcess.
type InProcess struct {
	connectors []sdk.Connector
	specs      []sdk.Spec
	logger     *slog.Logger
	// MaxRecords is the max passed to Poll (default 2000).
	maxRecords int
}

var _ Loader = (*InProcess)(nil)

// NewInProcess returns a Loader serving the given connectors.
func NewInProcess(logger *slog.Logger, connectors ...sdk.Connector) (*InProcess, error) {
	if logger == nil {
		logger = slog.Default()
	}
	l := &InProcess{connectors: connectors, logger: logger, maxRecords: 2000}
	for _, c := range connectors {
		var spec sdk.Spec
		if err := sdk.SafeCall(func() error { spec = c.Spec(); return nil }); err != nil {
			return nil, fmt.Errorf("plugins: in-process connector: %w", err)
		}
		l.specs = append(l.specs, spec)
	}
	return l, nil
}

// Specs implements Loader.
func (l *InProcess) Specs() []sdk.Spec { return append([]sdk.Spec(nil), l.specs...) }

// Location implements Locator: in-process connectors are built in
// (Classpath); "" for a class it does not serve.
func (l *InProcess) Location(class string) string {
	if _, err := findSpec(l.specs, class); err != nil {
		return ""
	}
	return Classpath
}

// Spec implements Loader.
func (l *InProcess) Spec(class string) (sdk.Spec, error) {
	i, err := findSpec(l.specs, class)
	if err != nil {
		return sdk.Spec{}, err
	}
	return l.specs[i], nil
}

func (l *InProcess) find(class string) (sdk.Connector, error) {
	i, err := findSpec(l.specs, class)
	if err != nil {
		return nil, err
	}
	return l.connectors[i], nil
}

// Validate implements Loader.
func (l *InProcess) Validate(ctx context.Context, class string, config map[string]string) (sdk.ConfigInfos, error) {
	c, err := l.find(class)
	if err != nil {
		return sdk.ConfigInfos{}, err
	}
	var infos sdk.ConfigInfos
	err = sdk.SafeCall(func() error { var err error; infos, err = c.Validate(ctx, config); return err })
	return infos, err
}

// AlterOffsets implements Loader.
func (l *InProcess) AlterOffsets(ctx context.Context, class, name string, config map[string]string, change sdk.OffsetChange) (bool, error) {
	c, err := l.find(class)
	if err != nil {
		return false, err
	}
	oa, ok := c.(sdk.OffsetApprover)
	if !ok {
		return false, nil
	}
	accepted, err := oa.ApproveOffsets(ctx, config, change)
	var pe *sdk.PanicError
	switch {
	case err == nil:
		return accepted, nil
	case errors.As(err, &pe), errors.Is(err, sdk.ErrOffsetsUnsupported):
		return false, err
	}
	return false, &OffsetsRefusedError{Message: err.Error()}
}

func asTaskError(err error) error {
	if err == nil {
		return nil
	}
	var te *sdk.TaskError
	if errors.As(err, &te) {
		return te
	}
	var pe *sdk.PanicError
	if errors.As(err, &pe) {
		return &sdk.TaskError{Message: err.Error(), Trace: pe.Error() + "\n\n" + pe.Stack}
	}
	return &sdk.TaskError{Message: err.Error(), Trace: err.Error()}
}

type inConnectorContext struct {
	logger  *slog.Logger
	events  chan ConnectorEvent
	metrics *sdk.Metrics
}

// Metrics is the connector's registry (sdk.MetricsOf).
func (c *inConnectorContext) Metrics() *sdk.Metrics { return c.metrics }

func (c *inConnectorContext) RequestTaskReconfiguration() {
	select {
	case c.events <- ConnectorEvent{Reconfigure: true}:
	default:
	}
}

func (c *inConnectorContext) RaiseError(err error) {
	select {
	case c.events <- ConnectorEvent{Err: asTaskError(err)}:
	default:
	}
}

func (c *inConnectorContext) Logger() *slog.Logger { return c.logger }

type inConnector struct {
	rc      sdk.RunningConnector
	events  chan ConnectorEvent
	once    sync.Once
	metrics *sdk.Metrics
}

// PluginMetrics implements MetricsReporter.
func (c *inConnector) PluginMetrics() []sdk.MetricFamily { return c.metrics.Snapshot() }

// StartConnector implements Loader.
func (l *InProcess) StartConnector(ctx context.Context, class, name string, config map[string]string) (Connector, error) {
	c, err := l.find(class)
	if err != nil {
		return nil, err
	}
	cc := &inConnectorContext{logger: l.logger.With("connector", name), events: make(chan ConnectorEvent, 16), metrics: sdk.NewMetrics()}
	var rc sdk.RunningConnector
	if err := sdk.SafeCall(func() error { var err error; rc, err = c.Start(ctx, config, cc); return err }); err != nil {
		return nil, asTaskError(err)
	}
	return &inConnector{rc: rc, events: cc.events, metrics: cc.metrics}, nil
}

func (c *inConnector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	var out []map[string]string
	err := sdk.SafeCall(func() error { var err error; out, err = c.rc.TaskConfigs(ctx, maxTasks); return err })
	return out, asTaskError(err)
}

func (c *inConnector) Events() <-chan ConnectorEvent { return c.events }

func (c *inConnector) Stop(ctx context.Context) error {
	var err error
	c.once.Do(func() { err = sdk.SafeCall(func() error { return c.rc.Stop(ctx) }) })
	return asTaskError(err)
}

type inSourceContext struct {
	info    sdk.TaskInfo
	logger  *slog.Logger
	offsets OffsetReader
	metrics *sdk.Metrics
	txn     *sdk.Transactions
}

// TransactionContext is the task's (sdk.TransactionContextOf).
func (c *inSourceContext) TransactionContext() sdk.TransactionContext {
	if c.txn == nil {
		return nil
	}
	return c.txn
}

// inBatch is a polled batch, or (without records) a transaction boundary.
type inBatch struct {
	recs     []sdk.SourceRecord
	boundary Boundary
}

// Metrics is the task's registry (sdk.MetricsOf).
func (c *inSourceContext) Metrics() *sdk.Metrics { return c.metrics }

func (c *inSourceContext) Info() sdk.TaskInfo   { return c.info }
func (c *inSourceContext) Logger() *slog.Logger { return c.logger }
func (c *inSourceContext) Offset(ctx context.Context, p sdk.Partition) (sdk.Offset, error) {
	offs, err := c.Offsets(ctx, []sdk.Partition{p})
	if err != nil {
		return nil, err
	}
	return offs[0], nil
}

func (c *inSourceContext) Offsets(ctx context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	if c.offsets == nil {
		return make([]sdk.Offset, len(ps)), nil
	}
	offs, err := c.offsets.Offsets(ctx, ps)
	if err != nil {
		return nil, err
	}
	if len(offs) != len(ps) {
		return nil, fmt.Errorf("plugins: offset reader returned %d offsets for %d partitions", len(offs), len(ps))
	}
	return offs, nil
}

type inSourceTask struct {
	metrics *sdk.Metrics
	task    sdk.SourceTask
	info    sdk.TaskInfo
	logger  *slog.Logger
	cancel  context.CancelFunc
	batches chan inBatch
	done    chan struct{}
	// txn is the task's transaction context (nil without one); boundary
	// the boundary of the batch Poll returned last.
	txn      *sdk.Transactions
	boundary Boundary
	commit   sync.Mutex
	closed   bool
	err      error // set before done is closed
	once     sync.Once
	stopErr  error
}

// StartSourceTask implements Loader. Poll runs on its own goroutine, as in
// a plugin process, and hands batches over a channel.
func (l *InProcess) StartSourceTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader) (SourceTask, error) {
	return l.StartSourceTaskWith(ctx, class, info, config, offsets, SourceTaskOptions{})
}

// StartSourceTaskWith implements SourceTaskStarter.
func (l *InProcess) StartSourceTaskWith(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader, opts SourceTaskOptions) (SourceTask, error) {
	c, err := l.find(class)
	if err != nil {
		return nil, err
	}
	sp, ok := c.(sdk.SourcePlugin)
	if !ok {
		return nil, fmt.Errorf("plugins: %s is not a source connector", class)
	}
	var task sdk.SourceTask
	if err := sdk.SafeCall(func() error { var err error; task, err = sp.NewSourceTask(config); return err }); err != nil {
		return nil, asTaskError(err)
	}
	logger := l.logger.With("connector", info.Connector, "task", info.Task)
	tc := &inSourceContext{info: info, logger: logger, offsets: offsets, metrics: sdk.NewMetrics()}
	if opts.TransactionContext {
		tc.txn = &sdk.Transactions{}
	}
	pollCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &inSourceTask{metrics: tc.metrics, task: task, info: info, logger: logger, cancel: cancel, batches: make(chan inBatch, 4), done: make(chan struct{}), txn: tc.txn}
	if err := sdk.SafeCall(func() error { return task.Open(ctx, tc) }); err != nil {
		cancel()
		_ = sdk.SafeCall(func() error { return task.Close(context.WithoutCancel(ctx)) })
		return nil, asTaskError(fmt.Errorf("open: %w", err))
	}
	go t.run(pollCtx, l.maxRecords)
	return t, nil
}

// PluginMetrics implements MetricsReporter.
func (t *inSourceTask) PluginMetrics() []sdk.MetricFamily { return t.metrics.Snapshot() }

func (t *inSourceTask) run(ctx context.Context, maxRecords int) {
	defer close(t.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var recs []sdk.SourceRecord
		err := sdk.SafeCall(func() error { var err error; recs, err = t.task.Poll(ctx, maxRecords); return err })
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil && sdk.IsRetriable(err) {
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		if err != nil {
			t.err = asTaskError(fmt.Errorf("poll: %w", err))
			return
		}
		backoff = 100 * time.Millisecond
		for i := range recs {
			if err := recs[i].Validate(); err != nil {
				t.err = asTaskError(fmt.Errorf("record %d of poll (topic %q): %w", i, recs[i].Topic, err))
				return
			}
		}
		if t.txn == nil {
			if len(recs) > 0 && !t.hand(ctx, inBatch{recs: recs}) {
				return
			}
			continue
		}
		// With a transaction context, a batch ends where the task asked
		// for a boundary, which follows as a batch of its own.
		from := 0
		for i := range recs {
			req, err := t.txn.OnRecord(&recs[i])
			if err != nil {
				t.err = asTaskError(err)
				return
			}
			if req == sdk.NoTransactionRequest {
				continue
			}
			if !t.hand(ctx, inBatch{recs: recs[from : i+1]}) || !t.hand(ctx, inBatch{boundary: boundaryOf(req)}) {
				return
			}
			from = i + 1
		}
		if from < len(recs) && !t.hand(ctx, inBatch{recs: recs[from:]}) {
			return
		}
		req, err := t.txn.OnBatch()
		if err != nil {
			t.err = asTaskError(err)
			return
		}
		if req != sdk.NoTransactionRequest && !t.hand(ctx, inBatch{boundary: boundaryOf(req)}) {
			return
		}
	}
}

func boundaryOf(r sdk.TransactionRequest) Boundary {
	if r == sdk.AbortTransactionRequest {
		return AbortBoundary
	}
	return CommitBoundary
}

// hand passes b to Poll; false when the task is stopping.
func (t *inSourceTask) hand(ctx context.Context, b inBatch) bool {
	select {
	case t.batches <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// Boundary implements BoundarySource.
func (t *inSourceTask) Boundary() Boundary { return t.boundary }

func (t *inSourceTask) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	t.boundary = NoBoundary
	select {
	case b := <-t.batches:
		t.boundary = b.boundary
		return b.recs, nil
	case <-t.done:
		select {
		case b := <-t.batches:
			t.boundary = b.boundary
			return b.recs, nil
		default:
		}
		if t.err != nil {
			return nil, t.err
		}
		return nil, ErrStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *inSourceTask) Committed(ctx context.Context, offsets []sdk.SourceOffset) error {
	t.commit.Lock()
	defer t.commit.Unlock()
	if t.closed {
		return ErrStopped
	}
	oc, ok := t.task.(sdk.OffsetsCommitter)
	if !ok {
		return nil
	}
	if err := sdk.SafeCall(func() error { return oc.OffsetsCommitted(ctx, offsets) }); err != nil {
		t.logger.Warn("OffsetsCommitted failed", "error", err)
	}
	return nil
}

func (t *inSourceTask) Stop(ctx context.Context) error {
	t.once.Do(func() {
		t.cancel()
		select {
		case <-t.done:
		case <-ctx.Done():
			t.stopErr = &sdk.TaskError{Message: fmt.Sprintf("plugins: source task %s-%d did not stop: %v", t.info.Connector, t.info.Task, ctx.Err())}
			return
		}
		t.commit.Lock()
		t.closed = true
		t.commit.Unlock()
		if err := sdk.SafeCall(func() error { return t.task.Close(ctx) }); err != nil {
			t.stopErr = asTaskError(err)
		}
	})
	return t.stopErr
}

type inSinkContext struct {
	info    sdk.TaskInfo
	logger  *slog.Logger
	metrics *sdk.Metrics
	mu      sync.Mutex
	rewinds map[sdk.TopicPartition]int64
	rewound chan struct{} // RewindRequested
}

func (c *inSinkContext) Info() sdk.TaskInfo   { return c.info }
func (c *inSinkContext) Logger() *slog.Logger { return c.logger }

// Metrics is the task's registry (sdk.MetricsOf).
func (c *inSinkContext) Metrics() *sdk.Metrics { return c.metrics }

// PluginMetrics implements MetricsReporter.
func (t *inSinkTask) PluginMetrics() []sdk.MetricFamily { return t.tc.metrics.Snapshot() }
func (c *inSinkContext) Rewind(offsets map[sdk.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewinds == nil {
		c.rewinds = map[sdk.TopicPartition]int64{}
	}
	for tp, o := range offsets {
		c.rewinds[tp] = o
	}
	select {
	case c.rewound <- struct{}{}:
	default: // already signalled
	}
}

type inSinkTask struct {
	task sdk.SinkTask
	tc   *inSinkContext
	once sync.Once
	err  error
	// stopping ends with BeginStop; it is the context of Put's retries.
	stopping  context.Context
	beginStop context.CancelFunc
	// notDelivered is set once a Put gave its batch up (StoppingSink).
	notDelivered error
}

var _ StoppingSink = (*inSinkTask)(nil)

// StartSinkTask implements Loader.
func (l *InProcess) StartSinkTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string) (SinkTask, error) {
	c, err := l.find(class)
	if err != nil {
		return nil, err
	}
	sp, ok := c.(sdk.SinkPlugin)
	if !ok {
		return nil, fmt.Errorf("plugins: %s is not a sink connector", class)
	}
	var task sdk.SinkTask
	if err := sdk.SafeCall(func() error { var err error; task, err = sp.NewSinkTask(config); return err }); err != nil {
		return nil, asTaskError(err)
	}
	tc := &inSinkContext{info: info, logger: l.logger.With("connector", info.Connector, "task", info.Task), rewound: make(chan struct{}, 1),
		metrics: sdk.NewMetrics()}
	if err := sdk.SafeCall(func() error { return task.Open(ctx, tc) }); err != nil {
		_ = sdk.SafeCall(func() error { return task.Close(context.WithoutCancel(ctx)) })
		return nil, asTaskError(fmt.Errorf("open: %w", err))
	}
	st := &inSinkTask{task: task, tc: tc}
	st.stopping, st.beginStop = context.WithCancel(context.Background())
	return st, nil
}

// Put retries a Retriable error after a back-off, until BeginStop: then it
// gives the batch up (see StoppingSink), as the SDK does in a plugin.
func (t *inSinkTask) Put(ctx context.Context, records []sdk.SinkRecord) error {
	if t.notDelivered != nil {
		return t.notDelivered
	}
	giveUp := func(err error) error {
		t.notDelivered = fmt.Errorf("%w: %v", ErrNotDelivered, err)
		return t.notDelivered
	}
	backoff := 100 * time.Millisecond
	pctx := ctx
	var endRetries context.CancelFunc // set once retrying
	defer func() {
		if endRetries != nil {
			endRetries()
		}
	}()
	for {
		err := sdk.SafeCall(func() error { return t.task.Put(pctx, records) })
		if err == nil {
			return nil
		}
		_, panicked := errors.AsType[*sdk.PanicError](err)
		if !panicked && t.stopping.Err() != nil && ctx.Err() == nil && (endRetries != nil || sdk.IsRetriable(err)) {
			return giveUp(err)
		}
		if !sdk.IsRetriable(err) {
			t.err = asTaskError(fmt.Errorf("put: %w", err))
			return t.err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.stopping.Done():
			return giveUp(err)
		case <-time.After(backoff):
		}
		if endRetries == nil { // retries end with ctx or at BeginStop
			var cancel context.CancelFunc
			pctx, cancel = context.WithCancel(ctx)
			stop := context.AfterFunc(t.stopping, cancel)
			endRetries = func() { stop(); cancel() }
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// BeginStop implements StoppingSink.
func (t *inSinkTask) BeginStop() { t.beginStop() }

func (t *inSinkTask) Assigned(ctx context.Context, ps []sdk.TopicPartition) error {
	if h, ok := t.task.(sdk.PartitionsHandler); ok {
		return asTaskError(sdk.SafeCall(func() error { return h.Assigned(ctx, ps) }))
	}
	return nil
}

func (t *inSinkTask) Revoked(ctx context.Context, ps []sdk.TopicPartition) error {
	if h, ok := t.task.(sdk.PartitionsHandler); ok {
		return asTaskError(sdk.SafeCall(func() error { return h.Revoked(ctx, ps) }))
	}
	return nil
}

func (t *inSinkTask) Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if t.notDelivered != nil {
		return nil, t.notDelivered
	}
	var got map[sdk.TopicPartition]int64
	if err := sdk.SafeCall(func() error { var err error; got, err = t.task.Flush(ctx, offsets); return err }); err != nil {
		if _, panicked := errors.AsType[*sdk.PanicError](err); panicked {
			return nil, asTaskError(fmt.Errorf("flush: %w", err)) // fails the task
		}
		return nil, &FlushError{Err: err}
	}
	out := make(map[sdk.TopicPartition]int64, len(got))
	for tp, o := range got {
		if g, ok := offsets[tp]; ok && o <= g {
			out[tp] = o
		}
	}
	return out, nil
}

// Sync implements SinkTask: Put is synchronous in process. It reports a
// batch given up (StoppingSink).
func (t *inSinkTask) Sync(context.Context) error { return t.notDelivered }

// Ready implements SinkTask: Put is synchronous in process.
func (t *inSinkTask) Ready(context.Context) error { return t.notDelivered }

// RewindRequested implements RewindNotifier.
func (t *inSinkTask) RewindRequested() <-chan struct{} { return t.tc.rewound }

func (t *inSinkTask) Rewinds() map[sdk.TopicPartition]int64 {
	t.tc.mu.Lock()
	defer t.tc.mu.Unlock()
	out := t.tc.rewinds
	t.tc.rewinds = nil // the runner asks before and after every Put: allocate only on a request
	return out
}

func (t *inSinkTask) Stop(ctx context.Context) error {
	t.beginStop() // a Put still retrying gives up
	var err error
	t.once.Do(func() { err = sdk.SafeCall(func() error { return t.task.Close(ctx) }) })
	return asTaskError(err)
}

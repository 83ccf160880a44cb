package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/shm"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// taskProc is what source, sink and connector handles share: the process,
// the stream's lifetime and the terminal error.
type taskProc struct {
	h      *Host
	p      *proc
	ref    *procRef // this handle's hold on p
	logger *slog.Logger
	what   string
	cancel context.CancelFunc // ends the stream
	done   chan struct{}      // closed when the receive loop ends
	stopCh chan struct{}      // closed when Stop begins

	// started receives the outcome of the start, once (reportStart); its
	// fields belong to the receive loop.
	started   chan error
	isStarted bool

	mu      sync.Mutex
	err     error // terminal error; nil with done closed means stopped
	stopped bool

	stopOnce sync.Once
	stopErr  error

	// metrics is the plugin's last metrics snapshot; watchDone is closed
	// when the watcher (watchMetrics) ended, nil when there is none.
	metrics   atomic.Pointer[[]sdk.MetricFamily]
	watchDone chan struct{}
}

// PluginMetrics implements MetricsReporter.
func (t *taskProc) PluginMetrics() []sdk.MetricFamily {
	if p := t.metrics.Load(); p != nil {
		return *p
	}
	return nil
}

// watchMetrics keeps the metrics snapshots the plugin streams for its
// task (or connector, task -1), on a goroutine of its own until that
// stream ends: with the task, with ctx (the task's), or at once for a
// plugin without the RPC. A stream apart from the task's records, whose
// flow control holds them while nobody takes them (a paused task).
func (t *taskProc) watchMetrics(ctx context.Context, connector string, task int32) {
	if t.h.cfg.MetricsInterval < 0 {
		return
	}
	t.watchDone = make(chan struct{})
	go func() {
		defer close(t.watchDone)
		st, err := t.p.rpc.WatchMetrics(ctx, &pluginpb.WatchMetricsRequest{Connector: connector, Task: task,
			IntervalMs: uint32(max(t.h.cfg.MetricsInterval.Milliseconds(), 1))})
		if err != nil {
			return
		}
		for {
			m, err := st.Recv()
			if err != nil {
				if s, ok := status.FromError(err); ok && s.Code() != codes.Unimplemented && s.Code() != codes.Canceled && ctx.Err() == nil && !errors.Is(err, io.EOF) {
					t.logger.Debug("metrics stream ended", "error", err)
				}
				return
			}
			fams := metricsFromProto(m)
			t.metrics.Store(&fams)
		}
	}()
}

// endWatch waits a moment for the watcher to receive the last snapshot
// the plugin sends as the task ends, before the task's context ends it.
func (t *taskProc) endWatch() {
	if t.watchDone == nil {
		return
	}
	select {
	case <-t.watchDone:
	case <-time.After(time.Second):
	}
}

// open acquires connector's plugin process for the handle (what names it
// in errors) and returns the context of the handle's stream.
func (t *taskProc) open(ctx context.Context, h *Host, class, connector string, cmd []string, logger *slog.Logger, what string) (context.Context, error) {
	ref, err := h.acquire(ctx, class, connector, cmd)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	t.h, t.p, t.ref, t.logger, t.what, t.cancel = h, ref.p, ref, logger, what, cancel
	t.done, t.stopCh, t.started = make(chan struct{}), make(chan struct{}), make(chan error, 1)
	return sctx, nil
}

// abandon undoes open after a start failed with err, and returns err.
func (t *taskProc) abandon(err error) error {
	t.cancel()
	t.ref.release()
	return err
}

// reportStart delivers the outcome of the start (nil: started) once; the
// receive loop calls it.
func (t *taskProc) reportStart(err error) {
	if !t.isStarted {
		t.isStarted = true
		t.started <- err
	}
}

// awaitStart waits for the receive loop's start outcome; past the host's
// StartTimeout it ends the hung start. On failure, after the receive loop
// ended, it runs drain (if any) and abandons the handle.
func (t *taskProc) awaitStart(ctx context.Context, drain func()) error {
	startCtx, cancel := context.WithTimeout(ctx, t.h.cfg.StartTimeout)
	defer cancel()
	var err error
	select {
	case err = <-t.started:
		if err == nil {
			return nil
		}
	case <-startCtx.Done():
		how := t.endHung()
		err = &sdk.TaskError{Message: fmt.Sprintf("plugins: %s did not start: %v; %s", t.what, startCtx.Err(), how), Trace: t.p.stderr.Tail()}
	}
	<-t.done
	if drain != nil {
		drain()
	}
	return t.abandon(err)
}

func (t *taskProc) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil && !t.stopped {
		t.err = err
	}
}

func (t *taskProc) markStopped(closeErr error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil && !t.stopped {
		t.stopped = true
		t.stopErr = closeErr
	}
}

// ended reports whether the task already failed or stopped.
func (t *taskProc) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err != nil || t.stopped
}

func (t *taskProc) terminal() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	return ErrStopped
}

// recvEnded records why a task's stream ended (Recv failed) and returns
// the error for a start still waiting: the terminal error if the task had
// already ended, ErrStopped during Stop, else a crash.
func (t *taskProc) recvEnded(err error) error {
	if t.ended() {
		return t.terminal()
	}
	select {
	case <-t.stopCh:
		t.markStopped(nil)
		return ErrStopped
	default:
		e := t.crashed(err)
		t.fail(e)
		return e
	}
}

// crashed turns an unexpected end of the stream into a task error carrying
// the exit status and the end of the plugin's stderr.
func (t *taskProc) crashed(err error) error {
	deadline := time.Now().Add(2 * time.Second)
	for !t.p.client.Exited() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	t.p.stderr.waitQuiet(20*time.Millisecond, time.Second)
	if status.Code(err) == codes.ResourceExhausted {
		// Not a lost connection: gRPC refused a message over the limit.
		return t.p.wrap(fmt.Errorf("plugins: %s: a message from the plugin exceeds the %d MiB limit of one gRPC message, "+
			"so a record that large cannot be carried (Kafka's own limits, message.max.bytes and max.request.size, are far lower): %w",
			t.what, pluginpb.MaxMessageSize>>20, err))
	}
	return t.p.wrap(fmt.Errorf("plugins: %s: plugin connection lost: %w", t.what, err))
}

// endHung ends a task (or connector instance) that does not answer. With
// the process to itself, it has the process print its goroutines (the
// trace shows where it hung) and kills it. In a process shared with other
// tasks (of the connector, or of the plugin's other connectors) it only
// cancels this task's stream and retires the process: the stuck call stays
// behind in it, it goes on serving the tasks it has until the last of them
// stops, and tasks started from now on (this one's restart too) get a
// fresh process. It returns what it did, for the error message.
func (t *taskProc) endHung() string {
	if t.ref.sole() {
		t.p.dumpAndKill()
		return "the plugin was killed"
	}
	t.ref.retire()
	t.cancel()
	return "its stream was abandoned (the plugin process is shared with other tasks and keeps running for them; new tasks get a new process)"
}

// stop asks the plugin to stop (send), waits for the receive loop to end,
// and releases its hold on the process (the last hold stops it); after the
// timeout it ends the task with endHung, failing it.
func (t *taskProc) stop(ctx context.Context, send func() error, waitOthers func()) error {
	t.stopOnce.Do(func() {
		close(t.stopCh)
		timeout := t.h.cfg.StopTimeout
		sctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		select {
		case <-t.done:
		default:
			if err := send(); err != nil {
				t.logger.Debug("stop request not delivered", "error", err)
			}
			select {
			case <-t.done:
			case <-sctx.Done():
				te := &sdk.TaskError{Message: fmt.Sprintf("plugins: %s did not stop within %v", t.what, timeout)}
				t.fail(te)
				how := t.endHung()
				t.mu.Lock()
				te.Message += "; " + how
				te.Trace = t.p.stderr.Tail() // with a kill, the goroutine dump shows where it hung
				t.mu.Unlock()
				<-t.done
			}
		}
		t.endWatch()
		t.cancel()
		if t.watchDone != nil {
			<-t.watchDone
		}
		if waitOthers != nil {
			waitOthers()
		}
		t.ref.release()
		t.mu.Lock()
		if !t.stopped && t.err != nil && !errors.Is(t.err, ErrStopped) {
			t.stopErr = t.err
		}
		t.mu.Unlock()
	})
	return t.stopErr
}

type hostSourceTask struct {
	taskProc
	stream  pluginpb.Plugin_RunSourceTaskClient
	codec   *pluginpb.Codec
	sendMu  sync.Mutex
	offsets OffsetReader
	batches chan sourceBatch
	queries sync.WaitGroup
	ctx     context.Context
	// dec decodes batches in recvLoop. Each received batch's bytes belong
	// to its message alone and are never modified, so the decoded values
	// alias them instead of being copied. Source offsets stay encoded
	// until someone needs them (Poll decodes them, PollEncodedOffsets
	// does not).
	dec wire.Decoder
	raw atomic.Bool // KeepValuesEncoded was called
	// last is the batch PollEncodedOffsets returned last (ReleaseBatch);
	// it belongs to the polling goroutine, as offDec does, which decodes
	// the offsets of the batches Poll returns.
	last   sourceBatch
	offDec wire.Decoder
	// slots is the shared memory offered to the plugin, nil when none;
	// it belongs to the receive loop once started.
	slots *slotReader
	// spare holds released batches' record and offset slices, for
	// deliver to fill again.
	spare chan sourceBatch
	// slotBatches and streamBatches count the batches received through
	// shared memory and through the stream.
	slotBatches, streamBatches atomic.Int64
	// boundary is the transaction boundary of the batch Poll returned
	// last (the polling goroutine's).
	boundary Boundary
}

// Boundary implements BoundarySource.
func (t *hostSourceTask) Boundary() Boundary { return t.boundary }

// sharedSlots is the number of shared memory slots of a source task, each
// a quarter larger than the batch byte limit (room for the record that
// crosses it). Three let the plugin encode into one while the host copies
// another out, with one to spare. Their pages are allocated only as
// batches fill them: 3.75 MiB per task streaming megabyte batches, a few
// pages for a trickle.
const sharedSlots = 3

// slotReader is the host's side of a source task's shared memory.
type slotReader struct {
	region    *shm.Region
	slotBytes int
	on        bool // the plugin accepted it (Started)
}

// take copies the batch sb announces out of its slot into a buffer of the
// codec's (which Recycle takes back).
func (s *slotReader) take(sb *pluginpb.SlotBatch, codec *pluginpb.Codec) ([]byte, error) {
	if s == nil || !s.on {
		return nil, errors.New("shared memory batch without shared memory")
	}
	if sb.GetSlot() >= sharedSlots || sb.GetBytes() > uint32(s.slotBytes) {
		return nil, fmt.Errorf("shared memory batch of %d bytes in slot %d: there are %d slots of %d bytes",
			sb.GetBytes(), sb.GetSlot(), sharedSlots, s.slotBytes)
	}
	slot, n := int(sb.GetSlot()), int(sb.GetBytes())
	buf := codec.ReceiveBuffer(n)
	off := slot * s.slotBytes
	if _, err := shm.Copy(buf, s.region.Bytes()[off:off+n]); err != nil {
		return nil, err
	}
	return buf, nil
}

func (s *slotReader) close() {
	if s != nil {
		s.region.Close()
	}
}

// offerSlots creates the shared memory to offer a source plugin; nil when
// the host sends no shared memory or none can be created.
func (h *Host) offerSlots(logger *slog.Logger) *slotReader {
	if h.cfg.NoSharedMemory || os.Getenv(shm.EnvOff) == "off" {
		return nil
	}
	slotBytes := (h.cfg.Batch.MaxBytes + h.cfg.Batch.MaxBytes/4 + 4095) &^ 4095
	r, err := shm.Create(sharedSlots * slotBytes)
	if err != nil {
		logger.Debug("source batches go through the gRPC stream", "reason", err)
		return nil
	}
	return &slotReader{region: r, slotBytes: slotBytes}
}

// sourceBatch is a decoded batch; offsets[i] is the encoded source offset
// of recs[i].
type sourceBatch struct {
	recs    []sdk.SourceRecord
	offsets [][]byte
	records []byte // the received batch the records were decoded from
	// boundary, in a batch without records, ends the task's transaction.
	boundary Boundary
}

// KeepValuesEncoded implements RawValueSource.
func (t *hostSourceTask) KeepValuesEncoded() { t.raw.Store(true) }

func (t *hostSourceTask) send(m *pluginpb.SourceHostMessage) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	return t.stream.Send(m)
}

// StartSourceTask implements Loader: it starts a plugin process for the
// task and returns once the task's Open succeeded.
func (h *Host) StartSourceTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader) (SourceTask, error) {
	return h.StartSourceTaskWith(ctx, class, info, config, offsets, SourceTaskOptions{})
}

// StartSourceTaskWith implements SourceTaskStarter.
func (h *Host) StartSourceTaskWith(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader, opts SourceTaskOptions) (SourceTask, error) {
	pi, err := h.find(class)
	if err != nil {
		return nil, err
	}
	t := &hostSourceTask{offsets: offsets, batches: make(chan sourceBatch, 1), spare: make(chan sourceBatch, 2),
		dec: wire.Decoder{AliasInput: true, RawOffsets: true}}
	sctx, err := t.open(ctx, h, pi.Spec.Class, info.Connector, pi.Command, h.cfg.Logger.With("connector", info.Connector, "task", info.Task),
		fmt.Sprintf("source task %s-%d", info.Connector, info.Task))
	if err != nil {
		return nil, err
	}
	t.ctx = sctx
	t.codec = pluginpb.NewCodec()
	if t.stream, err = t.p.rpc.RunSourceTask(sctx, grpc.ForceCodecV2(t.codec)); err != nil {
		return nil, t.abandon(t.p.wrap(fmt.Errorf("plugins: %s: open stream: %w", t.what, err)))
	}
	start := &pluginpb.TaskStart{
		Class: pi.Spec.Class, Connector: info.Connector, Task: int32(info.Task), Config: config,
		Batch: &pluginpb.BatchLimits{MaxRecords: uint32(h.cfg.Batch.MaxRecords), MaxBytes: uint32(h.cfg.Batch.MaxBytes),
			LingerMs: uint32(max(1, h.cfg.Batch.Linger.Milliseconds()))},
		ValueLengths:       !h.cfg.noValueLengths,
		TransactionContext: opts.TransactionContext,
	}
	if t.slots = h.offerSlots(t.logger); t.slots != nil {
		start.SharedMemory = &pluginpb.SharedMemory{Name: t.slots.region.Name(), SlotBytes: uint32(t.slots.slotBytes), Slots: sharedSlots}
	}
	if err := t.send(&pluginpb.SourceHostMessage{Msg: &pluginpb.SourceHostMessage_Start{Start: start}}); err != nil {
		t.slots.close()
		return nil, t.abandon(t.p.wrap(fmt.Errorf("plugins: %s: start: %w", t.what, err)))
	}
	// Until Started arrives, offset queries (from Open) must be answered.
	go t.recvLoop()
	if err := t.awaitStart(ctx, t.queries.Wait); err != nil {
		return nil, err
	}
	t.watchMetrics(sctx, info.Connector, int32(info.Task))
	return t, nil
}

func (t *hostSourceTask) recvLoop() {
	defer close(t.done)
	defer func() { t.slots.close() }() // only this loop reads the shared memory
	for {
		m, err := t.stream.Recv()
		if err != nil {
			t.reportStart(t.recvEnded(err))
			return
		}
		switch x := m.GetMsg().(type) {
		case *pluginpb.SourcePluginMessage_Started:
			if t.slots != nil {
				// The plugin has mapped the region (or will not): the
				// host's descriptor can go.
				if err := t.slots.region.Release(); err != nil {
					t.logger.Warn("could not close the shared memory descriptor", "error", err)
				}
				if t.slots.on = x.Started.GetSharedMemory(); !t.slots.on {
					t.slots.close()
					t.slots = nil
				}
			}
			t.reportStart(nil)
		case *pluginpb.SourcePluginMessage_Batch:
			t.streamBatches.Add(1)
			t.deliver(x.Batch.GetRecords(), x.Batch.GetCount())
		case *pluginpb.SourcePluginMessage_SlotBatch:
			records, err := t.slots.take(x.SlotBatch, t.codec)
			if err != nil {
				t.protocolError(err)
				continue
			}
			// Sent from this loop, behind any other send: a plugin
			// that stops reading its stream (its OffsetsCommitted
			// hangs with 64 commits queued) stalls its batches with
			// it, as it would any send to it.
			if err := t.send(&pluginpb.SourceHostMessage{Msg: &pluginpb.SourceHostMessage_SlotFree{
				SlotFree: &pluginpb.SlotFree{Slot: x.SlotBatch.GetSlot()}}}); err != nil {
				t.logger.Debug("slot free not delivered", "error", err)
			}
			t.slotBatches.Add(1)
			t.deliver(records, x.SlotBatch.GetCount())
		case *pluginpb.SourcePluginMessage_Transaction:
			b := sourceBatch{boundary: CommitBoundary}
			if x.Transaction.GetAbort() {
				b.boundary = AbortBoundary
			}
			select {
			case t.batches <- b:
			case <-t.stopCh:
			case <-t.ctx.Done():
			}
		case *pluginpb.SourcePluginMessage_Offsets:
			t.queries.Add(1)
			go t.answer(x.Offsets)
		case *pluginpb.SourcePluginMessage_Failure:
			e := taskError(x.Failure)
			t.fail(e)
			t.reportStart(e)
		case *pluginpb.SourcePluginMessage_Stopped:
			var closeErr error
			if f := x.Stopped.GetError(); f != nil {
				closeErr = taskError(f)
			}
			t.markStopped(closeErr)
			t.reportStart(ErrStopped)
		}
	}
}

// protocolError fails the task for a batch the host cannot take, and ends
// its stream.
func (t *hostSourceTask) protocolError(err error) {
	e := fmt.Errorf("plugins: %s: %w", t.what, err)
	t.fail(e)
	t.reportStart(e)
	t.cancel()
}

// deliver decodes a received batch of count records and hands it to Poll.
func (t *hostSourceTask) deliver(records []byte, count uint32) {
	t.dec.RawValues = t.raw.Load()
	wrecs, err := t.dec.Decode(records, int(count))
	if err != nil {
		t.protocolError(err)
		return
	}
	var b sourceBatch
	select {
	case b = <-t.spare:
	default:
	}
	if cap(b.recs) < len(wrecs) {
		b = sourceBatch{recs: make([]sdk.SourceRecord, len(wrecs)), offsets: make([][]byte, len(wrecs))}
	}
	// A reused slice's records past this batch's would keep what they
	// refer to alive.
	clear(b.recs[len(wrecs):cap(b.recs)])
	clear(b.offsets[len(wrecs):cap(b.offsets)])
	b.recs, b.offsets, b.records = b.recs[:len(wrecs)], b.offsets[:len(wrecs)], records
	for i := range wrecs {
		sourceFromWire(&wrecs[i], &b.recs[i])
		b.offsets[i] = wrecs[i].RawOffset
	}
	select {
	case t.batches <- b:
	case <-t.stopCh: // stopping: nobody polls any more
	case <-t.ctx.Done():
	}
}

func (t *hostSourceTask) answer(q *pluginpb.OffsetsQuery) {
	defer t.queries.Done()
	reply := &pluginpb.OffsetsReply{Id: q.GetId()}
	parts, err := wire.DecodePartitions(q.GetPartitions())
	if err == nil {
		ps := make([]sdk.Partition, len(parts))
		for i := range parts {
			ps[i] = parts[i]
		}
		var offs []sdk.Offset
		if t.offsets == nil {
			offs = make([]sdk.Offset, len(ps))
		} else {
			offs, err = t.offsets.Offsets(t.ctx, ps)
		}
		if err == nil {
			pos := make([]wire.PartitionOffset, len(ps))
			for i := range ps {
				pos[i] = wire.PartitionOffset{Partition: ps[i]}
				if i < len(offs) {
					pos[i].Offset = offs[i]
				}
			}
			reply.Offsets, err = wire.AppendOffsets(nil, pos)
		}
	}
	if err != nil {
		reply.Error = err.Error()
	}
	if err := t.send(&pluginpb.SourceHostMessage{Msg: &pluginpb.SourceHostMessage_Offsets{Offsets: reply}}); err != nil {
		t.logger.Debug("offsets reply not delivered", "error", err)
	}
}

func (t *hostSourceTask) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	b, err := t.next(ctx)
	t.boundary = b.boundary
	if err != nil {
		return nil, err
	}
	for i, raw := range b.offsets {
		if raw == nil {
			continue
		}
		if b.recs[i].Offset, err = t.offDec.DecodeOffset(raw); err != nil {
			return nil, fmt.Errorf("plugins: %s: %w", t.what, err)
		}
	}
	return b.recs, nil
}

// EncodesOffsets implements EncodedOffsetSource.
func (t *hostSourceTask) EncodesOffsets() bool { return true }

// PollEncodedOffsets implements EncodedOffsetSource.
func (t *hostSourceTask) PollEncodedOffsets(ctx context.Context) ([]sdk.SourceRecord, [][]byte, error) {
	b, err := t.next(ctx)
	t.last, t.boundary = b, b.boundary
	return b.recs, b.offsets, err
}

// ReleaseBatch implements EncodedOffsetSource: the received batch's memory
// gathers a later one, and its record and offset slices take a later
// batch's records.
func (t *hostSourceTask) ReleaseBatch(recs []sdk.SourceRecord) {
	if len(recs) > 0 && len(t.last.recs) > 0 && &recs[0] == &t.last.recs[0] && t.last.records != nil {
		t.codec.Recycle(t.last.records)
		select {
		case t.spare <- sourceBatch{recs: t.last.recs, offsets: t.last.offsets}:
		default:
		}
	}
	t.last = sourceBatch{}
}

// next returns the next decoded batch.
func (t *hostSourceTask) next(ctx context.Context) (sourceBatch, error) {
	select {
	case b := <-t.batches:
		return b, nil
	case <-t.done:
		select {
		case b := <-t.batches:
			return b, nil
		default:
		}
		return sourceBatch{}, t.terminal()
	case <-ctx.Done():
		return sourceBatch{}, ctx.Err()
	}
}

func (t *hostSourceTask) Committed(ctx context.Context, offsets []sdk.SourceOffset) error {
	pos := make([]wire.PartitionOffset, len(offsets))
	for i, o := range offsets {
		pos[i] = wire.PartitionOffset{Partition: o.Partition, Offset: o.Offset}
	}
	b, err := wire.AppendOffsets(nil, pos)
	if err != nil {
		return fmt.Errorf("plugins: %s: committed offsets: %w", t.what, err)
	}
	select {
	case <-t.done:
		return t.terminal()
	default:
	}
	if err := t.send(&pluginpb.SourceHostMessage{Msg: &pluginpb.SourceHostMessage_Committed{Committed: &pluginpb.Committed{Offsets: b}}}); err != nil {
		return fmt.Errorf("plugins: %s: committed offsets: %w", t.what, err)
	}
	return nil
}

func (t *hostSourceTask) Stop(ctx context.Context) error {
	return t.stop(ctx, func() error {
		return t.send(&pluginpb.SourceHostMessage{Msg: &pluginpb.SourceHostMessage_Stop{Stop: &pluginpb.Stop{}}})
	}, t.queries.Wait)
}

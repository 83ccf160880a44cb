package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// putWindow is how many Puts a sink plugin may have unacknowledged
// (protocol version 2; version 1 plugins get one at a time): the plugin
// always has the next batch queued, instead of waiting a round trip, which
// on busy cores costs scheduling delays on both sides, for each batch.
const putWindow = 3

type hostSinkTask struct {
	taskProc
	stream pluginpb.Plugin_RunSinkTaskClient
	sendMu sync.Mutex
	acks   chan *pluginpb.Ack
	nextID uint64
	// pending holds the ids of unacknowledged Puts, oldest first (see
	// Put and window).
	pending []uint64
	enc     wire.Encoder
	codec   *pluginpb.Codec

	rmu     sync.Mutex
	rewinds map[sdk.TopicPartition]int64
	rewound chan struct{} // RewindRequested
	// received counts the plugin's Rewind messages; applied is received
	// as of the last Rewinds call, sent with each Put.
	received, applied uint64

	stopping atomic.Bool // BeginStop was called
	// notDelivered is set once the plugin gave up a Put (after
	// BeginStop): Put, Ready, Sync and Flush return it from then on.
	notDelivered error
}

var (
	_ EndingSink   = (*hostSinkTask)(nil)
	_ StoppingSink = (*hostSinkTask)(nil)
)

// StoppingSink is implemented by sink tasks that can be told, ahead of
// Stop, that the runner is stopping (Kafka Connect's isStopping): a Put
// that is retrying a Retriable error gives up at once (its retries'
// context is cancelled) instead of retrying until the stop times out, and
// so does every later Put; a Put whose first attempt is running, or that
// starts before one was given up, is attempted once. Once a batch was given
// up, Put, Ready, Sync and Flush return an error wrapping ErrNotDelivered:
// nothing more may be committed, since the offsets the caller holds cover
// that batch. Revoked and Stop work as before. BeginStop does not wait,
// and may be called from any goroutine. A plugin built with an older SDK
// ignores it.
type StoppingSink interface {
	BeginStop()
}

// ErrNotDelivered is wrapped by the errors of a sink task that gave up a
// batch because it is stopping (StoppingSink). It wraps ErrStopped.
var ErrNotDelivered = fmt.Errorf("%w before a batch was delivered", ErrStopped)

// FlushError is what a sink task's Flush returns when the connector's
// Flush (Kafka Connect's preCommit) returned an error: the task keeps
// running, and the runner rewinds to its committed offsets instead of
// failing it, as Kafka Connect does. A panic in Flush is not a FlushError:
// it fails the task.
type FlushError struct{ Err error }

func (e *FlushError) Error() string { return "flush: " + e.Err.Error() }
func (e *FlushError) Unwrap() error { return e.Err }

// Done implements EndingSink: it is closed when the receive loop ended,
// which it does as soon as the stream ends (the plugin process exited, or
// the plugin ended the task).
func (t *hostSinkTask) Done() <-chan struct{} { return t.done }

// Err implements EndingSink.
func (t *hostSinkTask) Err() error {
	select {
	case <-t.done:
		return t.terminal()
	default:
		return nil
	}
}

func (t *hostSinkTask) send(m *pluginpb.SinkHostMessage) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	return t.stream.Send(m)
}

// StartSinkTask implements Loader.
func (h *Host) StartSinkTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string) (SinkTask, error) {
	pi, err := h.find(class)
	if err != nil {
		return nil, err
	}
	t := &hostSinkTask{acks: make(chan *pluginpb.Ack, putWindow+1), codec: pluginpb.NewCodec(), rewound: make(chan struct{}, 1)}
	sctx, err := t.open(ctx, h, pi.Spec.Class, info.Connector, pi.Command, h.cfg.Logger.With("connector", info.Connector, "task", info.Task),
		fmt.Sprintf("sink task %s-%d", info.Connector, info.Task))
	if err != nil {
		return nil, err
	}
	if t.stream, err = t.p.rpc.RunSinkTask(sctx, grpc.ForceCodecV2(t.codec)); err != nil {
		return nil, t.abandon(t.p.wrap(fmt.Errorf("plugins: %s: open stream: %w", t.what, err)))
	}
	if err := t.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Start{Start: &pluginpb.TaskStart{
		Class: pi.Spec.Class, Connector: info.Connector, Task: int32(info.Task), Config: config}}}); err != nil {
		return nil, t.abandon(t.p.wrap(fmt.Errorf("plugins: %s: start: %w", t.what, err)))
	}
	go t.recvLoop()
	if err := t.awaitStart(ctx, nil); err != nil {
		return nil, err
	}
	t.watchMetrics(sctx, info.Connector, int32(info.Task))
	return t, nil
}

func (t *hostSinkTask) recvLoop() {
	defer close(t.done)
	for {
		m, err := t.stream.Recv()
		if err != nil {
			t.reportStart(t.recvEnded(err))
			return
		}
		switch x := m.GetMsg().(type) {
		case *pluginpb.SinkPluginMessage_Started:
			t.reportStart(nil)
		case *pluginpb.SinkPluginMessage_Ack:
			select {
			case t.acks <- x.Ack:
			default:
				t.logger.Warn("unexpected acknowledgement from plugin", "id", x.Ack.GetId())
			}
		case *pluginpb.SinkPluginMessage_Rewind:
			t.rmu.Lock()
			if t.rewinds == nil {
				t.rewinds = map[sdk.TopicPartition]int64{}
			}
			for _, p := range x.Rewind.GetPartitions() {
				t.rewinds[sdk.TopicPartition{Topic: p.GetTopic(), Partition: p.GetPartition()}] = p.GetOffset()
			}
			t.received++
			t.rmu.Unlock()
			select {
			case t.rewound <- struct{}{}:
			default: // already signalled
			}
		case *pluginpb.SinkPluginMessage_Failure:
			e := taskError(x.Failure)
			t.fail(e)
			t.reportStart(e)
		case *pluginpb.SinkPluginMessage_Stopped:
			var closeErr error
			if f := x.Stopped.GetError(); f != nil {
				closeErr = taskError(f)
			}
			t.markStopped(closeErr)
			t.reportStart(ErrStopped)
		}
	}
}

// call sends m and waits for the acknowledgement with id.
func (t *hostSinkTask) call(ctx context.Context, id uint64, m *pluginpb.SinkHostMessage) (*pluginpb.Ack, error) {
	if err := t.sendChecked(m); err != nil {
		return nil, err
	}
	return t.await(ctx, id)
}

// sendChecked sends m, reporting the task's end rather than a transport
// error when the plugin is gone.
func (t *hostSinkTask) sendChecked(m *pluginpb.SinkHostMessage) error {
	if err := t.Err(); err != nil {
		return err
	}
	if err := t.send(m); err != nil {
		if errors.Is(err, io.EOF) {
			// The stream ended on the plugin's side (gRPC's Send says
			// only io.EOF): why, and the process's exit, come through
			// Recv, which ends the task at once.
			select {
			case <-t.done:
			case <-time.After(endedWait):
			}
		}
		if ended := t.Err(); ended != nil {
			return ended
		}
		return fmt.Errorf("plugins: %s: send: %w", t.what, err)
	}
	return nil
}

// endedWait bounds how long a failed send waits for the receiving side to
// report why the stream ended.
const endedWait = 5 * time.Second

// await waits for the acknowledgement with id; the plugin answers in
// order, so earlier ones are passed over.
func (t *hostSinkTask) await(ctx context.Context, id uint64) (*pluginpb.Ack, error) {
	for {
		select {
		case a := <-t.acks:
			switch {
			case a.GetId() == id:
				return a, nil
			case a.GetId() > id:
				// The plugin answers in order: the answer awaited was
				// lost. Fail rather than wait forever.
				return nil, fmt.Errorf("plugins: %s: answer %d arrived before %d", t.what, a.GetId(), id)
			}
		case <-t.done:
			return nil, t.terminal()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TakesEncodedValues implements EncodedValueSink: Put copies every value
// into the batch it encodes for the plugin, an encoded one as it is.
func (t *hostSinkTask) TakesEncodedValues() bool { return true }

// Put sends the batch and returns without waiting for the plugin to process
// it, so that the worker fetches and converts the next batch meanwhile; it
// first waits while the window of unacknowledged Puts is full (see Ready).
// A failure of the batch therefore surfaces from a later Put, Ready, Sync
// or Flush. The Put tells the plugin how many of its rewinds the host has
// applied, so that the plugin drops what earlier Puts still carry of a
// rewound partition.
func (t *hostSinkTask) Put(ctx context.Context, records []sdk.SinkRecord) error {
	t.enc.ResetWith(t.codec.Buffer(t.enc.Len())) // the codec owns what the last Put sent
	var w wire.Record
	for i := range records {
		sinkToWire(&records[i], &w)
		if err := t.enc.Append(&w); err != nil {
			return fmt.Errorf("plugins: %s: record %s-%d@%d: %w", t.what, records[i].Topic, records[i].Partition, records[i].Offset, err)
		}
	}
	if err := t.Ready(ctx); err != nil {
		return err
	}
	t.nextID++
	if err := t.sendChecked(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Put{Put: &pluginpb.Put{
		Id: t.nextID, Batch: &pluginpb.RecordBatch{Count: uint32(t.enc.Count()), Records: t.enc.Bytes()},
		RewindsApplied: t.applied}}}); err != nil {
		return err
	}
	t.pending = append(t.pending, t.nextID)
	return nil
}

// Ready waits until a Put can be sent without waiting: fewer than the
// window's Puts are unacknowledged.
func (t *hostSinkTask) Ready(ctx context.Context) error {
	return t.waitPending(ctx, t.window()-1)
}

// window is how many Puts may be unacknowledged: a version 1 plugin gets
// one at a time.
func (t *hostSinkTask) window() int {
	if t.p.version >= 2 {
		return putWindow
	}
	return 1
}

// Sync waits until the plugin has processed every batch Put.
func (t *hostSinkTask) Sync(ctx context.Context) error {
	return t.waitPending(ctx, 0)
}

// waitPending waits for acknowledgements until at most n Puts are pending.
// A task that ended reports it even with nothing pending: the runner's
// periodic Sync (at each offset flush) then learns of a plugin that
// exited while the task was idle. So does a task that gave up a batch.
func (t *hostSinkTask) waitPending(ctx context.Context, n int) error {
	for len(t.pending) > n {
		a, err := t.await(ctx, t.pending[0])
		if err != nil {
			return err
		}
		t.pending = t.pending[1:]
		if f := a.GetError(); f != nil && t.notDelivered == nil {
			t.notDelivered = fmt.Errorf("plugins: %s: %w: %s", t.what, ErrNotDelivered, f.GetMessage())
		}
	}
	if err := t.Err(); err != nil {
		return err
	}
	return t.notDelivered
}

func (t *hostSinkTask) Assigned(_ context.Context, partitions []sdk.TopicPartition) error {
	// sendChecked: once the plugin exited, the task's failure (exit
	// status, stderr tail) rather than the transport's error.
	return t.sendChecked(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Open{Open: tpsToProto(partitions)}})
}

func (t *hostSinkTask) Revoked(_ context.Context, partitions []sdk.TopicPartition) error {
	return t.sendChecked(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Close{Close: tpsToProto(partitions)}})
}

func (t *hostSinkTask) Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if err := t.Sync(ctx); err != nil {
		return nil, err
	}
	t.nextID++
	req := &pluginpb.FlushRequest{Id: t.nextID}
	for tp, o := range offsets {
		req.Offsets = append(req.Offsets, &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	a, err := t.call(ctx, t.nextID, &pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Flush{Flush: req}})
	if err != nil {
		return nil, err
	}
	if f := a.GetError(); f != nil {
		return nil, &FlushError{Err: errors.New(f.GetMessage())}
	}
	out := make(map[sdk.TopicPartition]int64, len(a.GetOffsets()))
	for _, p := range a.GetOffsets() {
		tp := sdk.TopicPartition{Topic: p.GetTopic(), Partition: p.GetPartition()}
		if g, ok := offsets[tp]; ok && p.GetOffset() <= g { // never trust more than was given
			out[tp] = p.GetOffset()
		}
	}
	return out, nil
}

// RewindRequested implements RewindNotifier.
func (t *hostSinkTask) RewindRequested() <-chan struct{} { return t.rewound }

func (t *hostSinkTask) Rewinds() map[sdk.TopicPartition]int64 {
	t.rmu.Lock()
	defer t.rmu.Unlock()
	out := t.rewinds
	t.rewinds = nil // the runner asks before and after every Put: allocate only on a request
	t.applied = t.received
	return out
}

// BeginStop implements StoppingSink: it sends Stopping to the plugin.
func (t *hostSinkTask) BeginStop() {
	if t.stopping.Swap(true) {
		return
	}
	// Not waiting: a plugin with an older SDK does not read the stream
	// while its Put retries, so the send may wait for flow control.
	go func() {
		if err := t.sendChecked(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Stopping{Stopping: &pluginpb.Stopping{}}}); err != nil {
			t.logger.Debug("stopping notice not delivered", "error", err)
		}
	}()
}

func (t *hostSinkTask) Stop(ctx context.Context) error {
	return t.stop(ctx, func() error {
		return t.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Stop{Stop: &pluginpb.Stop{}}})
	}, nil)
}

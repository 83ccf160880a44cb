package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

type sinkTaskContext struct {
	info    TaskInfo
	logger  *slog.Logger
	send    func(*pluginpb.SinkPluginMessage) error
	metrics *Metrics

	mu sync.Mutex
	// requested counts the Rewind messages sent; staleUntil holds, per
	// partition rewound, the count that includes its last rewind: Puts the
	// host sent before applying that many rewinds carry records of the
	// partition from before the rewind (see dropStale).
	requested  uint64
	staleUntil map[TopicPartition]uint64
}

func (c *sinkTaskContext) Info() TaskInfo       { return c.info }
func (c *sinkTaskContext) Logger() *slog.Logger { return c.logger }

// Metrics is the task's registry (MetricsOf).
func (c *sinkTaskContext) Metrics() *Metrics { return c.metrics }

func (c *sinkTaskContext) Rewind(offsets map[TopicPartition]int64) {
	if len(offsets) == 0 {
		return
	}
	ps := &pluginpb.Partitions{}
	for tp, o := range offsets {
		ps.Partitions = append(ps.Partitions, &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	c.mu.Lock() // the count must follow the order of the messages
	defer c.mu.Unlock()
	if err := c.send(&pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Rewind{Rewind: ps}}); err != nil {
		c.logger.Warn("rewind request not sent", "error", err)
		return
	}
	c.requested++
	if c.staleUntil == nil {
		c.staleUntil = map[TopicPartition]uint64{}
	}
	for tp := range offsets {
		c.staleUntil[tp] = c.requested
	}
}

// dropStale removes from a Put the records of partitions this task asked
// to rewind that the host sent before it applied the rewind (it had
// applied the first `applied` rewinds): they come again from the rewound
// offset. The host sends several Puts without waiting for their answers,
// so a rewind requested during one Put reaches it after it sent the next.
func (c *sinkTaskContext) dropStale(recs []SinkRecord, applied uint64) []SinkRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.staleUntil) == 0 {
		return recs
	}
	for tp, until := range c.staleUntil {
		if until <= applied {
			delete(c.staleUntil, tp)
		}
	}
	return slices.DeleteFunc(recs, func(r SinkRecord) bool {
		_, stale := c.staleUntil[TopicPartition{Topic: r.Topic, Partition: r.Partition}]
		return stale
	})
}

func tpsFromProto(ps []*pluginpb.TopicPartition) []TopicPartition {
	out := make([]TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = TopicPartition{Topic: p.GetTopic(), Partition: p.GetPartition()}
	}
	return out
}

// RunSinkTask runs one sink task for the life of the stream. Messages are
// handled in order on this goroutine, so a Flush answer covers every Put
// before it; a goroutine receives them (see receiveSink), so that the
// host's Stopping reaches a Put that is retrying.
func (s *server) RunSinkTask(stream pluginpb.Plugin_RunSinkTaskServer) error {
	s.taskRunning(1)
	defer s.taskRunning(-1)
	st, err := beginTask(s, "sink", stream,
		func(f *pluginpb.Failure) *pluginpb.SinkPluginMessage {
			return &pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Failure{Failure: f}}
		},
		func(c Connector, start *pluginpb.TaskStart) (SinkTask, error) {
			sp, ok := c.(SinkPlugin)
			if !ok {
				return nil, fmt.Errorf("sdk: %s is not a sink connector", start.GetClass())
			}
			return sp.NewSinkTask(start.GetConfig())
		})
	if st == nil {
		return err
	}
	info, logger, task, send, fail := st.info, st.logger, st.task, st.send, st.fail
	ctx := stream.Context()
	tc := &sinkTaskContext{info: info, logger: logger, send: send, metrics: NewMetrics()}
	stopMetrics := s.metrics.add(info.Connector, int32(info.Task), tc.metrics)
	defer stopMetrics()
	closeTask := func() error {
		stopMetrics() // watchers get the last values before the end
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return safeCall(func() error { return task.Close(cctx) })
	}
	failAndClose := func(err error) error {
		sendErr := fail(err)
		_ = closeTask()
		return sendErr
	}
	if err := safeCall(func() error { return task.Open(ctx, tc) }); err != nil {
		return failAndClose(fmt.Errorf("open: %w", err))
	}
	if err := send(&pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Started{Started: &pluginpb.Started{}}}); err != nil {
		_ = closeTask()
		return err
	}
	handler, _ := task.(PartitionsHandler)
	// Each Put's bytes are a buffer of their own, never modified (see
	// pluginpb.Codec), so decoded strings and bytes may point into them.
	dec := wire.Decoder{AliasInput: true}
	var stopping atomic.Bool // the host sent Stopping
	// retryCtx is the context of a Put's retries: it ends when the host
	// says it is stopping the task.
	retryCtx, cancelRetries := context.WithCancel(ctx)
	defer cancelRetries()
	msgs := receiveSink(ctx, stream, &stopping, cancelRetries)
	// gaveUp is set once a Put was given up: the host commits nothing
	// after it, so later Puts are answered at once without calling Put.
	var gaveUp error
	for {
		m, ok := <-msgs
		if !ok {
			_ = closeTask() // host gone
			return nil
		}
		switch x := m.GetMsg().(type) {
		case *pluginpb.SinkHostMessage_Put:
			ack := &pluginpb.Ack{Id: x.Put.GetId()}
			if gaveUp == nil { // else answered at once: not delivered
				wrecs, err := dec.Decode(x.Put.GetBatch().GetRecords(), int(x.Put.GetBatch().GetCount()))
				if err != nil {
					return failAndClose(fmt.Errorf("put: %w", err))
				}
				recs := make([]SinkRecord, len(wrecs))
				for i := range wrecs {
					recs[i] = sinkFromWire(&wrecs[i])
				}
				recs = tc.dropStale(recs, x.Put.GetRewindsApplied())
				abandoned, err := putWithRetry(ctx, retryCtx, &stopping, logger, task, recs)
				switch {
				case abandoned:
					gaveUp = err
					logger.Info("the task is stopping: gave up a batch (it will be delivered again)", "error", err)
				case err != nil && ctx.Err() != nil:
					_ = closeTask() // host gone
					return nil
				case err != nil:
					return failAndClose(fmt.Errorf("put: %w", err))
				}
			}
			if gaveUp != nil {
				ack.Error = failure(gaveUp)
			}
			if err := send(&pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Ack{Ack: ack}}); err != nil {
				_ = closeTask()
				return nil
			}
		case *pluginpb.SinkHostMessage_Open:
			if handler != nil {
				if err := safeCall(func() error { return handler.Assigned(ctx, tpsFromProto(x.Open.GetPartitions())) }); err != nil {
					return failAndClose(fmt.Errorf("open partitions: %w", err))
				}
			}
		case *pluginpb.SinkHostMessage_Close:
			if handler != nil {
				if err := safeCall(func() error { return handler.Revoked(ctx, tpsFromProto(x.Close.GetPartitions())) }); err != nil {
					return failAndClose(fmt.Errorf("close partitions: %w", err))
				}
			}
		case *pluginpb.SinkHostMessage_Flush:
			given := map[TopicPartition]int64{}
			for _, p := range x.Flush.GetOffsets() {
				given[TopicPartition{Topic: p.GetTopic(), Partition: p.GetPartition()}] = p.GetOffset()
			}
			var durable map[TopicPartition]int64
			ack := &pluginpb.Ack{Id: x.Flush.GetId()}
			if err := safeCall(func() error {
				var err error
				durable, err = task.Flush(ctx, given)
				return err
			}); err != nil {
				if _, panicked := errors.AsType[*PanicError](err); panicked {
					return failAndClose(fmt.Errorf("flush: %w", err)) // a bug
				}
				// Kafka Connect's preCommit failing: the task keeps
				// running, the host rewinds to its committed offsets.
				ack.Error = failure(err)
				durable = nil
			}
			for tp, o := range durable {
				g, ok := given[tp]
				if !ok || o > g {
					// A sink may not claim more than it was given: clamp and warn.
					logger.Warn("Flush returned an offset beyond what was delivered; ignoring it", "topic", tp.Topic, "partition", tp.Partition, "offset", o)
					continue
				}
				ack.Offsets = append(ack.Offsets, &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
			}
			if err := send(&pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Ack{Ack: ack}}); err != nil {
				_ = closeTask()
				return nil
			}
		case *pluginpb.SinkHostMessage_Stop:
			stopped := &pluginpb.Stopped{}
			if err := closeTask(); err != nil {
				stopped.Error = failure(err)
			}
			return send(&pluginpb.SinkPluginMessage{Msg: &pluginpb.SinkPluginMessage_Stopped{Stopped: stopped}})
		}
	}
}

// receiveSink receives the host's messages on a goroutine of its own and
// hands them over in order, except Stopping, which it acts on at once: it
// sets stopping and calls cancelRetries. The channel is closed when the
// stream ends.
func receiveSink(ctx context.Context, stream pluginpb.Plugin_RunSinkTaskServer, stopping *atomic.Bool, cancelRetries context.CancelFunc) <-chan *pluginpb.SinkHostMessage {
	msgs := make(chan *pluginpb.SinkHostMessage, 4)
	go func() {
		defer close(msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			if m.GetStopping() != nil {
				stopping.Store(true) // before the cancel: putWithRetry reads it then
				cancelRetries()
				continue
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return msgs
}

// putWithRetry calls Put until it succeeds or fails with an error not
// marked Retriable, backing off between attempts (Kafka Connect's
// redelivery after a RetriableException). Once the host is stopping the
// task (Kafka Connect's isStopping) it gives up instead of retrying: the
// back-off ends at once, a retry's context (retryCtx) is cancelled, and it
// returns gaveUp with the last error; the batch is not delivered. The first
// attempt runs with ctx, not cancelled by the stop: a batch being written
// when a healthy task is stopped is normally done, and committed.
func putWithRetry(ctx, retryCtx context.Context, stopping *atomic.Bool, logger *slog.Logger, task SinkTask, recs []SinkRecord) (gaveUp bool, err error) {
	backoff := 100 * time.Millisecond
	pctx, retry := ctx, false
	for {
		err := safeCall(func() error { return task.Put(pctx, recs) })
		if err == nil {
			return false, nil
		}
		if _, panicked := errors.AsType[*PanicError](err); panicked {
			return false, err
		}
		if stopping.Load() && ctx.Err() == nil && (retry || IsRetriable(err)) {
			// A retry cut short by the stop fails with whatever the
			// task makes of its cancelled context.
			return true, err
		}
		if !IsRetriable(err) {
			return false, err
		}
		logger.Warn("retriable put error; redelivering the batch", "error", err, "backoff", backoff)
		select {
		case <-retryCtx.Done():
			if stopping.Load() && ctx.Err() == nil {
				return true, err
			}
			return false, ctx.Err()
		case <-time.After(backoff):
		}
		pctx, retry = retryCtx, true
		backoff = min(2*backoff, 10*time.Second)
	}
}

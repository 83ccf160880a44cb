package sdk

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// Default batch limits, used when the host sends none.
const (
	defaultMaxRecords = 2000
	defaultMaxBytes   = 1 << 20
	defaultLinger     = 5 * time.Millisecond
)

type sourceStream = pluginpb.Plugin_RunSourceTaskServer

// sourceTaskContext implements SourceTaskContext over the stream.
type sourceTaskContext struct {
	info    TaskInfo
	logger  *slog.Logger
	send    func(*pluginpb.SourcePluginMessage) error
	metrics *Metrics

	// txn holds the task's transaction requests; nil unless the host runs
	// the task with connector-defined transaction boundaries.
	txn *Transactions

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan *pluginpb.OffsetsReply
}

// TransactionContext is the task's (TransactionContextOf).
func (c *sourceTaskContext) TransactionContext() TransactionContext {
	if c.txn == nil {
		return nil
	}
	return c.txn
}

func (c *sourceTaskContext) Info() TaskInfo       { return c.info }
func (c *sourceTaskContext) Logger() *slog.Logger { return c.logger }

// Metrics is the task's registry (MetricsOf).
func (c *sourceTaskContext) Metrics() *Metrics { return c.metrics }

func (c *sourceTaskContext) Offset(ctx context.Context, p Partition) (Offset, error) {
	offs, err := c.Offsets(ctx, []Partition{p})
	if err != nil {
		return nil, err
	}
	return offs[0], nil
}

func (c *sourceTaskContext) Offsets(ctx context.Context, ps []Partition) ([]Offset, error) {
	b, err := wire.AppendPartitions(nil, toPartitions(ps))
	if err != nil {
		return nil, fmt.Errorf("sdk: offsets query: %w", err)
	}
	ch := make(chan *pluginpb.OffsetsReply, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	if c.pending == nil {
		c.pending = map[uint64]chan *pluginpb.OffsetsReply{}
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Offsets{
		Offsets: &pluginpb.OffsetsQuery{Id: id, Partitions: b}}}); err != nil {
		return nil, fmt.Errorf("sdk: offsets query: %w", err)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.GetError() != "" {
			return nil, fmt.Errorf("sdk: offsets query: host: %s", r.GetError())
		}
		pos, err := wire.DecodeOffsets(r.GetOffsets())
		if err != nil {
			return nil, fmt.Errorf("sdk: offsets reply: %w", err)
		}
		if len(pos) != len(ps) {
			return nil, fmt.Errorf("sdk: offsets reply has %d offsets for %d partitions", len(pos), len(ps))
		}
		out := make([]Offset, len(pos))
		for i, po := range pos {
			out[i] = po.Offset
		}
		return out, nil
	}
}

func (c *sourceTaskContext) deliver(r *pluginpb.OffsetsReply) {
	c.mu.Lock()
	ch := c.pending[r.GetId()]
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// RunSourceTask runs one source task for the life of the stream:
//
//	recv goroutine: offset replies, commit notifications, stop
//	poll goroutine: Poll → polled channel
//	this goroutine: encode polled records into batches, send when a batch
//	                is full (count or bytes), when a Poll returned fewer
//	                records than asked, or when its linger time has passed
func (s *server) RunSourceTask(stream sourceStream) error {
	s.taskRunning(1)
	defer s.taskRunning(-1)
	st, err := beginTask(s, "source", stream,
		func(f *pluginpb.Failure) *pluginpb.SourcePluginMessage {
			return &pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Failure{Failure: f}}
		},
		func(c Connector, start *pluginpb.TaskStart) (SourceTask, error) {
			sp, ok := c.(SourcePlugin)
			if !ok {
				return nil, fmt.Errorf("sdk: %s is not a source connector", start.GetClass())
			}
			return sp.NewSourceTask(start.GetConfig())
		})
	if st == nil {
		return err
	}
	start, info, logger, task, send, fail := st.start, st.info, st.logger, st.task, st.send, st.fail

	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	tc := &sourceTaskContext{info: info, logger: logger, send: send, metrics: NewMetrics()}
	if start.GetTransactionContext() {
		tc.txn = &Transactions{}
	}
	stopMetrics := s.metrics.add(info.Connector, int32(info.Task), tc.metrics)
	defer stopMetrics()
	var slots *slotWriter
	if ctx.Err() == nil { // an abandoned stream's region name may be another's by now
		slots, err = openSlots(start.GetSharedMemory())
	}
	if err != nil {
		logger.Debug("batches go through the gRPC stream: shared memory refused", "error", err)
	}
	// Unmapped when this function returns: only its batching loop writes
	// the slots, and gRPC never holds them (only slot numbers are sent).
	defer slots.close()

	// recv goroutine; it never blocks on the task (commitQueue)
	commits := newCommitQueue()
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				cancel() // host gone: stop everything
				return
			}
			switch x := m.GetMsg().(type) {
			case *pluginpb.SourceHostMessage_Offsets:
				tc.deliver(x.Offsets)
			case *pluginpb.SourceHostMessage_Committed:
				pos, err := wire.DecodeOffsets(x.Committed.GetOffsets())
				if err != nil {
					logger.Error("bad committed offsets from host", "error", err)
					continue
				}
				offs := make([]SourceOffset, len(pos))
				for i, po := range pos {
					offs[i] = SourceOffset{Partition: po.Partition, Offset: po.Offset}
				}
				commits.add(offs)
			case *pluginpb.SourceHostMessage_SlotFree:
				if !slots.release(x.SlotFree.GetSlot()) {
					logger.Warn("host freed a shared memory slot it does not hold", "slot", x.SlotFree.GetSlot())
				}
			case *pluginpb.SourceHostMessage_Stop:
				stopPolling()
			}
		}
	}()

	// commit goroutine: OffsetsCommitted in order, never concurrently.
	committer, _ := task.(OffsetsCommitter)
	var commitMu sync.Mutex // held by Close so commits never overlap it
	commitDone := make(chan struct{})
	go func() {
		defer close(commitDone)
		for {
			select {
			case <-commits.ready:
			case <-ctx.Done():
				return
			}
			offs := commits.take()
			if committer == nil || len(offs) == 0 {
				continue
			}
			commitMu.Lock()
			err := safeCall(func() error { return committer.OffsetsCommitted(ctx, offs) })
			commitMu.Unlock()
			if err != nil {
				logger.Warn("OffsetsCommitted failed", "error", err)
			}
		}
	}()

	closeTask := func() error {
		commitMu.Lock()
		defer commitMu.Unlock()
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer ccancel()
		return safeCall(func() error { return task.Close(cctx) })
	}
	type polled struct {
		recs []SourceRecord
		err  error
		// txn is what the task asked of its transaction after this
		// batch, taken as Poll returned: the next Poll runs while this
		// batch is sent, and its requests are the next batch's.
		txn TransactionRequest
		// short: Poll returned fewer records than asked, so the task had
		// no more at hand.
		short bool
	}
	var polledCh chan polled
	finish := func(runErr error) error {
		stopMetrics() // watchers get the last values before the end
		var sendErr error
		if runErr != nil {
			sendErr = fail(runErr)
		}
		stopPolling()
		if polledCh != nil {
			for range polledCh { // wait for Poll to return: Close never overlaps it
			}
		}
		closeErr := closeTask()
		if runErr == nil {
			stopped := &pluginpb.Stopped{}
			if closeErr != nil {
				stopped.Error = failure(closeErr)
			}
			sendErr = send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Stopped{Stopped: stopped}})
		}
		cancel()
		<-commitDone
		return sendErr
	}

	if err := safeCall(func() error { return task.Open(pollCtx, tc) }); err != nil {
		if pollCtx.Err() != nil {
			return finish(nil)
		}
		return finish(fmt.Errorf("open: %w", err))
	}
	if err := send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Started{Started: &pluginpb.Started{SharedMemory: slots != nil}}}); err != nil {
		return finish(err)
	}

	limits := start.GetBatch()
	maxRecords, maxBytes, linger := int(limits.GetMaxRecords()), int(limits.GetMaxBytes()), time.Duration(limits.GetLingerMs())*time.Millisecond
	if maxRecords <= 0 {
		maxRecords = defaultMaxRecords
	}
	if maxBytes <= 0 {
		maxBytes = defaultMaxBytes
	}
	if linger <= 0 {
		linger = defaultLinger
	}
	if slots != nil {
		// A batch fits a slot, with room for the record that crosses
		// the limit; a larger one goes through the stream.
		maxBytes = min(maxBytes, slots.slotBytes*4/5)
	}

	// poll goroutine. The hand-over is unbuffered: the next Poll overlaps
	// the encoding and sending of the previous batch, and no more than two
	// polled batches are alive at a time (each is garbage the collector
	// must scan while it waits; a plugin runs under a small memory limit).
	// Each Poll is asked for about one message's worth of records
	// (pollMax): as many as fit maxBytes at the size of the records sent
	// so far, at most maxRecords and at least minPollRecords. A task asked
	// for 2,000 records of a kilobyte would otherwise keep two megabytes
	// per polled batch alive where one message holds half of them.
	polledCh = make(chan polled)
	var pollMax atomic.Int64
	pollMax.Store(int64(maxRecords))
	go func() {
		defer close(polledCh)
		backoff := 100 * time.Millisecond
		for pollCtx.Err() == nil {
			var recs []SourceRecord
			asked := int(pollMax.Load())
			err := safeCall(func() error {
				var err error
				recs, err = task.Poll(pollCtx, asked)
				return err
			})
			if err != nil && pollCtx.Err() != nil {
				return // stopping: cancellation errors are expected
			}
			if err != nil && IsRetriable(err) {
				logger.Warn("retriable poll error; retrying", "error", err, "backoff", backoff)
				select {
				case <-time.After(backoff):
				case <-pollCtx.Done():
				}
				backoff = min(2*backoff, 10*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			var txn TransactionRequest
			if tc.txn != nil && err == nil {
				txn, err = tc.txn.OnBatch()
			}
			// An empty Poll still ends a transaction the task asked to
			// end after its batch.
			if err != nil || len(recs) > 0 || txn != NoTransactionRequest {
				select {
				case polledCh <- polled{recs, err, txn, len(recs) < asked}:
				case <-pollCtx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()

	// batching loop
	// The records of one Poll are handed over together and not modified
	// after, so their shared partition map is encoded once per Poll.
	enc := wire.Encoder{ReusePartitions: true, ValueLengths: start.GetValueLengths()}
	var w wire.Record
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	flush := func() error {
		timer.Stop()
		if enc.Count() == 0 {
			return nil
		}
		pollMax.Store(int64(pollSize(maxRecords, maxBytes, enc.Len(), enc.Count())))
		if slots.holds(enc.Bytes()) {
			count, n := enc.Count(), enc.Len()
			enc.ResetWith(nil)
			err := send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_SlotBatch{
				SlotBatch: &pluginpb.SlotBatch{Slot: slots.lend(), Count: uint32(count), Bytes: uint32(n)}}})
			return err
		}
		err := send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Batch{
			Batch: &pluginpb.RecordBatch{Count: uint32(enc.Count()), Records: enc.Bytes()}}})
		if slots != nil && slots.held >= 0 {
			// The batch outgrew its slot; the next one starts there.
			enc.ResetWith(slots.slot(slots.held))
		} else {
			enc.ResetWith(s.codec.Buffer(enc.Len())) // the codec owns the sent bytes
		}
		return err
	}
	// startBatch gives the encoder a free slot to write the next batch
	// into, waiting for the host to free one (as a full gRPC window would
	// make a send wait). When stopping, it leaves the batch to the stream.
	startBatch := func() bool {
		if slots == nil || slots.held >= 0 {
			return true
		}
		select {
		case i := <-slots.free:
			slots.held = int(i)
			enc.ResetWith(slots.slot(slots.held))
			return true
		case <-pollCtx.Done():
			enc.ResetWith(s.codec.Buffer(maxBytes))
			return true
		case <-ctx.Done():
			return false
		}
	}
	// endTransaction ends the task's transaction after the records
	// encoded so far: their batch goes first, then the Transaction.
	endTransaction := func(req TransactionRequest) error {
		if req == NoTransactionRequest {
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		return send(&pluginpb.SourcePluginMessage{Msg: &pluginpb.SourcePluginMessage_Transaction{
			Transaction: &pluginpb.Transaction{Abort: req == AbortTransactionRequest}}})
	}
	for {
		select {
		case p, ok := <-polledCh:
			if !ok {
				// Poll loop ended: stopped by the host, or the host is gone.
				_ = flush()
				return finish(nil)
			}
			if p.err != nil {
				if err := flush(); err != nil {
					return finish(nil)
				}
				return finish(fmt.Errorf("poll: %w", p.err))
			}
			enc.ForgetPartition()
			for i := range p.recs {
				sourceToWire(&p.recs[i], &w)
				wasEmpty := enc.Count() == 0
				if wasEmpty && !startBatch() {
					return finish(nil)
				}
				if err := enc.Append(&w); err != nil {
					_ = flush()
					return finish(fmt.Errorf("record %d of poll (topic %q): %w", i, p.recs[i].Topic, err))
				}
				if tc.txn != nil {
					req, err := tc.txn.OnRecord(&p.recs[i])
					if err != nil {
						_ = flush()
						return finish(err)
					}
					if req != NoTransactionRequest {
						if err := endTransaction(req); err != nil {
							return finish(nil)
						}
						continue
					}
				}
				if enc.Count() >= maxRecords || enc.Len() >= maxBytes {
					if err := flush(); err != nil {
						return finish(nil)
					}
				} else if wasEmpty {
					timer.Reset(linger)
				}
			}
			if err := endTransaction(p.txn); err != nil {
				return finish(nil)
			}
			// A short Poll means the task had no more records at hand:
			// its batch goes now rather than after the linger, as Kafka
			// Connect hands a poll's records to its producer at once
			// (whose own linger then gathers them for Kafka). While the
			// task has a backlog its polls are full and batches fill.
			if p.short {
				if err := flush(); err != nil {
					return finish(nil)
				}
			}
		case <-timer.C:
			if err := flush(); err != nil {
				return finish(nil)
			}
		case <-ctx.Done():
			return finish(nil)
		}
	}
}

// minPollRecords is the least pollSize asks for (unless maxRecords is
// less): Kafka's max.poll.records default. A task that reads a fixed
// number of rows per poll interval keeps a useful rate with large records.
const minPollRecords = 500

// pollSize is how many records to ask the next Poll for: as many as fit
// maxBytes at the average size of a batch just sent (size bytes, count
// records), at least minPollRecords and at most maxRecords.
func pollSize(maxRecords, maxBytes, size, count int) int {
	if size <= 0 || count <= 0 {
		return maxRecords
	}
	return min(maxRecords, max(minPollRecords, maxBytes/max(1, size/count)))
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/broker/group"
	"github.com/tributary-dev/tributary/broker/log"
	"github.com/tributary-dev/tributary/broker/txn"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// transactionStateTopic is the internal topic that holds the state of every
// transactional id, in Kafka's __transaction_state record formats. One
// compacted partition: this broker is the only transaction coordinator.
const transactionStateTopic = "__transaction_state"

// txns drives the pure transaction coordinator (package txn): it serializes
// calls, appends the state records it asks for to __transaction_state,
// answers durable replies after the group commit fsynced them, writes the
// commit and abort markers of prepared transactions once their state is
// durable, and ticks the coordinator for transaction timeouts.
type txns struct {
	b    *Broker
	mu   sync.Mutex
	c    *txn.Coordinator
	part *partition

	spawnMu  sync.Mutex
	stopping bool
	wg       sync.WaitGroup // goroutines of spawn
}

// spawn runs fn in a goroutine that shutdown waits for; once shutdown has
// begun it runs fn in the caller's goroutine instead (so that no goroutine
// is added while shutdown waits).
func (ts *txns) spawn(fn func()) {
	ts.spawnMu.Lock()
	if ts.stopping {
		ts.spawnMu.Unlock()
		fn()
		return
	}
	ts.wg.Add(1)
	ts.spawnMu.Unlock()
	go func() {
		defer ts.wg.Done()
		fn()
	}()
}

// openTxns creates __transaction_state if missing, replays it into a new
// coordinator and returns the marker jobs of transactions that were
// prepared but not completed. It runs in Open before the listener serves.
func (b *Broker) openTxns() (*txns, []txn.Markers, error) {
	t := b.topic(transactionStateTopic)
	if t == nil {
		var err error
		t, err = b.createTopic(transactionStateTopic, 1, map[string]string{"cleanup.policy": "compact"})
		if err != nil {
			return nil, nil, fmt.Errorf("broker: create %s: %w", transactionStateTopic, err)
		}
	}
	if len(t.partitions()) == 0 {
		return nil, nil, fmt.Errorf("broker: %s has no partitions", transactionStateTopic)
	}
	cfg := txn.DefaultConfig()
	cfg.MaxTimeout = b.cfg.TransactionMaxTimeout
	cfg.IDExpiration = b.cfg.TransactionalIDExpiration
	cfg.NewProducerID = b.pids.allocate
	cfg.PartitionExists = func(topic string, p int32) bool { return b.partition(topic, p) != nil }
	cfg.OffsetsPartition = func(string) txn.TopicPartition { return txn.TopicPartition{Topic: offsetsTopic, Partition: 0} }
	ts := &txns{b: b, c: txn.New(cfg), part: t.partitions()[0]}
	n := 0
	err := replayLog(ts.part.log, transactionStateTopic, func(h *log.BatchHeader, key, value []byte) {
		if err := ts.c.Replay(key, value); err != nil {
			b.logger.Warn("skipping unreadable transaction state record", "topic", transactionStateTopic, "err", err)
			return
		}
		n++
	})
	if err != nil {
		return nil, nil, err
	}
	ts.c.Recover()
	rd := ts.c.Ready()
	b.logger.Info("loaded transactions", "records", n, "transactional_ids", len(ts.c.Transactions()), "to_complete", len(rd.Markers))
	return ts, rd.Markers, nil
}

// replayLog calls fn with every record (key, value and its batch header) of
// a log, from its start to its high watermark; control batches are passed
// with a nil key.
func replayLog(l *log.Log, name string, fn func(h *log.BatchHeader, key, value []byte)) error {
	start, hwm, _ := l.Offsets()
	var dec log.Decompressor
	defer dec.Close()
	for off := start; off < hwm; {
		chunk, err := l.Read(off, 1<<20, true)
		if err != nil {
			return fmt.Errorf("broker: read %s at %d: %w", name, off, err)
		}
		raw, err := chunk.Bytes()
		chunk.Release()
		if err != nil {
			return fmt.Errorf("broker: read %s at %d: %w", name, off, err)
		}
		if len(raw) == 0 {
			break
		}
		for len(raw) > 0 {
			h, err := log.ParseHeader(raw)
			if err != nil || h.Size() > len(raw) {
				return fmt.Errorf("broker: %s at %d: bad batch: %v", name, off, err)
			}
			if h.IsControl() {
				if h.BaseOffset >= off {
					fn(&h, nil, nil)
				}
			} else {
				recs, err := dec.Records(raw[:h.Size()])
				if err != nil {
					return fmt.Errorf("broker: %s batch at %d: %w", name, h.BaseOffset, err)
				}
				for _, r := range recs {
					if r.Offset >= off && r.Key != nil {
						fn(&h, r.Key, r.Value)
					}
				}
			}
			off = max(off, h.LastOffset()+1)
			raw = raw[h.Size():]
		}
	}
	return nil
}

// start runs the timeout ticker and completes the transactions recovered
// by openTxns.
func (ts *txns) start(ctx context.Context, recovered []txn.Markers) {
	for _, m := range recovered {
		ts.writeMarkers(ctx, m)
	}
	tick := time.NewTicker(ts.b.cfg.TransactionAbortInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			ts.spawnMu.Lock()
			ts.stopping = true
			ts.spawnMu.Unlock()
			ts.wg.Wait()
			return
		case <-tick.C:
			ts.do(func(c *txn.Coordinator, now time.Time) { c.Tick(now) })
		}
	}
}

// do runs one coordinator input under the lock and carries out its Ready.
// It returns the waiter of the records it appended (nil if none).
func (ts *txns) do(fn func(c *txn.Coordinator, now time.Time)) *syncWaiter {
	ts.mu.Lock()
	fn(ts.c, time.Now())
	rd := ts.c.Ready()
	w, appendErr := ts.persist(rd.Records)
	ts.mu.Unlock()
	var later []txn.Reply
	for _, r := range rd.Replies {
		if r.Durable && (w != nil || appendErr != nil) {
			later = append(later, r)
			continue
		}
		deliver(r.To, r.Resp)
	}
	if len(later) == 0 && len(rd.Markers) == 0 {
		return w
	}
	ts.spawn(func() {
		err := appendErr
		if w != nil {
			<-w.done
			if err == nil {
				err = w.err
			}
		}
		for _, r := range later {
			if err != nil {
				failTxnDurable(r.Resp)
			}
			deliver(r.To, r.Resp)
		}
		for _, m := range rd.Markers {
			if err != nil {
				// The prepared state is not durable, so no marker may be
				// written: the transaction stays as it was on disk and
				// its timeout (or a new InitProducerId) ends it.
				ts.b.logger.Error("transaction state not durable; markers not written", "transactional_id", m.TransactionalID, "err", err)
				ts.do(func(c *txn.Coordinator, _ time.Time) { c.FailEnd(m) })
				continue
			}
			ts.writeMarkers(ts.b.ctx, m)
		}
	})
	return w
}

// persist appends state records to __transaction_state as one batch and
// returns the waiter released once they are fsynced.
func (ts *txns) persist(recs []txn.Record) (*syncWaiter, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	now := time.Now()
	grecs := make([]group.Record, len(recs))
	for i, r := range recs {
		grecs[i] = group.Record{Key: r.Key, Value: r.Value}
	}
	batch := encodeBatch(grecs, now.UnixMilli())
	h, err := log.ValidateBatch(batch)
	if err == nil {
		_, err = ts.part.log.Append(batch, h, now)
	}
	if err != nil {
		ts.b.logger.Error("writing transaction state failed", "topic", transactionStateTopic, "err", err)
		return nil, err
	}
	return ts.b.syncer.mark([]*log.Log{ts.part.log}, true), nil
}

// writeMarkers writes a prepared transaction's markers to its partitions,
// waits until they are durable, applies transactional offset commits to the
// group coordinator and completes the transaction. A failed write is retried
// every second until it succeeds or the broker stops; partitions deleted
// meanwhile are skipped.
func (ts *txns) writeMarkers(ctx context.Context, m txn.Markers) {
	b := ts.b
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		now := time.Now()
		var logs []*log.Log
		offsets := false
		var failed error
		for _, tp := range m.Partitions {
			p := b.partition(tp.Topic, tp.Partition)
			if p == nil {
				continue
			}
			if _, err := p.log.AppendMarker(m.ProducerID, m.ProducerEpoch, m.Commit, now); err != nil {
				if errors.Is(err, log.ErrMarkerEpoch) {
					b.logger.Warn("skipping a stale transaction marker", "transactional_id", m.TransactionalID, "topic", tp.Topic, "partition", tp.Partition, "err", err)
					continue
				}
				failed = err
				break
			}
			logs = append(logs, p.log)
			if tp.Topic == offsetsTopic {
				offsets = true
			}
		}
		if failed == nil && len(logs) > 0 {
			w := b.syncer.mark(logs, true)
			<-w.done
			failed = w.err
		}
		if failed != nil {
			if errors.Is(failed, errSyncerClosed) || errors.Is(failed, log.ErrClosed) {
				return // recovered at the next start
			}
			b.logger.Error("writing transaction markers failed; retrying", "transactional_id", m.TransactionalID, "err", failed)
			if attempt == 0 {
				ts.do(func(c *txn.Coordinator, _ time.Time) { c.FailEnd(m) })
			}
			continue
		}
		if offsets {
			b.groups.do(func(c *group.Coordinator, _ time.Time) { c.CompleteTxn(m.ProducerID, m.Commit) })
		}
		ts.do(func(c *txn.Coordinator, now time.Time) { c.MarkersWritten(now, m) })
		return
	}
}

// failTxnDurable marks a reply whose records could not be made durable.
func failTxnDurable(resp kmsg.Response) {
	code := kerr.CoordinatorNotAvailable.Code
	switch r := resp.(type) {
	case *kmsg.InitProducerIDResponse:
		r.ErrorCode, r.ProducerID, r.ProducerEpoch = code, -1, -1
	case *kmsg.AddOffsetsToTxnResponse:
		r.ErrorCode = code
	case *kmsg.EndTxnResponse:
		r.ErrorCode = code
	case *kmsg.AddPartitionsToTxnResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				r.Topics[i].Partitions[j].ErrorCode = code
			}
		}
		for i := range r.Transactions {
			for j := range r.Transactions[i].Topics {
				for k := range r.Transactions[i].Topics[j].Partitions {
					r.Transactions[i].Topics[j].Partitions[k].ErrorCode = code
				}
			}
		}
	}
}

// txnReply starts a reply the coordinator completes, possibly later.
func (c *conn) txnReply(fn func(co *txn.Coordinator, now time.Time, to any)) *reply {
	r := &reply{ready: make(chan struct{})}
	c.b.txns.do(func(co *txn.Coordinator, now time.Time) { fn(co, now, r) })
	return r
}

// checkTxnPartition is the transaction check of a transactional batch for
// tp (Produce) or a TxnOffsetCommit: see txn.Coordinator.AddImplicit. When
// the partition had to be added (transaction version 2) it waits until that
// is durable, so that no transactional data is ever on disk for a partition
// the coordinator could forget.
func (b *Broker) checkTxnPartition(id string, pid int64, epoch int16, tp txn.TopicPartition, implicit bool, version int16) int16 {
	return b.checkTxnPartitions(id, pid, epoch, []txn.TopicPartition{tp}, implicit, version)[tp]
}

// checkTxnPartitions is checkTxnPartition for several partitions of one
// request, with one wait for the durability of whatever was added.
func (b *Broker) checkTxnPartitions(id string, pid int64, epoch int16, tps []txn.TopicPartition, implicit bool, version int16) map[txn.TopicPartition]int16 {
	codes := make(map[txn.TopicPartition]int16, len(tps))
	anyAdded := false
	w := b.txns.do(func(c *txn.Coordinator, now time.Time) {
		for _, tp := range tps {
			code, added := c.AddImplicit(now, id, pid, epoch, tp, implicit, version)
			codes[tp] = code
			anyAdded = anyAdded || added
		}
	})
	if anyAdded && w != nil {
		<-w.done
		if w.err != nil {
			for tp, code := range codes {
				if code == 0 {
					codes[tp] = kerr.CoordinatorNotAvailable.Code
				}
			}
		}
	}
	return codes
}

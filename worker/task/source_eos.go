package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// A source task with exactly-once support (KIP-618) runs in producer
// transactions: one transactional producer per task, the task's records
// and the offsets they reach written in the same transaction, to the
// connector's offsets topic. A transaction ends at the boundaries
// transaction.boundary says: after every polled batch (poll), once the
// interval passed (interval), or where the task asks (connector). What the
// transaction wrote is visible to read_committed consumers once it is
// committed, and never if it is aborted: a task that dies, or is fenced
// by a newer instance of itself, leaves nothing behind that its offsets do
// not account for. Kafka Connect's ExactlyOnceWorkerSourceTask.

// TransactionBoundary is transaction.boundary.
type TransactionBoundary int

// Transaction boundaries.
const (
	// BoundaryPoll commits after every batch the task polled.
	BoundaryPoll TransactionBoundary = iota
	// BoundaryInterval commits after the first batch once the interval
	// passed since the last commit.
	BoundaryInterval
	// BoundaryConnector commits or aborts where the task asks, through
	// its transaction context (plugins.BoundarySource).
	BoundaryConnector
)

// ParseTransactionBoundary reads a transaction.boundary value (validated
// when the connector was created; case-insensitive, as Kafka's).
func ParseTransactionBoundary(v string) (TransactionBoundary, error) {
	switch javaLower(v) {
	case "", "poll":
		return BoundaryPoll, nil
	case "interval":
		return BoundaryInterval, nil
	case "connector":
		return BoundaryConnector, nil
	}
	return BoundaryPoll, fmt.Errorf("transaction.boundary %q is not poll, interval or connector", v)
}

// OffsetRecorder makes the records that store source offsets in an
// offsets topic, for the task's transactional producer to write
// (store.OffsetStore).
type OffsetRecorder interface {
	Records(connector string, offsets []sdk.SourceOffset) ([]*kgo.Record, error)
	// Topic is the offsets topic.
	Topic() string
}

// ExactlyOnce runs a source task in transactions.
type ExactlyOnce struct {
	// TransactionalID is the producer's transactional.id,
	// <group.id>-<connector>-<task>.
	TransactionalID string
	Boundary        TransactionBoundary
	// Interval is transaction.boundary.interval.ms (BoundaryInterval);
	// default the runner's FlushInterval.
	Interval time.Duration
	// Offsets is the primary offsets store: the connector's offsets topic
	// (offsets.storage.topic), else the worker's. Its topic is refused to
	// the task's records (a read of the task's offsets would wait for the
	// task's own open transaction).
	Offsets OffsetRecorder
	// Secondary, when not nil, is the worker's offsets topic beside a
	// connector's own: the committed offsets are copied there, at best,
	// after each commit, and their tombstones before it (KAFKA-15018).
	Secondary OffsetWriter
	// Preflight runs before the producer is initialized: a round of
	// zombie fencing, at the leader. Verify runs after: the task configs
	// are still of the generation the task was started for, and the task
	// is still assigned here. Either failing fails the task.
	Preflight, Verify func(ctx context.Context) error
}

// eosState is the transaction state of a runner with exactly-once
// support.
type eosState struct {
	// mu is held while a batch is sent and while a transaction ends: the
	// poll loop, a pause, the interval's timer and the stop take turns.
	mu  sync.Mutex
	cfg ExactlyOnce
	// boundaries reports the boundaries the task asks for (connector).
	boundaries plugins.BoundarySource
	// open: a transaction was begun and not ended; records counts the
	// records produced in it.
	open       bool
	records    int
	lastCommit time.Time
}

// ErrOwnOffsetsTopic is the error of a record for the task's own offsets
// topic under exactly-once support.
var ErrOwnOffsetsTopic error = &ConnectError{Message: "Source tasks may not produce to their own offsets topics when exactly-once support is enabled"}

// ConnectError is an error whose message is Kafka Connect's (a
// ConnectException's, capitalized as Kafka writes it, for the task's
// status trace), with its cause.
type ConnectError struct {
	Message string
	Cause   error
}

func (e *ConnectError) Error() string {
	if e.Cause == nil {
		return e.Message
	}
	return e.Message + ": " + e.Cause.Error()
}

func (e *ConnectError) Unwrap() error { return e.Cause }

// initTransactions is the task's start with exactly-once support: the
// preflight fencing, the producer's initialization (which fences any
// earlier instance of the task and aborts its open transaction), then the
// check that the task may still run.
func (r *SourceRunner) initTransactions(ctx context.Context) error {
	e := r.eos
	if e.cfg.Preflight != nil {
		if err := e.cfg.Preflight(ctx); err != nil {
			return err
		}
	}
	if r.isStopping() {
		return nil
	}
	if _, _, err := r.client.ProducerID(ctx); err != nil {
		return fmt.Errorf("initialize the transactional producer (transactional.id %s): %w", e.cfg.TransactionalID, err)
	}
	if e.cfg.Verify != nil {
		if err := e.cfg.Verify(ctx); err != nil {
			return err
		}
	}
	e.lastCommit = time.Now()
	r.log.Info("transactional producer initialized; older instances of the task are fenced", "transactional_id", e.cfg.TransactionalID)
	return nil
}

// sendTransactional sends a polled batch in the open transaction (begun
// if needed), then ends it if the boundary says so.
func (r *SourceRunner) sendTransactional(recs []sdk.SourceRecord, offsets [][]byte) (headers bool, err error) {
	e := r.eos
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(recs) > 0 {
		if err := r.beginTransaction(); err != nil {
			return false, err
		}
	}
	if headers, err = r.send(recs, offsets); err != nil {
		return headers, err
	}
	return headers, r.afterBatch(r.runCtx, len(recs))
}

// intervalLoop commits the open transaction once the interval passed
// (transaction.boundary=interval) even while the task's Poll waits for
// records: Kafka Connect checks after each batch, and its tasks return
// from poll often; a plugin's Poll here returns only with records.
func (r *SourceRunner) intervalLoop() {
	e := r.eos
	t := time.NewTicker(max(e.cfg.Interval/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-r.stopping:
			return
		case <-r.done:
			return
		case <-t.C:
		}
		e.mu.Lock()
		var err error
		if e.open && time.Since(e.lastCommit) >= e.cfg.Interval {
			err = r.commitTransaction(r.runCtx, false)
		}
		e.mu.Unlock()
		if err != nil {
			if !r.isStopping() {
				r.fail(err, "commit")
			}
			return
		}
	}
}

// beginTransaction begins a transaction unless one is open.
func (r *SourceRunner) beginTransaction() error {
	if r.eos.open {
		return nil
	}
	if err := r.client.BeginTransaction(); err != nil {
		return fmt.Errorf("begin a producer transaction: %w", err)
	}
	r.eos.open, r.eos.records = true, 0
	return nil
}

// afterBatch ends the transaction if the boundary says so after a batch
// of n records; a connector's boundaries come as batches without records.
func (r *SourceRunner) afterBatch(ctx context.Context, n int) error {
	e := r.eos
	switch e.cfg.Boundary {
	case BoundaryPoll:
		return r.commitTransaction(ctx, false)
	case BoundaryInterval:
		if time.Since(e.lastCommit) >= e.cfg.Interval {
			return r.commitTransaction(ctx, false)
		}
	case BoundaryConnector:
		if n > 0 || e.boundaries == nil {
			return nil
		}
		switch e.boundaries.Boundary() {
		case plugins.CommitBoundary:
			return r.commitTransaction(ctx, false)
		case plugins.AbortBoundary:
			r.log.Info("aborting the transaction as the connector requested")
			return r.commitTransaction(ctx, true)
		}
	}
	return nil
}

// commitTransaction ends the open transaction: it waits until the broker
// acknowledged every record produced in it, writes the offsets the acked
// records reach to the offsets topic in the same transaction, and commits
// it; only then is the task told its offsets are committed. With abort,
// the records are aborted first, and their offsets still committed, in a
// transaction of their own, so that the task does not produce them again
// (Kafka Connect's connector-defined abort). An error fails the task.
func (r *SourceRunner) commitTransaction(ctx context.Context, abort bool) error {
	e := r.eos
	began := time.Now()
	if err := r.client.Flush(ctx); err != nil {
		return r.txnError("flush the producer", err)
	}
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	if failed {
		// A record was not written (the promise failed the task): its
		// transaction must not commit.
		return errors.New("a record of the transaction could not be written")
	}
	records := e.records
	if abort && e.open {
		if err := r.client.EndTransaction(ctx, kgo.TryAbort); err != nil {
			return r.txnError("abort the producer transaction", err)
		}
		e.open, records = false, 0
	}
	offs, keys, decodeErr := r.committable()
	if decodeErr != nil {
		r.log.Warn("some source offsets could not be decoded", "err", decodeErr)
	}
	if !e.open && len(offs) == 0 {
		e.lastCommit = time.Now()
		return nil
	}
	restore := func() {
		r.mu.Lock()
		for _, k := range keys {
			r.parts[k].dirty = true
		}
		r.mu.Unlock()
	}
	if err := r.beginTransaction(); err != nil {
		restore()
		return err
	}
	if len(offs) > 0 {
		if err := r.writeTombstonesFirst(ctx, offs); err != nil {
			restore()
			return err
		}
		recs, err := e.cfg.Offsets.Records(r.cfg.Info.Connector, offs)
		if err != nil {
			restore()
			return fmt.Errorf("task: offsets records: %w", err)
		}
		for _, rec := range recs {
			// The store chose the partition, by its key, as Kafka
			// Connect's does.
			rec.Context = &pendingRecord{Context: context.Background(), explicit: true}
		}
		if err := r.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			restore()
			return r.txnError("write offsets in the transaction", err)
		}
	}
	if err := r.client.EndTransaction(ctx, kgo.TryCommit); err != nil {
		restore()
		r.cfg.Metrics.RecordCommit(time.Since(began), false)
		return r.txnError("commit the producer transaction", err)
	}
	e.open, e.lastCommit = false, time.Now()
	r.cfg.Metrics.RecordCommit(time.Since(began), true)
	r.cfg.Metrics.RecordTransaction(records)
	if len(offs) == 0 {
		return nil
	}
	if e.cfg.Secondary != nil {
		var live []sdk.SourceOffset
		for _, o := range offs {
			if o.Offset != nil {
				live = append(live, o)
			}
		}
		if err := e.cfg.Secondary.WriteOffsets(ctx, r.cfg.Info.Connector, live); err != nil {
			r.log.Warn("copying the committed offsets to the worker's offsets topic failed", "err", err)
		}
	}
	if err := r.cfg.Task.Committed(ctx, offs); err != nil && !errors.Is(err, plugins.ErrStopped) {
		r.log.Warn("task rejected committed offsets", "err", err)
	}
	return nil
}

// writeTombstonesFirst writes the tombstones among offs to the secondary
// store before the transaction: a tombstone lost between the two stores
// would otherwise bring an offset back (KAFKA-15018).
func (r *SourceRunner) writeTombstonesFirst(ctx context.Context, offs []sdk.SourceOffset) error {
	if r.eos.cfg.Secondary == nil {
		return nil
	}
	var dead []sdk.SourceOffset
	for _, o := range offs {
		if o.Offset == nil {
			dead = append(dead, o)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	if err := r.eos.cfg.Secondary.WriteOffsets(ctx, r.cfg.Info.Connector, dead); err != nil {
		return fmt.Errorf("task: write offset tombstones to the worker's offsets topic: %w", err)
	}
	return nil
}

// txnError says what failed; an expired transaction (the producer's
// epoch bumped by the coordinator) gets Kafka Connect's advice.
func (r *SourceRunner) txnError(what string, err error) error {
	if errors.Is(err, kerr.InvalidProducerEpoch) {
		return &ConnectError{Message: fmt.Sprintf("The task %s-%d was unable to finish writing records to Kafka before its producer transaction expired. "+
			"It may be necessary to reconfigure this connector in order for it to run healthily with exactly-once support. "+
			"Options for this include: tune the connector's producer configuration for higher throughput, "+
			"increase the transaction timeout for the connector's producers, "+
			"decrease the offset commit interval (if using interval-based transaction boundaries), "+
			"or use the 'poll' transaction boundary (if the connector is not already configured to use it)",
			r.cfg.Info.Connector, r.cfg.Info.Task), Cause: err}
	}
	if errors.Is(err, kerr.ProducerFenced) {
		return fmt.Errorf("%s: the task's producer was fenced out by a newer instance of the task (zombie fencing): %w", what, err)
	}
	return &ConnectError{Message: fmt.Sprintf("Failed to flush offsets and/or records for task %s-%d", r.cfg.Info.Connector, r.cfg.Info.Task),
		Cause: fmt.Errorf("%s: %w", what, err)}
}

// finishTransactions ends the runner's transactions as it stops: the open
// one is committed (a connector's only where it asked), unless the task
// failed or the stop was forced, in which case it is aborted, so that
// read_committed consumers need not wait for it to time out.
func (r *SourceRunner) finishTransactions(ctx context.Context, forced bool) error {
	e := r.eos
	e.mu.Lock()
	defer e.mu.Unlock()
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	commit := !failed && !forced && e.cfg.Boundary != BoundaryConnector
	if commit {
		if err := r.commitTransaction(ctx, false); err != nil {
			r.log.Warn("the final transaction could not commit; aborting it", "err", err)
		} else {
			return nil
		}
	}
	if !e.open {
		return nil
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = r.client.AbortBufferedRecords(actx)
	if err := r.client.EndTransaction(actx, kgo.TryAbort); err != nil {
		r.log.Warn("aborting the open transaction failed; the next instance of the task aborts it", "err", err)
	}
	e.open = false
	return nil
}

// javaLower lower-cases ASCII letters and trims as Java's trim.
func javaLower(s string) string {
	b := []byte(s)
	i, j := 0, len(b)
	for i < j && b[i] <= ' ' {
		i++
	}
	for j > i && b[j-1] <= ' ' {
		j--
	}
	b = b[i:j]
	for k, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[k] = c + 'a' - 'A'
		}
	}
	return string(b)
}

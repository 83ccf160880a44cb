package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// txnWriter is the config topic's transactional producer
// (transactional.id connect-cluster-<group.id>): the leader of a worker
// group with exactly-once source support, or preparing it, writes through
// it, so that a new leader's claim fences every write of a deposed one
// (Kafka Connect's fencable producer).
type txnWriter struct {
	id   string
	opts []kgo.Opt
	log  *slog.Logger

	mu sync.Mutex
	cl *kgo.Client // the claimed producer; nil when not claimed
}

// PrivilegedWriteError is a write through the leader's transactional
// producer that failed: the producer was fenced by another leader, or the
// transaction could not complete. Nothing of it is visible; the privileges
// are given up and claimed again at the next write.
type PrivilegedWriteError struct{ Err error }

func (e *PrivilegedWriteError) Error() string {
	return fmt.Sprintf("store: the leader's transactional write to the config topic failed (fenced by another leader?): %v", e.Err)
}

func (e *PrivilegedWriteError) Unwrap() error { return e.Err }

// ClaimWritePrivileges initializes the transactional producer of the
// config topic (InitProducerId on connect-cluster-<group.id>), which
// fences the producer of any earlier leader: Kafka Connect's
// claimWritePrivileges, called on becoming the leader. It does nothing for
// a store without one or already claimed.
func (s *ConfigStore) ClaimWritePrivileges(ctx context.Context) error {
	if s.txn == nil {
		return nil
	}
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	return s.txn.claim(ctx)
}

// RelinquishWritePrivileges closes the transactional producer (no longer
// the leader). It is idempotent.
func (s *ConfigStore) RelinquishWritePrivileges() {
	if s.txn == nil {
		return
	}
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	s.txn.relinquish()
}

func (w *txnWriter) claim(ctx context.Context) error {
	if w.cl != nil {
		return nil
	}
	cl, err := kgo.NewClient(append(w.opts, kgo.TransactionalID(w.id))...)
	if err != nil {
		return fmt.Errorf("store: the config topic's transactional producer: %w", err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return fmt.Errorf("store: claim write privileges on the config topic (transactional.id %s): %w", w.id, err)
	}
	w.log.Info("claimed write privileges on the config topic", "transactional_id", w.id)
	w.cl = cl
	return nil
}

func (w *txnWriter) relinquish() {
	if w.cl != nil {
		w.cl.Close()
		w.cl = nil
	}
}

// writeTransactional writes recs in one transaction of the leader's
// producer, claiming it first if needed, and waits until the store has
// read them back (once committed).
func (s *ConfigStore) writeTransactional(ctx context.Context, recs []*kgo.Record) error {
	if err := s.l.checkSizes(recs); err != nil {
		return err
	}
	for _, r := range recs {
		r.Topic = s.l.topic
	}
	w := s.txn
	w.mu.Lock()
	err := w.claim(ctx)
	if err == nil {
		err = w.commit(ctx, recs)
		if err != nil {
			w.relinquish()
			err = &PrivilegedWriteError{Err: err}
		}
	}
	w.mu.Unlock()
	if err != nil {
		return err
	}
	want := make(map[int32]int64, 1)
	for _, r := range recs {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
	}
	return s.l.waitApplied(ctx, want)
}

func (w *txnWriter) commit(ctx context.Context, recs []*kgo.Record) error {
	if err := w.cl.BeginTransaction(); err != nil {
		return err
	}
	if err := w.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		// Give up the transaction; the next claim's InitProducerId aborts
		// whatever the broker still holds of it.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = w.cl.AbortBufferedRecords(actx)
		_ = w.cl.EndTransaction(actx, kgo.TryAbort)
		return err
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	return nil
}

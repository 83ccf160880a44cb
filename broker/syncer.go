package broker

import (
	"context"
	"errors"
	"sync"

	"github.com/tributary-dev/tributary/broker/log"
)

// syncer group-commits fsyncs: every log written since the last round is
// fsynced once per round, and every waiter registered before the round
// started is released when it ends. Rounds run back to back while there is
// work, so under load one fsync covers many produce requests from many
// connections and partitions.
type syncer struct {
	mu      sync.Mutex
	dirty   map[*log.Log]struct{}
	waiters []*syncWaiter
	kick    chan struct{}
	rounds  uint64
	closed  bool // after the final round: waiters are released at once
}

// errSyncerClosed answers waiters that arrive after the final round.
var errSyncerClosed = errors.New("broker: shutting down")

type syncWaiter struct {
	logs []*log.Log
	done chan struct{}
	err  error
}

func newSyncer() *syncer {
	return &syncer{dirty: map[*log.Log]struct{}{}, kick: make(chan struct{}, 1)}
}

// mark records that logs have unsynced data; with wait it returns a waiter
// released after those logs are fsynced.
func (s *syncer) mark(logs []*log.Log, wait bool) *syncWaiter {
	s.mu.Lock()
	for _, l := range logs {
		s.dirty[l] = struct{}{}
	}
	var w *syncWaiter
	if wait {
		w = &syncWaiter{logs: logs, done: make(chan struct{})}
		if s.closed {
			w.err = errSyncerClosed
			close(w.done)
		} else {
			s.waiters = append(s.waiters, w)
		}
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return w
}

// run does rounds until ctx ends, then one final round.
func (s *syncer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.round()
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
			s.round() // waiters that arrived during the last round
			return
		case <-s.kick:
			s.round()
		}
	}
}

func (s *syncer) round() {
	s.mu.Lock()
	if len(s.dirty) == 0 && len(s.waiters) == 0 {
		s.mu.Unlock()
		return
	}
	dirty := s.dirty
	waiters := s.waiters
	s.dirty = map[*log.Log]struct{}{}
	s.waiters = nil
	s.rounds++
	s.mu.Unlock()

	// fsync the logs concurrently: the file system merges them into fewer
	// journal commits than one after another.
	failed := map[*log.Log]error{}
	var fmu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for l := range dirty {
		wg.Add(1)
		sem <- struct{}{}
		go func(l *log.Log) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := l.Sync(); err != nil && !errors.Is(err, log.ErrClosed) {
				fmu.Lock()
				failed[l] = err
				fmu.Unlock()
			}
		}(l)
	}
	wg.Wait()
	for _, w := range waiters {
		for _, l := range w.logs {
			if err := failed[l]; err != nil {
				w.err = err
				break
			}
		}
		close(w.done)
	}
}

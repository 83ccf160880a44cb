package postgres

import (
	"fmt"
)

// The task's lifecycle is one value, lifecycle, changed only by step: a
// pure function from the current state and an event to the next state and
// what the task must do. The task (task.go) feeds it the events its
// producer and Poll observe, under t.mu, and performs the actions; the
// transitions are tested as traces in lifecycle_test.go, as the herder's
// are.
//
// The phases, in the order a task goes through them:
//
//	idle ──snapshotStarted──► snapshot ──snapshotDone──► streamStarting ──streamStarted──► streaming
//	  │                          │  (initial_only)             ▲                              │
//	  └───streamStarting─────────┼──────► finished             └──── lost connection ◄────────┘
//	                             └── lost connection: snapshot again (from a new slot)
//
// A lost connection (transient) is retried errors.max.retries times in a
// row; a record handed out by Poll resets the count.

// phase is where the task's producer is.
type phase int

const (
	// phaseIdle: nothing runs yet (before Open started a producer).
	phaseIdle phase = iota
	// phaseSnapshot: the initial snapshot runs; not all its rows are out.
	phaseSnapshot
	// phaseStreamStarting: a stream was started (after the snapshot, at
	// Open, or after a reconnection) and has not yet started
	// replication.
	phaseStreamStarting
	// phaseStreaming: the stream runs (START_REPLICATION succeeded).
	phaseStreaming
	// phaseFinished: snapshot.mode=initial_only and the snapshot is out;
	// nothing more is produced.
	phaseFinished
)

func (p phase) String() string {
	switch p {
	case phaseIdle:
		return "idle"
	case phaseSnapshot:
		return "snapshot"
	case phaseStreamStarting:
		return "stream-starting"
	case phaseStreaming:
		return "streaming"
	case phaseFinished:
		return "finished"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// lifecycle is the task's state.
type lifecycle struct {
	phase phase
	// follow: a stream follows the snapshot (false for initial_only).
	follow bool
	// snapDone: the snapshot this task took is out whole (it stays set
	// while the stream after it reconnects).
	snapDone bool
	// restarts counts reconnections in a row without a record handed
	// out since.
	restarts int
	// maxRetries is errors.max.retries: -1 without limit.
	maxRetries int
}

func (l lifecycle) String() string {
	s := l.phase.String()
	if l.phase == phaseSnapshot && !l.follow {
		s += "(only)"
	}
	if l.snapDone {
		s += " snap-done"
	}
	if l.restarts > 0 {
		s += fmt.Sprintf(" restarts=%d", l.restarts)
	}
	return s
}

// lifeEvent is an input of step.
type lifeEvent interface{ lifeEvent() }

type (
	// evSnapshotStarted: a snapshot producer started (at Open or to take
	// the snapshot again); Follow says whether a stream follows it.
	evSnapshotStarted struct{ Follow bool }
	// evSnapshotDone: the snapshot's rows are all out (queued for Poll).
	evSnapshotDone struct{}
	// evStreamStarting: a stream producer started, without a snapshot
	// (at Open, or after a reconnection).
	evStreamStarting struct{}
	// evStreamStarted: START_REPLICATION succeeded.
	evStreamStarted struct{}
	// evDelivered: Poll handed records out.
	evDelivered struct{}
	// evProducerEnded: the producer ended with Err (nil: it finished,
	// as an initial_only snapshot does).
	evProducerEnded struct{ Err error }
)

func (evSnapshotStarted) lifeEvent() {}
func (evSnapshotDone) lifeEvent()    {}
func (evStreamStarting) lifeEvent()  {}
func (evStreamStarted) lifeEvent()   {}
func (evDelivered) lifeEvent()       {}
func (evProducerEnded) lifeEvent()   {}

// lifeAction is what the task does after a step.
type lifeAction int

const (
	// actNone: nothing.
	actNone lifeAction = iota
	// actResumeStream: reconnect, resume streaming after the last record
	// handed out.
	actResumeStream
	// actRetakeSnapshot: reconnect, take the snapshot again from a new
	// slot.
	actRetakeSnapshot
	// actFail: the task fails with the producer's error.
	actFail
	// actIdle: the producer finished; Poll waits for the task to stop.
	actIdle
)

func (a lifeAction) String() string {
	return [...]string{"none", "resume-stream", "retake-snapshot", "fail", "idle"}[a]
}

// step is the lifecycle's transition function.
func (l lifecycle) step(ev lifeEvent) (lifecycle, lifeAction) {
	switch ev := ev.(type) {
	case evSnapshotStarted:
		l.phase, l.follow, l.snapDone = phaseSnapshot, ev.Follow, false
	case evSnapshotDone:
		if l.phase != phaseSnapshot {
			return l, actNone
		}
		l.snapDone = true
		if l.follow {
			l.phase = phaseStreamStarting
		} else {
			l.phase = phaseFinished
		}
	case evStreamStarting:
		l.phase = phaseStreamStarting
	case evStreamStarted:
		if l.phase == phaseStreamStarting {
			l.phase = phaseStreaming
		}
	case evDelivered:
		l.restarts = 0
	case evProducerEnded:
		if ev.Err == nil {
			if l.phase == phaseSnapshot {
				// A snapshot that ends without error is out whole.
				l.snapDone, l.phase = true, phaseFinished
			}
			return l, actIdle
		}
		if l.maxRetries >= 0 && l.restarts >= l.maxRetries {
			return l, actFail
		}
		switch recoveryFor(l.phase == phaseSnapshot, l.phase == phaseStreaming || l.snapDone, l.restarts, ev.Err) {
		case resumeStream:
			l.restarts++
			l.phase = phaseStreamStarting
			return l, actResumeStream
		case retakeSnapshot:
			l.restarts++
			l.phase = phaseSnapshot
			return l, actRetakeSnapshot
		}
		return l, actFail
	}
	return l, actNone
}

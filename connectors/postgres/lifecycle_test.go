package postgres

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// lifeTrace steps a lifecycle through events, checking the action and the
// state after each, as the herder's traces do.
type lifeTrace struct {
	t *testing.T
	l lifecycle
}

func newLifeTrace(t *testing.T, maxRetries int) *lifeTrace {
	return &lifeTrace{t: t, l: lifecycle{maxRetries: maxRetries}}
}

// step feeds ev and checks "action -> state".
func (tr *lifeTrace) step(ev lifeEvent, want string) {
	tr.t.Helper()
	before := tr.l
	var a lifeAction
	tr.l, a = tr.l.step(ev)
	if got := fmt.Sprintf("%s -> %s", a, tr.l); got != want {
		tr.t.Errorf("from %q, %T%+v: got %q, want %q", before, ev, ev, got, want)
	}
}

var (
	errLost   = &pgconn.PgError{Code: "57P01", Message: "terminating connection due to unexpected postmaster exit"}
	errCut    = fmt.Errorf("postgres: replication stream: %w", io.ErrUnexpectedEOF)
	errDecode = errors.New("postgres: public.t.c: column kind 'b' in a text-mode stream")
)

// The initial snapshot, then the stream; the stream loses its server and
// reconnects; a record resets the count.
func TestLifecycleSnapshotThenStream(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot")
	tr.step(evDelivered{}, "none -> snapshot")
	tr.step(evSnapshotDone{}, "none -> stream-starting snap-done")
	tr.step(evStreamStarted{}, "none -> streaming snap-done")
	tr.step(evProducerEnded{Err: errLost}, "resume-stream -> stream-starting snap-done restarts=1")
	// The reconnection fails: the next Poll decides again.
	tr.step(evProducerEnded{Err: &pgconn.ConnectError{}}, "resume-stream -> stream-starting snap-done restarts=2")
	tr.step(evStreamStarting{}, "none -> stream-starting snap-done restarts=2")
	tr.step(evStreamStarted{}, "none -> streaming snap-done restarts=2")
	tr.step(evDelivered{}, "none -> streaming snap-done")
	tr.step(evProducerEnded{Err: errDecode}, "fail -> streaming snap-done")
}

// A stream after a completed snapshot resumes even if it lost its server
// before START_REPLICATION: the snapshot's rows are out.
func TestLifecycleLostBeforeFirstStreamStart(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot")
	tr.step(evSnapshotDone{}, "none -> stream-starting snap-done")
	tr.step(evProducerEnded{Err: errCut}, "resume-stream -> stream-starting snap-done restarts=1")
}

// A snapshot that lost its server is taken again, also while the retake
// cannot connect; one that failed on its data fails the task.
func TestLifecycleSnapshotRetake(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot")
	tr.step(evProducerEnded{Err: errLost}, "retake-snapshot -> snapshot restarts=1")
	tr.step(evProducerEnded{Err: &pgconn.ConnectError{}}, "retake-snapshot -> snapshot restarts=2")
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot restarts=2")
	tr.step(evDelivered{}, "none -> snapshot")
	tr.step(evProducerEnded{Err: errors.New("postgres: snapshot of public.big: row has 3 fields, want 2")}, "fail -> snapshot")
}

// Without a snapshot, a stream that never started fails the task at once
// (the server is not reachable on first start); once it has streamed, a
// lost connection resumes it.
func TestLifecycleStreamOnly(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evStreamStarting{}, "none -> stream-starting")
	tr.step(evProducerEnded{Err: errLost}, "fail -> stream-starting")

	tr = newLifeTrace(t, -1)
	tr.step(evStreamStarting{}, "none -> stream-starting")
	tr.step(evStreamStarted{}, "none -> streaming")
	tr.step(evProducerEnded{Err: errLost}, "resume-stream -> stream-starting restarts=1")
}

// errors.max.retries bounds the reconnections in a row; 0 never
// reconnects.
func TestLifecycleMaxRetries(t *testing.T) {
	tr := newLifeTrace(t, 2)
	tr.step(evStreamStarting{}, "none -> stream-starting")
	tr.step(evStreamStarted{}, "none -> streaming")
	tr.step(evProducerEnded{Err: errLost}, "resume-stream -> stream-starting restarts=1")
	tr.step(evProducerEnded{Err: errLost}, "resume-stream -> stream-starting restarts=2")
	tr.step(evProducerEnded{Err: errLost}, "fail -> stream-starting restarts=2")

	tr = newLifeTrace(t, 0)
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot")
	tr.step(evProducerEnded{Err: errLost}, "fail -> snapshot")
}

// initial_only: the snapshot finishes and the task idles; nothing
// streams.
func TestLifecycleInitialOnly(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evSnapshotStarted{Follow: false}, "none -> snapshot(only)")
	tr.step(evSnapshotDone{}, "none -> finished snap-done")
	tr.step(evProducerEnded{}, "idle -> finished snap-done")

	// Nothing to do at all (the snapshot was complete before).
	tr = newLifeTrace(t, -1)
	tr.step(evProducerEnded{}, "idle -> idle")
}

// A late START_REPLICATION report (from a stream that was replaced) does
// not move a snapshot on; nor does a late snapshot-done move a stream.
func TestLifecycleStaleEvents(t *testing.T) {
	tr := newLifeTrace(t, -1)
	tr.step(evSnapshotStarted{Follow: true}, "none -> snapshot")
	tr.step(evStreamStarted{}, "none -> snapshot")
	tr.step(evSnapshotDone{}, "none -> stream-starting snap-done")
	tr.step(evSnapshotDone{}, "none -> stream-starting snap-done")
}

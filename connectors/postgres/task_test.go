package postgres

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// transient tells a lost server or connection, after which connecting
// again can succeed, from an error that would come back.
func TestTransient(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("postgres: snapshot of public.big: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"postmaster exit", wrap(&pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to unexpected postmaster exit"}), true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02", Message: "terminating connection because of crash of another server process"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{"connection failure class", &pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{"exported snapshot gone", wrap(&pgconn.PgError{Code: "22023", Message: `invalid snapshot identifier: "00000004-00000004-1"`}), true},
		{"slot held by a cut connection", &pgconn.PgError{Code: "55006", Message: `replication slot "s" is active for PID 42`}, true},
		{"slot in use at start", fmt.Errorf("postgres: replication slot s %w", errSlotInUse), true},
		{"unexpected EOF", wrap(io.ErrUnexpectedEOF), true},
		{"connection reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{"refused", syscall.ECONNREFUSED, true},
		{"other invalid parameter", &pgconn.PgError{Code: "22023", Message: "invalid value for parameter"}, false},
		{"other object in use", &pgconn.PgError{Code: "55006", Message: "database is being accessed by other users"}, false},
		{"undefined table", wrap(&pgconn.PgError{Code: "42P01", Message: `relation "big" does not exist`}), false},
		{"permission", &pgconn.PgError{Code: "42501", Message: "permission denied for table big"}, false},
		{"decoding", wrap(errors.New("row has 3 fields, want 2")), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// recoveryFor retries only a lost connection, never streams after a
// snapshot that is not out whole (its rows would be skipped), and fails
// the task on an error that would come back.
func TestRecoveryFor(t *testing.T) {
	lost := &pgconn.PgError{Code: "57P01", Message: "terminating connection due to unexpected postmaster exit"}
	refused := &pgconn.ConnectError{}
	bad := errors.New("postgres: snapshot of public.big: row has 3 fields, want 2")
	for _, tc := range []struct {
		name            string
		snapshotPending bool
		streamed        bool
		restarts        int
		err             error
		want            recovery
	}{
		{"snapshot lost its server", true, false, 0, lost, retakeSnapshot},
		{"snapshot retake found the server down", true, false, 1, refused, retakeSnapshot},
		{"snapshot retake found the server down, after streaming once", true, true, 3, lost, retakeSnapshot},
		{"snapshot failed on its data", true, false, 0, bad, failTask},
		{"snapshot failed on its data during retries", true, false, 2, bad, failTask},
		{"stream lost its server", false, true, 0, lost, resumeStream},
		{"stream met a change it cannot decode", false, true, 0, errors.New("postgres: public.t.c: column kind 'b' in a text-mode stream"), failTask},
		{"stream lost its connection mid-read", false, true, 0, fmt.Errorf("postgres: replication stream: %w", io.ErrUnexpectedEOF), resumeStream},
		{"reconnection found the server down", false, false, 1, refused, resumeStream},
		{"first start of the stream failed", false, false, 0, lost, failTask},
		{"reconnection failed on something else", false, false, 1, bad, failTask},
	} {
		if got := recoveryFor(tc.snapshotPending, tc.streamed, tc.restarts, tc.err); got != tc.want {
			t.Errorf("%s: recoveryFor = %d, want %d", tc.name, got, tc.want)
		}
	}
}

package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAcquireExcludesASecondHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A second open file description conflicts even in this process, as a
	// second process's would.
	_, err = Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Acquire: %v, want a *LockedError", err)
	}
	if le.Dir != dir || le.PID != os.Getpid() {
		t.Fatalf("LockedError{%q, %d}, want {%q, %d}", le.Dir, le.PID, dir, os.Getpid())
	}
	msg := err.Error()
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid()), filepath.Join(dir, ".lock")} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	defer l2.Release()
	if l2.Dir() != dir {
		t.Fatalf("Dir() = %q", l2.Dir())
	}
}

func TestStalePIDDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	// What a holder killed with SIGKILL leaves behind: its pid, no flock.
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("a stale lock file blocked Acquire: %v", err)
	}
	defer l.Release()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file says %q, want this pid", got)
	}
}

func TestLockedErrorWithoutPID(t *testing.T) {
	e := &LockedError{Dir: "/d"}
	if strings.Contains(e.Error(), "pid") {
		t.Fatalf("%q mentions a pid it does not know", e.Error())
	}
}

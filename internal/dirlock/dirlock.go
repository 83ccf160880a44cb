// Package dirlock gives one process at a time a data directory: Acquire
// takes an exclusive flock(2) on DIR/.lock for as long as the process holds
// the returned Lock, as Apache Kafka does for each of its log.dirs.
//
// A second process (or a second Acquire in the same process) is refused at
// once with a *LockedError naming the directory and, where the lock file
// says, the holder's pid. The kernel drops a flock when its holder exits,
// however it exits, so the lock of a process killed with SIGKILL never
// blocks a restart; the pid in the file is information for people, never
// consulted to decide who holds the lock. The file is never removed:
// removing it would let a new process lock a fresh file while another still
// holds the old one.
//
//	l, err := dirlock.Acquire(dir)
//	if err != nil {
//		return err // *LockedError when another process has dir
//	}
//	defer l.Release()
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileName is the lock file's name inside the directory (Kafka's).
const FileName = ".lock"

// Lock is a held directory lock.
type Lock struct {
	dir string
	f   *os.File
}

// LockedError says that another process (or another Lock of this one)
// holds the directory.
type LockedError struct {
	Dir string // absolute path of the directory
	PID int    // the holder's pid as its lock file says; 0 when unknown
}

func (e *LockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "another process (pid " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("data directory %s is in use by %s, which holds %s: stop that process or use another directory",
		e.Dir, holder, filepath.Join(e.Dir, FileName))
}

// ErrLocked matches every *LockedError with errors.Is.
var ErrLocked = errors.New("dirlock: directory is locked by another process")

// Is makes errors.Is(err, ErrLocked) true for a *LockedError.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Acquire creates dir if needed and locks it; the error is a *LockedError
// when another holder has it.
func Acquire(dir string) (*Lock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dirlock: %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("dirlock: create %s: %w", abs, err)
	}
	path := filepath.Join(abs, FileName)
	// Go opens files close-on-exec, so plugin processes started later do
	// not inherit the lock and cannot keep it alive after this process dies.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dirlock: open %s: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dirlock: lock %s: %w", path, err)
	}
	if !held {
		pid := readPID(f)
		f.Close()
		return nil, &LockedError{Dir: abs, PID: pid}
	}
	// Say who holds it. Only the holder writes the file.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{dir: abs, f: f}, nil
}

// Dir is the locked directory (absolute).
func (l *Lock) Dir() string { return l.dir }

// Release gives the directory up. It is safe to call on a nil Lock and more
// than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0) // no stale pid for the next reader
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("dirlock: release %s: %w", l.dir, err)
	}
	return nil
}

// readPID reads the holder's pid from the lock file; 0 if it has none.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

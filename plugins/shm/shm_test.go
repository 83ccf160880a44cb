package shm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// dir returns a memory file system directory for the test's regions, or
// skips where there is none.
func dir(t *testing.T) string {
	t.Helper()
	if err := supported(Dir); err != nil {
		t.Skip(err)
	}
	d, err := os.MkdirTemp(Dir, "shm-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestCreateOpenShare(t *testing.T) {
	d := dir(t)
	host, err := Create(d, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	plugin, err := Open(host.Path(), 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer plugin.Close()
	if err := host.Unlink(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, filepath.Base(plugin.Path()))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file still there after Unlink: %v", err)
	}
	// What one side writes, the other reads, after the file is gone.
	copy(plugin.Bytes()[1000:], "batch of records")
	got := make([]byte, 16)
	if n, err := Copy(got, host.Bytes()[1000:1016]); err != nil || n != 16 || string(got) != "batch of records" {
		t.Fatalf("Copy = %d, %v, %q", n, err, got)
	}
}

func TestOpenRefuses(t *testing.T) {
	d := dir(t)
	r, err := Create(d, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := Open(r.Path(), 8192); err == nil {
		t.Error("Open of a region smaller than asked succeeded")
	}
	other := filepath.Join(d, "not-a-region")
	if err := os.WriteFile(other, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(other, 4096); err == nil {
		t.Error("Open of a file not named as a region succeeded")
	}
	if _, err := Open(filepath.Join(d, prefix+"1-missing"), 4096); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	if disk := t.TempDir(); supported(disk) != nil {
		if _, err := Create(disk, 4096); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Create on a disk directory: %v, want ErrUnsupported", err)
		}
	}
}

// TestCopyFault: a region truncated under the reader's mapping (as a
// misbehaving plugin could do) gives an error, not a SIGBUS crash.
func TestCopyFault(t *testing.T) {
	d := dir(t)
	r, err := Create(d, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(r.Path(), 0); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 1<<16)
	if _, err := Copy(dst, r.Bytes()); err == nil {
		t.Fatal("Copy from a truncated region succeeded")
	} else {
		t.Log(err)
	}
	// The goroutine's fault setting is restored.
	if debugPanicOnFault() {
		t.Error("panic on fault left on")
	}
}

func TestSweep(t *testing.T) {
	d := dir(t)
	mine, err := Create(d, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	// A process id that cannot exist (above the kernel's pid_max limit).
	dead := filepath.Join(d, prefix+strconv.Itoa(1<<23)+"-123")
	if err := os.WriteFile(dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n := Sweep(d); n != 1 {
		t.Errorf("Sweep removed %d files, want 1", n)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Error("dead process's region still there")
	}
	if _, err := os.Stat(mine.Path()); err != nil {
		t.Errorf("live process's region removed: %v", err)
	}
	if !bytes.Equal(mine.Bytes()[:4], make([]byte, 4)) {
		t.Error("region not zeroed")
	}
}

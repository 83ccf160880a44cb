//go:build linux

package shm

import (
	"errors"
	"os"
	"runtime/debug"
	"syscall"
	"testing"
)

func create(t *testing.T, size int) *Region {
	t.Helper()
	r, err := Create(size)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestCreateOpenShare(t *testing.T) {
	host := create(t, 1<<16)
	plugin, err := Open(host.Name(), 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer plugin.Close()
	if err := host.Release(); err != nil {
		t.Fatal(err)
	}
	// What one side writes, the other reads, once the name is gone.
	copy(plugin.Bytes()[1000:], "batch of records")
	got := make([]byte, 16)
	if n, err := Copy(got, host.Bytes()[1000:1016]); err != nil || n != 16 || string(got) != "batch of records" {
		t.Fatalf("Copy = %d, %v, %q", n, err, got)
	}
}

func TestOpenRefuses(t *testing.T) {
	r := create(t, 4096)
	if _, err := Open(r.Name(), 8192); err == nil {
		t.Error("Open of a region smaller than asked succeeded")
	}
	if _, err := Open("/etc/passwd", 1); err == nil {
		t.Error("Open of something not named as a region succeeded")
	}
	name := r.Name()
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(name, 4096); err == nil {
		t.Error("Open after Release succeeded")
	}
}

// TestSealed: neither side can shrink or grow a region under the other's
// mapping (which would make the other's accesses fault).
func TestSealed(t *testing.T) {
	r := create(t, 1<<16)
	f, err := os.OpenFile(r.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(0); !errors.Is(err, syscall.EPERM) {
		t.Errorf("truncate to 0: %v, want EPERM", err)
	}
	if err := f.Truncate(1 << 20); !errors.Is(err, syscall.EPERM) {
		t.Errorf("truncate to 1 MiB: %v, want EPERM", err)
	}
}

// TestCopyFault: reading a mapping whose file was truncated gives an error,
// not a SIGBUS crash, and leaves the goroutine's fault setting as it was.
func TestCopyFault(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "mapped")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 16); err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, 1<<16, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(data)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(make([]byte, 1<<16), data); err == nil {
		t.Fatal("Copy from a truncated mapping succeeded")
	} else {
		t.Log(err)
	}
	if old := debug.SetPanicOnFault(false); old {
		t.Error("panic on fault left on")
	}
}

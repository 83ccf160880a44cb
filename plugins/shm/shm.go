// Package shm maps memory that the worker and a plugin process share: a
// file on a memory file system (/dev/shm on Linux) that both processes map.
// The source protocol uses it to hand record batches over without copying
// them through the gRPC connection (see plugins/pluginpb's SharedMemory).
//
// The file exists only until the plugin has mapped it: the host removes it
// once the plugin answers, so a region outlives neither process. Files left
// behind by a host killed in between are removed by the next host's Sweep.
//
// A process that maps a file another process can truncate risks a SIGBUS
// on access. Readers that do not trust the other side copy out of a region
// with Copy, which turns such a fault into an error.
package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Dir is where regions are created: a memory file system, so that the
// shared pages are never written to a disk.
const Dir = "/dev/shm"

// prefix starts the name of every region file; the creator's process id
// follows, for Sweep.
const prefix = "tributary-shm-"

// EnvOff is the environment variable that, set to "off", keeps a worker
// from offering shared memory and a plugin from accepting it.
const EnvOff = "TRIBUTARY_SHARED_MEMORY"

// ErrUnsupported is returned by Create and Open where shared memory is not
// available (not Linux, or no memory file system at Dir).
var ErrUnsupported = errors.New("shm: shared memory not supported here")

// A Region is a mapped shared memory file.
type Region struct {
	path string
	data []byte
}

// Create creates a region of size bytes in dir (Dir when empty) and maps
// it read-write. The file stays until Unlink or Close.
func Create(dir string, size int) (*Region, error) {
	if dir == "" {
		dir = Dir
	}
	if size <= 0 {
		return nil, fmt.Errorf("shm: region size %d", size)
	}
	if err := supported(dir); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, prefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("shm: create region: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("shm: size region %s: %w", f.Name(), err)
	}
	data, err := mmap(f, size)
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("shm: map region %s: %w", f.Name(), err)
	}
	return &Region{path: f.Name(), data: data}, nil
}

// Open maps the region at path, which must hold at least size bytes.
func Open(path string, size int) (*Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: region size %d", size)
	}
	if err := supported(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(filepath.Base(path), prefix) {
		return nil, fmt.Errorf("shm: %s is not a region file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open region: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: open region: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() < int64(size) {
		return nil, fmt.Errorf("shm: region %s holds %d bytes, not %d", path, fi.Size(), size)
	}
	data, err := mmap(f, size)
	if err != nil {
		return nil, fmt.Errorf("shm: map region %s: %w", path, err)
	}
	return &Region{path: path, data: data}, nil
}

// Path is the region's file name, for the other process to Open.
func (r *Region) Path() string { return r.path }

// Bytes is the mapped memory; it is valid until Close.
func (r *Region) Bytes() []byte { return r.data }

// Unlink removes the region's file; the mappings stay. Once every process
// has mapped it, nothing is left behind when they exit.
func (r *Region) Unlink() error {
	if r.path == "" {
		return nil
	}
	err := os.Remove(r.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	r.path = ""
	return err
}

// Close unmaps the region (and removes its file if still there). Nothing
// may use Bytes after.
func (r *Region) Close() error {
	uerr := r.Unlink()
	var merr error
	if r.data != nil {
		merr = munmap(r.data)
		r.data = nil
	}
	return errors.Join(uerr, merr)
}

// Copy copies src, which lies in a region another process can modify or
// truncate, into dst and returns the number of bytes copied. A fault while
// reading (the file was truncated under the mapping) is returned as an
// error instead of crashing the process.
func Copy(dst, src []byte) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("shm: fault reading shared memory (was the file truncated?): %v", r)
		}
	}()
	return copy(dst, src), nil
}

// Sweep removes the region files in dir (Dir when empty) whose creating
// process is gone: left behind by a host killed before its plugin mapped
// them. It returns how many it removed.
func Sweep(dir string) int {
	if dir == "" {
		dir = Dir
	}
	names, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	n := 0
	for _, name := range names {
		pidStr, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(name), prefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if os.Remove(name) == nil {
			n++
		}
	}
	return n
}

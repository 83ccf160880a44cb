// Package shm maps memory that the worker and a plugin process share. The
// source protocol uses it to hand record batches over without copying them
// through the gRPC connection (see sdk/protocol/pluginpb's SharedMemory).
//
// On Linux a region is an anonymous memory file (memfd_create) that no file
// system holds: it is not limited by the size of /dev/shm, its pages are
// allocated only as they are written, and it disappears with the last
// process that maps it or holds it open, whatever kills them. The creator
// hands it over by name, /proc/<pid>/fd/<fd>, which the other process opens
// while the creator still holds the descriptor; the creator then closes it
// (Release). The region is sealed against shrinking and growing, so neither
// side can truncate it under the other's mapping.
//
// Readers that do not trust the other side copy out of a region with Copy,
// which turns a fault while reading into an error instead of a crash.
package shm

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// EnvOff is the environment variable that, set to "off", keeps a worker
// from offering shared memory and a plugin from accepting it.
const EnvOff = "TRIBUTARY_SHARED_MEMORY"

// ErrUnsupported is returned by Create and Open where shared memory is not
// available (not Linux).
var ErrUnsupported = errors.New("shm: shared memory not supported here")

// A Region is mapped shared memory.
type Region struct {
	name string // for the other process to Open; empty once released
	fd   int    // the creator's descriptor until Release; -1 after
	data []byte
}

// Name is the region's name, for the other process to Open while the
// creator has not yet released it.
func (r *Region) Name() string { return r.name }

// Bytes is the mapped memory; it is valid until Close.
func (r *Region) Bytes() []byte { return r.data }

// Release closes the creator's descriptor once the other process has
// opened the region (or will not): the mappings stay, and the memory goes
// with the last of them.
func (r *Region) Release() error {
	r.name = ""
	if r.fd < 0 {
		return nil
	}
	err := closeFD(r.fd)
	r.fd = -1
	return err
}

// Close releases the region and unmaps it. Nothing may use Bytes after.
func (r *Region) Close() error {
	rerr := r.Release()
	var merr error
	if r.data != nil {
		merr = munmap(r.data)
		r.data = nil
	}
	return errors.Join(rerr, merr)
}

// Copy copies src, which lies in a region another process can write, into
// dst and returns the number of bytes copied. A fault while reading is
// returned as an error instead of crashing the process (sealing rules out
// truncation, the usual cause; this is the second line of defence).
func Copy(dst, src []byte) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("shm: fault reading shared memory: %v", r)
		}
	}()
	return copy(dst, src), nil
}

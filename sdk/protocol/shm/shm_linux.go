package shm

import (
	"fmt"
	"os"
	"regexp"

	"golang.org/x/sys/unix"
)

// Create creates a region of size bytes and maps it read-write. Until
// Release, the other process can Open it by Name.
func Create(size int) (*Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: region size %d", size)
	}
	fd, err := unix.MemfdCreate("tributary-batches", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("%w: memfd_create: %v", ErrUnsupported, err)
	}
	fail := func(what string, err error) (*Region, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("shm: %s: %w", what, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return fail("size region", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail("seal region", err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("map region", err)
	}
	return &Region{name: fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), fd: fd, data: data}, nil
}

// regionName is the form of a region's name.
var regionName = regexp.MustCompile(`^/proc/[0-9]+/fd/[0-9]+$`)

// Open maps the region named name, which must hold at least size bytes.
func Open(name string, size int) (*Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: region size %d", size)
	}
	if !regionName.MatchString(name) {
		return nil, fmt.Errorf("shm: %q is not a region name", name)
	}
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open region %s: %w", name, err)
	}
	defer unix.Close(fd) // the mapping outlives the descriptor
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shm: open region %s: %w", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < int64(size) {
		return nil, fmt.Errorf("shm: region %s holds %d bytes, not %d", name, st.Size, size)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: map region %s: %w", name, err)
	}
	return &Region{fd: -1, data: data}, nil
}

func closeFD(fd int) error  { return unix.Close(fd) }
func munmap(b []byte) error { return unix.Munmap(b) }

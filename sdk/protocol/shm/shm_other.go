//go:build !linux

package shm

// Create reports ErrUnsupported: shared memory is Linux-only.
func Create(int) (*Region, error) { return nil, ErrUnsupported }

// Open reports ErrUnsupported: shared memory is Linux-only.
func Open(string, int) (*Region, error) { return nil, ErrUnsupported }

func closeFD(int) error   { return nil }
func munmap([]byte) error { return nil }

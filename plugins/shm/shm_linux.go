package shm

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func supported(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnsupported, dir, err)
	}
	const tmpfsMagic = 0x01021994
	if st.Type != tmpfsMagic {
		return fmt.Errorf("%w: %s is not a memory file system", ErrUnsupported, dir)
	}
	return nil
}

func mmap(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }

// alive reports whether process pid exists (or might: a process of
// another user answers EPERM).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

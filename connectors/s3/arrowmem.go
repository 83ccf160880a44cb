package s3

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// bufPool is the Arrow allocator of a task's Parquet writers: buffers that
// Arrow frees (a built batch once written, a file's column writers once
// closed) are kept and handed out again, zeroed, instead of every batch
// and file allocating and the garbage collector reclaiming several MiB.
// Buffers come in power-of-two sizes; at most maxKept bytes are kept.
type bufPool struct {
	mu      sync.Mutex
	free    [48][][]byte // by log2 of the capacity
	kept    int
	maxKept int
}

// minPoolClass is log2 of the smallest buffer handed out: 64 bytes, the
// alignment Arrow's own allocator gives.
const minPoolClass = 6

func newBufPool(maxKept int) *bufPool { return &bufPool{maxKept: maxKept} }

func poolClass(size int) int { return max(minPoolClass, bits.Len(uint(size-1))) }

// Allocate returns a zeroed buffer of size bytes.
func (p *bufPool) Allocate(size int) []byte {
	if size <= 0 {
		return make([]byte, 0, 1<<minPoolClass)
	}
	c := poolClass(size)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.kept -= cap(b)
		p.mu.Unlock()
		b = b[:size] // the rest is cleared if Reallocate hands it out
		clear(b)
		return b
	}
	p.mu.Unlock()
	return make([]byte, size, 1<<c)
}

// Reallocate grows or shrinks b to size bytes, keeping its contents; bytes
// past the old length are zero, as in a new allocation (Arrow's writers
// count on it).
func (p *bufPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free keeps b for a later Allocate, unless the pool is full.
func (p *bufPool) Free(b []byte) {
	c := bits.Len(uint(cap(b))) - 1
	if c < minPoolClass || cap(b) != 1<<c || c >= len(p.free) {
		return // not one of ours
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kept+cap(b) > p.maxKept {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
	p.kept += cap(b)
}

var _ memory.Allocator = (*bufPool)(nil)

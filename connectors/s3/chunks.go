package s3

import (
	"errors"
	"io"
)

// chunks is a byte buffer made of separate chunks (64 KiB growing to
// 1 MiB), so that growing it never copies what it holds, and reading it
// back is seekable (for retried uploads).
type chunks struct {
	bufs [][]byte
	size int
	held int // capacity of all chunks
}

const (
	firstChunk = 64 << 10
	maxChunk   = 1 << 20
)

func (c *chunks) Write(p []byte) {
	for len(p) > 0 {
		n := len(c.bufs)
		if n == 0 || len(c.bufs[n-1]) == cap(c.bufs[n-1]) {
			size := firstChunk
			if n > 0 {
				size = min(2*cap(c.bufs[n-1]), maxChunk)
			}
			c.bufs = append(c.bufs, make([]byte, 0, size))
			c.held += size
			n++
		}
		last := c.bufs[n-1]
		k := min(len(p), cap(last)-len(last))
		c.bufs[n-1] = append(last, p[:k]...)
		c.size += k
		p = p[k:]
	}
}

func (c *chunks) Len() int { return c.size }

// memory is the capacity the chunks hold.
func (c *chunks) memory() int { return c.held }

func (c *chunks) reset() { *c = chunks{} }

// reader returns a seekable reader over the bytes.
func (c *chunks) reader() *chunkReader { return &chunkReader{c: c} }

// writeTo writes the bytes to w.
func (c *chunks) writeTo(w io.WriterAt, off int64) error {
	for _, b := range c.bufs {
		if _, err := w.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

type chunkReader struct {
	c   *chunks
	pos int64
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.pos >= int64(r.c.size) {
		return 0, io.EOF
	}
	n := 0
	off := r.pos
	for _, b := range r.c.bufs {
		if off >= int64(len(b)) {
			off -= int64(len(b))
			continue
		}
		k := copy(p[n:], b[off:])
		n += k
		off = 0
		if n == len(p) {
			break
		}
	}
	r.pos += int64(n)
	return n, nil
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += int64(r.c.size)
	}
	if offset < 0 {
		return 0, errors.New("s3: seek before start")
	}
	r.pos = offset
	return offset, nil
}

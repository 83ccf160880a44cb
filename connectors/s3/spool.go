package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// spool collects the bytes of one object being written. Bytes live in
// memory until the task's memory bound makes it spill them to a local
// temporary file; once a part's worth (s3.part.size) is pending it goes to
// the store as a multipart part. An object smaller than a part is created
// with one request when closed.
type spool struct {
	st       store
	key      string
	partSize int
	spillDir string

	buf     chunks   // pending bytes in memory, after those on disk
	disk    *os.File // pending bytes spilled to disk, or nil
	diskLen int64
	up      upload // multipart upload once the first part went out
	written int64  // total bytes of the object so far
	ctx     context.Context
	err     error // first write error, sticky
}

func newSpool(ctx context.Context, st store, key string, partSize int, spillDir string) *spool {
	return &spool{ctx: ctx, st: st, key: key, partSize: partSize, spillDir: spillDir}
}

// Write implements io.Writer for the format encoders.
func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.buf.Write(p)
	s.written += int64(len(p))
	if s.diskLen+int64(s.buf.Len()) >= int64(s.partSize) {
		if err := s.uploadPart(); err != nil {
			s.err = err
			return 0, err
		}
	}
	return len(p), nil
}

// memory returns the bytes this spool holds in memory.
func (s *spool) memory() int { return s.buf.memory() }

// pendingReader returns the pending bytes (disk, then memory) as one
// seekable reader.
func (s *spool) pendingReader() (io.ReadSeeker, int64, error) {
	if s.disk == nil {
		return s.buf.reader(), int64(s.buf.Len()), nil
	}
	if s.buf.Len() > 0 {
		if err := s.spill(); err != nil {
			return nil, 0, err
		}
	}
	return io.NewSectionReader(s.disk, 0, s.diskLen), s.diskLen, nil
}

func (s *spool) resetPending() error {
	s.buf.reset()
	if s.disk != nil {
		if err := s.disk.Truncate(0); err != nil {
			return fmt.Errorf("s3: spill file: %w", err)
		}
		if _, err := s.disk.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("s3: spill file: %w", err)
		}
		s.diskLen = 0
	}
	return nil
}

func (s *spool) uploadPart() error {
	if s.up == nil {
		up, err := s.st.multipart(s.ctx, s.key)
		if err != nil {
			return err
		}
		s.up = up
	}
	r, n, err := s.pendingReader()
	if err != nil {
		return err
	}
	if err := s.up.part(s.ctx, r, n); err != nil {
		return err
	}
	return s.resetPending()
}

// spill moves the in-memory bytes to the spill file and frees them.
func (s *spool) spill() error {
	if s.buf.Len() == 0 {
		s.buf.reset()
		return nil
	}
	if s.disk == nil {
		f, err := os.CreateTemp(s.spillDir, "tributary-s3-spill-*")
		if err != nil {
			return fmt.Errorf("s3: create spill file: %w", err)
		}
		os.Remove(f.Name()) // unlinked: the space goes with the process
		s.disk = f
	}
	if err := s.buf.writeTo(s.disk, s.diskLen); err != nil {
		return fmt.Errorf("s3: write spill file: %w", err)
	}
	s.diskLen += int64(s.buf.Len())
	s.buf.reset()
	return nil
}

// shed frees the spool's memory: a part's worth goes to the store, less
// goes to the spill file.
func (s *spool) shed() error {
	if s.err != nil {
		return s.err
	}
	if err := s.spill(); err != nil {
		s.err = err
		return err
	}
	return nil
}

// finish makes the object durable in the store. errExists from a
// conditional create means it already was (a replay). After another error
// the spool still holds its data and finish may be called again; the
// caller releases it once done.
func (s *spool) finish(ifAbsent bool) error {
	if s.err != nil {
		return s.err
	}
	r, n, err := s.pendingReader()
	if err != nil {
		return err
	}
	if s.up == nil {
		return s.st.put(s.ctx, s.key, r, n, ifAbsent)
	}
	if n > 0 {
		if err := s.up.part(s.ctx, r, n); err != nil {
			return err
		}
		if err := s.resetPending(); err != nil {
			return err
		}
	}
	if err := s.up.complete(s.ctx, ifAbsent); err != nil {
		if errors.Is(err, errExists) {
			s.up = nil
		}
		return err
	}
	s.up = nil
	return nil
}

// release drops what the spool holds (after finish, or when the file is
// abandoned on a revoke or a failure).
func (s *spool) release() {
	s.buf.reset()
	if s.disk != nil {
		s.disk.Close()
		s.disk = nil
	}
	if s.up != nil {
		_ = s.up.abort(context.WithoutCancel(s.ctx))
		s.up = nil
	}
}

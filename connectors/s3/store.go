package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// errExists reports that a conditional create found the object already
// there: a replay (or a zombie task) wrote the same deterministic file
// before, so this one is already durable.
var errExists = errors.New("s3: object already exists")

// store is where finished files go: an S3 bucket or a local directory.
type store interface {
	// put creates an object from body (size bytes, seekable for retries).
	// With ifAbsent it fails with errExists if the key exists.
	put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error
	// multipart starts an upload in parts.
	multipart(ctx context.Context, key string) (upload, error)
	// check verifies that the destination exists and is writable.
	check(ctx context.Context) error
	// list returns the keys under prefix (tests and tools).
	list(ctx context.Context, prefix string) ([]string, error)
	// get returns an object's bytes (tests and tools).
	get(ctx context.Context, key string) ([]byte, error)
}

// upload is a multipart upload in progress.
type upload interface {
	part(ctx context.Context, body io.ReadSeeker, size int64) error
	// complete finishes the object; with ifAbsent it fails with errExists
	// if the key exists meanwhile.
	complete(ctx context.Context, ifAbsent bool) error
	abort(ctx context.Context) error
}

// fileStore writes the bucket layout under a local directory: each object
// is written to a temporary file, fsynced, and linked into place (a link
// never replaces an existing file, which is the conditional create), then
// the directory is fsynced.
type fileStore struct{ root string }

func (s *fileStore) path(key string) string { return filepath.Join(s.root, filepath.FromSlash(key)) }

func (s *fileStore) check(context.Context) error {
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return fmt.Errorf("s3: local store %s: %w", s.root, err)
	}
	f, err := os.CreateTemp(s.root, ".tributary-check-*")
	if err != nil {
		return fmt.Errorf("s3: local store %s is not writable: %w", s.root, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// tmpFile creates a hidden temporary file in the key's directory.
func (s *fileStore) tmpFile(key string) (*os.File, error) {
	dst := s.path(key)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, fmt.Errorf("s3: local store: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("s3: local store: %w", err)
	}
	return f, nil
}

// commit fsyncs tmp and moves it to key's place.
func (s *fileStore) commit(f *os.File, key string, ifAbsent bool) error {
	dst := s.path(key)
	defer os.Remove(f.Name())
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("s3: local store: fsync %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("s3: local store: %w", err)
	}
	if ifAbsent {
		if err := os.Link(f.Name(), dst); err != nil {
			if errors.Is(err, os.ErrExist) {
				return errExists
			}
			return fmt.Errorf("s3: local store: %w", err)
		}
	} else if err := os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("s3: local store: %w", err)
	}
	d, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("s3: local store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("s3: local store: fsync %s: %w", filepath.Dir(dst), err)
	}
	return nil
}

func (s *fileStore) put(_ context.Context, key string, body io.ReadSeeker, _ int64, ifAbsent bool) error {
	f, err := s.tmpFile(key)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("s3: local store: write %s: %w", key, err)
	}
	return s.commit(f, key, ifAbsent)
}

type fileUpload struct {
	s   *fileStore
	key string
	f   *os.File
}

func (s *fileStore) multipart(_ context.Context, key string) (upload, error) {
	f, err := s.tmpFile(key)
	if err != nil {
		return nil, err
	}
	return &fileUpload{s: s, key: key, f: f}, nil
}

func (u *fileUpload) part(_ context.Context, body io.ReadSeeker, _ int64) error {
	if _, err := io.Copy(u.f, body); err != nil {
		return fmt.Errorf("s3: local store: write %s: %w", u.key, err)
	}
	return nil
}

func (u *fileUpload) complete(_ context.Context, ifAbsent bool) error {
	return u.s.commit(u.f, u.key, ifAbsent)
}

func (u *fileUpload) abort(context.Context) error {
	u.f.Close()
	return os.Remove(u.f.Name())
}

func (s *fileStore) list(_ context.Context, prefix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		if k := filepath.ToSlash(rel); strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
		return nil
	})
	return out, err
}

func (s *fileStore) get(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(s.path(key))
}

package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes of the on-disk index entries (docs/format/log.md).
const (
	indexEntrySize     = 8  // relative offset uint32, position uint32
	timeIndexEntrySize = 16 // max timestamp so far int64, relative offset uint32, position uint32
)

type indexEntry struct {
	rel uint32 // offset - segment base
	pos uint32 // file position of the batch
}

type timeEntry struct {
	ts  int64 // largest batch max timestamp up to and including this batch
	rel uint32
	pos uint32
}

// segment is one file of batches plus its in-memory sparse indexes.
type segment struct {
	base int64
	path string
	f    *os.File

	// Guarded by the Log's mutex.
	size          int64
	next          int64 // offset after the last batch in this segment
	index         []indexEntry
	timeIndex     []timeEntry
	maxTimestamp  int64
	created       time.Time
	lastIndexed   int64 // file position of the last offset-index entry, -1 if none
	idxF, timeF   *os.File
	txnF          *os.File     // aborted transaction index of the active segment
	aborted       []AbortedTxn // aborted transactions whose marker is in this segment
	pendingDelete bool

	refs atomic.Int32 // 1 for the log's own reference plus one per reader
}

func segmentPath(dir string, base int64, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext))
}

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.f.Close()
	}
}

// createSegment makes a new empty segment file and its index files.
func createSegment(dir string, base int64, now time.Time) (*segment, error) {
	s := &segment{base: base, path: segmentPath(dir, base, ".log"), next: base, maxTimestamp: -1, created: now, lastIndexed: -1}
	var err error
	if s.f, err = os.OpenFile(s.path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if err := s.openIndexFiles(dir, true); err != nil {
		s.f.Close()
		return nil, err
	}
	s.refs.Store(1)
	return s, nil
}

func (s *segment) openIndexFiles(dir string, truncate bool) error {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if truncate {
		flags |= os.O_TRUNC
	}
	var err error
	if s.idxF, err = os.OpenFile(segmentPath(dir, s.base, ".index"), flags, 0o644); err != nil {
		return fmt.Errorf("open offset index: %w", err)
	}
	if s.timeF, err = os.OpenFile(segmentPath(dir, s.base, ".timeindex"), flags, 0o644); err != nil {
		s.idxF.Close()
		return fmt.Errorf("open time index: %w", err)
	}
	if s.txnF, err = os.OpenFile(segmentPath(dir, s.base, ".txnindex"), flags, 0o644); err != nil {
		s.idxF.Close()
		s.timeF.Close()
		return fmt.Errorf("open aborted transaction index: %w", err)
	}
	return nil
}

// noteBatch updates the in-memory and on-disk indexes for a batch written at
// pos; interval is the index interval in bytes.
func (s *segment) noteBatch(h *BatchHeader, pos int64, interval int64, writeFiles bool) error {
	rel := uint32(h.BaseOffset - s.base)
	if s.lastIndexed < 0 || pos-s.lastIndexed >= interval {
		e := indexEntry{rel: rel, pos: uint32(pos)}
		s.index = append(s.index, e)
		s.lastIndexed = pos
		if writeFiles && s.idxF != nil {
			var b [indexEntrySize]byte
			binary.BigEndian.PutUint32(b[0:], e.rel)
			binary.BigEndian.PutUint32(b[4:], e.pos)
			if _, err := s.idxF.Write(b[:]); err != nil {
				return fmt.Errorf("write offset index: %w", err)
			}
		}
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp = h.MaxTimestamp
		n := len(s.timeIndex)
		if n == 0 || pos-int64(s.timeIndex[n-1].pos) >= interval {
			e := timeEntry{ts: h.MaxTimestamp, rel: rel, pos: uint32(pos)}
			s.timeIndex = append(s.timeIndex, e)
			if writeFiles && s.timeF != nil {
				var b [timeIndexEntrySize]byte
				binary.BigEndian.PutUint64(b[0:], uint64(e.ts))
				binary.BigEndian.PutUint32(b[8:], e.rel)
				binary.BigEndian.PutUint32(b[12:], e.pos)
				if _, err := s.timeF.Write(b[:]); err != nil {
					return fmt.Errorf("write time index: %w", err)
				}
			}
		} else {
			// Keep the last entry's timestamp current: it bounds the
			// timestamps of every batch up to the next entry.
			s.timeIndex[n-1].ts = h.MaxTimestamp
		}
	}
	s.next = h.LastOffset() + 1
	return nil
}

// readHeaderAt reads the batch header at pos.
func (s *segment) readHeaderAt(pos int64, buf []byte) (BatchHeader, error) {
	if _, err := s.f.ReadAt(buf[:HeaderSize], pos); err != nil {
		return BatchHeader{}, err
	}
	return ParseHeader(buf[:HeaderSize])
}

// findPos returns the file position of the batch containing offset, or of the
// first batch after it; ok is false when the segment has no such batch.
// The caller holds the log's mutex for the index lookup only (lock), which
// is released before the file is read.
func (s *segment) findPos(offset int64, end int64, lock sync.Locker) (pos int64, ok bool, err error) {
	lock.Lock()
	i := sort.Search(len(s.index), func(i int) bool { return int64(s.index[i].rel)+s.base > offset })
	if i > 0 {
		pos = int64(s.index[i-1].pos)
	}
	lock.Unlock()
	var buf [HeaderSize]byte
	for pos < end {
		h, err := s.readHeaderAt(pos, buf[:])
		if err != nil {
			return 0, false, fmt.Errorf("segment %d: read batch header at %d: %w", s.base, pos, err)
		}
		if h.LastOffset() >= offset {
			return pos, true, nil
		}
		pos += int64(h.Size())
	}
	return 0, false, nil
}

// scan reads batch headers from pos to the end of the file, calling fn for
// each complete batch. With verify it checks each batch's CRC. It stops at the
// first invalid or incomplete batch and returns the position where the valid
// data ends.
func (s *segment) scan(pos int64, verify bool, fn func(h *BatchHeader, pos int64) error) (int64, error) {
	st, err := s.f.Stat()
	if err != nil {
		return pos, fmt.Errorf("stat segment: %w", err)
	}
	size := st.Size()
	var hdr [HeaderSize]byte
	var buf []byte
	expect := int64(-1)
	for pos < size {
		if size-pos < HeaderSize {
			return pos, fmt.Errorf("%w: %d bytes of a header at position %d", ErrCorruptBatch, size-pos, pos)
		}
		h, err := s.readHeaderAt(pos, hdr[:])
		if err != nil {
			return pos, fmt.Errorf("at position %d: %w", pos, err)
		}
		if int64(h.Size()) > size-pos {
			return pos, fmt.Errorf("%w: batch at position %d needs %d bytes, %d left", ErrCorruptBatch, pos, h.Size(), size-pos)
		}
		if expect >= 0 && h.BaseOffset != expect || h.BaseOffset < s.base {
			return pos, fmt.Errorf("%w: batch at position %d has base offset %d, want %d", ErrCorruptBatch, pos, h.BaseOffset, expect)
		}
		if verify {
			if cap(buf) < h.Size() {
				buf = make([]byte, h.Size())
			}
			buf = buf[:h.Size()]
			if _, err := s.f.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
				return pos, fmt.Errorf("read batch at %d: %w", pos, err)
			}
			if _, err := ValidateBatch(buf); err != nil {
				return pos, fmt.Errorf("at position %d: %w", pos, err)
			}
		}
		if err := fn(&h, pos); err != nil {
			return pos, err
		}
		expect = h.LastOffset() + 1
		pos += int64(h.Size())
	}
	return pos, nil
}

// loadIndexFiles loads the sparse indexes written beside a closed segment.
// It returns false if they are missing or implausible; the caller rebuilds.
func (s *segment) loadIndexFiles(dir string, size int64) bool {
	ib, err := os.ReadFile(segmentPath(dir, s.base, ".index"))
	if err != nil || len(ib)%indexEntrySize != 0 || len(ib) == 0 {
		return false
	}
	tb, err := os.ReadFile(segmentPath(dir, s.base, ".timeindex"))
	if err != nil || len(tb)%timeIndexEntrySize != 0 {
		return false
	}
	var idx []indexEntry
	for i := 0; i < len(ib); i += indexEntrySize {
		e := indexEntry{rel: binary.BigEndian.Uint32(ib[i:]), pos: binary.BigEndian.Uint32(ib[i+4:])}
		if int64(e.pos) >= size || (len(idx) > 0 && (e.rel <= idx[len(idx)-1].rel || e.pos <= idx[len(idx)-1].pos)) {
			return false
		}
		idx = append(idx, e)
	}
	if idx[0].pos != 0 || idx[0].rel != 0 {
		return false
	}
	var tidx []timeEntry
	for i := 0; i < len(tb); i += timeIndexEntrySize {
		e := timeEntry{ts: int64(binary.BigEndian.Uint64(tb[i:])), rel: binary.BigEndian.Uint32(tb[i+8:]), pos: binary.BigEndian.Uint32(tb[i+12:])}
		if int64(e.pos) >= size {
			return false
		}
		tidx = append(tidx, e)
	}
	s.index, s.timeIndex = idx, tidx
	s.lastIndexed = int64(idx[len(idx)-1].pos)
	if n := len(tidx); n > 0 {
		s.maxTimestamp = tidx[n-1].ts
	}
	return true
}

// writeIndexFilesDurably is rewriteIndexFiles with each file replaced
// atomically and fsynced.
func (s *segment) writeIndexFilesDurably(dir string) error {
	ib, tb := s.encodeIndexes()
	if err := writeFileAtomic(segmentPath(dir, s.base, ".index"), ib); err != nil {
		return err
	}
	if err := writeFileAtomic(segmentPath(dir, s.base, ".txnindex"), s.encodeTxnIndex()); err != nil {
		return err
	}
	return writeFileAtomic(segmentPath(dir, s.base, ".timeindex"), tb)
}

func (s *segment) encodeIndexes() (ib, tb []byte) {
	ib = make([]byte, 0, len(s.index)*indexEntrySize)
	for _, e := range s.index {
		ib = binary.BigEndian.AppendUint32(ib, e.rel)
		ib = binary.BigEndian.AppendUint32(ib, e.pos)
	}
	tb = make([]byte, 0, len(s.timeIndex)*timeIndexEntrySize)
	for _, e := range s.timeIndex {
		tb = binary.BigEndian.AppendUint64(tb, uint64(e.ts))
		tb = binary.BigEndian.AppendUint32(tb, e.rel)
		tb = binary.BigEndian.AppendUint32(tb, e.pos)
	}
	return ib, tb
}

// rewriteIndexFiles writes the in-memory indexes to disk, replacing the files.
func (s *segment) rewriteIndexFiles(dir string) error {
	ib, tb := s.encodeIndexes()
	if err := os.WriteFile(segmentPath(dir, s.base, ".index"), ib, 0o644); err != nil {
		return fmt.Errorf("write offset index: %w", err)
	}
	if err := os.WriteFile(segmentPath(dir, s.base, ".timeindex"), tb, 0o644); err != nil {
		return fmt.Errorf("write time index: %w", err)
	}
	if err := os.WriteFile(segmentPath(dir, s.base, ".txnindex"), s.encodeTxnIndex(), 0o644); err != nil {
		return fmt.Errorf("write aborted transaction index: %w", err)
	}
	return nil
}

// closeIndexFiles closes the index file handles of a segment that is no
// longer active.
func (s *segment) closeIndexFiles() error {
	var errs []error
	if s.idxF != nil {
		errs = append(errs, s.idxF.Sync(), s.idxF.Close())
		s.idxF = nil
	}
	if s.timeF != nil {
		errs = append(errs, s.timeF.Sync(), s.timeF.Close())
		s.timeF = nil
	}
	if s.txnF != nil {
		errs = append(errs, s.txnF.Sync(), s.txnF.Close())
		s.txnF = nil
	}
	return errors.Join(errs...)
}

// remove deletes the segment's files; the data file handle is closed once
// the last reader releases it.
func (s *segment) remove(dir string) error {
	s.pendingDelete = true
	errs := []error{s.closeIndexFiles()}
	for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
		if err := os.Remove(segmentPath(dir, s.base, ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.release()
	return errors.Join(errs...)
}

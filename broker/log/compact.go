package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CompactConfig holds the settings of cleanup.policy=compact.
type CompactConfig struct {
	DeleteRetention  time.Duration // delete.retention.ms: how long tombstones are kept
	MinCompactionLag time.Duration // min.compaction.lag.ms: records younger than this are not compacted
	MaxCompactionLag time.Duration // max.compaction.lag.ms: dirty data older than this is compacted regardless of the ratio
	MinCleanableRate float64       // min.cleanable.dirty.ratio
}

// CompactStats describes one compaction.
type CompactStats struct {
	Segments      int   // segments cleaned
	BytesBefore   int64 // their size before
	BytesAfter    int64 // and after
	RecordsBefore int
	RecordsAfter  int
	Skipped       string // why nothing was done, if nothing was
}

// cleanedName is a cleaned group being written; swapName is a cleaned group
// that is committed and replaces the segments [base, next).
func cleanedName(dir string, base int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d.cleaned", base))
}

func swapName(dir string, base, next int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d.swap-%d", base, next))
}

func (l *Log) cleanerCheckpointPath() string {
	return filepath.Join(l.dir, "cleaner-offset-checkpoint")
}

func (l *Log) loadCleanerCheckpoint() int64 {
	b, err := os.ReadFile(l.cleanerCheckpointPath())
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// finishSwaps completes compactions that committed (a .swap file exists)
// before a crash: the segments it replaces are removed and it becomes a
// segment. It runs before segments are opened.
func finishSwaps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		stem, rest, ok := strings.Cut(e.Name(), ".swap-")
		if !ok {
			continue
		}
		base, err1 := strconv.ParseInt(stem, 10, 64)
		next, err2 := strconv.ParseInt(rest, 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if err := replaceWithSwap(dir, base, next); err != nil {
			return fmt.Errorf("finish interrupted compaction: %w", err)
		}
	}
	return nil
}

// replaceWithSwap removes the segments with base offsets in [base, next)
// and renames the swap file to the segment file of base.
func replaceWithSwap(dir string, base, next int64) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		stem, ext, _ := strings.Cut(e.Name(), ".")
		if len(stem) != 20 {
			continue
		}
		b, err := strconv.ParseInt(stem, 10, 64)
		if err != nil || b < base || b >= next {
			continue
		}
		switch ext {
		case "log", "index", "timeindex", "txnindex":
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	if err := os.Rename(swapName(dir, base, next), segmentPath(dir, base, ".log")); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Compact cleans the closed segments of the log: for every key only the
// record with the highest offset is kept (tombstones until delete.retention.ms
// after their timestamp), and records keep their offsets. Produce and fetch
// go on meanwhile: the segments are read without the lock, and the cleaned
// group replaces them in one step. Crash safety: the cleaned data is written
// and fsynced to a .cleaned file, renamed to .swap-<next> (the commit point),
// then the old segments are removed and the swap file renamed; Open finishes
// an interrupted swap, so a crash leaves either the old or the new segments.
func (l *Log) Compact(now time.Time, cc CompactConfig) (CompactStats, error) {
	l.compactMu.Lock()
	defer l.compactMu.Unlock()
	var st CompactStats

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return st, ErrClosed
	}
	// Roll an active segment holding data older than max.compaction.lag.ms
	// so that it can be compacted.
	active := l.segments[len(l.segments)-1]
	if active.size > 0 && cc.MaxCompactionLag > 0 && now.Sub(active.created) > cc.MaxCompactionLag && l.hwm == l.leo {
		if err := l.rollLocked(now); err != nil {
			l.mu.Unlock()
			return st, err
		}
	}
	lagLimit := now.Add(-cc.MinCompactionLag).UnixMilli()
	lso := l.lastStableLocked()
	var group []*segment
	for _, s := range l.segments[:len(l.segments)-1] {
		if cc.MinCompactionLag > 0 && s.maxTimestamp > lagLimit {
			break // this and later segments are too young
		}
		if s == l.hwmSeg {
			break // holds the high watermark: readers stop there
		}
		if s.next > lso {
			break // holds records of an open transaction
		}
		s.acquire()
		group = append(group, s)
	}
	var next int64
	if len(group) > 0 {
		next = l.segments[len(group)].base
	}
	var aborted []AbortedTxn // every aborted transaction: their records are dropped
	var groupAborted []AbortedTxn
	for i, s := range l.segments {
		aborted = append(aborted, s.aborted...)
		if i < len(group) {
			groupAborted = append(groupAborted, s.aborted...)
		}
	}
	cleanedTo := l.cleanedTo
	l.mu.Unlock()
	defer func() {
		for _, s := range group {
			s.release()
		}
	}()
	if len(group) == 0 {
		st.Skipped = "no closed segment old enough"
		return st, nil
	}

	var total, dirty int64
	var oldestDirty = time.Time{}
	for _, s := range group {
		total += s.size
		if s.next > cleanedTo {
			dirty += s.size
			if oldestDirty.IsZero() || s.created.Before(oldestDirty) {
				oldestDirty = s.created
			}
		}
	}
	forced := cc.MaxCompactionLag > 0 && dirty > 0 && now.Sub(oldestDirty) > cc.MaxCompactionLag
	if dirty == 0 || (!forced && float64(dirty)/float64(total) < cc.MinCleanableRate) {
		st.Skipped = fmt.Sprintf("dirty ratio %.2f below %.2f", float64(dirty)/float64(max(total, 1)), cc.MinCleanableRate)
		return st, nil
	}

	// Pass 1: the latest offset of every key in the group, among records
	// that are not part of an aborted transaction.
	var dec Decompressor
	defer dec.Close()
	latest := map[string]int64{}
	isAborted := func(h *BatchHeader) bool {
		if !h.IsTransactional() || h.IsControl() {
			return false
		}
		for _, a := range aborted {
			if a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.BaseOffset <= a.LastOffset {
				return true
			}
		}
		return false
	}
	for _, s := range group {
		if err := s.eachBatch(func(b []byte, h *BatchHeader) error {
			if h.IsControl() || isAborted(h) {
				return nil
			}
			recs, err := dec.Records(b)
			if err != nil {
				return err
			}
			for _, r := range recs {
				latest[string(r.Key)] = r.Offset
			}
			return nil
		}); err != nil {
			return st, fmt.Errorf("log: compaction scan of segment %d: %w", s.base, err)
		}
	}

	// Pass 2: write the survivors into one cleaned file.
	horizon := now.Add(-cc.DeleteRetention).UnixMilli()
	tmp := cleanedName(l.dir, group[0].base)
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return st, fmt.Errorf("log: create cleaned segment: %w", err)
	}
	abort := func(err error) (CompactStats, error) {
		out.Close()
		os.Remove(tmp)
		return st, err
	}
	var written int64
	var buf []byte
	for _, s := range group {
		st.BytesBefore += s.size
		err := s.eachBatch(func(b []byte, h *BatchHeader) error {
			if isAborted(h) {
				return nil // aborted records are never read by anyone
			}
			if h.IsControl() {
				// Markers are kept: they close transactions for
				// read_uncommitted readers and the producer state.
				if _, err := out.WriteAt(b, written); err != nil {
					return err
				}
				written += int64(len(b))
				return nil
			}
			recs, err := dec.Records(b)
			if err != nil {
				return err
			}
			st.RecordsBefore += len(recs)
			keep := recs[:0:0]
			for _, r := range recs {
				if latest[string(r.Key)] != r.Offset {
					continue
				}
				if r.Value == nil && h.MaxTimestamp < horizon {
					continue // tombstone past delete.retention.ms
				}
				keep = append(keep, r)
			}
			st.RecordsAfter += len(keep)
			switch {
			case len(keep) == 0:
				return nil
			case len(keep) == len(recs):
				buf = append(buf[:0], b...)
			default:
				buf = rebuildBatch(buf[:0], h, keep)
			}
			if _, err := out.WriteAt(buf, written); err != nil {
				return err
			}
			written += int64(len(buf))
			return nil
		})
		if err != nil {
			return abort(fmt.Errorf("log: compacting segment %d: %w", s.base, err))
		}
	}
	if err := out.Sync(); err != nil {
		return abort(fmt.Errorf("log: fsync cleaned segment: %w", err))
	}
	st.BytesAfter = written
	st.Segments = len(group)

	// Swap under the lock, unless retention or another change replaced
	// these segments meanwhile.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return abort(ErrClosed)
	}
	for i, s := range group {
		if i >= len(l.segments)-1 || l.segments[i] != s {
			st.Skipped = "segments changed during compaction"
			return abort(nil)
		}
	}
	swap := swapName(l.dir, group[0].base, next)
	if err := os.Rename(tmp, swap); err != nil {
		return abort(fmt.Errorf("log: commit cleaned segment: %w", err))
	}
	if err := SyncDir(l.dir); err != nil {
		out.Close()
		return st, err // committed; the next Open finishes the swap
	}
	if err := replaceWithSwap(l.dir, group[0].base, next); err != nil {
		out.Close()
		return st, fmt.Errorf("log: replace compacted segments (finished at next start): %w", err)
	}
	ns := &segment{base: group[0].base, path: segmentPath(l.dir, group[0].base, ".log"), f: out, size: written,
		next: next, maxTimestamp: -1, lastIndexed: -1, created: group[len(group)-1].created, aborted: groupAborted}
	ns.refs.Store(1)
	if _, err := ns.scan(0, false, func(h *BatchHeader, pos int64) error {
		return ns.noteBatch(h, pos, l.cfg.IndexIntervalBytes, false)
	}); err != nil {
		l.logger.Warn("cleaned segment scan", "err", err)
	}
	ns.next = next
	if err := ns.rewriteIndexFiles(l.dir); err != nil {
		l.logger.Warn("writing cleaned segment index; rebuilt at next start", "err", err)
	}
	for _, s := range group {
		s.pendingDelete = true
		s.release() // the log's own reference
	}
	l.segments = append([]*segment{ns}, l.segments[len(group):]...)
	if l.cleanedTo < next {
		l.cleanedTo = next
		if err := writeFileAtomic(l.cleanerCheckpointPath(), []byte(strconv.FormatInt(next, 10))); err != nil {
			l.logger.Warn("saving cleaner checkpoint", "err", err)
		}
	}
	return st, nil
}

// eachBatch calls fn with every batch of a closed segment, read whole.
func (s *segment) eachBatch(fn func(b []byte, h *BatchHeader) error) error {
	var buf []byte
	_, err := s.scan(0, false, func(h *BatchHeader, pos int64) error {
		if cap(buf) < h.Size() {
			buf = make([]byte, h.Size())
		}
		buf = buf[:h.Size()]
		if _, err := s.f.ReadAt(buf, pos); err != nil {
			return err
		}
		return fn(buf, h)
	})
	return err
}

// rebuildBatch writes a batch with the same base offset, timestamps,
// producer fields and last offset delta as h, holding only recs
// (uncompressed). Keeping the last offset delta keeps producer sequence
// numbers meaningful, as Kafka does.
func rebuildBatch(dst []byte, h *BatchHeader, recs []Record) []byte {
	dst = append(dst, make([]byte, HeaderSize)...)
	for _, r := range recs {
		dst = append(dst, r.Raw...)
	}
	binary.BigEndian.PutUint64(dst[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(dst[offLength:], uint32(len(dst)-lengthOverhead))
	binary.BigEndian.PutUint32(dst[offLeaderEpoch:], uint32(h.LeaderEpoch))
	dst[offMagic] = 2
	binary.BigEndian.PutUint16(dst[offAttributes:], uint16(h.Attributes&^0x07))
	binary.BigEndian.PutUint32(dst[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(dst[offFirstTimestamp:], uint64(h.FirstTimestamp))
	binary.BigEndian.PutUint64(dst[offMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(dst[offProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(dst[offProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(dst[offBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(dst[offNumRecords:], uint32(len(recs)))
	binary.BigEndian.PutUint32(dst[offCRC:], crc32.Checksum(dst[offAttributes:], crcTable))
	return dst
}

// DeleteRecordsBefore moves the log start offset to offset (-1: the high
// watermark), deleting segments that end before it. It returns the new log
// start offset.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return -1, ErrClosed
	}
	if offset == -1 {
		offset = l.hwm
	}
	if offset < 0 || offset > l.hwm {
		return -1, fmt.Errorf("%w: %d not in [0, %d]", ErrOffsetOutOfRange, offset, l.hwm)
	}
	if offset <= l.logStart {
		return l.logStart, nil
	}
	if err := writeFileAtomic(l.logStartPath(), []byte(strconv.FormatInt(offset, 10))); err != nil {
		return -1, err
	}
	l.logStart = offset
	var errs []error
	for len(l.segments) > 1 && l.segments[1].base <= offset && l.segments[0] != l.hwmSeg {
		s := l.segments[0]
		l.segments = l.segments[1:]
		errs = append(errs, s.remove(l.dir))
	}
	return l.logStart, errors.Join(errs...)
}

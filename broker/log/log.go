package log

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Config holds the per-partition settings that come from topic configs.
type Config struct {
	SegmentBytes       int64         // segment.bytes: roll when the segment would exceed this
	SegmentAge         time.Duration // segment.ms: roll a segment this old at the next append
	RetentionAge       time.Duration // retention.ms: delete segments whose newest record is older; <0 keeps forever
	RetentionBytes     int64         // retention.bytes: delete oldest segments above this size; <0 no limit
	IndexIntervalBytes int64         // index.interval.bytes: bytes between sparse index entries
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentAge:         7 * 24 * time.Hour,
		RetentionAge:       7 * 24 * time.Hour,
		RetentionBytes:     -1,
		IndexIntervalBytes: 4096,
	}
}

// Errors returned by reads.
var (
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	ErrClosed           = errors.New("log: closed")
)

// Log is one partition's log. All methods are safe for concurrent use.
type Log struct {
	dir    string
	logger *slog.Logger

	mu        sync.Mutex
	cfg       Config
	segments  []*segment // by base offset; the last one is active
	logStart  int64
	leo       int64 // log end offset: next offset to assign
	hwm       int64 // high watermark: everything below is fsynced
	hwmSeg    *segment
	hwmPos    int64 // end of synced data in hwmSeg
	producers map[int64]*producerState
	waitCh    chan struct{} // closed when hwm advances
	closed    bool
	syncErr   error
	cleanedTo int64 // compaction: offsets below are cleaned

	compactMu sync.Mutex // one compaction at a time
}

// AppendResult describes an appended (or de-duplicated) batch.
type AppendResult struct {
	BaseOffset  int64
	LastOffset  int64
	LogStart    int64
	Duplicate   bool // an identical idempotent batch was already in the log
	NeedsSync   bool // data was written and waits for Sync
	NumMessages int
}

// Open opens or creates the log in dir and recovers it.
func Open(dir string, cfg Config, logger *slog.Logger) (*Log, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	l := &Log{dir: dir, logger: logger, cfg: cfg, producers: map[int64]*producerState{}, waitCh: make(chan struct{})}
	if err := l.load(); err != nil {
		l.closeFiles()
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	return l, nil
}

// Dir is the directory of the log.
func (l *Log) Dir() string { return l.dir }

func (l *Log) load() error {
	if err := finishSwaps(l.dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var bases []int64
	var snaps []int64
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".cleaned") {
			os.Remove(filepath.Join(l.dir, name))
			continue
		}
		stem, ext, _ := strings.Cut(name, ".")
		base, err := strconv.ParseInt(stem, 10, 64)
		if err != nil || len(stem) != 20 {
			continue
		}
		switch ext {
		case "log":
			bases = append(bases, base)
		case "snapshot":
			snaps = append(snaps, base)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	sort.Slice(snaps, func(i, j int) bool { return snaps[i] < snaps[j] })
	if err := l.loadLogStart(); err != nil {
		return err
	}
	l.cleanedTo = l.loadCleanerCheckpoint()
	if len(bases) == 0 {
		start := l.logStart
		s, err := createSegment(l.dir, start, time.Now())
		if err != nil {
			return err
		}
		if err := SyncDir(l.dir); err != nil {
			return err
		}
		l.segments = []*segment{s}
		l.leo, l.hwm, l.hwmSeg = start, start, s
		return nil
	}

	// Open every segment; closed ones keep their index files when sane.
	for i, base := range bases {
		last := i == len(bases)-1
		s := &segment{base: base, path: segmentPath(l.dir, base, ".log"), next: base, maxTimestamp: -1, lastIndexed: -1}
		flags := os.O_RDONLY
		if last {
			flags = os.O_RDWR
		}
		if s.f, err = os.OpenFile(s.path, flags, 0o644); err != nil {
			return fmt.Errorf("open segment: %w", err)
		}
		s.refs.Store(1)
		l.segments = append(l.segments, s)
		st, err := s.f.Stat()
		if err != nil {
			return err
		}
		s.size = st.Size()
		s.created = st.ModTime()
		if last {
			continue
		}
		if i+1 < len(bases) {
			s.next = bases[i+1]
		}
		s.loadTxnIndex(l.dir, l.logger)
		if !s.loadIndexFiles(l.dir, s.size) {
			l.logger.Info("rebuilding segment index", "segment", base)
			if _, err := s.scan(0, false, func(h *BatchHeader, pos int64) error {
				return s.noteBatch(h, pos, l.cfg.IndexIntervalBytes, false)
			}); err != nil {
				l.logger.Warn("closed segment has an unreadable tail", "segment", base, "err", err)
			}
			if err := s.rewriteIndexFiles(l.dir); err != nil {
				return err
			}
			s.next = bases[i+1]
		}
	}

	// Producer state: from the newest snapshot at or before the active
	// segment, then replayed from the log.
	active := l.segments[len(l.segments)-1]
	replayFrom := 0
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i] > active.base {
			continue
		}
		p, err := readSnapshot(snapshotName(l.dir, snaps[i]))
		if err != nil {
			l.logger.Warn("ignoring producer snapshot", "err", err)
			continue
		}
		l.producers = p
		replayFrom = sort.Search(len(l.segments), func(j int) bool { return l.segments[j].base >= snaps[i] })
		break
	}
	for _, s := range l.segments[replayFrom : len(l.segments)-1] {
		if _, err := s.scan(0, false, func(h *BatchHeader, pos int64) error {
			trackProducer(l.producers, h)
			commit := false
			if h.IsControl() {
				var err error
				if commit, err = s.readControlType(pos, h); err != nil {
					return err
				}
			}
			noteTxn(l.producers, h, commit) // aborts are in the segment's index already
			return nil
		}); err != nil {
			l.logger.Warn("replaying producer state", "segment", s.base, "err", err)
		}
	}

	// The active segment is validated batch by batch: it is the only one
	// that can hold a torn tail after a crash.
	active.index, active.timeIndex, active.lastIndexed, active.aborted = nil, nil, -1, nil
	end, scanErr := active.scan(0, true, func(h *BatchHeader, pos int64) error {
		trackProducer(l.producers, h)
		commit := false
		if h.IsControl() {
			var err error
			if commit, err = active.readControlType(pos, h); err != nil {
				return err
			}
		}
		if a, ok := noteTxn(l.producers, h, commit); ok {
			a.LastStable = -1 // not known after the fact; unused by readers
			active.addAborted(a, false)
		}
		return active.noteBatch(h, pos, l.cfg.IndexIntervalBytes, false)
	})
	if scanErr != nil {
		l.logger.Warn("truncating torn log tail", "segment", active.base, "valid_bytes", end, "lost_bytes", active.size-end, "reason", scanErr)
		if err := active.f.Truncate(end); err != nil {
			return fmt.Errorf("truncate torn tail: %w", err)
		}
		if err := active.f.Sync(); err != nil {
			return fmt.Errorf("fsync after truncation: %w", err)
		}
	}
	active.size = end
	if end == 0 && len(l.segments) > 1 {
		active.next = active.base
	}
	if err := active.rewriteIndexFiles(l.dir); err != nil {
		return err
	}
	if err := active.openIndexFiles(l.dir, false); err != nil {
		return err
	}
	l.leo = active.next
	if l.logStart < l.segments[0].base {
		l.logStart = l.segments[0].base
	}
	// Everything found on disk after recovery is durable: fsync once so
	// that this holds even if the previous run died before its fsync.
	if err := active.f.Sync(); err != nil {
		return fmt.Errorf("fsync active segment: %w", err)
	}
	l.hwm, l.hwmSeg, l.hwmPos = l.leo, active, active.size
	return nil
}

func (l *Log) logStartPath() string { return filepath.Join(l.dir, "log-start-offset") }

func (l *Log) loadLogStart() error {
	b, err := os.ReadFile(l.logStartPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		l.logger.Warn("ignoring unreadable log start offset file", "err", err)
		return nil
	}
	l.logStart = v
	return nil
}

// Config returns the log's current settings.
func (l *Log) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// SetConfig changes the log's settings; they apply from the next append.
func (l *Log) SetConfig(cfg Config) {
	l.mu.Lock()
	l.cfg = cfg
	l.mu.Unlock()
}

// Offsets returns the log start offset, the high watermark and the log end offset.
func (l *Log) Offsets() (logStart, hwm, leo int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.logStart, l.hwm, l.leo
}

// HighWatermark returns the offset below which every record is durable.
func (l *Log) HighWatermark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hwm
}

// Wait returns a channel that is closed when the high watermark next moves.
func (l *Log) Wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waitCh
}

// Size returns the total bytes of all segments.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

// NumSegments returns how many segment files the log has.
func (l *Log) NumSegments() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.segments)
}

// Append appends one validated v2 batch (see SplitBatches). The batch is
// modified in place: its base offset is stamped. Idempotent batches are
// de-duplicated against the producer's last batches.
func (l *Log) Append(batch []byte, h BatchHeader, now time.Time) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return AppendResult{}, ErrClosed
	}
	if l.syncErr != nil {
		return AppendResult{}, fmt.Errorf("log: refusing writes after a failed fsync: %w", l.syncErr)
	}
	var ps *producerState
	if isIdempotent(&h) {
		ps = l.producers[h.ProducerID]
		dup, err := ps.check(&h)
		if err != nil {
			return AppendResult{}, err
		}
		if dup >= 0 {
			return AppendResult{BaseOffset: dup, LastOffset: dup + int64(h.LastOffsetDelta), LogStart: l.logStart, Duplicate: true}, nil
		}
	}
	res, err := l.appendLocked(batch, h, now, ps)
	if err == nil && h.IsTransactional() {
		h.BaseOffset = res.BaseOffset
		noteTxn(l.producers, &h, false)
	}
	return res, err
}

// appendLocked writes a checked batch at the log end; ps is its producer's
// state to update (nil: none yet, created for idempotent batches).
func (l *Log) appendLocked(batch []byte, h BatchHeader, now time.Time, ps *producerState) (AppendResult, error) {
	active := l.segments[len(l.segments)-1]
	if active.size > 0 && (active.size+int64(len(batch)) > l.cfg.SegmentBytes ||
		now.Sub(active.created) >= l.cfg.SegmentAge ||
		l.leo+int64(h.LastOffsetDelta)-active.base > math.MaxInt32 ||
		active.size+int64(len(batch)) > math.MaxUint32) {
		if err := l.rollLocked(now); err != nil {
			return AppendResult{}, err
		}
		active = l.segments[len(l.segments)-1]
	}
	h.BaseOffset = l.leo
	stampBaseOffset(batch, l.leo, 0)
	pos := active.size
	if _, err := active.f.WriteAt(batch, pos); err != nil {
		// The bytes may be partly on disk: cut them off again.
		if terr := active.f.Truncate(pos); terr != nil {
			l.syncErr = terr
		}
		return AppendResult{}, fmt.Errorf("log: write batch: %w", err)
	}
	if active.size == 0 {
		active.created = now
	}
	active.size += int64(len(batch))
	if err := active.noteBatch(&h, pos, l.cfg.IndexIntervalBytes, true); err != nil {
		l.logger.Warn("index write failed; it is rebuilt on restart", "err", err)
	}
	if ps == nil && isIdempotent(&h) && !h.IsControl() {
		ps = &producerState{Epoch: h.ProducerEpoch}
		l.producers[h.ProducerID] = ps
	}
	if ps != nil {
		ps.record(&h)
	}
	l.leo = h.LastOffset() + 1
	return AppendResult{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), LogStart: l.logStart, NeedsSync: true, NumMessages: int(h.NumRecords)}, nil
}

// rollLocked closes the active segment and starts a new one at the log end.
func (l *Log) rollLocked(now time.Time) error {
	old := l.segments[len(l.segments)-1]
	// The old segment is fully durable before the next one exists, so only
	// the newest segment can ever have a torn tail.
	if err := unix.Fdatasync(int(old.f.Fd())); err != nil {
		l.syncErr = err
		return fmt.Errorf("log: fsync segment before roll: %w", err)
	}
	if err := old.closeIndexFiles(); err != nil {
		return fmt.Errorf("log: close index of rolled segment: %w", err)
	}
	// The in-memory time index keeps its last entry's timestamp current;
	// write the final indexes durably so that the segment's max timestamp
	// (retention, compaction lag) is right after a restart.
	if err := old.writeIndexFilesDurably(l.dir); err != nil {
		return fmt.Errorf("log: index of rolled segment: %w", err)
	}
	if err := writeSnapshot(l.dir, l.leo, l.producers); err != nil {
		return fmt.Errorf("log: producer snapshot at roll: %w", err)
	}
	s, err := createSegment(l.dir, l.leo, now)
	if err != nil {
		return err
	}
	if err := SyncDir(l.dir); err != nil {
		s.f.Close()
		s.closeIndexFiles()
		return err
	}
	l.segments = append(l.segments, s)
	if l.hwm == l.leo {
		l.hwmSeg, l.hwmPos = s, 0
	}
	// Older snapshots are superseded by the new one.
	for _, seg := range l.segments[:len(l.segments)-1] {
		os.Remove(snapshotName(l.dir, seg.base))
	}
	return nil
}

// Roll forces a new segment if the active one has data.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.segments[len(l.segments)-1].size == 0 {
		return nil
	}
	return l.rollLocked(time.Now())
}

// Sync makes everything appended so far durable and advances the high
// watermark. Concurrent appends are not blocked while the fsync runs.
func (l *Log) Sync() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.leo == l.hwm {
		l.mu.Unlock()
		return nil
	}
	if l.syncErr != nil {
		err := l.syncErr
		l.mu.Unlock()
		return err
	}
	active := l.segments[len(l.segments)-1]
	leo, pos := l.leo, active.size
	active.acquire()
	l.mu.Unlock()

	err := unix.Fdatasync(int(active.f.Fd()))
	active.release()

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		// Closed or deleted during the fsync: waitCh is closed already.
		return ErrClosed
	}
	if err != nil {
		// After a failed fsync the page cache state is unknown (fsyncgate):
		// stop accepting writes; a restart recovers from what is on disk.
		l.syncErr = err
		return fmt.Errorf("log: fsync: %w", err)
	}
	if leo > l.hwm {
		l.hwm, l.hwmSeg, l.hwmPos = leo, active, pos
		close(l.waitCh)
		l.waitCh = make(chan struct{})
	}
	return nil
}

// Chunk is a contiguous run of whole batches in one segment file, to be sent
// with sendfile. Release it when done.
type Chunk struct {
	seg *segment
	Pos int64
	Len int64
	// Next is the offset after the chunk's last batch (0 for an empty chunk).
	Next int64
}

// File is the segment file the chunk lives in.
func (c *Chunk) File() *os.File {
	if c.seg == nil {
		return nil
	}
	return c.seg.f
}

// Release drops the chunk's hold on its segment file.
func (c *Chunk) Release() {
	if c.seg != nil {
		c.seg.release()
		c.seg = nil
	}
}

// Bytes reads the chunk into memory.
func (c *Chunk) Bytes() ([]byte, error) {
	if c.seg == nil || c.Len == 0 {
		return nil, nil
	}
	b := make([]byte, c.Len)
	if _, err := c.seg.f.ReadAt(b, c.Pos); err != nil {
		return nil, fmt.Errorf("log: read chunk: %w", err)
	}
	return b, nil
}

// Read returns whole batches starting with the one that contains offset, up
// to maxBytes (at least one batch even if it is larger, as Kafka does when
// minOne is set), never beyond the high watermark.
func (l *Log) Read(offset int64, maxBytes int64, minOne bool) (Chunk, error) {
	return l.read(offset, maxBytes, minOne, false)
}

// ReadCommitted is Read for read_committed consumers: it stops at the last
// stable offset, and returns nothing (no error) from there to the high
// watermark.
func (l *Log) ReadCommitted(offset int64, maxBytes int64, minOne bool) (Chunk, error) {
	return l.read(offset, maxBytes, minOne, true)
}

func (l *Log) read(offset int64, maxBytes int64, minOne, committed bool) (Chunk, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Chunk{}, ErrClosed
	}
	if offset < l.logStart || offset > l.hwm {
		l.mu.Unlock()
		return Chunk{}, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, l.logStart, l.hwm)
	}
	limit := l.hwm
	if committed {
		limit = l.lastStableLocked()
	}
	if offset >= limit {
		l.mu.Unlock()
		return Chunk{}, nil
	}
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].base > offset }) - 1
	if i < 0 {
		i = 0
	}
	type cand struct {
		s   *segment
		end int64
	}
	var cands []cand
	for ; i < len(l.segments); i++ {
		s := l.segments[i]
		end := s.size
		if s == l.hwmSeg {
			end = l.hwmPos
		}
		s.acquire()
		cands = append(cands, cand{s, end})
		if s == l.hwmSeg {
			break
		}
	}
	l.mu.Unlock()

	var out Chunk
	var err error
	done := false
	for _, c := range cands {
		if done || out.seg != nil || err != nil {
			c.s.release()
			continue
		}
		pos, ok, ferr := c.s.findPos(offset, c.end, &l.mu)
		if ferr != nil || !ok {
			// !ok: the offset is past this segment's data (or was
			// compacted away); the next segment has what follows.
			err = ferr
			c.s.release()
			continue
		}
		n, next, serr := c.s.spanBatches(pos, c.end, maxBytes, minOne, limit)
		if serr != nil {
			err = serr
			c.s.release()
			continue
		}
		if n == 0 {
			// The limit (last stable offset) comes first.
			c.s.release()
			done = true
			continue
		}
		out = Chunk{seg: c.s, Pos: pos, Len: n, Next: next}
	}
	if err != nil {
		out.Release()
		return Chunk{}, err
	}
	return out, nil
}

// spanBatches measures whole batches from pos up to end within maxBytes,
// stopping at the first batch at or after limit. It returns their size and
// the offset after the last one.
func (s *segment) spanBatches(pos, end, maxBytes int64, minOne bool, limit int64) (n, next int64, err error) {
	var buf [HeaderSize]byte
	for pos+n < end {
		h, err := s.readHeaderAt(pos+n, buf[:])
		if err != nil {
			return 0, 0, fmt.Errorf("segment %d: batch header at %d: %w", s.base, pos+n, err)
		}
		if h.BaseOffset >= limit {
			break
		}
		sz := int64(h.Size())
		if n+sz > maxBytes && !(n == 0 && minOne) {
			break
		}
		n += sz
		next = h.LastOffset() + 1
	}
	return n, next, nil
}

// OffsetForTimestamp returns the offset of the first batch whose max
// timestamp is at or after ts, and that batch's bytes so the caller can
// locate the exact record; -1 if there is none below the high watermark.
func (l *Log) OffsetForTimestamp(ts int64) (int64, []byte, error) {
	l.mu.Lock()
	segs := make([]*segment, 0, len(l.segments))
	ends := make([]int64, 0, len(l.segments))
	for _, s := range l.segments {
		end := s.size
		if s == l.hwmSeg {
			end = l.hwmPos
		}
		if s.maxTimestamp < ts && s != l.hwmSeg {
			continue
		}
		s.acquire()
		segs = append(segs, s)
		ends = append(ends, end)
		if s == l.hwmSeg {
			break
		}
	}
	logStart := l.logStart
	l.mu.Unlock()
	defer func() {
		for _, s := range segs {
			s.release()
		}
	}()
	var hdr [HeaderSize]byte
	for i, s := range segs {
		l.mu.Lock()
		var pos int64
		j := sort.Search(len(s.timeIndex), func(j int) bool { return s.timeIndex[j].ts >= ts })
		if j > 0 {
			pos = int64(s.timeIndex[j-1].pos)
		}
		l.mu.Unlock()
		for pos < ends[i] {
			h, err := s.readHeaderAt(pos, hdr[:])
			if err != nil {
				return -1, nil, fmt.Errorf("log: read batch header: %w", err)
			}
			if h.MaxTimestamp >= ts && h.LastOffset() >= logStart {
				b := make([]byte, h.Size())
				if _, err := s.f.ReadAt(b, pos); err != nil {
					return -1, nil, fmt.Errorf("log: read batch: %w", err)
				}
				return h.BaseOffset, b, nil
			}
			pos += int64(h.Size())
		}
	}
	return -1, nil, nil
}

// EnforceRetention deletes whole segments that are past retention.ms or that
// put the log over retention.bytes. The active segment is rolled first when it
// alone is past retention.ms and fully durable. It returns how many segments
// were deleted.
func (l *Log) EnforceRetention(now time.Time) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	nowMs := now.UnixMilli()
	expired := func(s *segment) bool {
		if l.cfg.RetentionAge < 0 {
			return false
		}
		ts := s.maxTimestamp
		if ts < 0 {
			ts = s.created.UnixMilli()
		}
		return nowMs-ts > l.cfg.RetentionAge.Milliseconds()
	}
	active := l.segments[len(l.segments)-1]
	if active.size > 0 && expired(active) && l.hwm == l.leo {
		if err := l.rollLocked(now); err != nil {
			return 0, err
		}
	}
	var total int64
	for _, s := range l.segments {
		total += s.size
	}
	deleted := 0
	var errs []error
	for len(l.segments) > 1 {
		s := l.segments[0]
		bySize := l.cfg.RetentionBytes >= 0 && total-s.size >= l.cfg.RetentionBytes
		if !expired(s) && !bySize {
			break
		}
		if s == l.hwmSeg || s.next > l.lastStableLocked() {
			break // readers stop at the high watermark; open transactions stay whole
		}
		l.segments = l.segments[1:]
		total -= s.size
		if err := s.remove(l.dir); err != nil {
			errs = append(errs, err)
		}
		deleted++
	}
	if deleted > 0 {
		if l.logStart < l.segments[0].base {
			l.logStart = l.segments[0].base
		}
		l.logger.Info("deleted segments past retention", "segments", deleted, "log_start_offset", l.logStart)
	}
	return deleted, errors.Join(errs...)
}

// Close flushes and closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var errs []error
	active := l.segments[len(l.segments)-1]
	if err := active.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("fsync on close: %w", err))
	}
	l.closed = true
	close(l.waitCh)
	l.closeFiles()
	return errors.Join(errs...)
}

func (l *Log) closeFiles() {
	for _, s := range l.segments {
		s.closeIndexFiles()
		if s.f != nil {
			s.release()
		}
	}
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.waitCh)
		l.closeFiles()
	}
	l.mu.Unlock()
	return os.RemoveAll(l.dir)
}

// MaxTimestamp returns the largest batch timestamp in the log, -1 if none.
func (l *Log) MaxTimestamp() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := int64(-1)
	for _, s := range l.segments {
		ts = max(ts, s.maxTimestamp)
	}
	return ts
}

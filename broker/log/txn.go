package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Transactions in the log (see docs/format/log.md):
//
//   - A transactional batch (attribute bit 4) of a producer with no open
//     transaction in this partition opens one at its base offset.
//   - A control batch (bits 4 and 5) is a commit or abort marker written by
//     the broker's transaction coordinator (AppendMarker); it closes the
//     producer's open transaction. An abort adds an entry (producer id,
//     first offset, last offset = the marker's offset) to the aborted
//     transaction index of the segment that holds the marker.
//   - The last stable offset (LSO) is the first offset of the oldest open
//     transaction, or the high watermark when there is none: read_committed
//     readers stop there.

// AbortedTxn is one aborted transaction of a partition: records of
// ProducerID in [FirstOffset, LastOffset] belong to it (LastOffset is the
// abort marker).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
	// LastStable is the partition's last stable offset once the marker was
	// written, kept for the index format's sake (Kafka stores it too).
	LastStable int64
}

// Marker types of control records.
const (
	markerAbort  int16 = 0
	markerCommit int16 = 1
)

// txnIndexEntrySize is the size of one aborted transaction index entry:
// version uint16, producer id, first offset, last offset, last stable
// offset (int64 each), CRC-32C of the preceding 34 bytes.
const txnIndexEntrySize = 2 + 8*4 + 4

const txnIndexVersion = 1

func encodeTxnEntry(dst []byte, a AbortedTxn) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, txnIndexVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.LastOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.LastStable))
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// decodeTxnIndex reads index entries up to the first bad one.
func decodeTxnIndex(b []byte) (entries []AbortedTxn, valid int) {
	for len(b)-valid >= txnIndexEntrySize {
		e := b[valid : valid+txnIndexEntrySize]
		if binary.BigEndian.Uint16(e) != txnIndexVersion ||
			binary.BigEndian.Uint32(e[34:]) != crc32.Checksum(e[:34], crcTable) {
			break
		}
		entries = append(entries, AbortedTxn{
			ProducerID:  int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset: int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:  int64(binary.BigEndian.Uint64(e[18:])),
			LastStable:  int64(binary.BigEndian.Uint64(e[26:])),
		})
		valid += txnIndexEntrySize
	}
	return entries, valid
}

// controlBatch encodes a commit or abort marker batch for a producer.
func controlBatch(pid int64, epoch int16, commit bool, ts int64) []byte {
	typ := markerAbort
	if commit {
		typ = markerCommit
	}
	var key, val [6]byte
	binary.BigEndian.PutUint16(key[0:], 0)
	binary.BigEndian.PutUint16(key[2:], uint16(typ))
	binary.BigEndian.PutUint16(val[0:], 0)
	binary.BigEndian.PutUint32(val[2:], 0) // coordinator epoch
	var rec []byte
	rec = append(rec, 0)             // attributes
	rec = kbin.AppendVarlong(rec, 0) // timestamp delta
	rec = kbin.AppendVarint(rec, 0)  // offset delta
	rec = kbin.AppendVarint(rec, 4)
	rec = append(rec, key[:4]...)
	rec = kbin.AppendVarint(rec, 6)
	rec = append(rec, val[:]...)
	rec = kbin.AppendVarint(rec, 0) // headers
	body := kbin.AppendVarint(nil, int32(len(rec)))
	body = append(body, rec...)
	b := make([]byte, HeaderSize, HeaderSize+len(body))
	binary.BigEndian.PutUint32(b[offLength:], uint32(HeaderSize-lengthOverhead+len(body)))
	b[offMagic] = 2
	binary.BigEndian.PutUint16(b[offAttributes:], 0x10|0x20)
	binary.BigEndian.PutUint64(b[offFirstTimestamp:], uint64(ts))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(pid))
	binary.BigEndian.PutUint16(b[offProducerEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], ^uint32(0))
	binary.BigEndian.PutUint32(b[offNumRecords:], 1)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], crcTable))
	return b
}

// ControlType returns the marker type of a complete control batch: true
// for commit.
func ControlType(batch []byte) (commit bool, err error) {
	if len(batch) < HeaderSize+1 {
		return false, fmt.Errorf("%w: control batch of %d bytes", ErrCorruptBatch, len(batch))
	}
	rd := kbin.Reader{Src: batch[HeaderSize:]}
	rd.Varint()  // record length
	rd.Int8()    // attributes
	rd.Varlong() // timestamp delta
	rd.Varint()  // offset delta
	n := rd.Varint()
	if n < 4 || rd.Complete() != nil || len(rd.Src) < 4 {
		return false, fmt.Errorf("%w: control record key", ErrCorruptBatch)
	}
	return int16(binary.BigEndian.Uint16(rd.Src[2:])) == markerCommit, nil
}

// txnState is what the log tracks of transactions while it appends or
// replays: the open transaction of each producer (in producerState) and the
// aborted transactions (per segment).
//
// noteTxn updates the producer state for a batch that is in the log; for a
// control batch commit says the marker type. It returns the aborted
// transaction the marker closes, if it is an abort of an open one.
func noteTxn(producers map[int64]*producerState, h *BatchHeader, commit bool) (AbortedTxn, bool) {
	if !h.IsTransactional() || h.ProducerID < 0 {
		return AbortedTxn{}, false
	}
	s := producers[h.ProducerID]
	if s == nil {
		s = &producerState{Epoch: h.ProducerEpoch}
		producers[h.ProducerID] = s
	}
	if !h.IsControl() {
		if s.TxnFirst == nil {
			first := h.BaseOffset
			s.TxnFirst = &first
		}
		return AbortedTxn{}, false
	}
	if h.ProducerEpoch > s.Epoch {
		s.Epoch = h.ProducerEpoch
		s.Batches = s.Batches[:0]
	}
	first := s.TxnFirst
	s.TxnFirst = nil
	if first == nil || commit {
		return AbortedTxn{}, false
	}
	return AbortedTxn{ProducerID: h.ProducerID, FirstOffset: *first, LastOffset: h.BaseOffset}, true
}

// firstUnstable returns the first offset of the oldest open transaction, or
// -1 when there is none.
func firstUnstable(producers map[int64]*producerState) int64 {
	lso := int64(-1)
	for _, s := range producers {
		if s.TxnFirst != nil && (lso < 0 || *s.TxnFirst < lso) {
			lso = *s.TxnFirst
		}
	}
	return lso
}

// lastStableLocked is the LSO: min(first unstable offset, high watermark),
// never below the log start.
func (l *Log) lastStableLocked() int64 {
	lso := l.hwm
	if fu := firstUnstable(l.producers); fu >= 0 && fu < lso {
		lso = fu
	}
	return max(lso, min(l.logStart, l.hwm))
}

// LastStable returns the last stable offset: read_committed consumers read
// below it only.
func (l *Log) LastStable() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastStableLocked()
}

// ErrMarkerEpoch is returned when a marker's producer epoch is older than
// the producer's current epoch in this partition.
var ErrMarkerEpoch = errors.New("log: marker epoch is older than the producer's")

// AppendMarker appends a commit or abort marker (control batch) for a
// producer's transaction, closing its open transaction in this partition;
// an abort of an open transaction is added to the aborted transaction
// index. Like Append, it is durable only after Sync.
func (l *Log) AppendMarker(pid int64, epoch int16, commit bool, now time.Time) (int64, error) {
	batch := controlBatch(pid, epoch, commit, now.UnixMilli())
	h, err := ParseHeader(batch)
	if err != nil {
		return -1, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return -1, ErrClosed
	}
	if l.syncErr != nil {
		return -1, fmt.Errorf("log: refusing writes after a failed fsync: %w", l.syncErr)
	}
	if s := l.producers[pid]; s != nil && epoch < s.Epoch {
		return -1, fmt.Errorf("%w: marker epoch %d, producer epoch %d", ErrMarkerEpoch, epoch, s.Epoch)
	}
	res, err := l.appendLocked(batch, h, now, nil)
	if err != nil {
		return -1, err
	}
	h.BaseOffset = res.BaseOffset
	if a, ok := noteTxn(l.producers, &h, commit); ok {
		a.LastStable = l.lastStableLocked()
		active := l.segments[len(l.segments)-1]
		if err := active.addAborted(a, true); err != nil {
			l.logger.Warn("aborted transaction index write failed; it is rebuilt on restart", "err", err)
		}
	}
	return res.BaseOffset, nil
}

// AbortedTxns returns the aborted transactions that overlap [from, to):
// those whose marker is at or after from and whose first offset is before
// to, ordered by first offset, without duplicates.
func (l *Log) AbortedTxns(from, to int64) []AbortedTxn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []AbortedTxn
	seen := map[[2]int64]bool{}
	for _, s := range l.segments {
		if s.next <= from && s != l.segments[len(l.segments)-1] {
			continue
		}
		for _, a := range s.aborted {
			if a.LastOffset < from || a.FirstOffset >= to {
				continue
			}
			k := [2]int64{a.ProducerID, a.FirstOffset}
			if !seen[k] {
				seen[k] = true
				out = append(out, a)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FirstOffset < out[j].FirstOffset })
	return out
}

// addAborted records an aborted transaction in the segment (and its index
// file when write is set).
func (s *segment) addAborted(a AbortedTxn, write bool) error {
	s.aborted = append(s.aborted, a)
	if !write || s.txnF == nil {
		return nil
	}
	if _, err := s.txnF.Write(encodeTxnEntry(nil, a)); err != nil {
		return fmt.Errorf("write aborted transaction index: %w", err)
	}
	return nil
}

// loadTxnIndex reads a closed segment's aborted transaction index. A missing
// file means no aborted transaction (segments written before transactions
// existed have none); a bad tail is dropped.
func (s *segment) loadTxnIndex(dir string, logger interface{ Warn(string, ...any) }) {
	b, err := os.ReadFile(segmentPath(dir, s.base, ".txnindex"))
	if err != nil {
		return
	}
	entries, valid := decodeTxnIndex(b)
	if valid != len(b) {
		logger.Warn("aborted transaction index has a bad tail; ignored", "segment", s.base, "valid_bytes", valid, "bytes", len(b))
	}
	s.aborted = entries
}

func (s *segment) encodeTxnIndex() []byte {
	out := make([]byte, 0, len(s.aborted)*txnIndexEntrySize)
	for _, a := range s.aborted {
		out = encodeTxnEntry(out, a)
	}
	return out
}

// readControlType reads the marker type of the control batch at pos.
func (s *segment) readControlType(pos int64, h *BatchHeader) (bool, error) {
	b := make([]byte, h.Size())
	if _, err := s.f.ReadAt(b, pos); err != nil {
		return false, fmt.Errorf("read control batch at %d: %w", pos, err)
	}
	return ControlType(b)
}

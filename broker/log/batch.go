package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Byte offsets of the fields of a v2 record batch header.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57

	// HeaderSize is the size of a v2 record batch header.
	HeaderSize = 61
	// lengthOverhead is what precedes the part counted by the length field.
	lengthOverhead = 12
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Errors returned for invalid batches; the broker maps them to Kafka codes.
var (
	ErrCorruptBatch     = errors.New("log: corrupt record batch")
	ErrUnsupportedMagic = errors.New("log: unsupported record batch magic (only v2 is supported)")
)

// BatchHeader is the decoded fixed header of a v2 record batch.
type BatchHeader struct {
	BaseOffset      int64
	Length          int32 // bytes after the length field
	LeaderEpoch     int32
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
}

// Size is the total size of the batch in bytes.
func (h *BatchHeader) Size() int { return int(h.Length) + lengthOverhead }

// LastOffset is the offset of the last record of the batch.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec of the batch (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (h *BatchHeader) Compression() int8 { return int8(h.Attributes & 0x07) }

// IsTransactional reports whether the batch belongs to a transaction.
func (h *BatchHeader) IsTransactional() bool { return h.Attributes&0x10 != 0 }

// IsControl reports whether the batch is a control batch (transaction marker).
func (h *BatchHeader) IsControl() bool { return h.Attributes&0x20 != 0 }

// ParseHeader decodes the header at the start of b. It checks only what can be
// checked without the whole batch.
func ParseHeader(b []byte) (BatchHeader, error) {
	if len(b) < HeaderSize {
		return BatchHeader{}, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	h := BatchHeader{
		BaseOffset:      int64(binary.BigEndian.Uint64(b[offBaseOffset:])),
		Length:          int32(binary.BigEndian.Uint32(b[offLength:])),
		LeaderEpoch:     int32(binary.BigEndian.Uint32(b[offLeaderEpoch:])),
		Magic:           int8(b[offMagic]),
		CRC:             binary.BigEndian.Uint32(b[offCRC:]),
		Attributes:      int16(binary.BigEndian.Uint16(b[offAttributes:])),
		LastOffsetDelta: int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:])),
		FirstTimestamp:  int64(binary.BigEndian.Uint64(b[offFirstTimestamp:])),
		MaxTimestamp:    int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])),
		ProducerID:      int64(binary.BigEndian.Uint64(b[offProducerID:])),
		ProducerEpoch:   int16(binary.BigEndian.Uint16(b[offProducerEpoch:])),
		BaseSequence:    int32(binary.BigEndian.Uint32(b[offBaseSequence:])),
		NumRecords:      int32(binary.BigEndian.Uint32(b[offNumRecords:])),
	}
	if h.Magic != 2 {
		return h, fmt.Errorf("%w (got magic %d)", ErrUnsupportedMagic, h.Magic)
	}
	if int(h.Length) < HeaderSize-lengthOverhead {
		return h, fmt.Errorf("%w: length %d is shorter than a batch header", ErrCorruptBatch, h.Length)
	}
	if h.LastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: negative last offset delta %d", ErrCorruptBatch, h.LastOffsetDelta)
	}
	return h, nil
}

// ValidateBatch checks a complete batch: header sanity, exact length and CRC-32C.
func ValidateBatch(b []byte) (BatchHeader, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size() != len(b) {
		return h, fmt.Errorf("%w: batch length field says %d bytes, have %d", ErrCorruptBatch, h.Size(), len(b))
	}
	if crc := crc32.Checksum(b[offAttributes:], crcTable); crc != h.CRC {
		return h, fmt.Errorf("%w: CRC-32C mismatch (stored %08x, computed %08x)", ErrCorruptBatch, h.CRC, crc)
	}
	if h.NumRecords < 0 || (h.NumRecords > 0 && int64(h.NumRecords) > int64(h.LastOffsetDelta)+1) {
		return h, fmt.Errorf("%w: %d records for last offset delta %d", ErrCorruptBatch, h.NumRecords, h.LastOffsetDelta)
	}
	return h, nil
}

// SplitBatches splits the records field of a Produce request (one or more
// concatenated batches) into batches, validating each.
func SplitBatches(b []byte) ([][]byte, []BatchHeader, error) {
	var out [][]byte
	var hdrs []BatchHeader
	for len(b) > 0 {
		if len(b) < HeaderSize {
			return nil, nil, fmt.Errorf("%w: %d trailing bytes", ErrCorruptBatch, len(b))
		}
		h, err := ParseHeader(b)
		if err != nil {
			return nil, nil, err
		}
		if h.Size() > len(b) {
			return nil, nil, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorruptBatch, h.Size(), len(b))
		}
		one := b[:h.Size()]
		if h, err = ValidateBatch(one); err != nil {
			return nil, nil, err
		}
		out = append(out, one)
		hdrs = append(hdrs, h)
		b = b[h.Size():]
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: no record batch", ErrCorruptBatch)
	}
	return out, hdrs, nil
}

// stampBaseOffset writes the base offset and leader epoch into a batch in
// place; neither is covered by the CRC.
func stampBaseOffset(b []byte, base int64, epoch int32) {
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(base))
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(epoch))
}

package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kbin"
)

// Record is one record of a batch, with its absolute offset and timestamp.
// Key and Value alias the decompressed batch body.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value (a tombstone)
	// Raw is the whole encoded record, length prefix included. Its offset
	// and timestamp are deltas from the batch's base offset and first
	// timestamp, so it can be copied into another batch with the same base.
	Raw []byte
}

// Decompressor decodes batch bodies; it holds reusable zstd state and is not
// safe for concurrent use.
type Decompressor struct {
	// Max bounds what one compressed batch may expand to; default
	// MaxDecompressedBatch.
	Max  int
	zstd *zstd.Decoder
}

func (d *Decompressor) max() int {
	if d.Max > 0 {
		return d.Max
	}
	return MaxDecompressedBatch
}

// Records decodes the records of a complete v2 batch. Control batches yield
// their marker record like any other.
func (d *Decompressor) Records(batch []byte) ([]Record, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	if len(batch) < h.Size() {
		return nil, fmt.Errorf("%w: truncated batch", ErrCorruptBatch)
	}
	body := batch[HeaderSize:h.Size()]
	if c := h.Compression(); c != 0 {
		if body, err = d.decompress(c, body); err != nil {
			return nil, fmt.Errorf("%w: decompress: %v", ErrCorruptBatch, err)
		}
	}
	if h.NumRecords < 0 {
		return nil, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
	}
	// The count comes from the batch: bound the allocation by what the body
	// can hold (a record takes at least 7 bytes), not by the claim.
	out := make([]Record, 0, min(int(h.NumRecords), len(body)/7+1))
	r := kbin.Reader{Src: body}
	for i := int32(0); i < h.NumRecords; i++ {
		rawStart := len(body) - len(r.Src)
		length := r.Varint()
		start := len(r.Src)
		_ = r.Int8() // attributes
		tsDelta := r.Varlong()
		offDelta := r.Varint()
		var key, val []byte
		if kl := r.Varint(); kl >= 0 {
			key = r.Span(int(kl))
		}
		if vl := r.Varint(); vl >= 0 {
			val = r.Span(int(vl))
		}
		// Headers: each takes at least two bytes, and a header key is
		// never null (Kafka refuses both, too).
		n := r.Varint()
		if n < 0 || int64(n) > int64(len(r.Src)/2) {
			return nil, fmt.Errorf("%w: record %d claims %d headers in %d bytes", ErrCorruptBatch, i, n, len(r.Src))
		}
		for ; n > 0; n-- {
			kl := r.Varint()
			if kl < 0 {
				return nil, fmt.Errorf("%w: record %d has a header key of length %d", ErrCorruptBatch, i, kl)
			}
			r.Span(int(kl))
			if vl := r.Varint(); vl > 0 {
				r.Span(int(vl))
			}
		}
		if r.Complete() != nil || int32(start-len(r.Src)) != length {
			return nil, fmt.Errorf("%w: record %d is malformed", ErrCorruptBatch, i)
		}
		raw := body[rawStart : len(body)-len(r.Src)]
		out = append(out, Record{Offset: h.BaseOffset + int64(offDelta), Timestamp: h.FirstTimestamp + tsDelta, Key: key, Value: val, Raw: raw})
	}
	return out, nil
}

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// MaxDecompressedBatch is the default bound on what one compressed batch
// may expand to, so that a small crafted batch cannot make the broker
// allocate without limit.
const MaxDecompressedBatch = 256 << 20

// errTooLarge is returned for a batch that expands beyond the bound.
var errTooLarge = errors.New("decompressed batch too large")

// readLimited reads r to the end, refusing more than max bytes.
func readLimited(r io.Reader, max int) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err == nil && len(out) > max {
		return nil, fmt.Errorf("%w (over %d bytes)", errTooLarge, max)
	}
	return out, err
}

// s2Decode decodes one snappy block after checking its claimed length.
func s2Decode(in []byte, budget int) ([]byte, error) {
	n, err := s2.DecodedLen(in)
	if err != nil {
		return nil, err
	}
	if n > budget {
		return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, n)
	}
	return s2.Decode(nil, in)
}

func (d *Decompressor) decompress(codec int8, in []byte) ([]byte, error) {
	switch codec {
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(in))
		if err != nil {
			return nil, err
		}
		return readLimited(zr, d.max())
	case 2:
		if bytes.HasPrefix(in, xerialMagic) && len(in) >= 16 {
			// Xerial framing, as the Java client writes it.
			var out []byte
			for in = in[16:]; len(in) > 0; {
				if len(in) < 4 {
					return nil, fmt.Errorf("xerial chunk header truncated")
				}
				n := int(binary.BigEndian.Uint32(in))
				if n < 0 || n > len(in)-4 {
					return nil, fmt.Errorf("xerial chunk of %d bytes truncated", n)
				}
				chunk, err := s2Decode(in[4:4+n], d.max()-len(out))
				if err != nil {
					return nil, err
				}
				out = append(out, chunk...)
				in = in[4+n:]
			}
			return out, nil
		}
		return s2Decode(in, d.max())
	case 3:
		return readLimited(lz4.NewReader(bytes.NewReader(in)), d.max())
	case 4:
		if d.zstd == nil {
			dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(d.max())))
			if err != nil {
				return nil, err
			}
			d.zstd = dec
		}
		return d.zstd.DecodeAll(in, nil)
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// Close frees the decoder state.
func (d *Decompressor) Close() {
	if d.zstd != nil {
		d.zstd.Close()
	}
}

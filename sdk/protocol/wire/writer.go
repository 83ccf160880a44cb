package wire

import (
	"encoding/binary"
	"errors"
	"math"
)

// A ValueWriter builds schemaless values in the wire encoding piece by
// piece, as a streaming parser reads them (a converter turning JSON
// straight into the encoding a plugin receives), and hands each out as a
// *Raw that an Encoder copies into a batch as it is. Values are written
// one after the other into shared chunks: a Raw keeps its chunk alive. The
// zero value is ready to use; a ValueWriter is not safe for concurrent
// use.
//
// A value is written with Begin, then its pieces (a scalar, or a
// container's BeginArray/BeginMap, its elements — each map entry a Key
// then a value — and End), then Finish. Containers nest at most 64 deep,
// the wire encoding's limit.
type ValueWriter struct {
	buf     []byte // the current chunk; len is what is used
	start   int
	written int // bytes written since the last Reuse
	open    []openContainer
	err     error
}

type openContainer struct {
	at    int // position of the count's first byte
	count uint64
}

// valueChunk is the size of the chunks values are written to.
const valueChunk = 64 << 10

// ErrTooDeep is returned by Finish when containers nested deeper than the
// wire encoding allows.
var ErrTooDeep = errors.New("wire: value nested too deeply")

// maxReusedChunk bounds the chunk Reuse keeps.
const maxReusedChunk = 16 << 20

// Begin starts a value expected to take about size bytes (a chunk with
// less room left is set aside; a larger value still fits, at the cost of
// copying).
func (w *ValueWriter) Begin(size int) {
	if cap(w.buf)-len(w.buf) < size {
		w.buf = make([]byte, 0, max(valueChunk, size))
	}
	w.start, w.open, w.err = len(w.buf), w.open[:0], nil
}

// Reuse lets the writer write over the memory of the values it returned:
// call it once none of them is used any more (an Encoder has copied them).
// The chunk it keeps is sized to what was written since the last Reuse,
// so that a steady flow of batches writes into one chunk without
// allocating.
func (w *ValueWriter) Reuse() {
	switch n := w.written; {
	case n > cap(w.buf) && n <= maxReusedChunk:
		w.buf = make([]byte, 0, n+n/4)
	case cap(w.buf) > maxReusedChunk:
		w.buf = nil
	default:
		w.buf = w.buf[:0]
	}
	w.written = 0
}

// element counts a value in its container; a value deeper than the
// decoder reads is an error.
func (w *ValueWriter) element() {
	if n := len(w.open); n > 0 {
		w.open[n-1].count++
		if n > maxDepth {
			w.err = ErrTooDeep
		}
	}
}

// Null writes a null.
func (w *ValueWriter) Null() { w.element(); w.buf = append(w.buf, tagNull) }

// Bool writes a boolean.
func (w *ValueWriter) Bool(b bool) {
	w.element()
	if b {
		w.buf = append(w.buf, tagTrue)
	} else {
		w.buf = append(w.buf, tagFalse)
	}
}

// Int64 writes an INT64.
func (w *ValueWriter) Int64(v int64) {
	w.element()
	w.buf = binary.AppendVarint(append(w.buf, tagInt64), v)
}

// Float64 writes a FLOAT64.
func (w *ValueWriter) Float64(f float64) {
	w.element()
	w.buf = binary.LittleEndian.AppendUint64(append(w.buf, tagFloat64), math.Float64bits(f))
}

// String writes a STRING of the UTF-8 bytes s (copied).
func (w *ValueWriter) String(s []byte) {
	w.element()
	w.buf = binary.AppendUvarint(append(w.buf, tagString), uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// Key writes the key of the next map entry; its value follows.
func (w *ValueWriter) Key(k []byte) {
	w.buf = binary.AppendUvarint(w.buf, uint64(len(k)))
	w.buf = append(w.buf, k...)
}

// BeginArray opens an array; End closes it.
func (w *ValueWriter) BeginArray() { w.begin(tagArray) }

// BeginMap opens a map with string keys; End closes it.
func (w *ValueWriter) BeginMap() { w.begin(tagStringMap) }

func (w *ValueWriter) begin(tag byte) {
	w.element()
	// One byte is reserved for the count, which End writes (and widens,
	// moving the elements, past 127).
	w.buf = append(w.buf, tag, 0)
	w.open = append(w.open, openContainer{at: len(w.buf) - 1})
}

// End closes the innermost array or map.
func (w *ValueWriter) End() {
	c := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	var enc [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(enc[:], c.count)
	if n > 1 {
		w.buf = append(w.buf, enc[:n-1]...) // room
		copy(w.buf[c.at+n:], w.buf[c.at+1:len(w.buf)-(n-1)])
	}
	copy(w.buf[c.at:], enc[:n])
}

// Discard drops the value begun last, for a writer that gave up on it.
func (w *ValueWriter) Discard() {
	w.buf, w.open, w.err = w.buf[:w.start], w.open[:0], nil
}

// Finish ends the value begun last and returns it; the error reports an
// unfinished value or one nested too deeply.
func (w *ValueWriter) Finish() (*Raw, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.open) > 0 {
		return nil, errors.New("wire: value has unclosed containers")
	}
	if len(w.buf) == w.start {
		return nil, errors.New("wire: no value written")
	}
	data := w.buf[w.start:len(w.buf):len(w.buf)]
	w.written += len(data)
	// Decoded strings are copied: the chunk is written over after Reuse.
	return &Raw{data: data}, nil
}

package task

import (
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// convBuf hands out source records' serialized keys and values from shared
// chunks, so that a batch costs a few large allocations instead of a
// growing buffer per record and field. The producer keeps each record's
// bytes until it is acknowledged; a chunk is garbage once all its records
// are. Not safe for concurrent use: it belongs to the poll loop.
type convBuf struct {
	chunk []byte
	last  int // size of the previous conversion, to predict the next
	// mayAlias is set once a conversion's result came from FromConnect
	// as is: it may share memory with the value converted (a []byte value
	// through a ByteArrayConverter, say). Appended results never do.
	mayAlias bool
}

const (
	convChunk = 64 << 10 // default chunk size
	// Records predicted larger than this get an allocation of their own.
	convChunkMaxRecord = 16 << 10
)

func (b *convBuf) convert(c convert.Converter, topic string, s *schema.Schema, v any) ([]byte, error) {
	ap, ok := c.(convert.Appender)
	if !ok || b.last > convChunkMaxRecord {
		out, err := c.FromConnect(topic, s, v)
		b.last = len(out)
		b.mayAlias = true
		return out, err
	}
	if cap(b.chunk)-len(b.chunk) < 2*b.last+64 {
		b.chunk = make([]byte, 0, convChunk)
	}
	start := len(b.chunk)
	out, null, err := ap.AppendFromConnect(b.chunk, topic, s, v)
	if err != nil || null {
		return nil, err
	}
	// When the record outgrew the chunk, out is a new array: the records
	// handed out before keep the old one, and the next ones use out.
	b.chunk = out
	rec := out[start:len(out):len(out)]
	b.last = len(rec)
	return rec, nil
}

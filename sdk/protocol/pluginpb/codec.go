package pluginpb

import (
	"sync/atomic"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Codec is gRPC's proto codec with shortcuts for the two messages that
// carry record batches, SourcePluginMessage{batch} (plugin to host) and
// SinkHostMessage{put} (host to plugin). Every other message goes through
// the proto codec unchanged, and the bytes on the wire are the same either
// way.
//
// Sending, the batch's Records are not copied: Marshal writes the few bytes
// of message header and hands Records itself to gRPC, which returns the
// buffer to the codec (see Buffer) once it is written to the connection.
// The proto codec would clear a pooled buffer and copy the batch into it.
// The caller must therefore not touch Records after sending a batch of at
// least [mem.IsBelowBufferPoolingThreshold]'s size.
//
// Receiving, the message is gathered into a buffer of its own and Records
// aliases it, where the proto codec gathers it into a pooled buffer and then
// copies Records out. The buffer belongs to the message alone and is never
// modified, so records decoded from it may alias it too, until the
// receiver hands a batch's Records back with Recycle: the buffer then
// gathers a later SourcePluginMessage.
//
// Use one Codec per stream (grpc.ForceCodecV2 on the host, a server option
// in the plugin); it is safe for concurrent use.
type Codec struct {
	proto encoding.CodecV2 // the registered "proto" codec
	// bufs holds sent batches' buffers that gRPC is done with. A small
	// channel rather than a sync.Pool: a pool is emptied by every garbage
	// collection, which a plugin under its memory limit runs often, and
	// then each batch grows a fresh megabyte buffer from nothing. Two are
	// enough to alternate: the one being encoded and the one in flight.
	bufs chan *[]byte
	// recycled holds received batches' buffers handed back with Recycle;
	// recycling is set by the first Recycle.
	recycled  chan []byte
	recycling atomic.Bool
}

// NewCodec returns a Codec.
func NewCodec() *Codec {
	return &Codec{proto: encoding.GetCodecV2("proto"), bufs: make(chan *[]byte, 2), recycled: make(chan []byte, 2)}
}

// Recycle hands back the Records of a received SourcePluginMessage batch,
// exactly as Unmarshal set them, once nothing refers to their memory any
// more (nor to anything decoded from them that aliases it): a later batch
// is gathered into the same memory instead of a new buffer, which the
// runtime would clear first.
func (c *Codec) Recycle(records []byte) {
	c.recycling.Store(true)
	select {
	case c.recycled <- records[:0:cap(records)]:
	default: // enough spare buffers: let this one go
	}
}

// ReceiveBuffer returns a buffer of n bytes to gather a received batch
// into (Unmarshal does, and so does a receiver copying a batch out of
// shared memory): a recycled one when one is large enough. Once the receiver
// recycles, a new one has an eighth more room, so that it can take a batch
// a little larger than this one (a recycled buffer also loses the bytes of
// message header before its Records).
func (c *Codec) ReceiveBuffer(n int) []byte {
	if !c.recycling.Load() {
		return make([]byte, n)
	}
	select {
	case b := <-c.recycled:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n, n+n/8+64)
}

// Name is "proto": the codec speaks protobuf, as the content type says.
func (c *Codec) Name() string { return "proto" }

// Buffer returns an empty buffer of at least size bytes' capacity to encode
// the next batch into, reusing one whose send has completed when it can.
// A new buffer has a quarter more room, so that a batch a little larger
// than size does not regrow it.
func (c *Codec) Buffer(size int) []byte {
	select {
	case b := <-c.bufs:
		if cap(*b) >= size {
			return (*b)[:0]
		}
	default:
	}
	return make([]byte, 0, size+size/4)
}

// Get implements mem.BufferPool; gRPC calls only Put on the pool of a
// buffer it did not allocate.
func (c *Codec) Get(n int) *[]byte {
	b := make([]byte, n)
	return &b
}

// Put implements mem.BufferPool: gRPC is done with a sent batch.
func (c *Codec) Put(b *[]byte) {
	select {
	case c.bufs <- b:
	default: // enough spare buffers: let this one go
	}
}

// Field numbers in plugin.proto.
const (
	sourcePluginMessageBatch = 2 // SourcePluginMessage.batch
	sinkHostMessagePut       = 2 // SinkHostMessage.put
	putID                    = 1 // Put.id
	putBatch                 = 2 // Put.batch
	putRewindsApplied        = 3 // Put.rewinds_applied
	recordBatchCount         = 1 // RecordBatch.count
	recordBatchRecords       = 2 // RecordBatch.records
)

// Marshal implements encoding.CodecV2.
func (c *Codec) Marshal(v any) (mem.BufferSlice, error) {
	var hdr, recs, trailer []byte
	switch m := v.(type) {
	case *SourcePluginMessage:
		b := m.GetBatch()
		if b == nil || mem.IsBelowBufferPoolingThreshold(len(b.Records)) {
			return c.proto.Marshal(v)
		}
		recs = b.Records
		inner := batchHeader(nil, b)
		hdr = protowire.AppendTag(make([]byte, 0, len(inner)+16), sourcePluginMessageBatch, protowire.BytesType)
		hdr = protowire.AppendVarint(hdr, uint64(len(inner)+len(recs)))
		hdr = append(hdr, inner...)
	case *SinkHostMessage:
		p := m.GetPut()
		b := p.GetBatch()
		if b == nil || mem.IsBelowBufferPoolingThreshold(len(b.Records)) {
			return c.proto.Marshal(v)
		}
		recs = b.Records
		var put []byte
		if p.Id != 0 {
			put = protowire.AppendTag(put, putID, protowire.VarintType)
			put = protowire.AppendVarint(put, p.Id)
		}
		inner := batchHeader(nil, b)
		put = protowire.AppendTag(put, putBatch, protowire.BytesType)
		put = protowire.AppendVarint(put, uint64(len(inner)+len(recs)))
		put = append(put, inner...)
		if p.RewindsApplied != 0 { // after the batch, in field order
			trailer = protowire.AppendTag(trailer, putRewindsApplied, protowire.VarintType)
			trailer = protowire.AppendVarint(trailer, p.RewindsApplied)
		}
		hdr = protowire.AppendTag(make([]byte, 0, len(put)+16), sinkHostMessagePut, protowire.BytesType)
		hdr = protowire.AppendVarint(hdr, uint64(len(put)+len(recs)+len(trailer)))
		hdr = append(hdr, put...)
	default:
		return c.proto.Marshal(v)
	}
	out := mem.BufferSlice{mem.SliceBuffer(hdr), mem.NewBuffer(&recs, c)}
	if len(trailer) > 0 {
		out = append(out, mem.SliceBuffer(trailer))
	}
	return out, nil
}

// batchHeader appends b's encoding up to the bytes of its records, which
// are its last field.
func batchHeader(dst []byte, b *RecordBatch) []byte {
	if b.Count != 0 {
		dst = protowire.AppendTag(dst, recordBatchCount, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(b.Count))
	}
	dst = protowire.AppendTag(dst, recordBatchRecords, protowire.BytesType)
	return protowire.AppendVarint(dst, uint64(len(b.Records)))
}

// Unmarshal implements encoding.CodecV2.
func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if mem.IsBelowBufferPoolingThreshold(data.Len()) {
		return c.proto.Unmarshal(data, v)
	}
	switch m := v.(type) {
	case *SourcePluginMessage:
		buf := c.ReceiveBuffer(data.Len())
		data.CopyTo(buf)
		if b, ok := parseSourceBatch(buf); ok {
			// When Records end the message (as Marshal writes it), give
			// them the buffer's spare room, so that Recycle gets the
			// memory whole back.
			if n := len(b.Records); n > 0 && &b.Records[n-1] == &buf[len(buf)-1] {
				b.Records = buf[len(buf)-n : len(buf) : cap(buf)]
			}
			proto.Reset(m)
			m.Msg = &SourcePluginMessage_Batch{Batch: b}
			return nil
		}
		return proto.Unmarshal(buf, m)
	case *SinkHostMessage:
		buf := data.Materialize()
		if p, ok := parseSinkPut(buf); ok {
			proto.Reset(m)
			m.Msg = &SinkHostMessage_Put{Put: p}
			return nil
		}
		return proto.Unmarshal(buf, m)
	}
	return c.proto.Unmarshal(data, v)
}

// parseSourceBatch parses a SourcePluginMessage holding nothing but a batch;
// ok is false for anything else.
func parseSourceBatch(buf []byte) (*RecordBatch, bool) {
	inner, ok := onlyField(buf, sourcePluginMessageBatch)
	if !ok {
		return nil, false
	}
	return parseRecordBatch(inner)
}

// parseSinkPut parses a SinkHostMessage holding nothing but a put; ok is
// false for anything else.
func parseSinkPut(buf []byte) (*Put, bool) {
	inner, ok := onlyField(buf, sinkHostMessagePut)
	if !ok {
		return nil, false
	}
	p := &Put{}
	ok = fields(inner, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) bool {
		switch {
		case num == putID && typ == protowire.VarintType:
			p.Id = v
		case num == putRewindsApplied && typ == protowire.VarintType:
			p.RewindsApplied = v
		case num == putBatch && typ == protowire.BytesType && p.Batch == nil:
			var ok bool
			p.Batch, ok = parseRecordBatch(b)
			return ok
		default:
			return false
		}
		return true
	})
	return p, ok
}

// onlyField returns the contents of buf's length-delimited field num when
// buf holds that field and nothing else.
func onlyField(buf []byte, num protowire.Number) ([]byte, bool) {
	got, typ, n := protowire.ConsumeTag(buf)
	if n < 0 || got != num || typ != protowire.BytesType {
		return nil, false
	}
	inner, m := protowire.ConsumeBytes(buf[n:])
	if m < 0 || n+m != len(buf) {
		return nil, false
	}
	return inner, true
}

func parseRecordBatch(inner []byte) (*RecordBatch, bool) {
	b := &RecordBatch{}
	ok := fields(inner, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) bool {
		switch {
		case num == recordBatchCount && typ == protowire.VarintType:
			b.Count = uint32(v)
		case num == recordBatchRecords && typ == protowire.BytesType:
			b.Records = bs[:len(bs):len(bs)]
		default:
			return false
		}
		return true
	})
	return b, ok
}

// fields calls fn with each field of the message encoded in buf: its
// number and type, and its value (v for a varint, b for bytes). It reports
// false when buf does not parse, holds a field of another wire type, or fn
// refuses a field: the caller then leaves the message to the proto codec.
func fields(buf []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, b []byte) bool) bool {
	for len(buf) > 0 {
		num, typ, n := protowire.ConsumeTag(buf)
		if n < 0 {
			return false
		}
		buf = buf[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(buf)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(buf)
		default:
			return false
		}
		if n < 0 || !fn(num, typ, v, b) {
			return false
		}
		buf = buf[n:]
	}
	return true
}

package plugins

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tributary-dev/tributary/plugins/pluginpb"
)

// sourceCodec is gRPC's proto codec, except that it receives a source
// plugin's record batch with a single copy of its records: the message is
// gathered into a buffer of its own and the batch's Records alias it, where
// the proto codec gathers it into a pooled buffer and then copies Records
// out of it. The buffer belongs to the message alone and is never modified,
// so the decoded records may alias it too (see hostSourceTask.dec). Every
// other message, and any batch message that is not exactly a batch with
// known fields, is unmarshalled by the proto codec.
type sourceCodec struct {
	encoding.CodecV2 // the registered "proto" codec
}

func newSourceCodec() sourceCodec {
	return sourceCodec{encoding.GetCodecV2("proto")}
}

// Field numbers in plugin.proto.
const (
	sourcePluginMessageBatch = 2 // SourcePluginMessage.batch
	recordBatchCount         = 1 // RecordBatch.count
	recordBatchRecords       = 2 // RecordBatch.records
)

func (c sourceCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*pluginpb.SourcePluginMessage)
	if !ok || mem.IsBelowBufferPoolingThreshold(data.Len()) {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.Materialize()
	if b, ok := parseRecordBatchMessage(buf); ok {
		proto.Reset(m)
		m.Msg = &pluginpb.SourcePluginMessage_Batch{Batch: b}
		return nil
	}
	return proto.Unmarshal(buf, m)
}

// parseRecordBatchMessage parses a SourcePluginMessage holding nothing but
// a batch; ok is false for anything else.
func parseRecordBatchMessage(buf []byte) (b *pluginpb.RecordBatch, ok bool) {
	num, typ, n := protowire.ConsumeTag(buf)
	if n < 0 || num != sourcePluginMessageBatch || typ != protowire.BytesType {
		return nil, false
	}
	inner, m := protowire.ConsumeBytes(buf[n:])
	if m < 0 || n+m != len(buf) {
		return nil, false
	}
	b = &pluginpb.RecordBatch{}
	for len(inner) > 0 {
		num, typ, n := protowire.ConsumeTag(inner)
		if n < 0 {
			return nil, false
		}
		inner = inner[n:]
		switch {
		case num == recordBatchCount && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(inner)
			if n < 0 {
				return nil, false
			}
			b.Count = uint32(v)
			inner = inner[n:]
		case num == recordBatchRecords && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(inner)
			if n < 0 {
				return nil, false
			}
			b.Records = v[:len(v):len(v)]
			inner = inner[n:]
		default:
			return nil, false
		}
	}
	return b, true
}

package pluginpb

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

func testMessages() []proto.Message {
	big := make([]byte, 4<<10) // above gRPC's pooling threshold (1 KiB)
	for i := range big {
		big[i] = byte(i)
	}
	return []proto.Message{
		&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Count: 7, Records: big}}},
		&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Records: big}}},
		&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Count: 1, Records: []byte{1}}}},
		&SourcePluginMessage{Msg: &SourcePluginMessage_Started{Started: &Started{}}},
		&SourcePluginMessage{Msg: &SourcePluginMessage_Failure{Failure: &Failure{Message: strings.Repeat("x", 4<<10)}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Put{Put: &Put{Id: 300, Batch: &RecordBatch{Count: 1 << 20, Records: big}}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Put{Put: &Put{Id: 301, Batch: &RecordBatch{Count: 3, Records: big}, RewindsApplied: 1 << 40}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Put{Put: &Put{Batch: &RecordBatch{Count: 2, Records: big}}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Put{Put: &Put{Id: 1, Batch: &RecordBatch{Count: 2, Records: big[:10]}}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Put{Put: &Put{Id: 1}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Stop{Stop: &Stop{}}},
		&SinkHostMessage{Msg: &SinkHostMessage_Start{Start: &TaskStart{Class: "C", Config: map[string]string{"k": strings.Repeat("v", 4<<10)}}}},
		&TaskConfigs{Configs: []*TaskConfig{{Values: map[string]string{"a": "b"}}}},
	}
}

// TestCodecMarshalMatchesProto: the codec's shortcut writes the bytes the
// proto codec writes.
func TestCodecMarshalMatchesProto(t *testing.T) {
	c := NewCodec()
	for i, m := range testMessages() {
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := c.Marshal(m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got := bs.Materialize()
		if !bytes.Equal(got, want) {
			t.Errorf("message %d (%T): codec wrote %d bytes, proto %d", i, m, len(got), len(want))
		}
		// Freeing a sent batch returns its records to the codec.
		bs.Free()
	}
}

// TestCodecUnmarshalMatchesProto: the shortcut reads what proto reads, and
// anything it does not know exactly (here a trailing unknown field) falls
// back to proto.
func TestCodecUnmarshalMatchesProto(t *testing.T) {
	c := NewCodec()
	for i, want := range testMessages() {
		b, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		for _, buf := range [][]byte{b, append(append([]byte(nil), b...), 0x78, 0x01)} {
			got := want.ProtoReflect().New().Interface()
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(buf)}, got); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			ref := want.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(buf, ref); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, ref) {
				t.Errorf("message %d: codec gave %v, proto %v", i, got, ref)
			}
		}
	}
}

// TestCodecSendOwnership: a batch's records go to gRPC uncopied and come
// back through Buffer once freed.
func TestCodecSendOwnership(t *testing.T) {
	c := NewCodec()
	recs := make([]byte, 64<<10)
	bs, err := c.Marshal(&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Count: 1, Records: recs}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || &bs[1].ReadOnlyData()[0] != &recs[0] {
		t.Fatal("records were copied")
	}
	bs.Free()
	if b := c.Buffer(100); cap(b) != cap(recs) || len(b) != 0 {
		t.Errorf("Buffer after free: len %d cap %d, want the sent buffer (cap %d) emptied", len(b), cap(b), cap(recs))
	}
	if b := c.Buffer(100); cap(b) < 100 {
		t.Errorf("Buffer(100) with none spare has cap %d", cap(b))
	}
}

// FuzzCodecUnmarshal: arbitrary bytes give the proto codec's answer. The
// shortcut is taken only above gRPC's pooling threshold, which the large
// seeds are.
func FuzzCodecUnmarshal(f *testing.F) {
	for _, m := range testMessages() {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	c := NewCodec()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, typ := range []proto.Message{&SourcePluginMessage{}, &SinkHostMessage{}} {
			got := typ.ProtoReflect().New().Interface()
			ref := typ.ProtoReflect().New().Interface()
			errGot := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
			errRef := proto.Unmarshal(b, ref)
			if (errGot == nil) != (errRef == nil) {
				t.Fatalf("%T: codec error %v, proto error %v", typ, errGot, errRef)
			}
			if errRef == nil && !proto.Equal(got, ref) {
				t.Fatalf("%T: codec gave %v, proto %v", typ, got, ref)
			}
		}
	})
}

// TestCodecRecycle: a received batch's memory gathers a later batch once
// recycled, never before, and a smaller recycled buffer is not used for a
// larger batch.
func TestCodecRecycle(t *testing.T) {
	c := NewCodec()
	var msg []byte // the last batch's message bytes
	batch := func(size int, fill byte) ([]byte, mem.BufferSlice) {
		recs := bytes.Repeat([]byte{fill}, size)
		b, err := proto.Marshal(&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Count: 1, Records: recs}}})
		if err != nil {
			t.Fatal(err)
		}
		msg = b
		// gRPC hands over a message in chunks.
		return recs, mem.BufferSlice{mem.SliceBuffer(b[:len(b)/2]), mem.SliceBuffer(b[len(b)/2:])}
	}
	receive := func(data mem.BufferSlice) []byte {
		var m SourcePluginMessage
		if err := c.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m.GetBatch().GetRecords()
	}
	_, d1 := batch(8<<10, 'a')
	first := receive(d1)
	c.Recycle(first) // exactly sized, received before recycling began: too small to reuse
	want2, d2 := batch(8<<10, 'b')
	second := receive(d2)
	if !bytes.Equal(second, want2) {
		t.Fatal("second batch corrupted")
	}
	want3, d3 := batch(8<<10, 'c')
	third := receive(d3) // second not recycled: new memory
	if !bytes.Equal(second, want2) {
		t.Fatal("a batch not recycled was written over")
	}
	c.Recycle(second)
	want4, d4 := batch(8<<10, 'd')
	fourth := receive(d4)
	// The fourth message was gathered where second's records began.
	if !bytes.Equal(second, msg[:len(second)]) {
		t.Fatal("the recycled buffer was not reused")
	}
	if !bytes.Equal(third, want3) || !bytes.Equal(fourth, want4) {
		t.Fatal("received batches corrupted")
	}
	c.Recycle(fourth)
	want5, d5 := batch(64<<10, 'e') // larger than the recycled buffer
	if fifth := receive(d5); !bytes.Equal(fifth, want5) {
		t.Fatal("a batch larger than the recycled buffer corrupted")
	}
}

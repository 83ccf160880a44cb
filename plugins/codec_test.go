package plugins

import (
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/tributary-dev/tributary/plugins/pluginpb"
)

func TestSourceCodecMatchesProto(t *testing.T) {
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i)
	}
	msgs := []*pluginpb.SourcePluginMessage{
		{Msg: &pluginpb.SourcePluginMessage_Batch{Batch: &pluginpb.RecordBatch{Count: 7, Records: big}}},
		{Msg: &pluginpb.SourcePluginMessage_Batch{Batch: &pluginpb.RecordBatch{Records: big}}},
		{Msg: &pluginpb.SourcePluginMessage_Batch{Batch: &pluginpb.RecordBatch{Count: 1, Records: []byte{1}}}},
		{Msg: &pluginpb.SourcePluginMessage_Started{Started: &pluginpb.Started{}}},
		{Msg: &pluginpb.SourcePluginMessage_Failure{Failure: &pluginpb.Failure{Message: strings.Repeat("x", 64<<10)}}},
	}
	c := newSourceCodec()
	for i, want := range msgs {
		b, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		// A trailing unknown field must make the codec fall back to proto.
		for _, buf := range [][]byte{b, append(append([]byte(nil), b...), 0x78, 0x01)} {
			got := &pluginpb.SourcePluginMessage{}
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(buf)}, got); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			ref := &pluginpb.SourcePluginMessage{}
			if err := proto.Unmarshal(buf, ref); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, ref) {
				t.Errorf("message %d: codec gave %v, proto %v", i, got, ref)
			}
		}
	}
}

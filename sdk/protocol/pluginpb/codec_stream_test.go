package pluginpb

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// streamServer sends count batches of a source task, each encoded into a
// buffer from the codec (as the SDK does), and answers nothing else.
type streamServer struct {
	UnimplementedPluginServer
	codec   *Codec
	batches int
}

// batchBytes fills buf with a batch whose every 8-byte word is its
// sequence number, so that a receiver can tell a buffer reused too early.
func batchBytes(buf []byte, seq, size int) []byte {
	buf = buf[:0]
	for len(buf) < size {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(seq))
	}
	return buf
}

func (s *streamServer) RunSourceTask(stream grpc.BidiStreamingServer[SourceHostMessage, SourcePluginMessage]) error {
	var last int
	for i := range s.batches {
		recs := batchBytes(s.codec.Buffer(last), i, 64<<10+8*(i%7))
		last = len(recs)
		if err := stream.Send(&SourcePluginMessage{Msg: &SourcePluginMessage_Batch{Batch: &RecordBatch{Count: uint32(i), Records: recs}}}); err != nil {
			return err
		}
		// recs now belongs to gRPC; overwriting it here would corrupt
		// what the host receives. The next iteration takes a buffer
		// from the codec, which hands out only buffers gRPC has written.
	}
	return nil
}

// TestCodecOverGRPCStream sends batches through a real gRPC stream with
// the codec on both sides, the sender reusing the buffers the codec gives
// back, and checks every batch arrives intact and stays so after later
// ones arrive. The race it guards against (a buffer reused while gRPC
// still holds it) is narrow in time, so this is the end-to-end check of the
// codec over gRPC; the hand-back itself is checked by
// TestCodecSendOwnership.
func TestCodecOverGRPCStream(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	// The plugins' flow-control windows, so that Send does not wait for
	// window updates.
	srv := grpc.NewServer(grpc.ForceServerCodecV2(NewCodec()),
		grpc.InitialWindowSize(WindowSize), grpc.InitialConnWindowSize(WindowSize))
	const batches = 300
	RegisterPluginServer(srv, &streamServer{codec: NewCodec(), batches: batches})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(WindowSize), grpc.WithInitialConnWindowSize(WindowSize))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := NewPluginClient(conn).RunSourceTask(context.Background(), grpc.ForceCodecV2(NewCodec()))
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]byte // received batches stay valid: their buffer is theirs
	for i := range batches {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		b := m.GetBatch()
		if b == nil || int(b.Count) != i {
			t.Fatalf("batch %d: got %v", i, m)
		}
		if err := checkBatch(b.Records, i, 64<<10+8*(i%7)); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		kept = append(kept, b.Records)
	}
	for i, recs := range kept {
		if err := checkBatch(recs, i, len(recs)); err != nil {
			t.Fatalf("batch %d changed after it was received: %v", i, err)
		}
	}
}

func checkBatch(recs []byte, seq, size int) error {
	if len(recs) != size {
		return fmt.Errorf("%d bytes, want %d", len(recs), size)
	}
	for off := 0; off+8 <= len(recs); off += 8 {
		if got := binary.LittleEndian.Uint64(recs[off:]); got != uint64(seq) {
			return fmt.Errorf("word at %d is %d, want %d", off, got, seq)
		}
	}
	return nil
}

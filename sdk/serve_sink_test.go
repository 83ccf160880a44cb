package sdk

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// scriptedSink is a sink task whose Put and Flush the test steers.
type scriptedSink struct {
	puts  atomic.Int64 // Put calls
	put   func(ctx context.Context, call int64) error
	mu    sync.Mutex
	flush func() error // nil: succeeds
	close atomic.Int64
}

func (s *scriptedSink) Open(context.Context, SinkTaskContext) error { return nil }

func (s *scriptedSink) Put(ctx context.Context, _ []SinkRecord) error {
	n := s.puts.Add(1)
	if s.put == nil {
		return nil
	}
	return s.put(ctx, n)
}

func (s *scriptedSink) setFlush(f func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush = f
}

func (s *scriptedSink) Flush(_ context.Context, o map[TopicPartition]int64) (map[TopicPartition]int64, error) {
	s.mu.Lock()
	f := s.flush
	s.mu.Unlock()
	if f != nil {
		if err := f(); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (s *scriptedSink) Close(context.Context) error { s.close.Add(1); return nil }

// sinkStream is the host's end of a sink task's stream to a real gRPC
// server running the SDK.
type sinkStream struct {
	t      *testing.T
	stream pluginpb.Plugin_RunSinkTaskClient
	msgs   chan *pluginpb.SinkPluginMessage
}

// runScripted serves task over gRPC on the loopback interface and starts
// it on a stream.
func runScripted(t *testing.T, task SinkTask) *sinkStream {
	t.Helper()
	srv, err := newServer(slog.New(slog.NewTextHandler(io.Discard, nil)), []Connector{SinkConnector[struct{}]{
		Class: "test.ScriptedSink", Version: "1", NewTask: func(struct{}) SinkTask { return task }}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pluginpb.RegisterPluginServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := pluginpb.NewPluginClient(cc).RunSinkTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &sinkStream{t: t, stream: stream, msgs: make(chan *pluginpb.SinkPluginMessage, 16)}
	go func() {
		defer close(s.msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			s.msgs <- m
		}
	}()
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Start{Start: &pluginpb.TaskStart{Class: "test.ScriptedSink", Connector: "c"}}})
	if m := s.next(); m.GetStarted() == nil {
		t.Fatalf("first message %v, want Started", m)
	}
	return s
}

func (s *sinkStream) send(m *pluginpb.SinkHostMessage) {
	s.t.Helper()
	if err := s.stream.Send(m); err != nil {
		s.t.Fatal(err)
	}
}

// put sends a Put of one record of t-0 at offset off.
func (s *sinkStream) put(id uint64, off int64) {
	s.t.Helper()
	var enc wire.Encoder
	if err := enc.Append(&wire.Record{Topic: "t", KafkaOffset: off, Timestamp: wire.NoTimestamp, ValueSchema: schema.Int64, Value: off}); err != nil {
		s.t.Fatal(err)
	}
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Put{Put: &pluginpb.Put{Id: id,
		Batch: &pluginpb.RecordBatch{Count: uint32(enc.Count()), Records: enc.Bytes()}}}})
}

func (s *sinkStream) flush(id uint64, next int64) {
	s.t.Helper()
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Flush{Flush: &pluginpb.FlushRequest{Id: id,
		Offsets: []*pluginpb.TopicPartition{{Topic: "t", Offset: next}}}}})
}

// next returns the plugin's next message, failing after 5 s.
func (s *sinkStream) next() *pluginpb.SinkPluginMessage {
	s.t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.t.Fatal("the plugin ended the stream")
		}
		return m
	case <-time.After(5 * time.Second):
		s.t.Fatal("no message from the plugin within 5 s")
		return nil
	}
}

// ack returns the next message, which must be the Ack of id.
func (s *sinkStream) ack(id uint64) *pluginpb.Ack {
	s.t.Helper()
	m := s.next()
	if m.GetAck().GetId() != id || m.GetAck() == nil {
		s.t.Fatalf("got %v, want the Ack of %d", m, id)
	}
	return m.GetAck()
}

func (s *sinkStream) stop() {
	s.t.Helper()
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Stop{Stop: &pluginpb.Stop{}}})
	if m := s.next(); m.GetStopped() == nil || m.GetStopped().GetError() != nil {
		s.t.Fatalf("got %v, want Stopped without error", m)
	}
}

// A Flush error (Kafka Connect's preCommit throwing) does not fail the
// task: the Ack carries it, with no offsets, and the task goes on.
func TestSinkFlushErrorIsReported(t *testing.T) {
	task := &scriptedSink{}
	s := runScripted(t, task)
	s.put(1, 0)
	s.ack(1)
	task.setFlush(func() error { return errors.New("disk full") })
	s.flush(2, 1)
	a := s.ack(2)
	if a.GetError().GetMessage() != "disk full" || len(a.GetOffsets()) != 0 {
		t.Fatalf("Ack of the failed Flush: %v, want error disk full and no offsets", a)
	}
	task.setFlush(nil)
	s.put(3, 1)
	s.ack(3)
	s.flush(4, 2)
	if a := s.ack(4); a.GetError() != nil || len(a.GetOffsets()) != 1 || a.GetOffsets()[0].GetOffset() != 2 {
		t.Fatalf("Ack of the next Flush: %v, want offset 2", a)
	}
	s.stop()
	if n := task.close.Load(); n != 1 {
		t.Fatalf("Close called %d times", n)
	}
}

// A panic in Flush is a bug: it still fails the task, with the stack.
func TestSinkFlushPanicFails(t *testing.T) {
	task := &scriptedSink{}
	s := runScripted(t, task)
	task.setFlush(func() error { panic("boom in Flush") })
	s.flush(1, 0)
	f := s.next().GetFailure()
	if f == nil || !strings.Contains(f.GetMessage(), "boom in Flush") || !strings.Contains(f.GetTrace(), "serve_sink_test.go") {
		t.Fatalf("failure %v, want the panic with its stack", f)
	}
}

// Stopping ends a Put that retries (the back-off and the context of the
// retry in progress): it is answered as not delivered, at once, and so is
// the Put queued after it, without calling the task.
func TestSinkStoppingGivesUpRetryingPut(t *testing.T) {
	cancelled := make(chan struct{})
	task := &scriptedSink{put: func(ctx context.Context, call int64) error {
		if call == 1 {
			return Retriable(errors.New("downstream unavailable"))
		}
		<-ctx.Done() // a retry hanging on the outage
		close(cancelled)
		return ctx.Err()
	}}
	s := runScripted(t, task)
	s.put(1, 0)
	s.put(2, 1)
	deadline := time.Now().Add(5 * time.Second)
	for task.puts.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("Put not retried")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Stopping{Stopping: &pluginpb.Stopping{}}})
	start := time.Now()
	if a := s.ack(1); a.GetError() == nil || !strings.Contains(a.GetError().GetMessage(), "context canceled") {
		t.Fatalf("Ack of the retrying Put: %v, want not delivered", a)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the retrying Put was given up after %v", d)
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("the retry's context was not cancelled")
	}
	if a := s.ack(2); a.GetError() == nil {
		t.Fatalf("Ack of the Put queued behind: %v, want not delivered", a)
	}
	if n := task.puts.Load(); n != 2 {
		t.Fatalf("%d Put calls, want 2 (the queued batch is not attempted)", n)
	}
	s.stop()
}

// Stopping does not cut short a Put's first attempt (a healthy task
// stopped while writing commits that batch); a Put after Stopping is tried
// once, and given up on a Retriable error, not retried; then every Put is
// answered as not delivered. Flush still works.
func TestSinkStoppingLetsRunningPutFinish(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var firstCtx context.Context
	task := &scriptedSink{put: func(ctx context.Context, call int64) error {
		switch call {
		case 1:
			firstCtx = ctx
			close(entered)
			<-release
			return nil
		case 2:
			return nil
		default:
			return Retriable(errors.New("downstream unavailable"))
		}
	}}
	s := runScripted(t, task)
	s.put(1, 0)
	<-entered
	s.send(&pluginpb.SinkHostMessage{Msg: &pluginpb.SinkHostMessage_Stopping{Stopping: &pluginpb.Stopping{}}})
	time.Sleep(100 * time.Millisecond)
	if err := firstCtx.Err(); err != nil {
		t.Fatalf("the first attempt's context ended at Stopping: %v", err)
	}
	close(release)
	if a := s.ack(1); a.GetError() != nil {
		t.Fatalf("Ack of the Put in progress: %v, want done", a)
	}
	s.put(2, 1)
	if a := s.ack(2); a.GetError() != nil {
		t.Fatalf("Ack of a Put after Stopping that succeeds: %v, want done", a)
	}
	s.flush(3, 2)
	if a := s.ack(3); a.GetError() != nil || len(a.GetOffsets()) != 1 {
		t.Fatalf("Ack of Flush after Stopping: %v", a)
	}
	s.put(4, 2)
	if a := s.ack(4); a.GetError() == nil || !strings.Contains(a.GetError().GetMessage(), "downstream unavailable") {
		t.Fatalf("Ack of a Put failing retriably after Stopping: %v, want not delivered", a)
	}
	s.put(5, 3)
	if a := s.ack(5); a.GetError() == nil {
		t.Fatalf("Ack of a Put after one was given up: %v, want not delivered", a)
	}
	if n := task.puts.Load(); n != 3 {
		t.Fatalf("%d Put calls, want 3 (no retry after Stopping, none after giving up)", n)
	}
	s.stop()
}

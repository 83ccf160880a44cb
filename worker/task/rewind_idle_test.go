package task

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// rewindLater's task asks, from a goroutine of its own and once, to be
// given partition in-0 again from offset 0, after it has had its first
// records.
type rewindLater struct {
	mu   sync.Mutex
	got  []int64
	once sync.Once
	tc   sdk.SinkTaskContext
}

func (s *rewindLater) Open(_ context.Context, tc sdk.SinkTaskContext) error { s.tc = tc; return nil }

func (s *rewindLater) Put(_ context.Context, recs []sdk.SinkRecord) error {
	s.mu.Lock()
	for _, r := range recs {
		s.got = append(s.got, r.Offset)
	}
	s.mu.Unlock()
	s.once.Do(func() {
		go func() {
			time.Sleep(200 * time.Millisecond)
			s.tc.Rewind(map[sdk.TopicPartition]int64{{Topic: "in", Partition: 0}: 0})
		}()
	})
	return nil
}

func (s *rewindLater) Flush(_ context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	return o, nil
}

func (s *rewindLater) Close(context.Context) error { return nil }

func (s *rewindLater) offsets() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// A rewind a task asks for while the runner waits for records takes effect
// at once, not at the next offset flush (a minute here), as Kafka Connect
// applies context.offset() at its next loop iteration.
func TestSinkRewindWhileIdle(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	produceValues(t, addr, "in", []string{"a", "b", "c"})
	task := &rewindLater{}
	conn := sdk.SinkConnector[struct{}]{Class: "test.RewindLater", Version: "1", NewTask: func(struct{}) sdk.SinkTask { return task }}
	l, err := plugins.NewInProcess(quietLogger(), conn)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := l.StartSinkTask(context.Background(), "test.RewindLater", sdk.TaskInfo{Connector: "rw"}, map[string]string{"topics": "in"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewSink(SinkConfig{Info: sdk.TaskInfo{Connector: "rw"}, Task: pt, Topics: []string{"in"}, Key: stringConv(t), Value: stringConv(t),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, FlushInterval: time.Minute, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, 10*time.Second, "the records twice", func() bool { return len(task.offsets()) >= 6 })
	if got := task.offsets(); !slices.Equal(got, []int64{0, 1, 2, 0, 1, 2}) {
		t.Errorf("offsets delivered %v", got)
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
}

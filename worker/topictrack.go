package worker

import (
	"context"
	"log/slog"
	"sync"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// topicNoter records a task's active topics (KIP-558): the first record a
// task produces to or consumes from a topic writes a status-topic record.
type topicNoter struct {
	connector string
	task      int
	note      func(ctx context.Context, connector string, task int, topic string) error
	logger    *slog.Logger

	mu   sync.Mutex
	seen map[string]bool
}

func (n *topicNoter) observe(ctx context.Context, topic string) {
	if topic == "" {
		return
	}
	n.mu.Lock()
	if n.seen[topic] {
		n.mu.Unlock()
		return
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	n.seen[topic] = true
	n.mu.Unlock()
	if err := n.note(ctx, n.connector, n.task, topic); err != nil {
		n.logger.Warn("recording an active topic failed", "topic", topic, "err", err)
	}
}

// trackedSource notes the topics of the records a source task returns.
type trackedSource struct {
	plugins.SourceTask
	n *topicNoter
}

func (t trackedSource) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	recs, err := t.SourceTask.Poll(ctx)
	t.observe(ctx, recs)
	return recs, err
}

func (t trackedSource) observe(ctx context.Context, recs []sdk.SourceRecord) {
	for i := range recs {
		t.n.observe(ctx, recs[i].Topic)
	}
}

// EncodesOffsets forwards the question to the task.
func (t trackedSource) EncodesOffsets() bool { return plugins.EncodesOffsets(t.SourceTask) != nil }

// PollEncodedOffsets is Poll for a task that EncodesOffsets.
func (t trackedSource) PollEncodedOffsets(ctx context.Context) ([]sdk.SourceRecord, [][]byte, error) {
	recs, offs, err := t.SourceTask.(plugins.EncodedOffsetSource).PollEncodedOffsets(ctx)
	t.observe(ctx, recs)
	return recs, offs, err
}

// ReleaseBatch forwards to the task.
func (t trackedSource) ReleaseBatch(recs []sdk.SourceRecord) {
	t.SourceTask.(plugins.EncodedOffsetSource).ReleaseBatch(recs)
}

// KeepValuesEncoded forwards to the task if it is a plugins.RawValueSource.
func (t trackedSource) KeepValuesEncoded() {
	if rv, ok := t.SourceTask.(plugins.RawValueSource); ok {
		rv.KeepValuesEncoded()
	}
}

// Boundary forwards to the task if it is a plugins.BoundarySource (one
// started with a transaction context).
func (t trackedSource) Boundary() plugins.Boundary {
	if b, ok := t.SourceTask.(plugins.BoundarySource); ok {
		return b.Boundary()
	}
	return plugins.NoBoundary
}

// trackedSink notes the topics of the records a sink task is given.
type trackedSink struct {
	plugins.SinkTask
	n *topicNoter
}

// TakesEncodedValues forwards the question to the task.
func (t trackedSink) TakesEncodedValues() bool { return plugins.TakesEncodedValues(t.SinkTask) }

// Done and Err forward plugins.EndingSink, so that the runner still learns
// at once that the task's plugin exited.
func (t trackedSink) Done() <-chan struct{} {
	if e, ok := t.SinkTask.(plugins.EndingSink); ok {
		return e.Done()
	}
	return nil
}

func (t trackedSink) Err() error {
	if e, ok := t.SinkTask.(plugins.EndingSink); ok {
		return e.Err()
	}
	return nil
}

// BeginStop forwards plugins.StoppingSink, so that stopping a task whose
// Put retries through an outage is prompt.
func (t trackedSink) BeginStop() {
	if s, ok := t.SinkTask.(plugins.StoppingSink); ok {
		s.BeginStop()
	}
}

// RewindRequested forwards plugins.RewindNotifier (nil, which never
// fires, for a task without it).
func (t trackedSink) RewindRequested() <-chan struct{} {
	if n, ok := t.SinkTask.(plugins.RewindNotifier); ok {
		return n.RewindRequested()
	}
	return nil
}

func (t trackedSink) Put(ctx context.Context, records []sdk.SinkRecord) error {
	for i := range records {
		t.n.observe(ctx, records[i].Topic)
	}
	return t.SinkTask.Put(ctx, records)
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/store"
)

// A source connector may keep its offsets in a topic of its own
// (offsets.storage.topic, KIP-618), beside the worker's: the connector's
// topic is then the primary store (a task with exactly-once support
// writes its offsets there in its transactions) and the worker's a
// secondary copy. Reads prefer the connector's topic and fall back to the
// worker's; tombstones go to the worker's first, so that a reset is never
// undone by the copy (Kafka Connect's ConnectorOffsetBackingStore,
// KAFKA-15018).

// offsetTopics opens the stores of connectors' own offsets topics, once
// each, when first needed; they live as long as the worker.
type offsetTopics struct {
	open func(ctx context.Context, topic string) (*store.OffsetStore, error)

	mu     sync.Mutex
	stores map[string]*store.OffsetStore
}

// get returns the store of topic, opening it (the topic is created if it
// does not exist, then read to its end) the first time.
func (o *offsetTopics) get(ctx context.Context, topic string) (*store.OffsetStore, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.stores[topic]; s != nil {
		return s, nil
	}
	s, err := o.open(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("worker: offsets topic %s: %w", topic, err)
	}
	if o.stores == nil {
		o.stores = map[string]*store.OffsetStore{}
	}
	o.stores[topic] = s
	return s, nil
}

// peek returns the store of topic if it is open.
func (o *offsetTopics) peek(topic string) *store.OffsetStore {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stores[topic]
}

func (o *offsetTopics) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.stores {
		s.Close()
	}
	o.stores = nil
}

// routedOffsets is the offsets backend of a worker: each connector's
// offsets in the worker's topic, and in its own when it has one.
type routedOffsets struct {
	global *store.OffsetStore
	topics *offsetTopics
	// topicOf is a connector's own offsets topic, "" when it has none (or
	// names the worker's).
	topicOf func(connector string) string
}

// own returns the store of the connector's own offsets topic, nil when it
// has none.
func (r routedOffsets) own(ctx context.Context, connector string) (*store.OffsetStore, error) {
	t := r.topicOf(connector)
	if t == "" {
		return nil, nil
	}
	return r.topics.get(ctx, t)
}

// Offsets implements offsetBackend: the connector's topic's offset of
// each partition, else the worker's.
func (r routedOffsets) Offsets(ctx context.Context, connector string, partitions []sdk.Partition) ([]sdk.Offset, error) {
	out, err := r.global.Offsets(ctx, connector, partitions)
	if err != nil {
		return nil, err
	}
	own, err := r.own(ctx, connector)
	if err != nil || own == nil {
		return out, err
	}
	mine, err := own.Offsets(ctx, connector, partitions)
	if err != nil {
		return nil, err
	}
	for i, o := range mine {
		if o != nil {
			out[i] = o
		}
	}
	return out, nil
}

// Reader is the offsets a connector's tasks read.
func (r routedOffsets) Reader(connector string) plugins.OffsetReader {
	return plugins.OffsetReaderFunc(func(ctx context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
		return r.Offsets(ctx, connector, ps)
	})
}

// WriteOffsets implements offsetBackend and task.OffsetWriter: to the
// connector's topic and the worker's, tombstones to the worker's first.
func (r routedOffsets) WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error {
	own, err := r.own(ctx, connector)
	if err != nil {
		return err
	}
	if own == nil {
		return r.global.WriteOffsets(ctx, connector, offsets)
	}
	var dead, live []sdk.SourceOffset
	for _, o := range offsets {
		if o.Offset == nil {
			dead = append(dead, o)
		} else {
			live = append(live, o)
		}
	}
	if err := r.global.WriteOffsets(ctx, connector, dead); err != nil {
		return err
	}
	if err := own.WriteOffsets(ctx, connector, offsets); err != nil {
		return err
	}
	return r.global.WriteOffsets(ctx, connector, live)
}

// All implements offsetBackend: every partition with an offset, the
// connector's topic's first.
func (r routedOffsets) All(connector string) []sdk.SourceOffset {
	global, _ := r.global.ConnectorOffsets(context.Background(), connector)
	own, err := r.own(context.Background(), connector)
	if err != nil || own == nil {
		return global
	}
	out, _ := own.ConnectorOffsets(context.Background(), connector)
	seen := map[string]bool{}
	for _, o := range out {
		k, _ := store.EncodeOffsetKey(connector, o.Partition)
		seen[string(k)] = true
	}
	for _, o := range global {
		if k, _ := store.EncodeOffsetKey(connector, o.Partition); !seen[string(k)] {
			out = append(out, o)
		}
	}
	return out
}

// Problem implements offsetBackend; a connector topic not opened yet has
// none (it is opened when a task or a request needs it, never on the
// herder's loop).
func (r routedOffsets) Problem(connector string) string {
	p := r.global.Problem(connector)
	if t := r.topicOf(connector); t != "" {
		if s := r.topics.peek(t); s != nil {
			p = strings.TrimSpace(strings.Join([]string{p, s.Problem(connector)}, " "))
		}
	}
	return p
}

// ClearProblems implements offsetBackend.
func (r routedOffsets) ClearProblems(ctx context.Context, connector string) error {
	err := r.global.ClearProblems(ctx, connector)
	own, oerr := r.own(ctx, connector)
	if own != nil {
		oerr = own.ClearProblems(ctx, connector)
	}
	return errors.Join(err, oerr)
}

package sdk

import (
	"sync"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// commitQueue hands the offsets the host reports committed from a source
// task's receive loop to its commit loop without ever blocking the
// receive loop, which also frees shared-memory slots and takes Stop: a
// task whose OffsetsCommitted hangs must not stall its batches. While the
// commit loop is busy, reports pile up merged: per source partition only
// the latest offset is kept (a later commit covers the earlier ones), in
// the order the partitions first appeared.
type commitQueue struct {
	mu      sync.Mutex
	pending []SourceOffset
	index   map[string]int // partition key → its entry in pending
	ready   chan struct{}  // signalled when pending is not empty
}

func newCommitQueue() *commitQueue {
	return &commitQueue{ready: make(chan struct{}, 1)}
}

// add queues offs; it never blocks.
func (q *commitQueue) add(offs []SourceOffset) {
	q.mu.Lock()
	if q.index == nil {
		q.index = map[string]int{}
	}
	for _, o := range offs {
		key := partitionKey(o.Partition)
		if i, ok := q.index[key]; ok {
			q.pending[i].Offset = o.Offset
			continue
		}
		q.index[key] = len(q.pending)
		q.pending = append(q.pending, o)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default: // already signalled
	}
}

// take returns what is queued and empties the queue.
func (q *commitQueue) take() []SourceOffset {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending, q.index = nil, nil
	return out
}

// partitionKey identifies a source partition: its canonical encoding
// (map keys sorted).
func partitionKey(p Partition) string {
	b, err := wire.AppendPartitions(nil, []map[string]any{p})
	if err != nil { // not encodable: the host sent it decoded from its encoding
		return ""
	}
	return string(b)
}

package sdk

import (
	"fmt"
	"testing"
)

// The receive loop queues commit reports without blocking however long
// the task's OffsetsCommitted takes, and reports that pile up merge into
// the latest offset per partition, in first-seen order.
func TestCommitQueueMerges(t *testing.T) {
	q := newCommitQueue()
	a, b := Partition{"p": "a"}, Partition{"p": "b", "q": int64(1)}
	for i := range int64(10_000) { // nobody takes meanwhile: must not block
		q.add([]SourceOffset{{Partition: a, Offset: Offset{"n": i}}})
		if i == 5 {
			q.add([]SourceOffset{{Partition: Partition{"q": int64(1), "p": "b"}, Offset: Offset{"n": int64(-1)}}})
		}
	}
	q.add([]SourceOffset{{Partition: b, Offset: Offset{"n": int64(7)}}})
	select {
	case <-q.ready:
	default:
		t.Fatal("not signalled")
	}
	got := q.take()
	if want := "[{map[p:a] map[n:9999]} {map[p:b q:1] map[n:7]}]"; fmt.Sprint(got) != want {
		t.Errorf("took %v, want %s", got, want)
	}
	if more := q.take(); len(more) != 0 {
		t.Errorf("took again %v", more)
	}
}

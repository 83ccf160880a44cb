package plugins

import (
	"context"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// A source task whose OffsetsCommitted hangs keeps delivering records: the
// plugin's receive loop, which also frees shared-memory slots, never waits
// for the task (before, 64 commit reports queued behind the hung one
// stalled the task's batches for good, silently).
func TestSourceKeepsFlowingWhenOffsetsCommittedHangs(t *testing.T) {
	h := newTestHost(t, nil)
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "hangs"}, map[string]string{"mode": "commithang", "after": "1000000000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop(ctx) }() // killed after StopTimeout: Close waits for the hung commit
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < 300; i++ {
		pctx, cancel := context.WithDeadline(ctx, deadline)
		recs, err := task.Poll(pctx)
		cancel()
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		offs := make([]sdk.SourceOffset, len(recs))
		for j, r := range recs {
			offs[j] = sdk.SourceOffset{Partition: r.Partition, Offset: r.Offset}
		}
		if err := task.Committed(ctx, offs); err != nil {
			t.Fatalf("committed %d: %v", i, err)
		}
	}
}

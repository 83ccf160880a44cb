package plugins

import (
	"context"
	"strings"
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

// A record larger than one gRPC message fails its task with an error that
// says so, not as a lost connection.
func TestSourceRecordTooLargeForOneMessage(t *testing.T) {
	h := newTestHost(t, nil)
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "huge"}, map[string]string{"mode": "huge", "after": "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop(ctx) }()
	pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		_, err := task.Poll(pctx)
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "exceeds the 256 MiB limit of one gRPC message") {
			t.Fatalf("poll: %v", err)
		}
		return
	}
}

// A Poll that returns fewer records than asked sends its batch at once,
// not after the batch's linger: a source with a record now and then (a
// mirror at a low rate, a quiet database) is not held back by it.
func TestShortPollIsNotHeldForTheLinger(t *testing.T) {
	h := newTestHost(t, func(cfg *Config) { cfg.Batch = BatchLimits{Linger: time.Hour} })
	ctx := context.Background()
	// Three polls of one record each, then polls that wait.
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "trickle"}, map[string]string{"after": "3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop(ctx) }()
	start := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var got int
	for got < 3 {
		recs, err := task.Poll(pctx)
		if err != nil {
			t.Fatalf("after %d records in %v: %v", got, time.Since(start), err)
		}
		got += len(recs)
	}
	t.Logf("3 records of single-record polls in %v with a one-hour linger", time.Since(start).Round(time.Millisecond))
}

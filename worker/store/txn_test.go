package store

import (
	"errors"
	"testing"
)

// TestConfigStoreTransactionalLeader: the leader's writes go through its
// transactional producer; a new leader's claim fences the old one, whose
// next write fails and leaves nothing visible, and which claims again at
// the write after. Task count records (tasks-fencing-<name>) clear the
// pending fencing a commit sets. A store without exactly-once support
// reads the same topic, its transaction markers included, to its end.
func TestConfigStoreTransactionalLeader(t *testing.T) {
	forEachBroker(t, func(t *testing.T, brokers []string) {
		ctx := testCtx(t)
		o := opts(brokers, "txn-configs")
		o.ReadCommitted, o.TransactionalID = true, "connect-cluster-g"
		a, err := OpenConfigStore(ctx, o, nil)
		must(t, err)
		defer a.Close()
		b, err := OpenConfigStore(ctx, o, nil)
		must(t, err)
		defer b.Close()
		plain, err := OpenConfigStore(ctx, opts(brokers, "txn-configs"), nil)
		must(t, err)
		defer plain.Close()

		must(t, a.ClaimWritePrivileges(ctx))
		must(t, a.Apply(ctx, []Write{{Kind: WriteConnector, Name: "c", Config: map[string]string{"connector.class": "X"}},
			{Kind: WriteTasks, Name: "c", Tasks: []map[string]string{{"t": "0"}, {"t": "1"}}}}))
		snap := a.Snapshot()
		if !snap.PendingFencing["c"] || snap.TaskGenerations["c"] != 1 {
			t.Fatalf("after a commit: pending %v generations %v", snap.PendingFencing, snap.TaskGenerations)
		}
		if _, ok := snap.TaskCountRecords["c"]; ok {
			t.Fatalf("no task count record written yet: %v", snap.TaskCountRecords)
		}
		// b leads now: its claim fences a.
		must(t, b.Apply(ctx, []Write{{Kind: WriteTaskCount, Name: "c", TaskCount: 2}}))
		snap = b.Snapshot()
		if snap.PendingFencing["c"] || snap.TaskCountRecords["c"] != 2 || len(snap.Tasks["c"]) != 2 {
			t.Fatalf("b: pending %v counts %v tasks %v", snap.PendingFencing, snap.TaskCountRecords, snap.Tasks)
		}
		err = a.Apply(ctx, []Write{{Kind: WriteTasks, Name: "c", Tasks: []map[string]string{{"t": "zombie"}}}})
		var pe *PrivilegedWriteError
		if !errors.As(err, &pe) {
			t.Fatalf("the deposed leader's write: %v, want a PrivilegedWriteError", err)
		}
		// Target states are written by any worker, without the producer.
		must(t, a.Apply(ctx, []Write{{Kind: WriteTarget, Name: "c", Target: TargetPaused}}))
		must(t, b.Refresh(ctx))
		if snap := b.Snapshot(); len(snap.Tasks["c"]) != 2 || snap.Tasks["c"][0]["t"] != "0" || snap.TargetStates["c"] != TargetPaused {
			t.Fatalf("the fenced write is visible, or the target state is not: %+v %v", snap.Tasks["c"], snap.TargetStates)
		}
		// a claims again at its next write (fencing b) and succeeds.
		must(t, a.Apply(ctx, []Write{{Kind: WriteTasks, Name: "c", Tasks: []map[string]string{{"t": "new"}}}}))
		must(t, b.Refresh(ctx))
		snap = b.Snapshot()
		if len(snap.Tasks["c"]) != 1 || !snap.PendingFencing["c"] || snap.TaskGenerations["c"] != 2 || snap.TaskCountRecords["c"] != 2 {
			t.Fatalf("after the new leader's commit: %+v pending %v generations %v counts %v", snap.Tasks["c"], snap.PendingFencing, snap.TaskGenerations, snap.TaskCountRecords)
		}
		must(t, plain.Refresh(ctx))
		if got := plain.Snapshot(); len(got.Tasks["c"]) != 1 || got.TaskCountRecords["c"] != 2 {
			t.Fatalf("a read_uncommitted store: %+v %v", got.Tasks["c"], got.TaskCountRecords)
		}
	})
}

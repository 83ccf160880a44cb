package sdk

import (
	"runtime/debug"
	"testing"
)

// The memory limit grows and shrinks with the tasks sharing the process,
// never below one task's worth; a server that does not manage it leaves
// it alone.
func TestMemoryLimitFollowsRunningTasks(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	s := &server{manageMemory: true}
	for n := int64(1); n <= 3; n++ {
		s.taskRunning(1)
		if got := debug.SetMemoryLimit(-1); got != n*DefaultMemoryLimit {
			t.Fatalf("%d tasks: limit %d, want %d", n, got, n*DefaultMemoryLimit)
		}
	}
	for range 3 {
		s.taskRunning(-1)
	}
	if got := debug.SetMemoryLimit(-1); got != DefaultMemoryLimit {
		t.Fatalf("no tasks: limit %d, want %d", got, int64(DefaultMemoryLimit))
	}
	debug.SetMemoryLimit(prev)
	(&server{}).taskRunning(1)
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("unmanaged server changed the limit to %d", got)
	}
}

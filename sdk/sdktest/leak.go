package sdktest

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This file checks that a connector leaves no goroutine behind, with the
// standard library alone (the SDK module depends on nothing else): the
// goroutines running when a check starts are remembered by id, and when it
// ends every other goroutine must have exited within a grace period.

// leakGrace is how long goroutines get to exit after a check: a task's
// Close may return before the goroutines it stopped have fully unwound.
const leakGrace = 2 * time.Second

// verifyNoLeaks remembers the goroutines now running and returns the check
// to defer: it fails t, listing their stacks, if goroutines started since
// are still running after leakGrace.
func verifyNoLeaks(t testing.TB) func() {
	t.Helper()
	before := map[int64]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	return func() {
		t.Helper()
		deadline := time.Now().Add(leakGrace)
		for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
			var leaked []string
			for _, g := range goroutines() {
				if !before[g.id] && !g.harmless() {
					leaked = append(leaked, g.stack)
				}
			}
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("sdktest: %d goroutine(s) the connector started still run %v after its task was closed; "+
					"Close (and a Poll or Put whose context is cancelled) must stop and wait for every goroutine the task started:\n\n%s",
					len(leaked), leakGrace, strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(wait)
		}
	}
}

type goroutine struct {
	id    int64
	stack string // the header line and the frames
}

// harmless reports goroutines that belong to the test binary or the
// runtime, not to the connector: the calling goroutine itself, the testing
// package's, and os/signal's watcher.
func (g goroutine) harmless() bool {
	_, frames, _ := strings.Cut(g.stack, "\n")
	top, _, _ := strings.Cut(frames, "(")
	switch {
	case strings.HasPrefix(top, "testing."),
		strings.HasPrefix(top, "os/signal."),
		strings.HasPrefix(top, "runtime.ensureSigM"),
		strings.HasPrefix(top, "runtime.goexit"):
		return true
	}
	return false
}

// goroutines returns every goroutine but the caller's, parsed from
// runtime.Stack.
func goroutines() []goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	// The first goroutine listed is the caller's.
	for i, block := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue
		}
		header, _, _ := bytes.Cut(block, []byte("\n"))
		fields := strings.Fields(string(header)) // goroutine 12 [chan receive]:
		if len(fields) < 2 || fields[0] != "goroutine" {
			continue
		}
		id, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, goroutine{id: id, stack: string(block)})
	}
	return out
}

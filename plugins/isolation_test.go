package plugins

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/sdk"
)

func TestParseIsolation(t *testing.T) {
	for in, want := range map[string]Isolation{"": IsolationPlugin, "plugin": IsolationPlugin, " Connector ": IsolationConnector} {
		if got, err := ParseIsolation(in); err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseIsolation("task"); err == nil || !strings.Contains(err.Error(), `"task"`) {
		t.Errorf("ParseIsolation(task): %v", err)
	}
}

// newTwoPluginHost starts a Host with IsolationPlugin and two plugin
// executables: the test binary (crashyClass among others) and the test
// binary as otherPlugin (otherClass alone).
func newTwoPluginHost(t *testing.T, mod func(*Config)) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return newTestHost(t, func(c *Config) {
		c.Builtin = [][]string{{exe}, {exe, otherPlugin}}
		c.StopTimeout = 500 * time.Millisecond
		if mod != nil {
			mod(c)
		}
	})
}

func startTask(t *testing.T, h *Host, class, connector string, task int, cfg map[string]string) *hostSourceTask {
	t.Helper()
	st, err := h.StartSourceTask(context.Background(), class, sdk.TaskInfo{Connector: connector, Task: task}, cfg, nil)
	if err != nil {
		t.Fatalf("start %s-%d: %v", connector, task, err)
	}
	return st.(*hostSourceTask)
}

// pollsFine polls task a few times, failing the test on an error or an
// empty batch.
func pollsFine(t *testing.T, what string, task SourceTask) {
	t.Helper()
	for range 3 {
		if recs, err := task.Poll(context.Background()); err != nil || len(recs) == 0 {
			t.Fatalf("%s: poll: %v %v", what, recs, err)
		}
	}
}

var endless = map[string]string{"mode": "ok", "after": "100000000"}

// With IsolationPlugin every connector of one plugin executable, instances
// and tasks alike, runs in one process, validation too; another executable
// has its own; the process ends with the last of its holds.
func TestConnectorsOfAPluginShareAProcess(t *testing.T) {
	h := newTwoPluginHost(t, nil)
	ctx := context.Background()
	a0, a1 := startTask(t, h, crashyClass, "a", 0, endless), startTask(t, h, crashyClass, "a", 1, endless)
	b0 := startTask(t, h, crashyClass, "b", 0, endless)
	conn, err := h.StartConnector(ctx, crashyClass, "b", endless)
	if err != nil {
		t.Fatal(err)
	}
	o0 := startTask(t, h, otherClass, "o", 0, endless)
	shared := a0.p.pid()
	for _, task := range []*hostSourceTask{a1, b0} {
		if task.p.pid() != shared {
			t.Fatalf("task %s in process %d, want the plugin's %d", task.what, task.p.pid(), shared)
		}
	}
	if conn.(*hostConnector).p.pid() != shared {
		t.Fatalf("connector instance in process %d, want %d", conn.(*hostConnector).p.pid(), shared)
	}
	if o0.p.pid() == shared {
		t.Fatal("two plugin executables share a process")
	}
	// Validation uses the running process: a create starts none.
	p, done, err := h.validator(ctx, PluginInfo{Command: a0.ref.e.p.cmd.Args[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if p.pid() != shared {
		t.Errorf("validation in process %d, want the plugin's %d", p.pid(), shared)
	}
	done()
	if _, err := h.Validate(ctx, crashyClass, map[string]string{"mode": "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []SourceTask{a0, b0, o0} {
		pollsFine(t, "running task", s)
	}
	for _, s := range []SourceTask{a0, a1, b0} {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if processGone(shared) {
		t.Fatal("the plugin's process ended while connector b's instance still runs")
	}
	if err := conn.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, shared, 5*time.Second)
	if err := o0.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.procsMu.Lock()
	defer h.procsMu.Unlock()
	if len(h.procs) != 0 {
		t.Fatalf("%d process entries left", len(h.procs))
	}
}

// A plugin process hosting several connectors is killed with SIGKILL:
// exactly the tasks and instances it hosted fail, with the kill in their
// trace; another plugin's process keeps running; each starts again, in a
// new process.
func TestSharedProcessSIGKILL(t *testing.T) {
	h := newTwoPluginHost(t, nil)
	ctx := context.Background()
	var victims []*hostSourceTask
	for _, c := range []string{"a", "b", "c"} {
		for i := range 2 {
			victims = append(victims, startTask(t, h, crashyClass, c, i, endless))
		}
	}
	conn, err := h.StartConnector(ctx, crashyClass, "a", endless)
	if err != nil {
		t.Fatal(err)
	}
	survivor := startTask(t, h, otherClass, "o", 0, endless)
	pid := victims[0].p.pid()
	pollsFine(t, "a-0", victims[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, v := range victims {
		err := pollUntilError(t, v)
		var te *sdk.TaskError
		if !errors.As(err, &te) || !strings.Contains(te.Message, "signal: killed") {
			t.Fatalf("%s after its process was killed: %v", v.what, err)
		}
	}
	select {
	case e := <-conn.Events():
		var te *sdk.TaskError
		if !errors.As(e.Err, &te) || !strings.Contains(te.Message, "signal: killed") {
			t.Fatalf("connector a's event after the kill: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connector a's instance did not fail")
	}
	pollsFine(t, "the other plugin's task", survivor)
	// The runtime stops the failed ones and starts them again.
	for _, v := range victims {
		_ = v.Stop(ctx)
	}
	_ = conn.Stop(ctx)
	again := startTask(t, h, crashyClass, "a", 0, endless)
	if again.p.pid() == pid {
		t.Fatal("restarted in the killed process")
	}
	again1 := startTask(t, h, crashyClass, "b", 1, endless)
	if again1.p.pid() != again.p.pid() {
		t.Fatal("restarted connectors do not share the new process")
	}
	pollsFine(t, "restarted a-0", again)
	pollsFine(t, "restarted b-1", again1)
	for _, s := range []SourceTask{again, again1, survivor} {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A task that panics in a process shared with other connectors fails
// alone, with the panic as its trace; a task that leaves goroutines behind
// disturbs nobody either.
func TestPanicInSharedProcessFailsOnlyItsTask(t *testing.T) {
	h := newTwoPluginHost(t, nil)
	ctx := context.Background()
	healthy := startTask(t, h, crashyClass, "healthy", 0, endless)
	leaky := startTask(t, h, crashyClass, "leaky", 0, map[string]string{"mode": "leak", "after": "100000000"})
	pid := healthy.p.pid()
	bad := startTask(t, h, crashyClass, "bad", 0, map[string]string{"mode": "panic", "after": "2"})
	err := pollUntilError(t, bad)
	var te *sdk.TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "boom in Poll") || !strings.Contains(te.Trace, "crashyTask).Poll") {
		t.Fatalf("the panicking task: %v", err)
	}
	_ = bad.Stop(ctx)
	if err := leaky.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	pollsFine(t, "the healthy task after a sibling panicked and another leaked", healthy)
	if healthy.p.pid() != pid || processGone(pid) {
		t.Fatal("the shared process did not survive")
	}
	if err := healthy.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 5*time.Second)
}

// A hung task in a shared process is abandoned, not killed with the
// others; the process is retired: new tasks (its restart too) get a fresh
// one, and the old one ends with the last task it still had.
func TestHungTaskRetiresSharedProcess(t *testing.T) {
	h := newTwoPluginHost(t, nil)
	ctx := context.Background()
	healthy := startTask(t, h, crashyClass, "h", 0, endless)
	hung := startTask(t, h, crashyClass, "x", 0, map[string]string{"mode": "hang", "after": "1"})
	old := healthy.p.pid()
	if _, err := hung.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	err := hung.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Fatalf("stop of a hung task: %v", err)
	}
	pollsFine(t, "the hung task's neighbour", healthy)
	restarted := startTask(t, h, crashyClass, "x", 0, endless)
	if restarted.p.pid() == old {
		t.Fatal("a new task went into the process holding an abandoned call")
	}
	pollsFine(t, "the restarted task", restarted)
	if err := healthy.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, old, 5*time.Second)
	if err := restarted.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// In a shared process each line reaches the loggers of the connector it
// names (named after that connector's class, with its name and task), not
// those of whichever connector started the process.
func TestSharedProcessLogsNameTheirConnector(t *testing.T) {
	capture, logs := newCapture()
	reg := loglevel.New(capture.Handler(), slog.LevelInfo)
	h := newTwoPluginHost(t, func(c *Config) { c.Logger = reg.Logger("dev.tributary") })
	first := startTask(t, h, crashyClass, "first", 0, endless)
	second := startTask(t, h, crashyClass, "second", 3, endless)
	if first.p.pid() != second.p.pid() {
		t.Fatal("not one process")
	}
	pollsFine(t, "second", second)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := map[string]capturedRecord{}
		for _, r := range logs() {
			if r.Msg == "hello from plugin" {
				got[r.Attrs["connector"]] = r
			}
		}
		if len(got) == 2 {
			if r := got["first"]; r.Attrs["task"] != "0" || r.Attrs["logger"] != "test.CrashySourceTask" {
				t.Errorf("first's line: %+v", r)
			}
			if r := got["second"]; r.Attrs["task"] != "3" || r.Attrs["logger"] != "test.CrashySourceTask" {
				t.Errorf("second's line: %+v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lines of both connectors not seen: %+v", got)
		}
	}
	_ = first.Stop(context.Background())
	_ = second.Stop(context.Background())
}

package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/testconn"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// startFileSinks starts n FileStreamSink tasks of connector (they share
// one plugin process), each assigned a partition.
func startFileSinks(t *testing.T, h *Host, connector string, n int) []*hostSinkTask {
	t.Helper()
	ctx := context.Background()
	var tasks []*hostSinkTask
	for i := range n {
		out := filepath.Join(t.TempDir(), "out"+strconv.Itoa(i)+".txt")
		st, err := h.StartSinkTask(ctx, "FileStreamSink", sdk.TaskInfo{Connector: connector, Task: i}, map[string]string{"file": out, "topics": "t"})
		if err != nil {
			t.Fatal(err)
		}
		task := st.(*hostSinkTask)
		tasks = append(tasks, task)
		if err := task.Assigned(ctx, []sdk.TopicPartition{{Topic: "t", Partition: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return tasks
}

// An idle sink task (nothing Put) notices by itself that its plugin
// process died: Done closes and Err, Sync, Ready and Assigned report the
// exit, without a Put. All the tasks sharing the process fail.
func TestSinkIdleTaskFailsWhenPluginKilled(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond })
	ctx := context.Background()
	tasks := startFileSinks(t, h, "files", 3)
	pid := tasks[0].p.pid()
	for _, task := range tasks {
		if task.p.pid() != pid {
			t.Fatalf("sink tasks in processes %d and %d", pid, task.p.pid())
		}
		if err := task.Err(); err != nil {
			t.Fatalf("Err of a running task: %v", err)
		}
		if err := task.Sync(ctx); err != nil {
			t.Fatalf("Sync of a running idle task: %v", err)
		}
	}
	select {
	case <-tasks[0].Done():
		t.Fatal("Done closed before the plugin died")
	default:
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		select {
		case <-task.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Done not closed 5 s after the plugin was killed", task.what)
		}
		err := task.Err()
		if err == nil || !strings.Contains(err.Error(), "plugin process exited") || !strings.Contains(err.Error(), task.what) {
			t.Fatalf("%s: Err %v, want the plugin's exit", task.what, err)
		}
		t.Logf("%s failed: %v", task.what, err)
		// The runner's periodic Sync, and its other calls, report the
		// same failure.
		if e := task.Sync(ctx); e == nil || e.Error() != err.Error() {
			t.Errorf("Sync: %v, want %v", e, err)
		}
		if e := task.Ready(ctx); e == nil || e.Error() != err.Error() {
			t.Errorf("Ready: %v, want %v", e, err)
		}
		if e := task.Assigned(ctx, []sdk.TopicPartition{{Topic: "t", Partition: 9}}); e == nil || e.Error() != err.Error() {
			t.Errorf("Assigned: %v, want %v", e, err)
		}
		if e := task.Stop(ctx); e == nil || e.Error() != err.Error() {
			t.Errorf("Stop: %v, want %v", e, err)
		}
	}
	waitGone(t, pid, 5*time.Second)
	// The connector's tasks can start again (in a new process).
	again := startFileSinks(t, h, "files", 1)[0]
	if again.p.pid() == pid {
		t.Fatal("restarted task in the killed process")
	}
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// After Stop, Done is closed and Err is ErrStopped, not a failure.
func TestSinkDoneAfterStop(t *testing.T) {
	h := newTestHost(t, nil)
	ctx := context.Background()
	task := startFileSinks(t, h, "stopped", 1)[0]
	pid := task.p.pid()
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-task.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := task.Err(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Err after Stop: %v, want ErrStopped", err)
	}
	if err := task.Sync(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Sync after Stop: %v, want ErrStopped", err)
	}
	waitGone(t, pid, 5*time.Second)
}

func init() {
	if os.Getenv(pluginpb.MagicCookieKey) != "" && slices.Contains(os.Args[1:], testconn.FlakySinkArg) {
		sdk.Serve(testconn.FlakySink())
	}
}

// startFlaky starts a flaky sink task in a plugin process; dir holds its
// control files.
func startFlaky(t *testing.T) (*hostSinkTask, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, func(c *Config) { c.Builtin = [][]string{{exe, testconn.FlakySinkArg}} })
	dir := t.TempDir()
	st, err := h.StartSinkTask(context.Background(), testconn.FlakySinkClass, sdk.TaskInfo{Connector: "flaky"}, map[string]string{"dir": dir})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*hostSinkTask), dir
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func putOffsets(t *testing.T, task *hostSinkTask, from, n int64) {
	t.Helper()
	var recs []sdk.SinkRecord
	for o := from; o < from+n; o++ {
		recs = append(recs, sdk.SinkRecord{Topic: "t", Offset: o, Value: "v"})
	}
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

// A plugin task whose Flush (preCommit) fails keeps running: Flush returns
// a FlushError with the connector's message, and the task takes and
// flushes more records.
func TestSinkFlushErrorKeepsPluginTaskRunning(t *testing.T) {
	task, dir := startFlaky(t)
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "t"}
	putOffsets(t, task, 0, 3)
	touch(t, dir, "flush-fail")
	_, err := task.Flush(ctx, map[sdk.TopicPartition]int64{tp: 3})
	if fe, ok := errors.AsType[*FlushError](err); !ok || !strings.Contains(fe.Error(), "disk full") {
		t.Fatalf("Flush: %v, want a FlushError saying disk full", err)
	}
	if err := task.Err(); err != nil {
		t.Fatalf("the task ended after a Flush error: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "flush-fail")); err != nil {
		t.Fatal(err)
	}
	putOffsets(t, task, 3, 2)
	durable, err := task.Flush(ctx, map[sdk.TopicPartition]int64{tp: 5})
	if err != nil || durable[tp] != 5 {
		t.Fatalf("Flush after the failed one: %v, %v; want offset 5", durable, err)
	}
	if got := readLines(t, filepath.Join(dir, "out")); fmt.Sprint(got) != "[0:3 0:4]" {
		t.Fatalf("flushed %v, want the records Put after the failed Flush", got)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// A panic in a plugin task's Flush is a bug: the task fails, with the
// stack, and Flush does not report a FlushError.
func TestSinkFlushPanicFailsPluginTask(t *testing.T) {
	task, dir := startFlaky(t)
	touch(t, dir, "flush-panic")
	_, err := task.Flush(context.Background(), map[sdk.TopicPartition]int64{{Topic: "t"}: 1})
	if _, ok := errors.AsType[*FlushError](err); ok || err == nil {
		t.Fatalf("Flush: %v, want the task's failure", err)
	}
	te, ok := errors.AsType[*sdk.TaskError](task.Err())
	if !ok || !strings.Contains(te.Message, "boom in Flush") || !strings.Contains(te.Trace, "goroutine") {
		t.Fatalf("task error %v, want the panic with its stack", task.Err())
	}
	if err := task.Stop(context.Background()); err == nil {
		t.Fatal("Stop of the failed task reported no failure")
	}
}

// BeginStop makes a plugin task whose Put retries a Retriable error give
// the batch up at once, and the batch queued behind it: Sync, Flush and
// Put then report ErrNotDelivered (so nothing more is committed), and
// Stop is prompt and clean.
func TestSinkBeginStopEndsRetryingPut(t *testing.T) {
	task, dir := startFlaky(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	touch(t, dir, "put-retriable")
	putOffsets(t, task, 0, 3)
	putOffsets(t, task, 3, 3)
	attempts := func() int { return len(readLinesIfAny(filepath.Join(dir, "attempts"))) }
	deadline := time.Now().Add(10 * time.Second)
	for attempts() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("Put not retried")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	task.BeginStop()
	err := task.Sync(ctx)
	if !errors.Is(err, ErrNotDelivered) || !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "downstream unavailable") {
		t.Fatalf("Sync after BeginStop: %v, want ErrNotDelivered", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the retrying Put was given up after %v", d)
	}
	n := attempts()
	if _, err := task.Flush(ctx, map[sdk.TopicPartition]int64{{Topic: "t"}: 6}); !errors.Is(err, ErrNotDelivered) {
		t.Fatalf("Flush after a batch was given up: %v, want ErrNotDelivered", err)
	}
	if err := task.Put(ctx, []sdk.SinkRecord{{Topic: "t", Offset: 6}}); !errors.Is(err, ErrNotDelivered) {
		t.Fatalf("Put after a batch was given up: %v, want ErrNotDelivered", err)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopped after %v", d)
	}
	if got := attempts(); got != n {
		t.Fatalf("%d Put attempts after the batch was given up", got-n)
	}
	if err := task.Err(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Err after Stop: %v", err)
	}
}

func readLinesIfAny(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

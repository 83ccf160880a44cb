package plugins

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
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

package integration

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// pluginHolding returns the pid of the worker's plugin process that has
// path open (a file connector's process holds its file), or 0.
func pluginHolding(t *testing.T, workerPid int, path string) int {
	t.Helper()
	for _, pid := range workerChildren(workerPid) {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == path {
				return pid
			}
		}
	}
	return 0
}

// waitFailed waits until the connector and all its tasks are FAILED, as
// a kill -9 of the connector's plugin process leaves them (the connector
// instance and its tasks share one process, and each notices the crash on
// its own), and returns the first task's trace. Waiting for all matters:
// a restart with onlyFailed=true restarts what is FAILED when the worker
// takes the request, so one sent while a task still shows RUNNING leaves
// that task FAILED for good.
func (r rest) waitFailed(name string) string {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, code := r.status(name)
		all := code == 200 && s.Connector.State == "FAILED" && len(s.Tasks) > 0
		for _, ts := range s.Tasks {
			all = all && ts.State == "FAILED"
		}
		if all {
			return s.Tasks[0].Trace
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s and its tasks not all FAILED after 30s: %d %+v", name, code, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPluginKill9 SIGKILLs the plugin process of a file sink and then of a
// file source while lines stream through a live worker with
// plugin.isolation=connector: the connector's task goes FAILED with the
// process's exit in its trace, the worker and the other connector carry
// on, a REST restart brings the task back in a new process, and no input
// line is missing from the output. (TestSharedPluginKill9 is the same with
// the default, one process for the plugin's connectors.)
func TestPluginKill9(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin processes")
	}
	bin := harness.BuildTributary(t)
	w, r, in, out := fileStream(t, bin, harness.TributaryBroker(t).Bootstrap(), t.TempDir(), "pluginkill",
		map[string]string{"offset.flush.interval.ms": "500", "plugin.isolation": "connector"})

	const total = 20000
	done := growInput(t, in, total, 20*time.Millisecond)
	for i, c := range []struct{ name, file, other string }{{"sink", out, "src"}, {"src", in, "sink"}} {
		waitLines(t, out, (i+1)*total/4, 60*time.Second)
		var pid int
		for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			pid = pluginHolding(t, w.Pid(), c.file)
		}
		if pid == 0 {
			t.Fatalf("no plugin process of the worker holds %s", c.file)
		}
		if c.name == "src" {
			// The source's batches go through shared memory: the
			// kill lands on that path.
			if maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid)); err != nil || !strings.Contains(string(maps), "memfd:tributary-batches") {
				t.Errorf("the source's plugin maps no shared memory (%v)", err)
			}
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		trace := r.waitFailed(c.name)
		if !strings.Contains(trace, "plugin") || !strings.Contains(trace, "killed") {
			t.Errorf("trace of %s-0 after SIGKILL of its plugin does not say so:\n%s", c.name, trace)
		}
		r.must("GET", "/", nil, 200) // the worker is fine
		if s, _ := r.status(c.other); s.Connector.State != "RUNNING" || s.Tasks[0].State != "RUNNING" {
			t.Fatalf("%s is %+v after %s's plugin was killed", c.other, s, c.name)
		}
		r.must("POST", "/connectors/"+c.name+"/restart?includeTasks=true&onlyFailed=true", nil, 202)
		r.waitState(c.name, "RUNNING", 1)
		if p := pluginHolding(t, w.Pid(), c.file); p == pid {
			t.Fatalf("%s runs in the killed process %d again", c.name, pid)
		}
		t.Logf("SIGKILL of %s's plugin (pid %d): task FAILED, restarted; %d output lines so far", c.name, pid, len(readLines(out)))
	}
	<-done
	got, distinct, missing := waitAllLines(out, total, 60*time.Second)
	if missing > 0 {
		t.Fatalf("%d of %d input lines missing after the plugin processes were killed", missing, total)
	}
	t.Logf("no line lost: %d output lines for %d input lines, %d duplicates", len(got), total, len(got)-distinct)
}

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// heldFiles maps each file under dir that a plugin process of one of the
// workers (pids) holds open to the workers whose plugin processes hold it
// (one entry per holding process), and counts each worker's plugin
// processes: what the plugin processes themselves run, apart from what
// the statuses say (a FileStreamSource task holds its file while it runs).
func heldFiles(pids map[string]int, dir string) (held map[string][]string, procs map[string]int) {
	held, procs = map[string][]string{}, map[string]int{}
	for worker, wpid := range pids {
		for _, pid := range workerChildren(wpid) {
			procs[worker]++
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			for _, fd := range fds {
				target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
				if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
					held[target] = append(held[target], worker)
				}
			}
		}
	}
	return held, procs
}

// TestClusterManyConnectors: 300 FileStreamSource connectors on three
// workers with the default plugin.isolation run in one plugin process per
// worker; a worker is killed with SIGKILL and all 300 run again on the two
// others. Before and after, what the statuses say and what the plugin
// processes hold agree: each connector's file is open in exactly one
// plugin process, of the worker its status names (no task runs twice).
func TestClusterManyConnectors(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: 300 connectors on three worker processes")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin processes")
	}
	const n = 300
	bin := harness.BuildTributary(t)
	c := newWorkerCluster(t, bin, harness.TributaryBroker(t).Bootstrap(), "many", 3, nil)
	inDir := filepath.Join(c.dir, "in")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.rest(0)
	start := time.Now()
	for k := range n {
		in := filepath.Join(inDir, fmt.Sprintf("f%03d.txt", k))
		appendLines(t, in, 0, 1)
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("fs-%03d", k), "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": "many"}}, 201)
	}
	created := time.Since(start)
	p, at := c.waitSettled(n, n, 5*time.Minute)
	t.Logf("%d connectors created in %v, all RUNNING %v after the first create", n, created.Round(10*time.Millisecond), at.Sub(start).Round(10*time.Millisecond))
	check := func(when string, p placement) {
		t.Helper()
		pids := map[string]int{}
		for _, i := range c.alive() {
			pids[c.id(i)] = c.worker(i).Pid()
		}
		var bad []string
		var held map[string][]string
		var procs map[string]int
		// A task that just started may not have opened its file yet.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			held, procs = heldFiles(pids, inDir)
			bad = bad[:0]
			for k := range n {
				in := filepath.Join(inDir, fmt.Sprintf("f%03d.txt", k))
				want := p.tasks[fmt.Sprintf("fs-%03d-0", k)]
				if got := held[in]; len(got) != 1 || got[0] != want {
					bad = append(bad, fmt.Sprintf("fs-%03d: status on %s, held by %v", k, want, got))
				}
			}
			if len(bad) == 0 || time.Now().After(deadline) {
				break
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Fatalf("%s: %d connectors' plugin processes disagree with their statuses: %v", when, len(bad), bad[:min(len(bad), 10)])
		}
		for w, k := range procs {
			if k != 1 {
				t.Errorf("%s: worker %s has %d plugin processes, want 1", when, w, k)
			}
		}
		t.Logf("%s: every file open in exactly the one plugin process of the worker its status names; plugin processes per worker %v", when, procs)
	}
	check("3 workers", p)

	leader := c.leader()
	victim := (leader + 1) % 3
	killed := time.Now()
	c.kill(victim)
	p, at = c.waitSettled(n, n, 5*time.Minute)
	t.Logf("worker %d killed: all %d RUNNING on the 2 others %v later", victim, n, at.Sub(killed).Round(10*time.Millisecond))
	check("2 workers", p)
}

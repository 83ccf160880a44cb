package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestSharedPluginKill9: with the default plugin.isolation (plugin), the
// FileStream connectors of a worker (three pipelines: three sources, three
// sinks) run in one tributary-connector-basic process, and a third-party
// plugin (the ticker example, from plugin.path) in a process of its own.
// SIGKILL of the shared process while lines stream: exactly its six
// connectors go FAILED, with the kill in their trace; the ticker keeps
// RUNNING and producing, the worker answers; REST restarts bring the six
// back, all in one new process; no input line is missing from any output.
func TestSharedPluginKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs a worker and two plugins")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin processes")
	}
	bin := harness.BuildTributary(t)
	pluginDir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "ticker"), "./ticker")
	build.Dir = filepath.Join("..", "examples")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the ticker plugin: %v\n%s", err, out)
	}
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, harness.TributaryBroker(t).Bootstrap(),
		"sharedkill", map[string]string{"offset.flush.interval.ms": "500", "plugin.path": pluginDir}))
	r := rest{t, w.URL()}
	const pipes, total = 3, 12000
	var ins, outs, names []string
	for k := range pipes {
		in, out := filepath.Join(dir, fmt.Sprintf("in-%d.txt", k)), filepath.Join(dir, fmt.Sprintf("out-%d.txt", k))
		appendLines(t, in, 0, 1)
		topic := fmt.Sprintf("shared-%d", k)
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("src-%d", k), "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": topic}}, 201)
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("sink-%d", k), "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": topic}}, 201)
		ins, outs = append(ins, in), append(outs, out)
		names = append(names, fmt.Sprintf("src-%d", k), fmt.Sprintf("sink-%d", k))
	}
	r.must("POST", "/connectors", map[string]any{"name": "tick", "config": map[string]string{
		"connector.class": "Ticker", "topic": "ticks", "interval.ms": "10"}}, 201)
	for _, n := range append(names, "tick") {
		r.waitState(n, "RUNNING", 1)
	}
	var dones []<-chan struct{}
	for _, in := range ins {
		dones = append(dones, growInput(t, in, total, 20*time.Millisecond))
	}
	waitLines(t, outs[0], total/4, 60*time.Second)

	// One process holds every file of the six connectors.
	shared := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if shared = pluginHolding(t, w.Pid(), ins[0]); shared != 0 {
			break
		}
	}
	if shared == 0 {
		t.Fatalf("no plugin process of the worker holds %s", ins[0])
	}
	for _, f := range append(append([]string(nil), ins...), outs...) {
		if p := pluginHolding(t, w.Pid(), f); p != shared {
			t.Fatalf("%s is held by process %d, not the plugin's %d", f, p, shared)
		}
	}
	if n := len(workerChildren(w.Pid())); n != 2 {
		t.Errorf("the worker has %d plugin processes, want 2 (basic and ticker)", n)
	}
	ticks := ticksOf(t, r)

	if err := syscall.Kill(shared, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		trace := r.waitFailed(n)
		if !strings.Contains(trace, "plugin") || !strings.Contains(trace, "killed") {
			t.Errorf("trace of %s-0 after SIGKILL of its plugin does not say so:\n%s", n, trace)
		}
	}
	r.must("GET", "/", nil, 200) // the worker is fine
	if s, _ := r.status("tick"); s.Connector.State != "RUNNING" || len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
		t.Fatalf("the ticker (another plugin) is %+v after the FileStream plugin's process was killed", s)
	}
	for deadline := time.Now().Add(20 * time.Second); ticksOf(t, r) <= ticks; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ticker stopped producing when the other plugin's process was killed")
		}
	}
	for _, n := range names {
		r.must("POST", "/connectors/"+n+"/restart?includeTasks=true&onlyFailed=true", nil, 202)
	}
	for _, n := range names {
		r.waitState(n, "RUNNING", 1)
	}
	again := pluginHolding(t, w.Pid(), ins[0])
	if again == shared || again == 0 {
		t.Fatalf("after the restart %s is held by %d (killed: %d)", ins[0], again, shared)
	}
	for _, f := range append(append([]string(nil), ins...), outs...) {
		for deadline := time.Now().Add(10 * time.Second); pluginHolding(t, w.Pid(), f) != again; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after the restart %s is held by %d, not the new shared process %d", f, pluginHolding(t, w.Pid(), f), again)
			}
		}
	}
	for _, d := range dones {
		<-d
	}
	checkNoLoss(t, outs, total, 120*time.Second)
}

// ticksOf returns the ticker's committed sequence number (GET
// /connectors/tick/offsets): it grows while the ticker runs.
func ticksOf(t *testing.T, r rest) float64 {
	t.Helper()
	var body struct {
		Offsets []struct {
			Offset map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(r.must("GET", "/connectors/tick/offsets", nil, 200), &body); err != nil {
		t.Fatal(err)
	}
	for _, o := range body.Offsets {
		if n, ok := o.Offset["seq"].(float64); ok {
			return n
		}
	}
	return 0
}

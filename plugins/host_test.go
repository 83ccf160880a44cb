package plugins

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/shm"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

func TestDiscoverBuiltinAndCacheByHash(t *testing.T) {
	cache := t.TempDir()
	h := newTestHost(t, func(c *Config) { c.CacheDir = cache })
	for _, name := range []string{"FileStreamSource", "FileStreamSourceConnector", file.SourceClass,
		"FileStreamSink", "FileStreamSinkConnector", file.SinkClass, "Datagen", datagen.Class} {
		spec, err := h.Spec(name)
		if err != nil {
			t.Fatalf("Spec(%q): %v", name, err)
		}
		if !spec.Matches(name) {
			t.Errorf("spec %s does not match %q", spec.Class, name)
		}
	}
	if _, err := h.Spec("NoSuchConnector"); !errors.Is(err, ErrUnknownPlugin) {
		t.Errorf("unknown plugin: %v", err)
	}
	pis := h.Plugins()
	if len(pis) == 0 || len(pis[0].Hash) != 64 {
		t.Fatalf("plugins %+v", pis)
	}
	if _, err := os.Stat(filepath.Join(cache, pis[0].Hash+".json")); err != nil {
		t.Fatalf("spec not cached on disk: %v", err)
	}
	// A second host finds the spec in the cache and does not start the
	// binary: prove it by offering a protocol no plugin speaks.
	exe, _ := os.Executable()
	h2, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe}}, CacheDir: cache,
		ProtocolVersions: []int{99}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h2.Specs()) != len(h.Specs()) {
		t.Fatalf("cached discovery found %d specs, want %d", len(h2.Specs()), len(h.Specs()))
	}
}

// Location says where a class comes from, as Kafka Connect's
// PluginDesc.location: "classpath" for the built-in command's connectors,
// the executable's file URL for a plugin.path one ("" for no class).
func TestLocation(t *testing.T) {
	builtin := newTestHost(t, nil)
	if got := builtin.Location(file.SourceClass); got != Classpath {
		t.Errorf("built-in: %q, want %q", got, Classpath)
	}
	if got := builtin.Location("NoSuchConnector"); got != "" {
		t.Errorf("unknown class: %q", got)
	}
	exe, _ := os.Executable()
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugin")
	if err := os.Symlink(exe, plugin); err != nil {
		t.Fatal(err)
	}
	h, err := NewHost(context.Background(), Config{PluginPath: []string{dir}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Location("FileStreamSource"), "file://"+filepath.ToSlash(plugin); got != want {
		t.Errorf("plugin.path: %q, want %q", got, want)
	}
}

func TestDiscoverSkipsNonExecutablesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("not a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	exes, err := findExecutables(dir, logger)
	if err != nil || len(exes) != 0 {
		t.Fatalf("found %v, %v", exes, err)
	}
	if !strings.Contains(logs.String(), "not executable") || !strings.Contains(logs.String(), "README") {
		t.Errorf("the skipped README is not logged:\n%s", logs.String())
	}
	exe, _ := os.Executable()
	plugin := filepath.Join(dir, "sub", "plugin")
	if err := os.Symlink(exe, plugin); err != nil {
		t.Fatal(err)
	}
	exes, err = findExecutables(dir, logger)
	if err != nil || len(exes) != 1 {
		t.Fatalf("found %v, %v", exes, err)
	}
	// An entry may name the executable itself; a missing one is skipped
	// with a warning, as Kafka Connect does.
	if exes, err = findExecutables(plugin, logger); err != nil || len(exes) != 1 || exes[0] != plugin {
		t.Fatalf("file entry: found %v, %v", exes, err)
	}
	logs.Reset()
	if exes, err = findExecutables(filepath.Join(dir, "missing"), logger); err != nil || len(exes) != 0 {
		t.Fatalf("missing entry: found %v, %v", exes, err)
	}
	if !strings.Contains(logs.String(), "does not exist") {
		t.Errorf("the missing entry is not logged:\n%s", logs.String())
	}
}

// TestBuiltinCommandsFromPath: without tributary-connector-* executables
// beside the running binary (here the test binary), those of the first
// PATH directory holding any serve; without any the error names them and
// how to build them. (Beside the binary is how the end-to-end tests'
// workers find them.)
func TestBuiltinCommandsFromPath(t *testing.T) {
	none, first, second := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("PATH", none)
	if _, err := BuiltinCommands(); err == nil || !strings.Contains(err.Error(), BuiltinPrefix) ||
		!strings.Contains(err.Error(), "./cmd/...") {
		t.Errorf("none installed: %v; want an error naming %s* and how to build them", err, BuiltinPrefix)
	}
	write := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	basic := write(first, BuiltinPrefix+"basic", 0o755)
	s3 := write(first, BuiltinPrefix+"s3", 0o755)
	write(first, BuiltinPrefix+"notes.txt", 0o644)
	write(first, "other-plugin", 0o755)
	write(second, BuiltinPrefix+"postgres", 0o755)
	t.Setenv("PATH", strings.Join([]string{none, first, second}, string(filepath.ListSeparator)))
	if cmds, err := BuiltinCommands(); err != nil || !slices.EqualFunc(cmds, [][]string{{basic}, {s3}}, slices.Equal) {
		t.Errorf("on PATH: %v, %v; want [[%s] [%s]]", cmds, err, basic, s3)
	}
}

// TestDiscoverSkipsHangingExecutable: an executable in plugin.path that is
// no plugin and starts a long-lived child (which keeps its stdout open)
// costs discovery a bounded time, and its processes are killed.
func TestDiscoverSkipsHangingExecutable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are used on Linux")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "server.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h, err := NewHost(context.Background(), Config{PluginPath: []string{dir}, StartTimeout: time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second+killGrace+5*time.Second {
		t.Errorf("discovery took %v", took)
	}
	if len(h.Specs()) != 0 {
		t.Errorf("specs from a non-plugin: %v", h.Specs())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(st), ") Z ") {
			break // killed, not yet reaped by its parent's parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script's child %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestValidateThroughPlugin(t *testing.T) {
	h := newTestHost(t, nil)
	infos, err := h.Validate(context.Background(), "FileStreamSource", map[string]string{"batch.size": "x"})
	if err != nil {
		t.Fatal(err)
	}
	errs := infos.Errors()
	if infos.Name != file.SourceClass || infos.ErrorCount != 2 || len(errs["topic"]) != 1 || len(errs["batch.size"]) != 1 {
		t.Fatalf("validation %+v", infos)
	}
	if errs["topic"][0] != `Missing required configuration "topic" which has no default value.` {
		t.Errorf("topic error %q", errs["topic"][0])
	}
}

func TestSourceTaskThroughPlugin(t *testing.T) {
	h := newTestHost(t, nil)
	cfgMap := map[string]string{"kafka.topic": "gen", "iterations": "5000", "payload.bytes": "64", "seed": "7"}
	gen := generator(t, cfgMap)
	// Resume from a committed offset: the first record must be seq 100.
	var asked []sdk.Partition
	offsets := OffsetReaderFunc(func(_ context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
		asked = append(asked, ps...)
		return []sdk.Offset{{"seq": int64(99)}}, nil
	})
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "gen", Task: 0}, cfgMap, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0]["datagen.task"] != int64(0) {
		t.Fatalf("offsets asked for %v", asked)
	}
	want := int64(100)
	for want < 5000 {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatalf("poll at seq %d: %v", want, err)
		}
		for _, r := range recs {
			exp := gen.Record(want)
			if seq, _ := r.Offset.Int64("seq"); seq != want {
				t.Fatalf("offset %v, want seq %d", r.Offset, want)
			}
			if r.Topic != "gen" || r.Key != exp.Key || !schema.ValueEqual(r.Value, exp.Value) || !schema.Equal(r.ValueSchema, datagen.ValueSchema) {
				t.Fatalf("record %d differs: %+v vs %+v", want, r, exp)
			}
			want++
		}
	}
	if err := task.Committed(ctx, []sdk.SourceOffset{{Partition: sdk.Partition{"datagen.task": int64(0)}, Offset: sdk.Offset{"seq": int64(4999)}}}); err != nil {
		t.Fatal(err)
	}
	pid := task.(*hostSourceTask).p.pid()
	if err := task.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := task.Poll(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("poll after stop: %v", err)
	}
	waitGone(t, pid, 5*time.Second)
}

func TestPluginLogsReachHostLogger(t *testing.T) {
	logger, logs := newCapture()
	h := newTestHost(t, func(c *Config) { c.Logger = logger })
	ctx := context.Background()
	task := startCrashy(t, h, sdk.TaskInfo{Connector: "loud", Task: 3}, map[string]string{"mode": "ok"})
	defer task.Stop(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range logs() {
			if r.Msg == "hello from plugin" {
				if r.Attrs["connector"] != "loud" || r.Attrs["task"] != "3" || r.Attrs["mode"] != "ok" || r.Level != 0 {
					t.Fatalf("re-emitted record %+v", r)
				}
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("plugin log line never reached the host logger: %+v", logs())
}

func TestSinkTaskThroughPlugin(t *testing.T) {
	h := newTestHost(t, nil)
	out := filepath.Join(t.TempDir(), "out.txt")
	ctx := context.Background()
	task, err := h.StartSinkTask(ctx, "FileStreamSink", sdk.TaskInfo{Connector: "sink", Task: 0}, map[string]string{"file": out, "topics": "t"})
	if err != nil {
		t.Fatal(err)
	}
	tp := sdk.TopicPartition{Topic: "t", Partition: 0}
	if err := task.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
		t.Fatal(err)
	}
	var recs []sdk.SinkRecord
	for i := range 100 {
		recs = append(recs, sdk.SinkRecord{Topic: "t", Partition: 0, Offset: int64(i), ValueSchema: schema.String, Value: "line " + strconv.Itoa(i)})
	}
	if err := task.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	durable, err := task.Flush(ctx, map[sdk.TopicPartition]int64{tp: 100})
	if err != nil {
		t.Fatal(err)
	}
	if durable[tp] != 100 {
		t.Fatalf("durable %v", durable)
	}
	lines := readLines(t, out)
	if len(lines) != 100 || lines[99] != "line 99" {
		t.Fatalf("file has %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestConnectorThroughPlugin(t *testing.T) {
	h := newTestHost(t, nil)
	ctx := context.Background()
	c, err := h.StartConnector(ctx, "Datagen", "gen", map[string]string{"kafka.topic": "t", "name": "gen"})
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 3 {
		t.Fatalf("%d task configs", len(cfgs))
	}
	for i, m := range cfgs {
		// Task configs are the raw config plus what the split changed, as
		// in Kafka: task 0 keeps datagen.task's default, so it is absent.
		idx, set := m["datagen.task"]
		if (set && idx != strconv.Itoa(i)) || (!set && i != 0) || m["kafka.topic"] != "t" || m["name"] != "gen" {
			t.Errorf("task config %d: %v", i, m)
		}
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A connector with an invalid config fails to start with the key named.
	_, err = h.StartConnector(ctx, "Datagen", "bad", map[string]string{})
	var te *sdk.TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "kafka.topic") {
		t.Fatalf("start with missing topic: %v", err)
	}
}

// pollUntilError polls until the task reports an error.
func pollUntilError(t *testing.T, task SourceTask) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, err := task.Poll(ctx)
		if err != nil {
			return err
		}
	}
}

func TestCrashIsolation(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond })
	ctx := context.Background()
	cases := []struct {
		mode      string
		message   string
		traceHas  string
		stopError bool
	}{
		{mode: "panic", message: "panic: boom in Poll", traceHas: "crashyTask).Poll"},
		{mode: "exit", message: "exit status 7"},
		{mode: "gopanic", message: "panic: boom in a goroutine", traceHas: "crashyTask).Poll.func1"},
		{mode: "openfail", message: "cannot open: database unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "c", Task: 0}, map[string]string{"mode": tc.mode}, nil)
			if tc.mode == "openfail" {
				var te *sdk.TaskError
				if !errors.As(err, &te) || !strings.Contains(te.Message, tc.message) {
					t.Fatalf("start: %v", err)
				}
				return
			}
			pid := 0
			if err == nil {
				// The crash usually comes after a few polls, but it may
				// also beat the start acknowledgement: both must report it.
				pid = task.(*hostSourceTask).p.pid()
				err = pollUntilError(t, task)
			}
			var te *sdk.TaskError
			if !errors.As(err, &te) {
				t.Fatalf("poll error %T %v, want *sdk.TaskError", err, err)
			}
			if !strings.Contains(te.Message, tc.message) {
				t.Errorf("message %q does not contain %q", te.Message, tc.message)
			}
			if tc.traceHas != "" && !strings.Contains(te.Trace, tc.traceHas) {
				t.Errorf("trace does not contain %q:\n%s", tc.traceHas, te.Trace)
			}
			// A crash the host noticed (not one the SDK reported) has a
			// trace that leads with its message, then the stderr tail.
			if tc.mode == "exit" && !strings.HasPrefix(te.Trace, te.Message) {
				t.Errorf("trace does not lead with the message %q:\n%s", te.Message, te.Trace)
			}
			if task != nil {
				_ = task.Stop(ctx)
				waitGone(t, pid, 5*time.Second)
			}
		})
	}
	// The host is fine and the task can start again.
	assertRestartWorks(t, h)
}

// TestPluginMetricsChannel: a plugin's task registers a counter
// (sdk.MetricsOf); the host receives its snapshots at the interval it asked
// for, and keeps the last one, sent as the task failed, after it ended.
func TestPluginMetricsChannel(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.MetricsInterval = 20 * time.Millisecond })
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "c", Task: 0}, map[string]string{"mode": "panic", "after": "5", "topic": "t1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pollUntilError(t, task); err == nil {
		t.Fatal("the task did not fail")
	}
	mr, ok := task.(MetricsReporter)
	if !ok {
		t.Fatalf("%T is not a MetricsReporter", task)
	}
	var fams []sdk.MetricFamily
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if fams = mr.PluginMetrics(); len(fams) == 1 && len(fams[0].Metrics) == 1 && fams[0].Metrics[0].Value == 5 {
			break
		}
	}
	want := "[{Name:test_polled_total Help:Records polled. Type:1 LabelNames:[topic connector] Buckets:[] " +
		"Metrics:[{LabelValues:[t1 the plugin's] Value:5 Count:0 Sum:0 BucketCounts:[]}]}]"
	if got := fmt.Sprintf("%+v", fams); got != want {
		t.Errorf("plugin metrics\n got %s\nwant %s", got, want)
	}
	_ = task.Stop(ctx)
	if got := fmt.Sprintf("%+v", mr.PluginMetrics()); got != want {
		t.Errorf("plugin metrics after stop: %s", got)
	}
}

// startCrashy starts a task of the crashy test connector (helpers_test.go).
func startCrashy(t *testing.T, h *Host, info sdk.TaskInfo, cfg map[string]string) SourceTask {
	t.Helper()
	task, err := h.StartSourceTask(context.Background(), crashyClass, info, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestHungTaskIsKilledOnStop(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond })
	ctx := context.Background()
	task := startCrashy(t, h, sdk.TaskInfo{Connector: "c", Task: 0}, map[string]string{"mode": "hang", "after": "1"})
	pid := task.(*hostSourceTask).p.pid()
	if _, err := task.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := task.Stop(ctx)
	var te *sdk.TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "did not stop within 500ms") {
		t.Fatalf("stop of a hung task: %v", err)
	}
	// The goroutine dump shows where the task is stuck.
	if !strings.Contains(te.Trace, "crashyTask).Poll") {
		t.Errorf("trace lacks the stuck frame:\n%s", te.Trace)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stop took %v", d)
	}
	waitGone(t, pid, 5*time.Second)
	assertRestartWorks(t, h)
}

func assertRestartWorks(t *testing.T, h *Host) {
	t.Helper()
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "c", Task: 0}, map[string]string{"mode": "ok"}, nil)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	recs, err := task.Poll(ctx)
	if err != nil || len(recs) == 0 {
		t.Fatalf("restarted task: %v %v", recs, err)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatalf("stop restarted task: %v", err)
	}
}

func TestIncompatibleProtocolVersionsRefuse(t *testing.T) {
	logger, logs := newCapture()
	h := newTestHost(t, func(c *Config) { c.ProtocolVersions = []int{99}; c.Logger = logger })
	if n := len(h.Specs()); n != 0 {
		t.Fatalf("an incompatible plugin was loaded: %d specs", n)
	}
	var msg string
	for _, r := range logs() {
		if strings.Contains(r.Attrs["error"], "incompatible plugin protocol") {
			msg = r.Attrs["error"]
		}
	}
	if !strings.Contains(msg, "host speaks versions [99]") || !strings.Contains(msg, "speaks [2]") {
		t.Fatalf("no clear refusal in the host log; got %q (logs %+v)", msg, logs())
	}
	// A direct start reports the same.
	exe, _ := os.Executable()
	_, err := h.launch(context.Background(), []string{exe}, procLogs{conn: logger, task: logger})
	if err == nil || !strings.Contains(err.Error(), "incompatible plugin protocol") {
		t.Fatalf("launch: %v", err)
	}
}

func TestNoOrphanAfterHostSIGKILL(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "TRIBUTARY_TEST_HOST=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	pid := 0
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(p)
			break
		}
		t.Logf("host: %s", sc.Text())
	}
	if pid == 0 {
		t.Fatal("host helper did not report the plugin pid")
	}
	if processGone(pid) {
		t.Fatal("plugin not running before the host is killed")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pid, 5*time.Second)
}

// With IsolationConnector a connector's tasks share one plugin process,
// other connectors have their own, and the process ends with the last of
// its tasks. A crash of the shared process fails every task in it, and
// each can start again.
func TestTasksOfAConnectorShareAProcess(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond; c.Isolation = IsolationConnector })
	ctx := context.Background()
	start := func(connector string, task int, mode string) SourceTask {
		t.Helper()
		st, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: connector, Task: task}, map[string]string{"mode": mode}, nil)
		if err != nil {
			t.Fatalf("start %s-%d: %v", connector, task, err)
		}
		return st
	}
	pidOf := func(st SourceTask) int { return st.(*hostSourceTask).p.pid() }

	a0, a1, b0 := start("a", 0, "ok"), start("a", 1, "ok"), start("b", 0, "ok")
	if pidOf(a0) != pidOf(a1) {
		t.Fatalf("tasks of one connector in processes %d and %d", pidOf(a0), pidOf(a1))
	}
	if pidOf(a0) == pidOf(b0) {
		t.Fatalf("connectors a and b share process %d", pidOf(a0))
	}
	shared := pidOf(a0)
	if err := a0.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if processGone(shared) {
		t.Fatal("the shared process ended while task a-1 still runs")
	}
	if recs, err := a1.Poll(ctx); err != nil || len(recs) == 0 {
		t.Fatalf("a-1 after a-0 stopped: %v %v", recs, err)
	}
	if err := a1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, shared, 5*time.Second)
	if err := b0.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// c-1 makes the process exit: c-0 fails too, with the exit status.
	c0 := start("c", 0, "ok")
	// The exit may come before or after c-1's start is acknowledged.
	c1, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "c", Task: 1}, map[string]string{"mode": "exit"}, nil)
	if err == nil {
		if err := pollUntilError(t, c1); err == nil {
			t.Fatal("c-1 did not fail")
		}
		defer c1.Stop(ctx)
	}
	err = pollUntilError(t, c0)
	var te *sdk.TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "exit status 7") {
		t.Fatalf("c-0 after the process exited: %v", err)
	}
	_ = c0.Stop(ctx)
	again := start("c", 0, "ok")
	if recs, err := again.Poll(ctx); err != nil || len(recs) == 0 {
		t.Fatalf("restarted c-0: %v %v", recs, err)
	}
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// A launch that fails releases its hold and returns: the next acquire of
// the same connector tries again (an earlier version deadlocked here).
func TestAcquireAfterFailedLaunch(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StartTimeout = 5 * time.Second })
	done := make(chan error, 2)
	go func() {
		for range 2 {
			_, err := h.acquire(context.Background(), "x.Broken", "broken", []string{"/bin/false"})
			done <- err
		}
	}()
	for i := range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("acquire %d of /bin/false succeeded", i)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("acquire %d of a plugin that fails to start did not return", i)
		}
	}
	h.procsMu.Lock()
	defer h.procsMu.Unlock()
	if len(h.procs) != 0 {
		t.Fatalf("%d process entries left after failed launches", len(h.procs))
	}
}

// A hung task in a process shared with a healthy sibling is abandoned, not
// killed with the process: the sibling keeps running.
func TestHungTaskSparesItsSiblings(t *testing.T) {
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond })
	ctx := context.Background()
	healthy := startCrashy(t, h, sdk.TaskInfo{Connector: "h", Task: 0}, map[string]string{"mode": "ok", "after": "1000000"})
	hung := startCrashy(t, h, sdk.TaskInfo{Connector: "h", Task: 1}, map[string]string{"mode": "hang", "after": "1"})
	pid := healthy.(*hostSourceTask).p.pid()
	if _, err := hung.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	err := hung.Stop(ctx)
	var te *sdk.TaskError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "did not stop within 500ms") || !strings.Contains(te.Message, "abandoned") {
		t.Fatalf("stop of a hung task sharing its process: %v", err)
	}
	for range 3 {
		if recs, err := healthy.Poll(ctx); err != nil || len(recs) == 0 {
			t.Fatalf("sibling after the hung task was abandoned: %v %v", recs, err)
		}
	}
	if processGone(pid) {
		t.Fatal("the shared process was killed")
	}
	if err := healthy.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 5*time.Second)
}

// TestSourceSharedMemory: records arrive the same whichever way their
// batches travel: through shared memory, through the stream (the host
// offers none, or the plugin refuses it), or through the stream because
// a batch outgrew its slot.
func TestSourceSharedMemory(t *testing.T) {
	cases := []struct {
		name    string
		n       int64 // records
		payload string
		noShm   bool   // the host offers none
		env     string // TRIBUTARY_SHARED_MEMORY for the plugin
		slots   bool   // batches expected in shared memory
		stream  bool   // batches expected through the stream
	}{
		{name: "shared", n: 3000, payload: "100", slots: true},
		// Batches of three 30 kB records outgrow their 80 KiB slot;
		// the last record, alone in its batch, fits it.
		{name: "outgrown", n: 3001, payload: "30000", stream: true, slots: true},
		{name: "host-offers-none", n: 3000, payload: "100", noShm: true, stream: true},
		{name: "plugin-refuses", n: 3000, payload: "100", env: "off", stream: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(shm.EnvOff, c.env)
			}
			h := newTestHost(t, func(cfg *Config) {
				cfg.NoSharedMemory, cfg.Batch = c.noShm, BatchLimits{MaxBytes: 64 << 10}
			})
			n := c.n
			cfgMap := map[string]string{"kafka.topic": "gen", "iterations": strconv.FormatInt(n, 10), "payload.bytes": c.payload, "seed": "3"}
			ctx := context.Background()
			ht, gen := startDatagen(t, h, cfgMap)
			// Once started, the host no longer holds the region's
			// descriptor: the memory goes with the two mappings.
			if ht.slots != nil && (ht.slots.region.Name() != "" || !ht.slots.on) {
				t.Errorf("after start: region %q, accepted %v", ht.slots.region.Name(), ht.slots.on)
			}
			// Batches released as the source runner does, so that their
			// memory and record slices take later batches.
			for seq := int64(0); seq < n; {
				recs, offs, err := ht.PollEncodedOffsets(ctx)
				if err != nil {
					t.Fatalf("poll at seq %d: %v", seq, err)
				}
				for i, r := range recs {
					exp := gen.Record(seq)
					off, err := wire.DecodeOffset(offs[i])
					if err != nil {
						t.Fatal(err)
					}
					if got, _ := sdk.Offset(off).Int64("seq"); got != seq || r.Key != exp.Key || !schema.ValueEqual(r.Value, exp.Value) ||
						r.Headers != nil || r.KafkaPartition != nil || r.Timestamp != exp.Timestamp {
						t.Fatalf("record %d differs: %+v (offset %v) vs %+v", seq, r, off, exp)
					}
					seq++
				}
				ht.ReleaseBatch(recs)
			}
			slots, stream := ht.slotBatches.Load(), ht.streamBatches.Load()
			t.Logf("%d batches through shared memory, %d through the stream", slots, stream)
			if c.slots != (slots > 0) || c.stream != (stream > 0) {
				t.Errorf("batches: %d through shared memory, %d through the stream; want shared memory %v, stream %v", slots, stream, c.slots, c.stream)
			}
			if err := ht.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSourceValueLengths: a plugin writes each value with its length when
// the host asks for it, and the host then keeps values encoded without
// walking them (Raw.Checked is false: the converter checks them); values
// come out the same either way, and with a host that does not ask.
func TestSourceValueLengths(t *testing.T) {
	for _, lengths := range []bool{true, false} {
		t.Run(fmt.Sprintf("lengths=%v", lengths), func(t *testing.T) {
			h := newTestHost(t, func(cfg *Config) { cfg.noValueLengths = !lengths })
			// The host decodes up to two batches of up to 2,000 records
			// ahead before the task is told to keep values encoded: those
			// may come decoded, all later ones must not.
			const n, ahead = 7000, 2 * 2000
			cfgMap := map[string]string{"kafka.topic": "gen", "iterations": strconv.Itoa(n), "payload.bytes": "200", "seed": "5"}
			ctx := context.Background()
			ht, gen := startDatagen(t, h, cfgMap)
			ht.KeepValuesEncoded()
			encoded := false
			for seq := int64(0); seq < n; {
				recs, _, err := ht.PollEncodedOffsets(ctx)
				if err != nil {
					t.Fatalf("poll at seq %d: %v", seq, err)
				}
				for _, r := range recs {
					raw, ok := r.Value.(*wire.Raw)
					if !ok {
						if encoded || seq >= ahead {
							t.Fatalf("record %d: value %T left decoded", seq, r.Value)
						}
						if exp := gen.Record(seq); !schema.ValueEqual(r.Value, exp.Value) {
							t.Fatalf("record %d differs: %v vs %v", seq, r.Value, exp.Value)
						}
						seq++
						continue
					}
					encoded = true
					if raw.Checked() == lengths {
						t.Fatalf("record %d: value checked on arrival: %v, want %v", seq, raw.Checked(), !lengths)
					}
					v, err := raw.Decode()
					if err != nil {
						t.Fatalf("record %d: %v", seq, err)
					}
					if exp := gen.Record(seq); !schema.ValueEqual(v, exp.Value) || r.Key != exp.Key {
						t.Fatalf("record %d differs: %v %v vs %v %v", seq, r.Key, v, exp.Key, exp.Value)
					}
					seq++
				}
				ht.ReleaseBatch(recs)
			}
			if err := ht.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSlotReaderRefuses: a SlotBatch naming memory outside the shared
// slots, or sent where none was agreed, is an error, not a read.
func TestSlotReaderRefuses(t *testing.T) {
	codec := pluginpb.NewCodec()
	var none *slotReader
	if _, err := none.take(&pluginpb.SlotBatch{Slot: 0, Bytes: 10}, codec); err == nil {
		t.Error("slot batch without shared memory taken")
	}
	region, err := shm.Create(sharedSlots * 8192)
	if errors.Is(err, shm.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &slotReader{region: region, slotBytes: 8192, on: true}
	defer s.close()
	copy(region.Bytes()[8192:], "second slot")
	got, err := s.take(&pluginpb.SlotBatch{Slot: 1, Count: 1, Bytes: 11}, codec)
	if err != nil || string(got) != "second slot" {
		t.Fatalf("take = %q, %v", got, err)
	}
	for _, sb := range []*pluginpb.SlotBatch{{Slot: sharedSlots, Bytes: 1}, {Slot: 0, Bytes: 8193}, {Slot: 1 << 31, Bytes: 1}} {
		if _, err := s.take(sb, codec); err == nil {
			t.Errorf("take(%v) succeeded", sb)
		}
	}
	s.on = false
	if _, err := s.take(&pluginpb.SlotBatch{Slot: 0, Bytes: 1}, codec); err == nil {
		t.Error("slot batch taken from memory the plugin refused")
	}
}

// TestSourceStopWhileWaitingForSlot: with nobody polling, the host stops
// taking batches and freeing slots, so the plugin waits for one; Stop
// must still end the task gracefully (the rest goes through the stream),
// not time out and kill it.
func TestSourceStopWhileWaitingForSlot(t *testing.T) {
	const stopTimeout = 10 * time.Second
	h := newTestHost(t, func(cfg *Config) { cfg.Batch = BatchLimits{MaxBytes: 64 << 10}; cfg.StopTimeout = stopTimeout })
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "gen"},
		map[string]string{"kafka.topic": "gen", "payload.bytes": "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ht := task.(*hostSourceTask)
	if ht.slots == nil {
		t.Skip("no shared memory here")
	}
	// One batch waits in the channel, one in the receive loop; then every
	// slot is lent and the plugin waits.
	deadline := time.Now().Add(5 * time.Second)
	for ht.slotBatches.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ht.slotBatches.Load() < 2 {
		t.Fatal("no batches through shared memory")
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := task.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Graceful: well within the stop timeout, after which the task would
	// have been killed (a bound of its own would only measure the machine).
	if took := time.Since(start); took > stopTimeout/2 {
		t.Errorf("stop took %v, near the stop timeout %v", took, stopTimeout)
	}
	t.Logf("%d batches through shared memory, %d through the stream", ht.slotBatches.Load(), ht.streamBatches.Load())
}

// noisyPluginArg on its command line makes this test binary, started as a
// plugin, serve the noisy source (test.NoisySource); with setsidChildArg
// and a file name after it, it first starts a child in a session of its
// own that keeps the plugin's stdout and stderr open, and writes
// "<plugin pid> <child pid>" to the file.
const (
	noisyPluginArg = "tributary-test-noisy-plugin"
	setsidChildArg = "tributary-test-setsid-child"
	noisyClass     = "test.NoisySource"
)

func init() {
	if os.Getenv(pluginpb.MagicCookieKey) == "" {
		return
	}
	for i, a := range os.Args[1:] {
		switch a {
		case setsidChildArg:
			c := exec.Command("sleep", "300")
			c.Stdout, c.Stderr = os.Stdout, os.Stderr
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			_ = os.WriteFile(os.Args[i+2], []byte(fmt.Sprintf("%d %d", os.Getpid(), c.Process.Pid)), 0o644)
			sdk.Serve(noisySource())
		case noisyPluginArg:
			sdk.Serve(noisySource())
		}
	}
}

type noisyConfig struct {
	// Mode: ok; last-words (a line to os.Stderr and one to os.Stdout, then
	// os.Exit(5)); long-lines (lines of 256 KiB straight to fd 2, then
	// os.Exit(5)).
	Mode string `key:"mode" default:"ok" doc:"how to end"`
}

func noisySource() sdk.Connector {
	return sdk.SourceConnector[noisyConfig]{Class: noisyClass, Version: "1",
		NewTask: func(c noisyConfig) sdk.SourceTask { return &noisyTask{mode: c.Mode} }}
}

type noisyTask struct {
	mode string
	n    int64
}

func (t *noisyTask) Open(context.Context, sdk.SourceTaskContext) error { return nil }
func (t *noisyTask) Close(context.Context) error                       { return nil }

func (t *noisyTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	if t.n++; t.n < 3 { // a few records first: the start is acknowledged
		return []sdk.SourceRecord{{Partition: sdk.Partition{"p": "x"}, Offset: sdk.Offset{"n": t.n}, Topic: "noisy",
			ValueSchema: schema.Int64, Value: t.n}}, nil
	}
	switch t.mode {
	case "last-words":
		fmt.Fprintln(os.Stderr, "LAST-WORDS on stderr")
		fmt.Fprintln(os.Stdout, "LAST-WORDS on stdout")
		os.Exit(5)
	case "long-lines":
		fd2 := os.NewFile(2, "fd2")
		line := bytes.Repeat([]byte("L"), 256<<10)
		for range 40 {
			_, _ = fd2.Write(line)
			_, _ = fd2.Write([]byte("\n"))
		}
		fmt.Fprintln(fd2, "LAST-LINE before the crash")
		os.Exit(5)
	}
	<-ctx.Done()
	return nil, nil
}

// newNoisyHost starts a Host whose builtin plugin serves the noisy source.
func newNoisyHost(t *testing.T, logger *slog.Logger) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe, noisyPluginArg}}, Logger: logger, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// crashNoisy runs a noisy task in mode until it fails, and returns its
// error.
func crashNoisy(t *testing.T, h *Host, mode string) *sdk.TaskError {
	t.Helper()
	ctx := context.Background()
	task, err := h.StartSourceTask(ctx, noisyClass, sdk.TaskInfo{Connector: "noisy"}, map[string]string{"mode": mode}, nil)
	if err == nil {
		err = pollUntilError(t, task)
		_ = task.Stop(ctx)
	}
	var te *sdk.TaskError
	if !errors.As(err, &te) {
		t.Fatalf("error without a trace (nothing of the plugin's output kept): %v", err)
	}
	if !strings.Contains(te.Message, "exit status 5") {
		t.Errorf("message %q lacks the exit status", te.Message)
	}
	return te
}

// TestKillBoundedWhenOutputHeldOutsideGroup: a plugin whose child left its
// process group (setsid) and keeps the plugin's stdout and stderr open
// must not hold the worker: go-plugin's Kill waits for the end of the
// plugin's output, which the group kill cannot bring. kill gives up after
// a bounded wait, says so in the log, and the plugin itself is dead.
func TestKillBoundedWhenOutputHeldOutsideGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups are used on Linux")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	exe, _ := os.Executable()
	pidFile := filepath.Join(t.TempDir(), "pids")
	pids := func() (plugin, child int) {
		b, _ := os.ReadFile(pidFile)
		_, _ = fmt.Sscan(string(b), &plugin, &child)
		return plugin, child
	}
	// The child outlives the plugin: end it, which lets the goroutines
	// still reading the plugin's output end too.
	t.Cleanup(func() {
		if _, child := pids(); child > 0 {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	})
	logger, logs := newCapture()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		// Discovery starts the plugin, reads its specification and stops it.
		_, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe, setsidChildArg, pidFile}}, Logger: logger})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(killGrace + 20*time.Second):
		t.Fatalf("discovery still waits for the plugin after %v", time.Since(start).Round(time.Second))
	}
	t.Logf("discovery took %v", time.Since(start).Round(100*time.Millisecond))
	plugin, child := pids()
	if plugin == 0 || child == 0 {
		t.Fatalf("pid file %q", pidFile)
	}
	waitGone(t, plugin, 5*time.Second)
	if processGone(child) {
		t.Fatal("the child in its own session is gone: the test proves nothing")
	}
	found := false
	for _, r := range logs() {
		if strings.Contains(r.Msg, "outside its process group") && r.Attrs["pid"] == strconv.Itoa(plugin) && r.Attrs["path"] == exe {
			found = true
		}
	}
	if !found {
		t.Errorf("no log of the output held open, with the plugin's path and pid: %+v", logs())
	}
}

// TestFailureTraceIsBounded: a plugin that writes long lines to its stderr
// just before it crashes gives a failure whose trace stays small enough
// for the status topic, and still ends with the last line.
func TestFailureTraceIsBounded(t *testing.T) {
	h := newNoisyHost(t, slog.New(slog.DiscardHandler))
	te := crashNoisy(t, h, "long-lines")
	if len(te.Message) > 4<<10 {
		t.Errorf("message of %d bytes", len(te.Message))
	}
	if len(te.Trace) > 64<<10 {
		t.Errorf("trace of %d bytes, want at most 64 KiB", len(te.Trace))
	}
	if !strings.HasPrefix(te.Trace, te.Message) || !strings.HasSuffix(te.Trace, "LAST-LINE before the crash") {
		t.Errorf("trace does not lead with the message and end with the last line: %.200q … %q", te.Trace, te.Trace[max(0, len(te.Trace)-200):])
	}
	if !strings.Contains(te.Trace, "bytes cut]") {
		t.Errorf("long lines are not marked as cut")
	}
}

// TestLastWordsReachTraceAndLog: what a plugin writes to os.Stderr and
// os.Stdout just before os.Exit reaches its task's trace and the worker's
// log (go-plugin forwards them through the connection, which dies with the
// process, unless the SDK points them back at the real stderr).
func TestLastWordsReachTraceAndLog(t *testing.T) {
	logger, logs := newCapture()
	h := newNoisyHost(t, logger)
	for range 3 { // the words were lost more often than not: try a few times
		te := crashNoisy(t, h, "last-words")
		for _, words := range []string{"LAST-WORDS on stderr", "LAST-WORDS on stdout"} {
			if !strings.Contains(te.Trace, words) {
				t.Fatalf("trace lacks %q:\n%s", words, te.Trace)
			}
			logged := false
			for _, r := range logs() {
				logged = logged || r.Msg == words && r.Attrs["connector"] == "noisy"
			}
			if !logged {
				t.Fatalf("%q not in the worker log", words)
			}
		}
	}
}

// TestNoSocketFilesLeft: plugins create their socket in a directory of the
// host's, which the host removes: neither a clean stop nor a crash leaves
// a file in $TMPDIR.
func TestNoSocketFilesLeft(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("plugins listen on TCP")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := func(when string) {
		t.Helper()
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) > 0 {
			t.Errorf("%s: left in $TMPDIR: %v", when, names)
		}
	}
	h := newTestHost(t, func(c *Config) { c.StopTimeout = 500 * time.Millisecond })
	left("after discovery")
	if _, err := h.Validate(context.Background(), crashyClass, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	left("after validation")
	assertRestartWorks(t, h) // starts a task and stops it cleanly
	left("after a clean stop")
	ctx := context.Background()
	// The exit may beat the start's acknowledgement.
	task, err := h.StartSourceTask(ctx, crashyClass, sdk.TaskInfo{Connector: "c"}, map[string]string{"mode": "exit"}, nil)
	if err == nil {
		if err := pollUntilError(t, task); err == nil {
			t.Fatal("no crash")
		}
		_ = task.Stop(ctx)
	}
	left("after a crash")
}

// TestAlterOffsetsThroughPlugin: the host asks a plugin's connector about
// an offsets change (Kafka Connect's alterOffsets) and reports its answer:
// accepted by a hook, refused with the connector's message, unsupported,
// or asked of a connector without a hook. Source offsets keep their number
// types across the process boundary (an int64 stays exact, 5.0 a float).
func TestAlterOffsetsThroughPlugin(t *testing.T) {
	h := newTestHost(t, nil)
	ctx := context.Background()
	fileCfg := map[string]string{"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}
	part := sdk.Partition{"filename": "/tmp/in.txt"}
	ask := func(class string, cfg map[string]string, ch sdk.OffsetChange) (bool, error) {
		t.Helper()
		return h.AlterOffsets(ctx, class, "c", cfg, ch)
	}
	accepted, err := ask(file.SourceClass, fileCfg, sdk.OffsetChange{Source: []sdk.SourceOffset{
		{Partition: part, Offset: sdk.Offset{"position": int64(math.MaxInt64)}},
		{Partition: sdk.Partition{"filename": "/old"}}, // a reset
	}})
	if err != nil || !accepted {
		t.Fatalf("valid file offsets: %v, %v; want accepted", accepted, err)
	}
	_, err = ask(file.SourceClass, fileCfg, sdk.OffsetChange{Source: []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": 5.0}}}})
	var refused *OffsetsRefusedError
	if !errors.As(err, &refused) || refused.Message != "The value for the 'position' key in the offset is expected to be a Long value" {
		t.Fatalf("float position: %v; want the connector's refusal", err)
	}
	// Datagen has no hook: Kafka Connect's default alterOffsets.
	accepted, err = ask("Datagen", map[string]string{"kafka.topic": "t"}, sdk.OffsetChange{Source: []sdk.SourceOffset{{Partition: sdk.Partition{"p": "x"}, Offset: sdk.Offset{"n": int64(1)}}}})
	if err != nil || accepted {
		t.Fatalf("no hook: %v, %v; want not accepted, no error", accepted, err)
	}
	five, big := int64(5), int64(101)
	accepted, err = ask(offsetsSinkClass, nil, sdk.OffsetChange{Sink: map[sdk.TopicPartition]*int64{{Topic: "a"}: &five, {Topic: "a", Partition: 1}: nil}})
	if err != nil || !accepted {
		t.Fatalf("sink offsets: %v, %v", accepted, err)
	}
	_, err = ask(offsetsSinkClass, nil, sdk.OffsetChange{Sink: map[sdk.TopicPartition]*int64{{Topic: "a"}: &big, {Topic: "b", Partition: 2}: nil}})
	if !errors.As(err, &refused) || refused.Message != "offsets above 100 are refused; got a-0=101,b-2=reset" {
		t.Fatalf("sink refusal: %v", err)
	}
	_, err = ask(offsetsSinkClass, map[string]string{"mode": "unsupported"}, sdk.OffsetChange{Sink: map[sdk.TopicPartition]*int64{}})
	if !errors.Is(err, sdk.ErrOffsetsUnsupported) {
		t.Fatalf("unsupported: %v", err)
	}
	_, err = ask(offsetsSinkClass, map[string]string{"mode": "panic"}, sdk.OffsetChange{Sink: map[sdk.TopicPartition]*int64{}})
	if err == nil || errors.As(err, &refused) || !strings.Contains(err.Error(), "boom in AlterOffsets") {
		t.Fatalf("panic: %v; want a failure naming the panic, not a refusal", err)
	}
}

// TestOffsetsAnswerFromOlderPlugin: a plugin built before the AlterOffsets
// RPC answers Unimplemented, which is a connector without the hook.
func TestOffsetsAnswerFromOlderPlugin(t *testing.T) {
	accepted, err := offsetsAnswer(nil, status.Error(codes.Unimplemented, "method AlterOffsets not implemented"))
	if err != nil || accepted {
		t.Fatalf("Unimplemented: %v, %v", accepted, err)
	}
	if _, err := offsetsAnswer(nil, status.Error(codes.Unavailable, "gone")); err == nil {
		t.Fatal("a failed call is no answer")
	}
}

// TestPluginLogsUnderClassLoggers: a plugin's lines reach loggers named
// after its classes, as a Java connector's do (its task's lines under the
// task class), so that /admin/loggers levels apply to them.
func TestPluginLogsUnderClassLoggers(t *testing.T) {
	capture, logs := newCapture()
	reg := loglevel.New(capture.Handler(), slog.LevelInfo)
	h := newTestHost(t, func(c *Config) { c.Logger = reg.Logger("dev.tributary") })
	if _, ok := reg.Level("test.CrashySourceTask"); !ok {
		t.Fatalf("the task class logger is not listed after discovery: %v", reg.Levels())
	}
	ctx := context.Background()
	seen := func(conn string) (capturedRecord, bool) {
		for _, r := range logs() {
			if r.Msg == "hello from plugin" && r.Attrs["connector"] == conn {
				return r, true
			}
		}
		return capturedRecord{}, false
	}
	task := startCrashy(t, h, sdk.TaskInfo{Connector: "loud", Task: 1}, map[string]string{"mode": "ok"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r, ok := seen("loud"); ok {
			if r.Attrs["logger"] != "test.CrashySourceTask" || r.Attrs["task"] != "1" {
				t.Fatalf("re-emitted record %+v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task's line never arrived: %+v", logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	task.Stop(ctx)
	if _, err := reg.SetLevel("test", "WARN"); err != nil {
		t.Fatal(err)
	}
	task = startCrashy(t, h, sdk.TaskInfo{Connector: "quiet", Task: 1}, map[string]string{"mode": "ok"})
	defer task.Stop(ctx)
	if _, err := task.Poll(ctx); err != nil { // the task opened: its line was written
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if r, ok := seen("quiet"); ok {
		t.Fatalf("an INFO line passed a WARN logger: %+v", r)
	}
}

package plugins

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// pssKB is the PSS of pid in kB (smaps_rollup), 0 if unknown.
func pssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkIdleTasksMemory starts tasks FileStreamSource tasks (one
// connector each, each reading an empty file of its own) under each
// isolation and reports the memory they cost: the PSS of the plugin
// processes per task and their count (the worker's side is measured by
// tributary-bench many). The plugin here is the test binary, which links
// every first-party connector: a process costs more than a
// tributary-connector-basic one. Not a time benchmark (ns/op is the start
// of all tasks). Run:
//
//	go test -run '^$' -bench BenchmarkIdleTasksMemory -benchtime 1x ./plugins
func BenchmarkIdleTasksMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, iso := range []Isolation{IsolationPlugin, IsolationConnector} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("isolation=%s/tasks=%d", iso, n), func(b *testing.B) {
				for range b.N {
					h, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe}}, Logger: slog.New(slog.DiscardHandler), Isolation: iso})
					if err != nil {
						b.Fatal(err)
					}
					dir := b.TempDir()
					tasks := make([]SourceTask, n)
					for i := range tasks {
						file := filepath.Join(dir, fmt.Sprintf("f%d", i))
						if err := os.WriteFile(file, nil, 0o644); err != nil {
							b.Fatal(err)
						}
						tasks[i], err = h.StartSourceTask(context.Background(), "FileStreamSource", sdk.TaskInfo{Connector: fmt.Sprintf("c%d", i)},
							map[string]string{"file": file, "topic": "t"}, nil)
						if err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					time.Sleep(2 * time.Second) // every task opened its file and went idle
					var pss int64
					h.procsMu.Lock()
					procs := len(h.procs)
					for _, e := range h.procs {
						pss += pssKB(e.p.pid())
					}
					h.procsMu.Unlock()
					b.ReportMetric(float64(pss)/1024/float64(n), "plugin-PSS-MB/task")
					b.ReportMetric(float64(procs), "processes")
					for _, t := range tasks {
						_ = t.Stop(context.Background())
					}
					b.StartTimer()
				}
			})
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker"
)

// TestServesFirstPartyConnectors builds the real executables and runs the
// file source through tributary-connectors, found beside tributary, the way
// a worker reaches the first-party connectors.
func TestServesFirstPartyConnectors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	dir := t.TempDir()
	bin := harness.BuildTributary(t) // the build the end-to-end tests share: one link per run
	exe := filepath.Join(filepath.Dir(bin), plugins.BuiltinExecutable)
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Builtin: []string{exe}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"FileStreamSource", "FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSourceConnector", "Datagen"} {
		if _, err := h.Spec(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := h.StartSourceTask(ctx, "FileStreamSource", sdk.TaskInfo{Connector: "f", Task: 0},
		map[string]string{"file": in, "topic": "lines"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := task.Poll(pctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Value != "world" || recs[1].Partition["filename"] != in {
		t.Fatalf("records %+v", recs)
	}
	if pos, _ := recs[1].Offset.Int64("position"); pos != 12 {
		t.Fatalf("offset %v", recs[1].Offset)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFirstPartyVersionsMatchWorker: the first-party connectors report the
// version GET / reports (they said 4.0.0-tributary under a 4.4.0 worker).
func TestFirstPartyVersionsMatchWorker(t *testing.T) {
	for _, c := range connectors.All() {
		if s := c.Spec(); s.Version != worker.Version {
			t.Errorf("%s reports version %q, the worker %q", s.Class, s.Version, worker.Version)
		}
	}
}

// TestArgs: --help lists every connector served; arguments are refused
// (a worker passes none).
func TestArgs(t *testing.T) {
	all := connectors.All()
	var stdout, stderr bytes.Buffer
	if code, done := parseArgs([]string{"--help"}, all, &stdout, &stderr); code != 0 || !done {
		t.Errorf("--help: exit %d, done %v", code, done)
	}
	for _, c := range all {
		if class := c.Spec().Class; !strings.Contains(stdout.String(), class) {
			t.Errorf("--help does not list %s:\n%s", class, stdout.String())
		}
	}
	stdout.Reset()
	if code, done := parseArgs([]string{"plugin"}, all, &stdout, &stderr); code != 2 || !done || !strings.Contains(stderr.String(), `"plugin"`) {
		t.Errorf("an argument: exit %d, done %v, stderr %q; want 2 and the argument named", code, done, stderr.String())
	}
	if _, done := parseArgs(nil, all, &stdout, &stderr); done {
		t.Error("no arguments: done; want to serve")
	}
}

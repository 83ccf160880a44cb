package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker"
)

// TestFirstPartyVersionsMatchWorker: the first-party connectors report the
// version GET / reports (they said 4.0.0-tributary under a 4.4.0 worker).
func TestFirstPartyVersionsMatchWorker(t *testing.T) {
	for _, c := range connectors.All() {
		if s := c.Spec(); s.Version != worker.Version {
			t.Errorf("%s reports version %q, the worker %q", s.Class, s.Version, worker.Version)
		}
	}
}

// TestBuiltinExecutablesServeEveryConnector builds the real executables
// and finds the first-party connectors' ones as a worker does (here on
// PATH: beside the test binary there are none): together they serve every
// connector of connectors.All, each class once, and the file source runs
// through them.
func TestBuiltinExecutablesServeEveryConnector(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bin := harness.BuildTributary(t) // the build the end-to-end tests share: one link per run
	t.Setenv("PATH", filepath.Dir(bin))
	builtin, err := plugins.BuiltinCommands()
	if err != nil {
		t.Fatal(err)
	}
	// One per cmd/tributary-connector-* directory.
	dirs, err := filepath.Glob(filepath.Join("..", "tributary-connector-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(builtin) != len(dirs) || len(dirs) < 5 {
		t.Errorf("found %v; want one executable for each of %v", builtin, dirs)
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Builtin: builtin})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range connectors.All() {
		if _, err := h.Spec(c.Spec().Class); err != nil {
			t.Errorf("%s: %v", c.Spec().Class, err)
		}
	}
	if got, want := len(h.Specs()), len(connectors.All()); got != want {
		t.Errorf("%d connectors served; want connectors.All's %d", got, want)
	}
	for _, name := range []string{"FileStreamSource", "FileStreamSinkConnector", "Datagen"} {
		if _, err := h.Spec(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	in := filepath.Join(t.TempDir(), "in.txt")
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

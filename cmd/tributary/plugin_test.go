package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// TestPluginModeServesBuiltinConnectors builds the real binary and runs the
// file source through "tributary plugin", the way a worker reaches the
// first-party connectors.
func TestPluginModeServesBuiltinConnectors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := harness.BuildTributary(t) // the build the end-to-end tests share: one link per run
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Builtin: []string{bin, "plugin"}})
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

package plugins

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// TestExampleLoadedFromPluginPath builds the example third-party connector
// (examples/ticker, its own module built against the SDK module alone) as
// a separate binary, puts it under a plugin.path directory and runs it
// through the host.
func TestExampleLoadedFromPluginPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ticker")
	build := exec.Command("go", "build", "-o", bin, "./ticker")
	build.Dir = filepath.Join("..", "examples")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	ctx := context.Background()
	var logs bytes.Buffer
	h, err := NewHost(ctx, Config{PluginPath: []string{dir}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if want := `msg="plugin loaded from plugin.path" path=` + bin + ` plugins="com.example.TickerConnector (source, version 0.1.0)"`; !strings.Contains(logs.String(), want) {
		t.Errorf("discovery logged:\n%s\nwant a line with %s", logs.String(), want)
	}
	spec, err := h.Spec("Ticker")
	if err != nil {
		t.Fatalf("plugin not discovered: %v (found %v)", err, h.Specs())
	}
	if spec.Class != "com.example.TickerConnector" || spec.Type != sdk.Source || len(spec.Config) != 2 {
		t.Fatalf("spec %+v", spec)
	}
	infos, err := h.Validate(ctx, "TickerConnector", map[string]string{"interval.ms": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if errs := infos.Errors(); len(errs["topic"]) != 1 || len(errs["interval.ms"]) != 1 {
		t.Fatalf("validation errors %v", errs)
	}
	// Offsets set through the REST API are the connector's to judge (its
	// AlterOffsets hook).
	part := sdk.Partition{"ticker": "main"}
	cfg := map[string]string{"topic": "ticks"}
	_, err = h.AlterOffsets(ctx, "Ticker", "ticks", cfg, sdk.OffsetChange{Source: []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"seq": 1.5}}}})
	var refused *OffsetsRefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Message, "a ticker offset is") {
		t.Fatalf("AlterOffsets of a fractional seq: %v; want the connector's refusal", err)
	}
	accepted, err := h.AlterOffsets(ctx, "Ticker", "ticks", cfg, sdk.OffsetChange{Source: []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"seq": int64(7)}}}})
	if err != nil || !accepted {
		t.Fatalf("AlterOffsets of seq 7: %v, %v; want accepted", accepted, err)
	}
	offsets := OffsetReaderFunc(func(context.Context, []sdk.Partition) ([]sdk.Offset, error) {
		return []sdk.Offset{{"seq": int64(41)}}, nil
	})
	task, err := h.StartSourceTask(ctx, "Ticker", sdk.TaskInfo{Connector: "ticks", Task: 0},
		map[string]string{"topic": "ticks", "interval.ms": "5"}, offsets)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := task.Poll(pctx)
	if err != nil {
		t.Fatal(err)
	}
	v := recs[0].Value.(*schema.Struct)
	if v.Get("seq") != int64(42) || recs[0].Topic != "ticks" {
		t.Fatalf("first tick %v on %s, want seq 42 (resumed after 41)", v, recs[0].Topic)
	}
	if err := task.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

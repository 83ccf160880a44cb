package sdk_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

// LinesConfig is the configuration of the example sink: the keys a Kafka
// Connect user sets besides the worker's own (topics, converters,
// tasks.max, which the worker handles).
type LinesConfig struct {
	Path string `key:"path" importance:"high" validate:"nonempty" doc:"File the records' values are appended to, one per line."`
}

// linesTask appends each record's value to a file, as JSON. Put buffers; Flush
// writes and fsyncs, then reports everything it was given as durable, so
// the worker commits exactly what is on disk.
type linesTask struct {
	cfg LinesConfig
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

func (t *linesTask) Open(_ context.Context, _ sdk.SinkTaskContext) error {
	f, err := os.OpenFile(t.cfg.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("lines: open %s: %w", t.cfg.Path, err)
	}
	t.f, t.w = f, bufio.NewWriter(f)
	return nil
}

func (t *linesTask) Put(_ context.Context, records []sdk.SinkRecord) error {
	for _, r := range records {
		// The value as Kafka's JsonConverter writes it (schemas.enable=false).
		line, err := schema.AppendJSON(t.buf[:0], r.ValueSchema, r.Value, schema.JSONOptions{})
		if err != nil {
			return fmt.Errorf("lines: %s@%d: %w", r.TopicPartition(), r.Offset, err)
		}
		t.buf = append(line, '\n')
		t.w.Write(t.buf) // buffered; Flush reports its error
	}
	return nil
}

func (t *linesTask) Flush(_ context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	// An error here does not fail the task: the worker commits nothing
	// and gives the records since its last commit to Put again.
	if err := t.w.Flush(); err != nil {
		return nil, fmt.Errorf("lines: write: %w", err)
	}
	if err := t.f.Sync(); err != nil {
		return nil, fmt.Errorf("lines: fsync: %w", err)
	}
	return offsets, nil
}

func (t *linesTask) Close(context.Context) error {
	if t.f == nil {
		return nil
	}
	err := t.w.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// A sink connector: a config struct and a task. A plugin's main would call
// sdk.Serve(linesConnector()).
func Example_sinkConnector() {
	c := sdk.SinkConnector[LinesConfig]{
		Class:   "com.example.LinesSink",
		Aliases: []string{"LinesSink"},
		Version: "0.1.0",
		Doc:     "Appends record values to a file, one per line.",
		NewTask: func(cfg LinesConfig) sdk.SinkTask { return &linesTask{cfg: cfg} },
	}
	spec := c.Spec()
	fmt.Println(spec.Class, spec.Type, spec.Config[0].Name)
	// Output: com.example.LinesSink sink path
}

// The example sink passes the acceptance kit, as a connector author's own
// test would run it.
func TestLinesSinkAcceptance(t *testing.T) {
	sdktest.RunSink(t, sdktest.SinkDriver{
		Connector: sdk.SinkConnector[LinesConfig]{
			Class: "com.example.LinesSink", Version: "0.1.0",
			NewTask: func(cfg LinesConfig) sdk.SinkTask { return &linesTask{cfg: cfg} },
		},
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"path": filepath.Join(t.TempDir(), "out.txt"), "topics": "a"}
		},
		ReadBack: func(t *testing.T, cfg map[string]string) []string {
			b, err := os.ReadFile(cfg["path"])
			if err != nil {
				t.Fatal(err)
			}
			return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		},
		// Each value is written as schema.AppendJSON renders it.
		JSON: &schema.JSONOptions{},
	})
}

package file

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func appendLines(t *testing.T, path string, from, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i < from+n; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
}

func TestSourceAcceptance(t *testing.T) {
	sdktest.RunSource(t, sdktest.SourceDriver{
		Deterministic: true,
		Connector:     Source(),
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"file": filepath.Join(t.TempDir(), "in.txt"), "topic": "lines"}
		},
		Seed: func(t *testing.T, cfg map[string]string, n int) { appendLines(t, cfg["file"], 0, n) },
	})
}

func TestSinkAcceptance(t *testing.T) {
	sdktest.RunSink(t, sdktest.SinkDriver{
		Connector: Sink(),
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"file": filepath.Join(t.TempDir(), "out.txt"), "topics": "a,b"}
		},
		ReadBack: func(t *testing.T, cfg map[string]string) []string {
			f, err := os.Open(cfg["file"])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out []string
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				out = append(out, sc.Text())
			}
			return out
		},
		// A line per record, as Format prints its value: every kind the
		// kit sends is looked for (tombstones are written as "null").
		RenderRecord: func(r *sdk.SinkRecord) (string, bool) { return Format(r.Value), true },
	})
}

func TestSpecMatchesKafka(t *testing.T) {
	spec := Source().Spec()
	want := map[string]bool{"FileStreamSource": true, "FileStreamSourceConnector": true}
	for _, a := range spec.Aliases {
		delete(want, a)
	}
	if len(want) != 0 || spec.Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Fatalf("aliases %v class %s", spec.Aliases, spec.Class)
	}
	byName := map[string]sdk.ConfigKeyInfo{}
	for _, k := range spec.Config {
		byName[k.Name] = k
	}
	if k := byName["batch.size"]; k.Type != "INT" || *k.DefaultValue != "2000" || k.Required {
		t.Errorf("batch.size %+v", k)
	}
	if k := byName["topic"]; !k.Required || k.Importance != "HIGH" || k.DefaultValue != nil {
		t.Errorf("topic %+v", k)
	}
	if k := byName["file"]; k.Required || k.DefaultValue != nil {
		t.Errorf("file %+v", k)
	}
	sink := Sink().Spec()
	if !sink.Matches("FileStreamSink") || !sink.Matches("FileStreamSinkConnector") || sink.Type != sdk.Sink {
		t.Errorf("sink spec %+v", sink)
	}
}

type ctxStub struct {
	sdk.SourceTaskContext
	off sdk.Offset
}

func (c ctxStub) Offset(context.Context, sdk.Partition) (sdk.Offset, error) { return c.off, nil }

func TestSourceOffsetsLikeKafka(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte("ab\r\ncd\nef"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := &sourceTask{cfg: SourceConfig{File: path, Topic: "t", BatchSize: 10}}
	if err := task.Open(context.Background(), ctxStub{}); err != nil {
		t.Fatal(err)
	}
	recs, err := task.Poll(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	// The unterminated "ef" is not emitted until its newline arrives.
	if len(recs) != 2 || recs[0].Value != "ab" || recs[1].Value != "cd" {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Partition["filename"] != path || recs[0].Offset["position"] != int64(4) || recs[1].Offset["position"] != int64(7) {
		t.Fatalf("offsets %v %v", recs[0].Offset, recs[1].Offset)
	}
	if !schema.Equal(recs[0].ValueSchema, schema.String) || recs[0].KeySchema != nil {
		t.Fatalf("schemas %v %v", recs[0].KeySchema, recs[0].ValueSchema)
	}
	appendLines(t, path, 0, 0)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("gh\n")
	f.Close()
	recs, err = task.Poll(context.Background(), 10)
	if err != nil || len(recs) != 1 || recs[0].Value != "efgh" || recs[0].Offset["position"] != int64(12) {
		t.Fatalf("after completing the line: %+v %v", recs, err)
	}
	task.Close(context.Background())
}

func TestMissingFileKeepsPolling(t *testing.T) {
	task := &sourceTask{cfg: SourceConfig{File: filepath.Join(t.TempDir(), "later.txt"), Topic: "t", BatchSize: 10}}
	if err := task.Open(context.Background(), loggerCtx{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	recs, err := task.Poll(ctx, 10)
	if err != nil || len(recs) != 0 {
		t.Fatalf("missing file: %v %v", recs, err)
	}
	appendLines(t, task.cfg.File, 0, 3)
	recs, err = task.Poll(context.Background(), 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("after creation: %v %v", recs, err)
	}
	task.Close(context.Background())
}

func TestFormat(t *testing.T) {
	s := schema.StructOf("x").Field("a", schema.Int32).Field("b", schema.OptionalString).Field("c", schema.String).Build()
	v := schema.NewStruct(s).Set("a", int32(1)).Set("c", "z")
	if got := Format(v); got != "Struct{a=1,c=z}" {
		t.Errorf("Format(struct) = %q", got)
	}
	if Format(nil) != "null" || Format([]any{int64(1), "x"}) != "[1, x]" {
		t.Errorf("Format")
	}
}

type loggerCtx struct{ sdk.SourceTaskContext }

func (loggerCtx) Offset(context.Context, sdk.Partition) (sdk.Offset, error) { return nil, nil }
func (loggerCtx) Logger() *slog.Logger                                      { return slog.New(slog.DiscardHandler) }

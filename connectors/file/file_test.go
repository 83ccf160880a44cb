package file

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// TestSourceAlterOffsets: the file source checks offsets set through the
// REST API as Kafka's FileStreamSourceConnector.alterOffsets does, with its
// messages word for word.
func TestSourceAlterOffsets(t *testing.T) {
	ctx := context.Background()
	approver := Source().(sdk.OffsetApprover)
	withFile := map[string]string{"file": "/tmp/in.txt", "topic": "t"}
	part := sdk.Partition{"filename": "/tmp/in.txt"}
	for _, tc := range []struct {
		name   string
		config map[string]string
		offs   []sdk.SourceOffset
		want   string // "" accepted
	}{
		{"valid", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": int64(5)}}}, ""},
		{"extra keys", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": int64(0), "x": "y"}}}, ""},
		{"reset anything", withFile, []sdk.SourceOffset{{Partition: sdk.Partition{"garbage": true}}}, ""},
		{"no position", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"wrong": int64(1)}}},
			"Offset objects should either be null or contain the key 'position'"},
		{"string position", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": "5"}}},
			"The value for the 'position' key in the offset is expected to be a Long value"},
		{"float position", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": 5.0}}},
			"The value for the 'position' key in the offset is expected to be a Long value"},
		{"negative position", withFile, []sdk.SourceOffset{{Partition: part, Offset: sdk.Offset{"position": int64(-1)}}},
			"The value for the 'position' key in the offset should be a non-negative value"},
		{"null partition", withFile, []sdk.SourceOffset{{Offset: sdk.Offset{"position": int64(1)}}},
			"Partition objects cannot be null"},
		{"no filename", withFile, []sdk.SourceOffset{{Partition: sdk.Partition{"file": "x"}, Offset: sdk.Offset{"position": int64(1)}}},
			"Partition objects should contain the key 'filename'"},
		{"stdin", map[string]string{"topic": "t"}, nil,
			"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accepted, err := approver.ApproveOffsets(ctx, tc.config, sdk.OffsetChange{Source: tc.offs})
			switch {
			case tc.want == "" && (err != nil || !accepted):
				t.Fatalf("ApproveOffsets = %v, %v; want accepted", accepted, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || accepted):
				t.Fatalf("ApproveOffsets = %v, %v; want the refusal %q", accepted, err, tc.want)
			}
		})
	}
}

// TestSinkAlterOffsets: like Kafka's FileStreamSinkConnector, the file sink
// accepts any change (its answer is "altered successfully").
func TestSinkAlterOffsets(t *testing.T) {
	off := int64(3)
	accepted, err := Sink().(sdk.OffsetApprover).ApproveOffsets(context.Background(), map[string]string{"topics": "a"},
		sdk.OffsetChange{Sink: map[sdk.TopicPartition]*int64{{Topic: "a"}: &off, {Topic: "a", Partition: 1}: nil}})
	if err != nil || !accepted {
		t.Fatalf("ApproveOffsets = %v, %v", accepted, err)
	}
}

// An idle file is polled less and less often, from 100 ms up to Kafka's
// 1 s; the first line brings the wait back to 100 ms.
func TestSourceIdleBackoff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	appendLines(t, path, 0, 1)
	task := &sourceTask{cfg: SourceConfig{File: path, Topic: "t", BatchSize: 10}}
	if err := task.Open(context.Background(), ctxStub{}); err != nil {
		t.Fatal(err)
	}
	defer task.Close(context.Background())
	idle, cancel := context.WithCancel(context.Background())
	cancel() // the waits return at once; task.idle says how long they were
	if recs, err := task.Poll(idle, 10); err != nil || len(recs) != 1 || task.idle != 0 {
		t.Fatalf("first poll: %v %v, wait %v", recs, err, task.idle)
	}
	var waits []time.Duration
	for range 6 {
		if recs, err := task.Poll(idle, 10); err != nil || len(recs) != 0 {
			t.Fatalf("idle poll: %v %v", recs, err)
		}
		waits = append(waits, task.idle)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	if !slices.Equal(waits, want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	appendLines(t, path, 1, 1)
	if recs, err := task.Poll(idle, 10); err != nil || len(recs) != 1 || task.idle != 0 {
		t.Fatalf("after a line: %v %v, wait %v", recs, err, task.idle)
	}
	if _, err := task.Poll(idle, 10); err != nil || task.idle != minIdleWait {
		t.Fatalf("idle again: wait %v", task.idle)
	}
}

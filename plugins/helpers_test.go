package plugins

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// The test binary doubles as a plugin (started by the host with the magic
// cookie in its environment) and as a host process for the orphan test.
func TestMain(m *testing.M) {
	if os.Getenv(pluginpb.MagicCookieKey) != "" {
		if len(os.Args) > 1 && os.Args[1] == otherPlugin {
			sdk.Serve(otherConnector())
		}
		sdk.Serve(append(connectors.All(), crashyConnector(), offsetsSinkConnector(), txnConnector())...)
	}
	if os.Getenv("TRIBUTARY_TEST_HOST") == "1" {
		os.Exit(runTestHost())
	}
	goleak.VerifyTestMain(m)
}

// crashyConfig drives a source task that misbehaves on purpose.
type crashyConfig struct {
	Topic string `key:"topic" default:"crashy" doc:"topic"`
	// Mode: ok, panic, exit, hang, gopanic, openfail; commithang: every
	// OffsetsCommitted blocks forever, ignoring its context; huge: a
	// record larger than a gRPC message may be; leak: Open starts
	// goroutines that outlive the task.
	Mode  string `key:"mode" default:"ok" validate:"enum=ok|panic|exit|hang|gopanic|openfail|commithang|huge|leak" doc:"how to fail"`
	After int64  `key:"after" default:"3" doc:"records before failing"`
}

const crashyClass = "test.CrashySourceConnector"

func crashyConnector() sdk.Connector {
	return sdk.SourceConnector[crashyConfig]{
		Class: crashyClass, Version: "1",
		NewTask: func(c crashyConfig) sdk.SourceTask { return &crashyTask{cfg: c} },
	}
}

// otherPlugin, as the first argument of the test binary in plugin mode,
// makes it a plugin of its own serving otherClass alone: a second plugin
// executable, whose processes are apart from the first's.
const otherPlugin = "other-plugin"

// otherClass is the crashy connector under another class, served by the
// otherPlugin executable.
const otherClass = "test.OtherSourceConnector"

func otherConnector() sdk.Connector {
	return sdk.SourceConnector[crashyConfig]{
		Class: otherClass, Version: "1",
		NewTask: func(c crashyConfig) sdk.SourceTask { return &crashyTask{cfg: c} },
	}
}

type crashyTask struct {
	cfg    crashyConfig
	n      int64
	polled *sdk.Counter // its own metric: records polled, by topic
}

func (t *crashyTask) Open(_ context.Context, tc sdk.SourceTaskContext) error {
	tc.Logger().Info("hello from plugin", "mode", t.cfg.Mode)
	t.polled = sdk.MetricsOf(tc).Counter("test_polled_total", "Records polled.", "topic", "connector").With(t.cfg.Topic, "the plugin's")
	if t.cfg.Mode == "openfail" {
		return errors.New("cannot open: database unreachable")
	}
	if t.cfg.Mode == "leak" {
		for range 10 {
			go func() {
				for {
					time.Sleep(time.Hour)
				}
			}()
		}
	}
	return nil
}

func (t *crashyTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	if t.n >= t.cfg.After {
		switch t.cfg.Mode {
		case "panic":
			panic("boom in Poll")
		case "exit":
			os.Exit(7)
		case "hang":
			select {} // ignores ctx: a stuck task
		case "huge":
			t.n++
			return []sdk.SourceRecord{{Partition: sdk.Partition{"p": "x"}, Offset: sdk.Offset{"n": t.n}, Topic: t.cfg.Topic,
				ValueSchema: schema.String, Value: strings.Repeat("x", pluginpb.MaxMessageSize+1)}}, nil
		case "gopanic":
			go func() { panic("boom in a goroutine") }()
			time.Sleep(time.Second)
		default:
			<-ctx.Done()
			return nil, nil
		}
	}
	t.n++
	t.polled.Inc()
	return []sdk.SourceRecord{{Partition: sdk.Partition{"p": "x"}, Offset: sdk.Offset{"n": t.n}, Topic: t.cfg.Topic,
		ValueSchema: schema.Int64, Value: t.n}}, nil
}

func (t *crashyTask) Close(context.Context) error { return nil }

func (t *crashyTask) OffsetsCommitted(context.Context, []sdk.SourceOffset) error {
	if t.cfg.Mode == "commithang" {
		select {}
	}
	return nil
}

// txnConfig drives txnConnector.
type txnConfig struct {
	Topic string `key:"topic" default:"txn" doc:"topic"`
	// Declare: what ExactlyOnce answers (supported, unsupported, panic).
	Declare string `key:"declare" default:"supported" validate:"enum=supported|unsupported|panic" doc:"exactly-once answer"`
	// Boundaries: whether the tasks define their transactions.
	Boundaries bool  `key:"boundaries" default:"true" doc:"connector-defined boundaries"`
	Count      int64 `key:"count" default:"40" doc:"records to send"`
}

const txnClass = "test.TxnSourceConnector"

// txnConnector's tasks send Count records, numbered from 1, in polls of 7,
// and define their transactions: a commit after every record whose number
// is a multiple of 5, an abort after every multiple of 11 (and both a
// commit of the batch and of its last record on the poll that ends with
// 35: the record wins), and a commit of the batch after every third poll.
func txnConnector() sdk.Connector {
	return sdk.SourceConnector[txnConfig]{
		Class: txnClass, Version: "1",
		NewTask: func(c txnConfig) sdk.SourceTask { return &txnTask{cfg: c} },
		ExactlyOnce: func(c txnConfig) sdk.ExactlyOnceSupport {
			switch c.Declare {
			case "unsupported":
				return sdk.ExactlyOnceUnsupported
			case "panic":
				panic("boom in ExactlyOnce")
			}
			return sdk.ExactlyOnceSupported
		},
		TransactionBoundaries: func(c txnConfig) bool { return c.Boundaries },
	}
}

type txnTask struct {
	cfg   txnConfig
	n     int64
	polls int
	tx    sdk.TransactionContext
}

func (t *txnTask) Open(_ context.Context, tc sdk.SourceTaskContext) error {
	t.tx = sdk.TransactionContextOf(tc)
	return nil
}

func (t *txnTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	if t.n >= t.cfg.Count {
		<-ctx.Done()
		return nil, nil
	}
	var recs []sdk.SourceRecord
	for range 7 {
		if t.n >= t.cfg.Count {
			break
		}
		t.n++
		recs = append(recs, sdk.SourceRecord{Partition: sdk.Partition{"p": "x"}, Offset: sdk.Offset{"n": t.n}, Topic: t.cfg.Topic,
			ValueSchema: schema.Int64, Value: t.n})
	}
	t.polls++
	if t.tx != nil {
		for i := range recs {
			n := recs[i].Value.(int64)
			if n%5 == 0 {
				t.tx.CommitTransactionOn(&recs[i])
			}
			if n%11 == 0 {
				t.tx.AbortTransactionOn(&recs[i])
			}
		}
		if t.polls%3 == 0 || recs[len(recs)-1].Value.(int64) == 35 {
			t.tx.CommitTransaction()
		}
	}
	return recs, nil
}

func (t *txnTask) Close(context.Context) error { return nil }

// offsetsSinkConfig drives offsetsSinkConnector's AlterOffsets hook.
type offsetsSinkConfig struct {
	// Mode: check (refuse offsets above 100, saying what it got),
	// unsupported, or panic.
	Mode string `key:"mode" default:"check" validate:"enum=check|unsupported|panic" doc:"what AlterOffsets does"`
}

const offsetsSinkClass = "test.OffsetsSinkConnector"

// offsetsSinkConnector is a sink whose AlterOffsets hook answers per its
// mode.
func offsetsSinkConnector() sdk.Connector {
	return sdk.SinkConnector[offsetsSinkConfig]{
		Class: offsetsSinkClass, Version: "1",
		NewTask: func(offsetsSinkConfig) sdk.SinkTask { return nil },
		AlterOffsets: func(_ context.Context, c offsetsSinkConfig, offs map[sdk.TopicPartition]*int64) error {
			switch c.Mode {
			case "unsupported":
				return sdk.ErrOffsetsUnsupported
			case "panic":
				panic("boom in AlterOffsets")
			}
			var got []string
			for tp, o := range offs {
				if o == nil {
					got = append(got, tp.String()+"=reset")
				} else {
					got = append(got, tp.String()+"="+strconv.FormatInt(*o, 10))
				}
			}
			sort.Strings(got)
			for _, o := range offs {
				if o != nil && *o > 100 {
					return fmt.Errorf("offsets above 100 are refused; got %s", strings.Join(got, ","))
				}
			}
			return nil
		},
	}
}

// runTestHost is the host process of TestNoOrphanAfterHostSIGKILL: it starts
// a source task, prints the plugin's pid and waits to be killed.
func runTestHost() int {
	exe, _ := os.Executable()
	h, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe}}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	task, err := h.StartSourceTask(context.Background(), "Datagen", sdk.TaskInfo{Connector: "c", Task: 0},
		map[string]string{"kafka.topic": "t", "records.per.sec": "10"}, nil)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("pid", task.(*hostSourceTask).p.pid())
	time.Sleep(time.Minute)
	return 0
}

// captureHandler records log records for assertions.
type captureHandler struct {
	attrs []slog.Attr
	all   *[]capturedRecord
}

type capturedRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

func newCapture() (*slog.Logger, func() []capturedRecord) {
	var mu sync.Mutex
	var all []capturedRecord
	h := &captureHandler{all: &all}
	logger := slog.New(&lockedHandler{h: h, mu: &mu})
	return logger, func() []capturedRecord {
		mu.Lock()
		defer mu.Unlock()
		return append([]capturedRecord(nil), all...)
	}
}

type lockedHandler struct {
	h  *captureHandler
	mu *sync.Mutex
}

func (l *lockedHandler) Enabled(context.Context, slog.Level) bool { return true }
func (l *lockedHandler) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := capturedRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	for _, a := range l.h.attrs {
		c.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { c.Attrs[a.Key] = a.Value.String(); return true })
	*l.h.all = append(*l.h.all, c)
	return nil
}
func (l *lockedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h := &captureHandler{all: l.h.all, attrs: append(append([]slog.Attr(nil), l.h.attrs...), as...)}
	return &lockedHandler{h: h, mu: l.mu}
}
func (l *lockedHandler) WithGroup(string) slog.Handler { return l }

// newTestHost starts a Host whose builtin plugin is this test binary.
func newTestHost(t *testing.T, mod func(*Config)) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Builtin: [][]string{{exe}}, Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), StopTimeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (which may hold spaces and parentheses): f[0] is the state (field 3),
// f[11] and f[12] utime and stime. nil if it cannot be read.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	f := procStat(pid)
	return f == nil || len(f) > 0 && f[0] == "Z"
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
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
}

// generator returns the generator of the records a Datagen task with
// cfgMap produces.
func generator(t *testing.T, cfgMap map[string]string) *datagen.Generator {
	t.Helper()
	cfg, err := sdk.ParseConfig[datagen.Config](cfgMap)
	if err != nil {
		t.Fatal(err)
	}
	return datagen.NewGenerator(cfg)
}

// startDatagen starts a Datagen task with cfgMap through h, and returns it
// with the generator of the records it must produce.
func startDatagen(t *testing.T, h *Host, cfgMap map[string]string) (*hostSourceTask, *datagen.Generator) {
	t.Helper()
	task, err := h.StartSourceTask(context.Background(), "Datagen", sdk.TaskInfo{Connector: "gen"}, cfgMap, nil)
	if err != nil {
		t.Fatal(err)
	}
	return task.(*hostSourceTask), generator(t, cfgMap)
}

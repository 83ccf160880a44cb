package task

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/worker/convert"
)

func TestMain(m *testing.M) {
	if os.Getenv(pluginpb.MagicCookieKey) != "" { // started as a plugin by BenchmarkSink or TestSinkRewind
		sdk.Serve(append(connectors.All(), rewindingSink())...)
	}
	goleak.VerifyTestMain(m,
		// The bundled broker's background goroutines end in t.Cleanup.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

func loader(t testing.TB) *plugins.InProcess {
	t.Helper()
	l, err := plugins.NewInProcess(quietLogger(), connectors.All()...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pluginHost runs connectors in plugin processes: this test binary, which
// serves them when started as a plugin (TestMain).
func pluginHost(t testing.TB) *plugins.Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, err := plugins.NewHost(context.Background(), plugins.Config{Builtin: [][]string{{exe}}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func jsonConv(t testing.TB, schemas bool) convert.Converter {
	t.Helper()
	c, err := convert.New("JsonConverter", false, map[string]string{"schemas.enable": fmt.Sprint(schemas)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func admin(t testing.TB, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func createTopic(t testing.TB, addr, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin(t, addr).CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// endOffset is the number of records in partition 0 of topic.
func endOffset(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total, ends.Error()
}

// statuses records reported states.
type statuses struct {
	mu  sync.Mutex
	all []State
	err *sdk.TaskError
}

func (s *statuses) ReportStatus(_ sdk.TaskInfo, st State, err *sdk.TaskError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, st)
	if err != nil {
		s.err = err
	}
}

func (s *statuses) last() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return ""
	}
	return s.all[len(s.all)-1]
}

// memOffsets is an OffsetWriter keeping offsets in memory; check, when
// set, runs before each write is accepted.
type memOffsets struct {
	mu     sync.Mutex
	writes [][]sdk.SourceOffset
	latest map[string]sdk.Offset
	check  func(ctx context.Context, offs []sdk.SourceOffset) error
}

func (m *memOffsets) WriteOffsets(ctx context.Context, _ string, offs []sdk.SourceOffset) error {
	if m.check != nil {
		if err := m.check(ctx, offs); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.latest == nil {
		m.latest = map[string]sdk.Offset{}
	}
	m.writes = append(m.writes, offs)
	for _, o := range offs {
		m.latest[partitionKey(o.Partition)] = o.Offset
	}
	return nil
}

func (m *memOffsets) Offsets(_ context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]sdk.Offset, len(ps))
	for i, p := range ps {
		out[i] = m.latest[partitionKey(p)]
	}
	return out, nil
}

func writeLines(t testing.TB, path string, from, n int) []string {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	w := bufio.NewWriter(f)
	for i := from; i < from+n; i++ {
		l := fmt.Sprintf("line-%06d", i)
		lines = append(lines, l)
		fmt.Fprintln(w, l)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startBroker(t testing.TB) string {
	return harness.TributaryBroker(t).Bootstrap()
}

func stopCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type offsetResponse = kadm.OffsetResponse

func stringConv(t testing.TB) convert.Converter {
	t.Helper()
	c, err := convert.New("StringConverter", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func stringConvNoT() convert.Converter { return convert.StringConverter{} }

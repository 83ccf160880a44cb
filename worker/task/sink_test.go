package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/testconn"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

func produceLines(t testing.TB, addr, topic string, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: fmt.Appendf(nil, "line-%06d", i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func committedTotal(t testing.TB, addr, group string) int64 {
	t.Helper()
	offs, err := admin(t, addr).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o offsetResponse) { total += o.At })
	return total
}

// recordingSink wraps a plugin sink task and remembers what Flush returned.
type recordingSink struct {
	plugins.SinkTask
	mu       sync.Mutex
	durable  map[sdk.TopicPartition]int64
	assigned []sdk.TopicPartition
	revoked  []sdk.TopicPartition
}

func (s *recordingSink) Flush(ctx context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	d, err := s.SinkTask.Flush(ctx, o)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.durable == nil {
		s.durable = map[sdk.TopicPartition]int64{}
	}
	for tp, off := range d {
		s.durable[tp] = max(s.durable[tp], off)
	}
	return d, err
}

func (s *recordingSink) Assigned(ctx context.Context, p []sdk.TopicPartition) error {
	s.mu.Lock()
	s.assigned = append(s.assigned, p...)
	s.mu.Unlock()
	return s.SinkTask.Assigned(ctx, p)
}

func (s *recordingSink) Revoked(ctx context.Context, p []sdk.TopicPartition) error {
	s.mu.Lock()
	s.revoked = append(s.revoked, p...)
	s.mu.Unlock()
	return s.SinkTask.Revoked(ctx, p)
}

func (s *recordingSink) durableTotal() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, o := range s.durable {
		n += o
	}
	return n
}

func startFileSink(t testing.TB, addr, name string, task int, out string, cfg func(*SinkConfig)) (*SinkRunner, *recordingSink, *statuses) {
	t.Helper()
	info := sdk.TaskInfo{Connector: name, Task: task}
	pt, err := loader(t).StartSinkTask(context.Background(), file.SinkClass, info, map[string]string{"file": out, "topics": "in"})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingSink{SinkTask: pt}
	st := &statuses{}
	sc := SinkConfig{Info: info, Task: rs, Topics: []string{"in"}, Key: jsonConv(t, false),
		Value: stringConv(t), ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Status: st,
		FlushInterval: 50 * time.Millisecond, Logger: quietLogger()}
	if cfg != nil {
		cfg(&sc)
	}
	r, err := NewSink(sc)
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	return r, rs, st
}

func TestSinkTopicToFile(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 2)
	produceLines(t, addr, "in", 0, 300)
	out := filepath.Join(t.TempDir(), "out.txt")
	r, rs, st := startFileSink(t, addr, "snk", 0, out, nil)
	waitFor(t, 15*time.Second, "300 lines in the file", func() bool { return len(readLines(t, out)) == 300 })
	waitFor(t, 15*time.Second, "offsets committed", func() bool { return committedTotal(t, addr, "connect-snk") == 300 })
	// Invariant 3: the group never holds more than the sink said durable.
	if c, d := committedTotal(t, addr, "connect-snk"), rs.durableTotal(); c > d {
		t.Errorf("committed %d > durable %d", c, d)
	}
	r.Pause()
	time.Sleep(100 * time.Millisecond)
	produceLines(t, addr, "in", 300, 20)
	time.Sleep(300 * time.Millisecond)
	if n := len(readLines(t, out)); n != 300 {
		t.Fatalf("paused sink wrote %d lines", n)
	}
	r.Resume()
	waitFor(t, 15*time.Second, "320 lines", func() bool { return len(readLines(t, out)) == 320 })
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c := committedTotal(t, addr, "connect-snk"); c != 320 {
		t.Errorf("committed after stop: %d", c)
	}
	if want := []State{StateRunning, StatePaused, StateRunning}; fmt.Sprint(st.all) != fmt.Sprint(want) {
		t.Errorf("statuses %v", st.all)
	}
}

// partialSink reports only offsets below a limit as durable.
type partialSink struct {
	plugins.SinkTask
	limit int64
}

func (s partialSink) Flush(ctx context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if _, err := s.SinkTask.Flush(ctx, o); err != nil {
		return nil, err
	}
	d := map[sdk.TopicPartition]int64{}
	for tp, off := range o {
		d[tp] = min(off, s.limit)
	}
	return d, nil
}

func TestSinkCommitsOnlyDurable(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	produceLines(t, addr, "in", 0, 50)
	out := filepath.Join(t.TempDir(), "out.txt")
	r, _, _ := startFileSink(t, addr, "part", 0, out, func(c *SinkConfig) { c.Task = partialSink{c.Task, 20} })
	waitFor(t, 15*time.Second, "50 lines", func() bool { return len(readLines(t, out)) == 50 })
	time.Sleep(200 * time.Millisecond)
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c := committedTotal(t, addr, "connect-part"); c != 20 {
		t.Errorf("committed %d, want 20 (what Flush returned)", c)
	}
}

func TestSinkRevocationTwoRunners(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 4)
	produceLines(t, addr, "in", 0, 200)
	dir := t.TempDir()
	out1, out2 := filepath.Join(dir, "1.txt"), filepath.Join(dir, "2.txt")
	r1, rs1, _ := startFileSink(t, addr, "grp", 0, out1, nil)
	waitFor(t, 15*time.Second, "first runner consumed all", func() bool { return len(readLines(t, out1)) == 200 })
	r2, rs2, _ := startFileSink(t, addr, "grp", 1, out2, nil)
	waitFor(t, 20*time.Second, "rebalance to both runners", func() bool {
		rs1.mu.Lock()
		rs2.mu.Lock()
		defer rs1.mu.Unlock()
		defer rs2.mu.Unlock()
		return len(rs1.revoked) > 0 && len(rs2.assigned) > 0
	})
	produceLines(t, addr, "in", 200, 200)
	waitFor(t, 20*time.Second, "all 400 lines across both files", func() bool {
		return len(readLines(t, out1))+len(readLines(t, out2)) >= 400
	})
	// Revocation committed what runner 1 had flushed, so runner 2 did not
	// re-read the first 200 lines.
	if n := len(readLines(t, out1)) + len(readLines(t, out2)); n != 400 {
		t.Errorf("%d lines, want 400 (no redelivery after a clean revocation)", n)
	}
	ctx := stopCtx(t)
	if err := r2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if c := committedTotal(t, addr, "connect-grp"); c != 400 {
		t.Errorf("committed %d, want 400", c)
	}
}

func TestSinkConfigErrors(t *testing.T) {
	for _, c := range []SinkConfig{
		{Task: &recordingSink{}, Key: stringConvNoT(), Value: stringConvNoT()},
		{Task: &recordingSink{}, Key: stringConvNoT(), Value: stringConvNoT(), Topics: []string{"a"}, TopicsRegex: "b"},
		{Task: &recordingSink{}, Key: stringConvNoT(), Value: stringConvNoT(), TopicsRegex: "("},
	} {
		if _, err := NewSink(c); err == nil {
			t.Errorf("NewSink(%+v) accepted", c)
		}
	}
}

// TestSinkWireValues: schemaless JSON values reach a sink in a plugin
// process written straight into the wire encoding (no Go values in the
// worker); the FileStreamSink's output must be what the in-process task,
// given the converter's Go values, writes for the same records.
func TestSinkWireValues(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "json", 1)
	var values []string
	for i := range 400 {
		values = append(values, fmt.Sprintf(`{"id":%d,"name":"n\u00e9%d","tags":["a",%d.5,null,true],"nested":{"big":12345678901234567890,"neg":-%d}}`, i, i, i, i),
			fmt.Sprintf(`[%d,"x\"y",{}]`, i), fmt.Sprintf(`"plain %d"`, i), `null`, `1e999`)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		cl.Produce(context.Background(), &kgo.Record{Value: []byte(v)}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	outputs := map[string][]string{}
	for _, kind := range []string{"inprocess", "plugin"} {
		var l plugins.Loader = loader(t)
		if kind == "plugin" {
			l = pluginHost(t)
		}
		out := filepath.Join(t.TempDir(), "out.txt")
		info := sdk.TaskInfo{Connector: "wire-" + kind}
		pt, err := l.StartSinkTask(context.Background(), file.SinkClass, info, map[string]string{"file": out, "topics": "json"})
		if err != nil {
			t.Fatal(err)
		}
		counted := &wireCounter{SinkTask: pt}
		r, err := NewSink(SinkConfig{Info: info, Task: counted, Topics: []string{"json"}, Key: stringConv(t),
			Value: jsonConv(t, false), ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
			FlushInterval: 50 * time.Millisecond, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if (r.wireValues != nil) != (kind == "plugin") {
			t.Fatalf("%s: values written in the wire encoding: %v", kind, r.wireValues != nil)
		}
		r.Start()
		waitFor(t, 15*time.Second, "every value in the file", func() bool { return len(readLines(t, out)) == len(values) })
		if err := r.Stop(stopCtx(t)); err != nil {
			t.Fatal(err)
		}
		// Every value but the nulls (one in five) went encoded.
		if want := int64(len(values) * 4 / 5); kind == "plugin" && counted.encoded.Load() != want {
			t.Fatalf("%d values reached the plugin host encoded, want %d", counted.encoded.Load(), want)
		}
		outputs[kind] = readLines(t, out)
	}
	if len(outputs["plugin"]) != len(values) || outputs["plugin"][0] != "{id=0, name=né0, nested={big=1.2345678901234567e+19, neg=0}, tags=[a, 0.5, null, true]}" {
		t.Fatalf("plugin sink wrote %d lines, the first %q", len(outputs["plugin"]), outputs["plugin"][0])
	}
	for i, want := range outputs["inprocess"] {
		if got := outputs["plugin"][i]; got != want {
			t.Fatalf("line %d (value %s): plugin sink wrote %q, in-process sink %q", i, values[i], got, want)
		}
	}
}

// wireCounter counts the values a sink task is given already encoded.
type wireCounter struct {
	plugins.SinkTask
	encoded atomic.Int64
}

func (c *wireCounter) TakesEncodedValues() bool { return plugins.TakesEncodedValues(c.SinkTask) }

func (c *wireCounter) Put(ctx context.Context, records []sdk.SinkRecord) error {
	for _, r := range records {
		if _, ok := r.Value.(*wire.Raw); ok {
			c.encoded.Add(1)
		}
	}
	return c.SinkTask.Put(ctx, records)
}

// keepingSink keeps every record it is given.
type keepingSink struct {
	discardSink
	mu   sync.Mutex
	kept []sdk.SinkRecord
}

func (k *keepingSink) Put(_ context.Context, r []sdk.SinkRecord) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, r...)
	return nil
}

func (k *keepingSink) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.kept)
}

// TestSinkRecordsOutliveTheirFetch: the consumer decodes fetched records
// into pooled memory that the runner recycles after each Put; records a
// task keeps (their keys and values share the fetched bytes) must stay
// intact while later fetches reuse that memory.
func TestSinkRecordsOutliveTheirFetch(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	const n = 6000
	for from := 0; from < n; from += 500 {
		produceLines(t, addr, "in", from, 500)
	}
	task := &keepingSink{}
	r, err := NewSink(SinkConfig{Info: sdk.TaskInfo{Connector: "keep"}, Task: task, Topics: []string{"in"},
		Key: stringConv(t), Value: stringConv(t), ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr), kgo.FetchMaxBytes(64 << 10)},
		MaxPollRecords: 100, FlushInterval: time.Minute, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, 20*time.Second, "every record", func() bool { return task.count() >= n })
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	for i, rec := range task.kept[:n] {
		if rec.Offset != int64(i) || rec.Topic != "in" || rec.Key != fmt.Sprint(i) || rec.Value != fmt.Sprintf("line-%06d", i) {
			t.Fatalf("record %d: %s-%d@%d key %v value %v", i, rec.Topic, rec.Partition, rec.Offset, rec.Key, rec.Value)
		}
	}
}

// endingSink is a sink task that ends by itself when end is called, as a
// plugin's task does when its process exits (plugins.EndingSink).
type endingSink struct {
	plugins.SinkTask
	done chan struct{}
	err  atomic.Pointer[error]
}

func (s *endingSink) Done() <-chan struct{} { return s.done }

func (s *endingSink) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *endingSink) end(err error) {
	s.err.Store(&err)
	close(s.done)
}

// TestSinkFailsWhenTaskEndsWhileIdle: a sink task whose plugin exits while
// no records arrive goes FAILED at once with the plugin's error, not at
// the next offset flush (a minute away here).
func TestSinkFailsWhenTaskEndsWhileIdle(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	out := filepath.Join(t.TempDir(), "out.txt")
	var es *endingSink
	r, _, st := startFileSink(t, addr, "idle", 0, out, func(c *SinkConfig) {
		es = &endingSink{SinkTask: c.Task, done: make(chan struct{})}
		c.Task = es
		c.FlushInterval = time.Minute
	})
	waitFor(t, 10*time.Second, "RUNNING", func() bool { return st.last() == StateRunning })
	time.Sleep(300 * time.Millisecond) // idle in its poll
	es.end(fmt.Errorf("plugin connection lost (plugin process exited: signal: killed)"))
	waitFor(t, 5*time.Second, "FAILED", func() bool { return st.last() == StateFailed })
	st.mu.Lock()
	msg := st.err.Message
	st.mu.Unlock()
	if !strings.Contains(msg, "plugin process exited") {
		t.Errorf("failure %q does not say the plugin exited", msg)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Error("the runner's loop did not end")
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Logf("stop: %v", err)
	}
}

// blockingSink's first Put blocks until release is closed, as a Put
// retrying through an outage of its external system would.
type blockingSink struct {
	plugins.SinkTask
	entered, release chan struct{}
	once             sync.Once
}

func (s *blockingSink) Put(ctx context.Context, records []sdk.SinkRecord) error {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.SinkTask.Put(ctx, records)
}

// Pausing a sink must not wait for the batch its task is working on: the
// herder pauses (and then serves every other REST call) from one
// goroutine. Records fetched after the pause wait for Resume.
func TestSinkPauseWhilePutBlocks(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	produceLines(t, addr, "in", 0, 10)
	out := filepath.Join(t.TempDir(), "out.txt")
	bs := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	r, _, st := startFileSink(t, addr, "blocked", 0, out, func(c *SinkConfig) { bs.SinkTask = c.Task; c.Task = bs })
	select {
	case <-bs.entered:
	case <-time.After(15 * time.Second):
		t.Fatal("Put never called")
	}
	paused := make(chan struct{})
	go func() { r.Pause(); close(paused) }()
	select {
	case <-paused:
	case <-time.After(5 * time.Second):
		close(bs.release)
		t.Fatal("Pause waited for the blocked Put")
	}
	close(bs.release)
	waitFor(t, 15*time.Second, "the batch in hand written", func() bool { return len(readLines(t, out)) == 10 })
	produceLines(t, addr, "in", 10, 5)
	time.Sleep(500 * time.Millisecond)
	if n := len(readLines(t, out)); n != 10 {
		t.Fatalf("paused sink wrote %d lines, want 10", n)
	}
	r.Resume()
	waitFor(t, 15*time.Second, "15 lines after Resume", func() bool { return len(readLines(t, out)) == 15 })
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if want := []State{StateRunning, StatePaused, StateRunning}; fmt.Sprint(st.all) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", st.all, want)
	}
}

// topics.regex matches whole topic names, as Java's Matcher.matches in
// Kafka Connect: "rx-a" takes topic rx-a, not rx-ab nor zzrx-a.
func TestSinkTopicsRegexMatchesWholeNames(t *testing.T) {
	addr := startBroker(t)
	for _, topic := range []string{"rx-a", "rx-ab", "zzrx-a"} {
		createTopic(t, addr, topic, 1)
		produceLines(t, addr, topic, 0, 1)
	}
	out := filepath.Join(t.TempDir(), "out.txt")
	r, rs, _ := startFileSink(t, addr, "rx", 0, out, func(c *SinkConfig) { c.Topics, c.TopicsRegex = nil, "rx-a" })
	waitFor(t, 15*time.Second, "rx-a's record", func() bool { return len(readLines(t, out)) >= 1 })
	rs.mu.Lock()
	assigned := fmt.Sprint(rs.assigned)
	rs.mu.Unlock()
	if assigned != "[rx-a-0]" {
		t.Errorf("assigned %s, want only rx-a-0", assigned)
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(readLines(t, out)); n != 1 {
		t.Errorf("wrote %d lines, want 1", n)
	}
}

func init() {
	if os.Getenv(pluginpb.MagicCookieKey) != "" && slices.Contains(os.Args[1:], testconn.FlakySinkArg) {
		sdk.Serve(testconn.FlakySink())
	}
}

// flakyLoader runs the flaky sink in process or ("plugin") in a plugin
// process.
func flakyLoader(t *testing.T, kind string) plugins.Loader {
	t.Helper()
	if kind == "inprocess" {
		l, err := plugins.NewInProcess(quietLogger(), testconn.FlakySink())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, err := plugins.NewHost(context.Background(), plugins.Config{Builtin: [][]string{{exe, testconn.FlakySinkArg}}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// startFlaky starts a runner of a flaky sink task of connector name,
// reading topic, with its control files in dir.
func startFlaky(t *testing.T, l plugins.Loader, addr, name, topic, dir string) (*SinkRunner, *statuses) {
	t.Helper()
	info := sdk.TaskInfo{Connector: name}
	pt, err := l.StartSinkTask(context.Background(), testconn.FlakySinkClass, info, map[string]string{"dir": dir})
	if err != nil {
		t.Fatal(err)
	}
	st := &statuses{}
	r, err := NewSink(SinkConfig{Info: info, Task: pt, Topics: []string{topic}, Key: stringConv(t), Value: stringConv(t),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Status: st, FlushInterval: 50 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	return r, st
}

func touchFile(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeFile(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// offsetLines is what the flaky sink writes for offsets 0 to n-1 of
// partition 0, each once.
func offsetLines(n int) string {
	var l []string
	for o := range n {
		l = append(l, fmt.Sprintf("0:%d", o))
	}
	return fmt.Sprint(l)
}

// A sink task whose Flush (preCommit) fails is not failed: as in Kafka
// Connect, the runner rewinds its consumer to the last committed offsets
// and the task is given again what its failed flush lost. Each record
// reaches the output exactly once (the flaky sink loses its buffer when
// its flush fails), for a partition never committed (back to its start),
// one committed by this runner, and one whose commit predates the runner
// (the group's commit it started from).
func TestSinkFlushErrorRewindsToCommitted(t *testing.T) {
	addr := startBroker(t)
	for _, kind := range []string{"inprocess", "plugin"} {
		t.Run(kind, func(t *testing.T) {
			name, topic := "fl-"+kind, "fl-"+kind
			createTopic(t, addr, topic, 1)
			l := flakyLoader(t, kind)
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			failures := func() int { return len(readLines(t, filepath.Join(dir, "flush-failures"))) }
			running := func(r *SinkRunner, st *statuses) {
				t.Helper()
				select {
				case <-r.Done():
					t.Fatalf("the runner ended: statuses %v, error %v", st.all, st.err)
				default:
				}
				if s := st.last(); s != StateRunning {
					t.Fatalf("state %s (%v), want RUNNING", s, st.err)
				}
			}
			// failThenRecover makes the flushes fail while offsets from
			// to from+10 arrive, then lets them succeed.
			failThenRecover := func(r *SinkRunner, st *statuses, from int, produce bool) {
				t.Helper()
				if produce {
					produceLines(t, addr, topic, from, 10)
				}
				before := failures()
				waitFor(t, 15*time.Second, "failed flushes", func() bool { return failures() >= before+3 || st.last() == StateFailed })
				running(r, st)
				if c := committedTotal(t, addr, "connect-"+name); c != int64(from) {
					t.Fatalf("committed %d while flushes fail, want %d", c, from)
				}
				removeFile(t, dir, "flush-fail")
				waitFor(t, 15*time.Second, "offsets committed", func() bool {
					return committedTotal(t, addr, "connect-"+name) == int64(from+10)
				})
				if got, want := fmt.Sprint(readLines(t, out)), offsetLines(from+10); got != want {
					t.Fatalf("output %s, want %s", got, want)
				}
				running(r, st)
			}
			touchFile(t, dir, "flush-fail")
			produceLines(t, addr, topic, 0, 10)
			r, st := startFlaky(t, l, addr, name, topic, dir)
			failThenRecover(r, st, 0, false)
			touchFile(t, dir, "flush-fail")
			failThenRecover(r, st, 10, true)
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			touchFile(t, dir, "flush-fail")
			produceLines(t, addr, topic, 20, 10)
			r, st = startFlaky(t, l, addr, name, topic, dir)
			failThenRecover(r, st, 20, false)
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Stopping a sink task whose Put keeps failing with a Retriable error (a
// downstream outage) is prompt, as Kafka Connect's retry loop checks
// isStopping: the batch is given up, nothing of it is committed, the stop
// reports no error and the task no failure; the next run delivers it.
func TestSinkStopWhilePutRetries(t *testing.T) {
	addr := startBroker(t)
	for _, kind := range []string{"inprocess", "plugin"} {
		t.Run(kind, func(t *testing.T) {
			name, topic := "st-"+kind, "st-"+kind
			createTopic(t, addr, topic, 1)
			l := flakyLoader(t, kind)
			dir := t.TempDir()
			produceLines(t, addr, topic, 0, 10)
			r, st := startFlaky(t, l, addr, name, topic, dir)
			waitFor(t, 15*time.Second, "10 offsets committed", func() bool { return committedTotal(t, addr, "connect-"+name) == 10 })
			touchFile(t, dir, "put-retriable")
			produceLines(t, addr, topic, 10, 10)
			waitFor(t, 15*time.Second, "Put retried", func() bool { return len(readLines(t, filepath.Join(dir, "attempts"))) >= 2 })
			start := time.Now()
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Stop took %v", d)
			}
			if slices.Contains(st.all, StateFailed) {
				t.Fatalf("statuses %v (%v), want no failure", st.all, st.err)
			}
			if c := committedTotal(t, addr, "connect-"+name); c != 10 {
				t.Fatalf("committed %d after the stop, want 10 (nothing of the batch given up)", c)
			}
			removeFile(t, dir, "put-retriable")
			r, _ = startFlaky(t, l, addr, name, topic, dir)
			waitFor(t, 15*time.Second, "20 offsets committed", func() bool { return committedTotal(t, addr, "connect-"+name) == 20 })
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(readLines(t, filepath.Join(dir, "out"))), offsetLines(20); got != want {
				t.Fatalf("output %s, want %s", got, want)
			}
		})
	}
}

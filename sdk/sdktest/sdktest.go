package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// SourceDriver describes a source connector under test.
type SourceDriver struct {
	Connector sdk.Connector
	// Config returns a valid configuration for a fresh test.
	Config func(t *testing.T) map[string]string
	// Seed makes n more records available in the source; nil for sources
	// that always have data (generators).
	Seed func(t *testing.T, cfg map[string]string, n int)
	// Timeout bounds each wait for records (default 10 s).
	Timeout time.Duration
	// Deterministic says a record's key and value depend only on its
	// position, so the resume check compares them too (not only the
	// partitions and offsets).
	Deterministic bool
}

// RunSource runs the source acceptance checks as subtests.
func RunSource(t *testing.T, d SourceDriver) {
	t.Helper()
	sp, ok := d.Connector.(sdk.SourcePlugin)
	if !ok {
		t.Fatalf("sdktest: %T is not a source connector", d.Connector)
	}
	if d.Timeout <= 0 {
		d.Timeout = 10 * time.Second
	}
	t.Run("spec", func(t *testing.T) { checkSpec(t, d.Connector, sdk.Source) })
	t.Run("validate", func(t *testing.T) { checkValidate(t, d.Connector, d.Config(t)) })
	t.Run("records-and-resume", func(t *testing.T) { checkResume(t, sp, d) })
	t.Run("prompt-stop", func(t *testing.T) { checkSourceStop(t, sp, d) })
}

var kafkaTypes = []string{"BOOLEAN", "STRING", "SHORT", "INT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}

func checkSpec(t *testing.T, c sdk.Connector, typ sdk.ConnectorType) {
	spec := c.Spec()
	if spec.Class == "" || spec.Version == "" {
		t.Errorf("spec needs a class and a version: %+v", spec)
	}
	if spec.Type != typ {
		t.Errorf("spec type %q, want %q", spec.Type, typ)
	}
	for _, a := range sdk.DefaultAliases(spec.Class) {
		if !spec.Matches(a) {
			t.Errorf("spec does not answer to Kafka Connect alias %q", a)
		}
	}
	seen := map[string]bool{}
	for _, k := range spec.Config {
		if k.Name == "" || seen[k.Name] {
			t.Errorf("config key %q empty or duplicated", k.Name)
		}
		seen[k.Name] = true
		if strings.TrimSpace(k.Documentation) == "" {
			t.Errorf("config key %q has no documentation", k.Name)
		}
		if !slices.Contains(kafkaTypes, k.Type) {
			t.Errorf("config key %q has type %q", k.Name, k.Type)
		}
		if !slices.Contains([]string{"HIGH", "MEDIUM", "LOW"}, k.Importance) {
			t.Errorf("config key %q has importance %q", k.Name, k.Importance)
		}
		if k.Required && k.DefaultValue != nil {
			t.Errorf("config key %q is required but has a default", k.Name)
		}
	}
	b, err := json.Marshal(spec.Config)
	if err != nil {
		t.Fatal(err)
	}
	var generic []map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	want := []string{"name", "type", "required", "default_value", "importance", "documentation", "group", "order", "width", "display_name", "dependents"}
	for _, m := range generic {
		if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("ConfigKeyInfo JSON keys %v, want Kafka Connect's %v", got, want)
		}
	}
}

func checkValidate(t *testing.T, c sdk.Connector, valid map[string]string) {
	ctx := context.Background()
	infos, err := c.Validate(ctx, valid)
	if err != nil {
		t.Fatalf("validate a valid config: %v", err)
	}
	if infos.ErrorCount != 0 {
		t.Fatalf("valid config has errors: %v", infos.Errors())
	}
	spec := c.Spec()
	if len(infos.Configs) != len(spec.Config) {
		t.Errorf("validation lists %d keys, the spec %d", len(infos.Configs), len(spec.Config))
	}
	for _, k := range spec.Config {
		var bad map[string]string
		var why string
		switch {
		case k.Required:
			bad = maps.Clone(valid)
			delete(bad, k.Name)
			why = "missing required key"
		case k.Type == "INT" || k.Type == "LONG" || k.Type == "SHORT" || k.Type == "DOUBLE":
			bad = maps.Clone(valid)
			bad[k.Name] = "not-a-number"
			why = "mistyped key"
		case k.Type == "BOOLEAN":
			bad = maps.Clone(valid)
			bad[k.Name] = "maybe"
			why = "mistyped key"
		default:
			continue
		}
		infos, err := c.Validate(ctx, bad)
		if err != nil {
			t.Errorf("%s %q: validate returned %v instead of a per-key error", why, k.Name, err)
			continue
		}
		errs := infos.Errors()
		if len(errs[k.Name]) == 0 || len(errs) != 1 || infos.ErrorCount != len(errs[k.Name]) {
			t.Errorf("%s %q: errors %v, want errors on exactly that key", why, k.Name, errs)
		}
		if k.Required && !slices.Contains(errs[k.Name], fmt.Sprintf("Missing required configuration %q which has no default value.", k.Name)) {
			t.Errorf("missing %q: errors %v lack Kafka Connect's message", k.Name, errs[k.Name])
		}
	}
}

// offsetStore is an in-memory offset store keyed by the partition's JSON.
type offsetStore struct {
	mu sync.Mutex
	m  map[string]sdk.Offset
}

func key(p sdk.Partition) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func (s *offsetStore) commit(p sdk.Partition, o sdk.Offset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sdk.Offset{}
	}
	// Round-trip through JSON like the offsets topic does (numbers become
	// float64 or json.Number): tasks must cope.
	b, _ := json.Marshal(o)
	var back sdk.Offset
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	_ = dec.Decode(&back)
	s.m[key(p)] = back
}

type sourceContext struct {
	store  *offsetStore
	logger *slog.Logger
}

func (c *sourceContext) Info() sdk.TaskInfo   { return sdk.TaskInfo{Connector: "sdktest", Task: 0} }
func (c *sourceContext) Logger() *slog.Logger { return c.logger }
func (c *sourceContext) Offset(ctx context.Context, p sdk.Partition) (sdk.Offset, error) {
	offs, err := c.Offsets(ctx, []sdk.Partition{p})
	if err != nil {
		return nil, err
	}
	return offs[0], nil
}
func (c *sourceContext) Offsets(_ context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	out := make([]sdk.Offset, len(ps))
	for i, p := range ps {
		out[i] = c.store.m[key(p)]
	}
	return out, nil
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func openSource(t *testing.T, sp sdk.SourcePlugin, cfg map[string]string, store *offsetStore) sdk.SourceTask {
	t.Helper()
	task, err := sp.NewSourceTask(cfg)
	if err != nil {
		t.Fatalf("new task: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := task.Open(ctx, &sourceContext{store: store, logger: testLogger(t)}); err != nil {
		t.Fatalf("open: %v", err)
	}
	return task
}

func closeSource(t *testing.T, task sdk.SourceTask) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := task.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("close took %v", d)
	}
}

// pollN polls until n records arrived, with max per poll.
func pollN(t *testing.T, task sdk.SourceTask, n, max int, timeout time.Duration) []sdk.SourceRecord {
	t.Helper()
	out, ok := pollUntil(t, task, max, timeout, func(recs []sdk.SourceRecord) bool { return len(recs) >= n })
	if !ok {
		t.Fatalf("got %d records within %v, want %d", len(out), timeout, n)
	}
	return out
}

// pollUntil polls, with max per poll, until enough holds for the records
// so far (true) or timeout passed (false). Each record is checked.
func pollUntil(t *testing.T, task sdk.SourceTask, max int, timeout time.Duration, enough func([]sdk.SourceRecord) bool) ([]sdk.SourceRecord, bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var out []sdk.SourceRecord
	for !enough(out) {
		if time.Now().After(deadline) {
			return out, false
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		recs, err := task.Poll(ctx, max)
		cancel()
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(recs) > max {
			t.Fatalf("poll(max=%d) returned %d records", max, len(recs))
		}
		for i := range recs {
			r := &recs[i]
			if len(r.Partition) == 0 || len(r.Offset) == 0 {
				t.Fatalf("record without source partition or offset: %+v", r)
			}
			if err := r.Validate(); err != nil {
				t.Fatalf("record does not match its schemas: %v", err)
			}
			if _, err := json.Marshal(map[string]any{"p": r.Partition, "o": r.Offset}); err != nil {
				t.Fatalf("partition or offset is not JSON-serialisable: %v", err)
			}
		}
		out = append(out, recs...)
	}
	return out, true
}

// checkResume reads records 0..total-1, then does what the worker does
// once Kafka acknowledged records 0..k-1: it stores, for every source
// partition among them, the offset of that partition's last record, and
// restarts the task. Each partition must then continue exactly after its
// committed record: its records from k on, in order, none lost, none
// repeated; a partition with nothing committed starts from its beginning.
// Partitions are compared one by one, not in the merged order, since a task
// may interleave them differently after a restart. With one partition this
// is the same as requiring records k, k+1, … in order.
func checkResume(t *testing.T, sp sdk.SourcePlugin, d SourceDriver) {
	defer verifyNoLeaks(t)()
	cfg := d.Config(t)
	const total, k = 40, 17
	if d.Seed != nil {
		d.Seed(t, cfg, total)
	}
	store := &offsetStore{}
	task := openSource(t, sp, cfg, store)
	first := pollN(t, task, total, 7, d.Timeout)
	closeSource(t, task)

	last := map[string]int{}   // partition → index of its last acknowledged record
	acked := map[string]set{}  // partition → offsets of its acknowledged records
	want := map[string][]int{} // partition → indexes of its records after the restart
	var order []string         // partitions in order of appearance, for messages
	for i := range first {
		p := key(first[i].Partition)
		if !slices.Contains(order, p) {
			order = append(order, p)
		}
		if i < k {
			last[p] = i
			if acked[p] == nil {
				acked[p] = set{}
			}
			acked[p][offsetKey(first[i].Offset)] = true
		} else {
			want[p] = append(want[p], i)
		}
	}
	var committed []string
	for _, p := range order {
		if i, ok := last[p]; ok {
			store.commit(first[i].Partition, first[i].Offset)
			committed = append(committed, fmt.Sprintf("%s@%s", p, offsetKey(first[i].Offset)))
		}
	}
	after := func(p string) string {
		if i, ok := last[p]; ok {
			return fmt.Sprintf("after its committed record %d (%v)", i, recordString(&first[i]))
		}
		return "from its beginning (nothing committed)"
	}

	// check compares the records read since the restart with want; it
	// returns the first wrong one, and whether every partition is complete.
	check := func(again []sdk.SourceRecord) (problem string, complete bool) {
		got := map[string][]*sdk.SourceRecord{}
		for i := range again {
			r := &again[i]
			p := key(r.Partition)
			if acked[p][offsetKey(r.Offset)] {
				return fmt.Sprintf("partition %s: record %d after the restart, %v, repeats a record acknowledged before it; want the partition to continue %s",
					p, len(got[p]), recordString(r), after(p)), false
			}
			got[p] = append(got[p], r)
		}
		complete = true
		for _, p := range order {
			g, w := got[p], want[p]
			for j := range min(len(g), len(w)) {
				a, b := &first[w[j]], g[j]
				if !offsetEqual(a.Offset, b.Offset) ||
					(d.Deterministic && (!schema.ValueEqual(a.Key, b.Key) || !schema.ValueEqual(a.Value, b.Value))) {
					return fmt.Sprintf("partition %s: record %d after the restart is %v, want %v (record %d before the restart), continuing %s",
						p, j, recordString(b), recordString(a), w[j], after(p)), false
				}
			}
			if len(g) < len(w) {
				complete = false
			}
		}
		return "", complete
	}
	var problem string
	task = openSource(t, sp, cfg, store)
	again, ok := pollUntil(t, task, 1000, d.Timeout, func(recs []sdk.SourceRecord) bool {
		var complete bool
		problem, complete = check(recs)
		return problem != "" || complete
	})
	closeSource(t, task)
	if problem != "" {
		t.Fatalf("after resuming from records 0..%d (committed %s): %s", k-1, strings.Join(committed, ", "), problem)
	}
	if !ok {
		got := map[string]int{}
		for i := range again {
			got[key(again[i].Partition)]++
		}
		for _, p := range order {
			if w := want[p]; got[p] < len(w) {
				t.Fatalf("after resuming from records 0..%d (committed %s): partition %s gave %d records within %v, want %d, continuing %s; the next missing one is %v",
					k-1, strings.Join(committed, ", "), p, got[p], d.Timeout, len(w), after(p), recordString(&first[w[got[p]]]))
			}
		}
	}
}

type set map[string]bool

func offsetKey(o sdk.Offset) string {
	b, _ := json.Marshal(o)
	return string(b)
}

func recordString(r *sdk.SourceRecord) string {
	return fmt.Sprintf("%s@%s=%v", key(r.Partition), offsetKey(r.Offset), r.Value)
}

func offsetEqual(a, b sdk.Offset) bool {
	return offsetKey(a) == offsetKey(b)
}

func checkSourceStop(t *testing.T, sp sdk.SourcePlugin, d SourceDriver) {
	defer verifyNoLeaks(t)()
	cfg := d.Config(t)
	task := openSource(t, sp, cfg, &offsetStore{})
	// With nothing to read (or after reading), a cancelled Poll must
	// return promptly.
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		_, err := task.Poll(ctx, 100)
		cancel()
		if err != nil && ctx.Err() == nil {
			t.Fatalf("poll: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("poll ignored its cancelled context for %v", d)
		}
	}
	closeSource(t, task)
}

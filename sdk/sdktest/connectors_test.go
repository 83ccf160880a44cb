package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Test-only connectors for the kit's own tests: an in-memory source with
// several source partitions and an in-memory sink, each with defects to
// switch on.

var (
	ids  atomic.Int64
	mu   sync.Mutex
	data = map[string]int{}     // source id → records seeded
	out  = map[string][]entry{} // sink id → records written, in order
)

// entry is a record held by the test sink's in-memory external system,
// with its Kafka offset (the test sink keeps its offsets there too).
type entry struct {
	tp  sdk.TopicPartition
	off int64
	s   string
}

func newID(t *testing.T) string { return fmt.Sprintf("%s#%d", t.Name(), ids.Add(1)) }

func seedSource(_ *testing.T, cfg map[string]string, n int) {
	mu.Lock()
	defer mu.Unlock()
	data[cfg["id"]] += n
}

func readBack(_ *testing.T, cfg map[string]string) []string {
	mu.Lock()
	defer mu.Unlock()
	var ss []string
	for _, e := range out[cfg["id"]] {
		ss = append(ss, e.s)
	}
	return ss
}

// render is how the test sink stores a record (format "text"): a struct
// value as the JSON of schema.AppendJSON.
func render(r *sdk.SinkRecord) (string, bool) {
	switch r.Value.(type) {
	case nil:
		return fmt.Sprintf("tombstone %s@%d", r.TopicPartition(), r.Offset), true
	case *schema.Struct:
		b, err := schema.AppendJSON(nil, r.ValueSchema, r.Value, schema.JSONOptions{})
		if err != nil {
			return err.Error(), true
		}
		return "struct " + string(b), true
	}
	return fmt.Sprint(r.Value), true
}

// renderLossy is render with what encoding/json gave for a Struct before
// Struct had a MarshalJSON: {} (format "lossy").
func renderLossy(r *sdk.SinkRecord) (string, bool) {
	if _, ok := r.Value.(*schema.Struct); ok {
		return "struct {}", true
	}
	return render(r)
}

// renderJSON is the test sink's format "json": each value as
// schema.AppendJSON writes it with opts (tombstones as null).
func renderJSON(r *sdk.SinkRecord, opts schema.JSONOptions) string {
	b, err := schema.AppendJSON(nil, r.ValueSchema, r.Value, opts)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// loseHalf is the test sink's SinkDriver.Lose: the external system keeps
// the first half of what it holds.
func loseHalf(_ *testing.T, cfg map[string]string) {
	mu.Lock()
	defer mu.Unlock()
	o := out[cfg["id"]]
	out[cfg["id"]] = o[:len(o)/2]
}

type sourceConfig struct {
	ID         string `key:"id" importance:"high" validate:"nonempty" doc:"Names the seeded records."`
	Partitions int32  `key:"partitions" default:"2" validate:"min=1" doc:"Number of source partitions; seeded record j belongs to partition j mod partitions."`
	Interleave string `key:"interleave" default:"alternate" validate:"enum=alternate|blocks" doc:"alternate: one record of each partition in turn; blocks: each Poll reads one partition."`
	Defect     string `key:"defect" default:"none" validate:"enum=none|lose|repeat|lose-last|repeat-first" doc:"After a restart: lose skips the first record of the last resumed partition, repeat emits its committed record again, lose-last never emits the last partition's last record, repeat-first repeats the first partition's committed record."`
}

func testSource() sdk.Connector {
	return sdk.SourceConnector[sourceConfig]{
		Class:   "dev.tributary.sdktest.TestSourceConnector",
		Version: "0.1.0",
		NewTask: func(c sourceConfig) sdk.SourceTask { return &sourceTask{cfg: c} },
	}
}

type sourceTask struct {
	cfg     sourceConfig
	next    []int64
	resumed []bool
	turn    int
	short   int // partition whose last record is never emitted, or -1
}

func partition(i int) sdk.Partition { return sdk.Partition{"p": fmt.Sprintf("p%d", i)} }

func (t *sourceTask) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	n := int(t.cfg.Partitions)
	t.next, t.resumed, t.short = make([]int64, n), make([]bool, n), -1
	for i := range n {
		off, err := tc.Offset(ctx, partition(i))
		if err != nil {
			return err
		}
		if seq, ok := off.Int64("n"); ok {
			t.next[i], t.resumed[i] = seq+1, true
		}
	}
	lastResumed := -1
	for i := range n {
		if t.resumed[i] {
			lastResumed = i
		}
	}
	switch {
	case lastResumed < 0:
	case t.cfg.Defect == "lose":
		t.next[lastResumed]++
	case t.cfg.Defect == "repeat":
		t.next[lastResumed]--
	case t.cfg.Defect == "lose-last":
		t.short = n - 1
	case t.cfg.Defect == "repeat-first" && t.resumed[0]:
		t.next[0]--
	}
	return nil
}

// limit is how many records partition i has.
func (t *sourceTask) limit(i int) int64 {
	mu.Lock()
	total := int64(data[t.cfg.ID])
	mu.Unlock()
	p := int64(t.cfg.Partitions)
	n := max(0, (total-int64(i)+p-1)/p)
	if i == t.short {
		n = max(0, n-1)
	}
	return n
}

func (t *sourceTask) record(i int) sdk.SourceRecord {
	seq := t.next[i]
	t.next[i]++
	return sdk.SourceRecord{Partition: partition(i), Offset: sdk.Offset{"n": seq}, Topic: "sdktest",
		ValueSchema: schema.String, Value: fmt.Sprintf("p%d-%d", i, seq)}
}

func (t *sourceTask) fill(max int) []sdk.SourceRecord {
	var recs []sdk.SourceRecord
	n := len(t.next)
	if t.cfg.Interleave == "blocks" {
		for range n {
			i := t.turn
			t.turn = (t.turn + 1) % n
			if t.next[i] < t.limit(i) {
				for t.next[i] < t.limit(i) && len(recs) < max {
					recs = append(recs, t.record(i))
				}
				break
			}
		}
		return recs
	}
	for len(recs) < max {
		emitted := false
		for range n {
			i := t.turn
			t.turn = (t.turn + 1) % n
			if t.next[i] < t.limit(i) {
				recs = append(recs, t.record(i))
				emitted = true
				break
			}
		}
		if !emitted {
			break
		}
	}
	return recs
}

func (t *sourceTask) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	for {
		if recs := t.fill(max); len(recs) > 0 {
			return recs, nil
		}
		timer := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil
		case <-timer.C:
		}
	}
}

func (t *sourceTask) Close(context.Context) error { return nil }

type sinkConfig struct {
	ID     string `key:"id" importance:"high" validate:"nonempty" doc:"Names the in-memory external system."`
	Mode   string `key:"mode" default:"sync" validate:"enum=sync|async|none|partial|liar|ahead|extra" doc:"sync: write in Put, report everything; async: write a few records per Flush once 100 ms passed, report what is written; none: write and report nothing; partial: write in Put, report only topic sdktest-a; liar: report everything, write nothing; ahead: like sync but report one record more of sdktest-a; extra: like sync but also report a partition it was not given."`
	Fault  string `key:"fault" default:"none" validate:"enum=none|retriable|retriable-after-write|retriable-forever|rewind|rewind-stale|drop-buffer|write-twice|skip-structs|leak" doc:"retriable: each Put fails once with a retriable error before it writes; retriable-after-write: each Put writes, then fails once with a retriable error; retriable-forever: Put always fails with a retriable error; rewind: the first Put with sdktest-a@5 writes nothing of sdktest-a from there and rewinds it to 5; rewind-stale: the same, but Flush reports the highest offset Put saw; drop-buffer (async): the first write drops the buffer and rewinds to it; write-twice: writes every record twice; skip-structs: does not write struct values; leak: Open starts a goroutine that Close does not stop."`
	Kinds  string `key:"kinds" default:"all" validate:"enum=all|strings" doc:"strings: Put fails on a record without a STRING value."`
	Format string `key:"format" default:"text" validate:"enum=text|lossy|json|json-numeric" doc:"text: render (structs as JSON); lossy: structs as {}; json: every value as schema.AppendJSON writes it; json-numeric: the same with decimal.format NUMERIC."`
	Resume string `key:"resume" default:"none" validate:"enum=none|rewind" doc:"rewind: when assigned partitions, rewind them to what the external system holds."`
}

func testSink() sdk.Connector {
	return sdk.SinkConnector[sinkConfig]{
		Class:   "dev.tributary.sdktest.TestSinkConnector",
		Version: "0.1.0",
		NewTask: func(c sinkConfig) sdk.SinkTask { return &sinkTask{cfg: c} },
	}
}

type sinkTask struct {
	cfg      sinkConfig
	tc       sdk.SinkTaskContext
	buffered []sdk.SinkRecord
	since    time.Time
	written  map[sdk.TopicPartition]int64 // offset after the last record written
	seen     map[sdk.TopicPartition]int64 // offset after the last record given to Put
	failed   bool                         // the last Put failed (retriable faults)
	rewound  bool                         // the one rewind of the rewind faults happened
}

// leaked is what the leak fault's goroutines wait for: never closed.
var leaked = make(chan struct{})

func (t *sinkTask) Open(_ context.Context, tc sdk.SinkTaskContext) error {
	if t.cfg.Fault == "leak" {
		go func() { <-leaked }()
	}
	t.tc = tc
	t.written, t.seen = map[sdk.TopicPartition]int64{}, map[sdk.TopicPartition]int64{}
	return nil
}

func (t *sinkTask) Assigned(_ context.Context, tps []sdk.TopicPartition) error {
	if t.cfg.Resume != "rewind" {
		return nil
	}
	mu.Lock()
	rw := map[sdk.TopicPartition]int64{}
	for _, tp := range tps {
		rw[tp] = 0
	}
	for _, e := range out[t.cfg.ID] {
		if _, ok := rw[e.tp]; ok {
			rw[e.tp] = max(rw[e.tp], e.off+1)
		}
	}
	mu.Unlock()
	t.tc.Rewind(rw)
	return nil
}

func (t *sinkTask) Revoked(context.Context, []sdk.TopicPartition) error { return nil }

func (t *sinkTask) write(recs []sdk.SinkRecord) {
	mu.Lock()
	defer mu.Unlock()
	for i := range recs {
		r := &recs[i]
		if _, isStruct := r.Value.(*schema.Struct); isStruct && t.cfg.Fault == "skip-structs" {
			continue
		}
		var s string
		switch t.cfg.Format {
		case "text":
			s, _ = render(r)
		case "lossy":
			s, _ = renderLossy(r)
		case "json":
			s = renderJSON(r, schema.JSONOptions{})
		case "json-numeric":
			s = renderJSON(r, schema.JSONOptions{DecimalFormat: "NUMERIC"})
		}
		out[t.cfg.ID] = append(out[t.cfg.ID], entry{r.TopicPartition(), r.Offset, s})
		if t.cfg.Fault == "write-twice" {
			out[t.cfg.ID] = append(out[t.cfg.ID], entry{r.TopicPartition(), r.Offset, s})
		}
		t.written[r.TopicPartition()] = r.Offset + 1
	}
}

func (t *sinkTask) Put(_ context.Context, recs []sdk.SinkRecord) error {
	if t.cfg.Kinds == "strings" {
		for _, r := range recs {
			if _, ok := r.Value.(string); !ok {
				return fmt.Errorf("sdktest sink: only STRING values are supported, %s@%d has a %v value", r.TopicPartition(), r.Offset, r.ValueSchema)
			}
		}
	}
	for _, r := range recs {
		t.seen[r.TopicPartition()] = max(t.seen[r.TopicPartition()], r.Offset+1)
	}
	switch t.cfg.Fault {
	case "retriable":
		if t.failed = !t.failed; t.failed {
			return sdk.Retriable(errors.New("sdktest sink: external system busy"))
		}
	case "retriable-after-write":
		t.write(recs)
		if t.failed = !t.failed; t.failed {
			return sdk.Retriable(errors.New("sdktest sink: external system timed out"))
		}
		return nil
	case "retriable-forever":
		return sdk.Retriable(errors.New("sdktest sink: external system down"))
	case "rewind", "rewind-stale":
		a := sdk.TopicPartition{Topic: "sdktest-a", Partition: 0}
		if i := slices.IndexFunc(recs, func(r sdk.SinkRecord) bool { return r.TopicPartition() == a && r.Offset == 5 }); i >= 0 && !t.rewound {
			// Writing sdktest-a@5 failed: ask for it (and what follows) again.
			t.rewound = true
			recs = slices.DeleteFunc(slices.Clone(recs), func(r sdk.SinkRecord) bool { return r.TopicPartition() == a && r.Offset >= 5 })
			t.tc.Rewind(map[sdk.TopicPartition]int64{a: 5})
		}
	}
	switch t.cfg.Mode {
	case "sync", "partial", "ahead", "extra":
		t.write(recs)
	case "async":
		if len(t.buffered) == 0 {
			t.since = time.Now()
		}
		t.buffered = append(t.buffered, recs...)
	}
	return nil
}

func (t *sinkTask) Flush(_ context.Context, given map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	if t.cfg.Fault == "rewind-stale" {
		durable := map[sdk.TopicPartition]int64{}
		for tp, o := range given {
			durable[tp] = max(o, t.seen[tp])
		}
		return durable, nil
	}
	switch t.cfg.Mode {
	case "sync", "liar":
		return given, nil
	case "none":
		return nil, nil
	case "partial", "ahead":
		durable := map[sdk.TopicPartition]int64{}
		for tp, o := range given {
			if tp.Topic == "sdktest-a" {
				durable[tp] = o
				if t.cfg.Mode == "ahead" {
					durable[tp]++
				}
			} else if t.cfg.Mode == "ahead" {
				durable[tp] = o
			}
		}
		return durable, nil
	case "extra":
		durable := maps.Clone(given)
		durable[sdk.TopicPartition{Topic: "sdktest-other", Partition: 7}] = 42
		return durable, nil
	}
	// async: nothing for 100 ms, then five records per Flush.
	if len(t.buffered) > 0 && time.Since(t.since) >= 100*time.Millisecond {
		if t.cfg.Fault == "drop-buffer" && !t.rewound {
			// The write failed: drop the buffer and ask for it again.
			t.rewound = true
			rw := map[sdk.TopicPartition]int64{}
			for _, r := range t.buffered {
				if _, ok := rw[r.TopicPartition()]; !ok {
					rw[r.TopicPartition()] = r.Offset
				}
			}
			t.buffered = nil
			t.tc.Rewind(rw)
		} else {
			n := min(5, len(t.buffered))
			t.write(t.buffered[:n])
			t.buffered = t.buffered[n:]
		}
	}
	durable := map[sdk.TopicPartition]int64{}
	for tp, o := range given {
		if w, ok := t.written[tp]; ok {
			durable[tp] = min(w, o)
		}
	}
	return durable, nil
}

func (t *sinkTask) Close(context.Context) error { return nil }

package sdktest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// SinkDriver describes a sink connector under test. Only Connector, Config
// and ReadBack are required; the other fields are optional.
type SinkDriver struct {
	Connector sdk.Connector
	Config    func(t *testing.T) map[string]string
	// ReadBack returns what the external system holds, one string per
	// record, in write order.
	ReadBack func(t *testing.T, cfg map[string]string) []string
	// Render is what ReadBack returns for a record with a STRING value v;
	// default: v itself. Records of other kinds are only looked for with
	// RenderRecord.
	Render func(v string) string
	// RenderRecord, when set, is what ReadBack returns for any record the
	// kit sends (ok false: the sink keeps nothing for it, e.g. for a
	// tombstone that deletes); it replaces Render and lets the kit look for
	// records of every kind, not only those with STRING values.
	RenderRecord func(r *sdk.SinkRecord) (s string, ok bool)
	// JSON, when set, declares that the sink writes each record's value
	// as schema.AppendJSON renders it with these options (Kafka's
	// JsonConverter), one ReadBack string per record: the kit then renders
	// every record itself that way (tombstones are not looked for), fails
	// the sink where what it wrote differs, and RenderRecord and Render are
	// not used.
	JSON *schema.JSONOptions
	// Timeout bounds the wait for Flush, called again and again without
	// new records, to report everything it was given durable (default
	// 10 s). Config should make the sink write within it (small batches,
	// short intervals).
	Timeout time.Duration
	// Supports lists the kinds of records the sink takes; nil means all of
	// AllRecordKinds. Records with a STRING value and a STRING key are
	// always sent; a kind left out (because the sink documents that it
	// does not support it) is not sent at all.
	Supports []RecordKind
	// Idempotent says the external system holds each record once however
	// often it is delivered (again after a retriable Put error, a rewind or
	// a restart): the kit then fails a sink whose ReadBack holds a record
	// twice. Without it, a record delivered again may be held again
	// (at-least-once), but one delivered once must be held at most once.
	Idempotent bool
	// Lose, for a sink that keeps its offsets in the external system and
	// rewinds to them when its partitions are assigned (Kafka Connect's
	// context.offset() in open()), makes the external system lose its most
	// recent records together with their offsets, as a crash could. The
	// kit calls it between two runs of a task and restarts the task from
	// the offsets it had committed; the task must Rewind to what the
	// external system still holds, or the lost records are never written
	// again. nil skips that check.
	Lose func(t *testing.T, cfg map[string]string)
}

// RecordKind names a kind of record the sink checks send.
type RecordKind string

// The kinds of records the sink checks send, by offset within each Kafka
// partition; see SinkDriver.Supports.
const (
	// StringValues: a STRING value and a STRING key; always sent.
	StringValues RecordKind = "string"
	// StructValues: a struct value whose schema has INT64, STRING, FLOAT64,
	// BOOLEAN, an optional STRING (null in some records), Timestamp and
	// Decimal fields; and, in the lossless check, struct values with every
	// type of the data model (see RunSink).
	StructValues RecordKind = "struct"
	// Tombstones: a nil value with a nil value schema (and a key).
	Tombstones RecordKind = "tombstone"
	// NilKeys: a nil key with a nil key schema.
	NilKeys RecordKind = "nil-key"
	// Headers: a STRING and an INT32 header.
	Headers RecordKind = "headers"
)

// AllRecordKinds is every kind of record the sink checks send: the default
// of SinkDriver.Supports.
var AllRecordKinds = []RecordKind{StringValues, StructValues, Tombstones, NilKeys, Headers}

// RunSink runs the sink acceptance checks as subtests.
func RunSink(t *testing.T, d SinkDriver) {
	t.Helper()
	sp, ok := d.Connector.(sdk.SinkPlugin)
	if !ok {
		t.Fatalf("sdktest: %T is not a sink connector", d.Connector)
	}
	if d.Render == nil {
		d.Render = func(v string) string { return v }
	}
	if d.Timeout <= 0 {
		d.Timeout = 10 * time.Second
	}
	if d.Supports == nil {
		d.Supports = AllRecordKinds
	}
	for _, k := range d.Supports {
		if !slices.Contains(AllRecordKinds, k) {
			t.Fatalf("sdktest: SinkDriver.Supports lists %q, not one of %v", k, AllRecordKinds)
		}
	}
	t.Run("spec", func(t *testing.T) { checkSpec(t, d.Connector, sdk.Sink) })
	t.Run("validate", func(t *testing.T) { checkValidate(t, d.Connector, d.Config(t)) })
	durable := t.Run("durable-offsets", func(t *testing.T) { checkSinkDurable(t, sp, d) })
	if durable && slices.Contains(d.Supports, StructValues) {
		t.Run("lossless", func(t *testing.T) { checkSinkLossless(t, sp, d) })
	}
	if d.Lose != nil {
		t.Run("rewind-after-loss", func(t *testing.T) { checkSinkRewindAfterLoss(t, sp, d) })
	}
}

// sinkContext collects the rewinds a task asks for, from any goroutine;
// the kit applies them between Puts and before each Flush, as the worker
// does.
type sinkContext struct {
	logger  *slog.Logger
	mu      sync.Mutex
	pending map[sdk.TopicPartition]int64
}

func (c *sinkContext) Info() sdk.TaskInfo   { return sdk.TaskInfo{Connector: "sdktest", Task: 0} }
func (c *sinkContext) Logger() *slog.Logger { return c.logger }

func (c *sinkContext) Rewind(offsets map[sdk.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(offsets) == 0 {
		return
	}
	if c.pending == nil {
		c.pending = map[sdk.TopicPartition]int64{}
	}
	maps.Copy(c.pending, offsets)
}

// take returns the rewinds asked for since the last call.
func (c *sinkContext) take() map[sdk.TopicPartition]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending
	c.pending = nil
	return p
}

func (c *sinkContext) hasPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}

const (
	// sinkBatch is the most records the kit hands to one Put.
	sinkBatch = 10
	// putAttempts bounds the deliveries of one batch that keeps failing
	// with a retriable error.
	putAttempts = 10
)

// sinkRun plays the worker for a sink task: Kafka partitions with records
// 0..end-1, a consumer position per partition, Puts of what lies between
// the two, Flush with the consumed positions, and the rewinds the task
// asks for. It lives across restarts of the task.
type sinkRun struct {
	t     *testing.T
	sp    sdk.SinkPlugin
	d     SinkDriver
	cfg   map[string]string
	kinds map[RecordKind]bool
	tps   []sdk.TopicPartition

	end       map[sdk.TopicPartition]int64 // records produced
	pos       map[sdk.TopicPartition]int64 // next record to hand to Put
	committed map[sdk.TopicPartition]int64 // last offsets Flush reported durable
	attempts  map[sdk.TopicPartition][]int // per offset: Puts that carried it
	rewound   map[sdk.TopicPartition]int64 // rewinds not delivered past yet, for messages
	active    map[sdk.TopicPartition]bool  // consumed or rewound by this task: what Flush is given
	checked   map[sdk.TopicPartition]int64 // durable offsets last checked against ReadBack
	allTypes  bool                         // send the lossless check's records (allTypesRecord)
	task      sdk.SinkTask
	tc        *sinkContext
	// note explains, in failure messages, the situation being checked.
	note string
}

func newSinkRun(t *testing.T, sp sdk.SinkPlugin, d SinkDriver) *sinkRun {
	h := &sinkRun{t: t, sp: sp, d: d, cfg: d.Config(t), kinds: map[RecordKind]bool{StringValues: true},
		tps:       []sdk.TopicPartition{{Topic: "sdktest-a", Partition: 0}, {Topic: "sdktest-b", Partition: 3}},
		end:       map[sdk.TopicPartition]int64{},
		pos:       map[sdk.TopicPartition]int64{},
		committed: map[sdk.TopicPartition]int64{},
		attempts:  map[sdk.TopicPartition][]int{},
	}
	for _, k := range d.Supports {
		h.kinds[k] = true
	}
	return h
}

// sdktestRow is the schema of the struct values the kit sends.
var sdktestRow = schema.StructOf("dev.tributary.sdktest.Row").
	Field("id", schema.Int64).
	Field("name", schema.String).
	Field("score", schema.Float64).
	Field("active", schema.Boolean).
	Field("note", schema.OptionalString).
	Field("at", schema.Timestamp).
	Field("amount", schema.Decimal(2)).
	Build()

// record returns record off of Kafka partition tp; it depends only on
// them (and the kinds the sink supports). Its STRING value, or its struct
// value's name, is "sdktest TOPIC-PARTITION@OFFSET".
func (h *sinkRun) record(tp sdk.TopicPartition, off int64) sdk.SinkRecord {
	if h.allTypes {
		return h.allTypesRecord(tp, off)
	}
	id := fmt.Sprintf("%s-%d@%d", tp.Topic, tp.Partition, off)
	r := sdk.SinkRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: off,
		KeySchema: schema.String, Key: "key " + id, ValueSchema: schema.String, Value: "sdktest " + id,
		Timestamp: time.UnixMilli(1_700_000_000_000)}
	switch {
	case off%6 == 2 && h.kinds[StructValues]:
		v := schema.NewStruct(sdktestRow).
			Set("id", off).
			Set("name", "sdktest "+id).
			Set("score", float64(off)+0.5).
			Set("active", off%4 == 2).
			Set("at", time.UnixMilli(1_700_000_000_000+off).UTC()).
			Set("amount", big.NewInt(12345+off))
		if off%4 == 2 {
			v.Set("note", "note "+id)
		}
		if err := v.Validate(); err != nil {
			panic(err) // the kit's own mistake
		}
		r.ValueSchema, r.Value = sdktestRow, v
	case off%6 == 4 && h.kinds[Tombstones]:
		r.ValueSchema, r.Value = nil, nil
	case off%6 == 5 && h.kinds[NilKeys]:
		r.KeySchema, r.Key = nil, nil
	}
	if off%3 == 1 && h.kinds[Headers] {
		r.Headers = []sdk.Header{
			{Key: "sdktest-id", Schema: schema.String, Value: id},
			{Key: "sdktest-offset", Schema: schema.Int32, Value: int32(off)},
		}
	}
	return r
}

// recordKinds names the kinds of record r, for messages.
func recordKinds(r *sdk.SinkRecord) []RecordKind {
	var ks []RecordKind
	switch {
	case r.Value == nil && r.ValueSchema == nil:
		ks = append(ks, Tombstones)
	case r.ValueSchema == sdktestRow || r.ValueSchema == allTypes:
		ks = append(ks, StructValues)
	default:
		ks = append(ks, StringValues)
	}
	if r.Key == nil {
		ks = append(ks, NilKeys)
	}
	if len(r.Headers) > 0 {
		ks = append(ks, Headers)
	}
	return ks
}

// render is what ReadBack holds for a record, if the kit can tell.
func (h *sinkRun) render(tp sdk.TopicPartition, off int64) (string, bool) {
	r := h.record(tp, off)
	if h.d.JSON != nil {
		if r.Value == nil {
			return "", false
		}
		b, err := schema.AppendJSON(nil, r.ValueSchema, r.Value, *h.d.JSON)
		if err != nil {
			h.t.Fatalf("sdktest: SinkDriver.JSON: %v", err)
		}
		return string(b), true
	}
	if h.d.RenderRecord != nil {
		return h.d.RenderRecord(&r)
	}
	if v, ok := r.Value.(string); ok {
		return h.d.Render(v), true
	}
	return "", false
}

// produce adds n records to the partitions, alternately.
func (h *sinkRun) produce(n int) {
	for i := range n {
		h.end[h.tps[i%len(h.tps)]]++
	}
}

// call runs connector code, turning a panic into a test failure.
func (h *sinkRun) call(what string, f func() error) error {
	h.t.Helper()
	var err error
	var panicked any
	var stack []byte
	func() {
		defer func() {
			if p := recover(); p != nil {
				panicked, stack = p, debug.Stack()
			}
		}()
		err = f()
	}()
	if panicked != nil {
		h.t.Fatalf("%s panicked: %v%s\n%s", what, panicked, h.note, stack)
	}
	return err
}

// open starts a task (from the committed offsets) and assigns it the
// partitions.
func (h *sinkRun) open() {
	h.t.Helper()
	task, err := h.sp.NewSinkTask(h.cfg)
	if err != nil {
		h.t.Fatalf("new task: %v", err)
	}
	h.task, h.tc = task, &sinkContext{logger: testLogger(h.t)}
	h.pos = maps.Clone(h.committed)
	h.active = map[sdk.TopicPartition]bool{}
	h.rewound = map[sdk.TopicPartition]int64{}
	h.checked = nil
	ctx := context.Background()
	if err := h.call("open", func() error { return task.Open(ctx, h.tc) }); err != nil {
		h.t.Fatalf("open: %v", err)
	}
	if ph, ok := task.(sdk.PartitionsHandler); ok {
		if err := h.call("assigned", func() error { return ph.Assigned(ctx, slices.Clone(h.tps)) }); err != nil {
			h.t.Fatalf("assigned: %v", err)
		}
	}
}

func (h *sinkRun) close() {
	h.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.call("close", func() error { return h.task.Close(ctx) }); err != nil {
		h.t.Errorf("close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		h.t.Errorf("close took %v", d)
	}
	h.tc.take() // rewinds asked for while closing have no task to go to
}

// applyRewinds moves the positions to where the task asked, as the worker
// does between Puts and before a Flush: the partition's records are
// delivered again from there, and none from before the rewind is handed
// to Put afterwards. It then calls Flush once, before anything is
// delivered again: what the task reports durable must not exceed the
// offsets it rewound to.
func (h *sinkRun) applyRewinds() {
	h.t.Helper()
	rw := h.tc.take()
	moved := false
	for _, tp := range slices.SortedFunc(maps.Keys(rw), compareTP) {
		o := rw[tp]
		if !slices.Contains(h.tps, tp) {
			h.t.Logf("ignoring the task's rewind of %s to %d: it was given %v only (the runtime ignores it too)", tp, o, h.tps)
			continue
		}
		if o < 0 || o > h.end[tp] {
			h.t.Fatalf("the task asked to rewind %s to %d, but the partition holds records 0..%d%s", tp, o, h.end[tp]-1, h.note)
		}
		h.t.Logf("rewinding %s from %d to %d, as the task asked", tp, h.pos[tp], o)
		h.pos[tp], h.active[tp], h.rewound[tp] = o, true, o
		moved = true
	}
	if moved {
		h.flush(h.given())
	}
}

func compareTP(a, b sdk.TopicPartition) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// given is what Flush is given: the consumed position of every partition
// this task consumed or rewound.
func (h *sinkRun) given() map[sdk.TopicPartition]int64 {
	g := map[sdk.TopicPartition]int64{}
	for tp := range h.active {
		g[tp] = h.pos[tp]
	}
	return g
}

// deliver hands the records between the positions and the ends to Put, in
// batches alternating between partitions, applying the task's rewinds
// between batches.
func (h *sinkRun) deliver() {
	h.t.Helper()
	for {
		h.applyRewinds()
		var batch []sdk.SinkRecord
		cur := maps.Clone(h.pos)
		for progressed := true; progressed && len(batch) < sinkBatch; {
			progressed = false
			for _, tp := range h.tps {
				if cur[tp] < h.end[tp] && len(batch) < sinkBatch {
					batch = append(batch, h.record(tp, cur[tp]))
					cur[tp]++
					progressed = true
				}
			}
		}
		if len(batch) == 0 {
			return
		}
		h.put(batch)
		for _, r := range batch {
			tp := r.TopicPartition()
			h.pos[tp], h.active[tp] = r.Offset+1, true
			delete(h.rewound, tp)
		}
	}
}

// put hands a batch to Put; a retriable error makes it hand the same batch
// again after a short back-off, as the runtime does, up to putAttempts
// times.
func (h *sinkRun) put(batch []sdk.SinkRecord) {
	h.t.Helper()
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		for _, r := range batch {
			a := h.attempts[r.TopicPartition()]
			for int64(len(a)) <= r.Offset {
				a = append(a, 0)
			}
			a[r.Offset]++
			h.attempts[r.TopicPartition()] = a
		}
		recs := slices.Clone(batch)
		err := h.call(fmt.Sprintf("put of %s", batchString(batch)), func() error { return h.task.Put(context.Background(), recs) })
		if err == nil {
			return
		}
		if !sdk.IsRetriable(err) {
			hint := ""
			if len(batchKinds(batch)) > 1 {
				hint = "; a sink must take every kind of record in SinkDriver.Supports (default: all), or leave out of it the kinds it documents it does not support"
			}
			h.t.Fatalf("put of %s failed: %v%s%s", batchString(batch), err, hint, h.note)
		}
		if attempt == putAttempts {
			h.t.Fatalf("put of %s returned a retriable error %d times in a row, the last one: %v; the runtime redelivers a batch until Put takes it, but a sink must recover from a transient error%s",
				batchString(batch), attempt, err, h.note)
		}
		h.t.Logf("put returned a retriable error (attempt %d): %v; delivering the same batch again in %v, as the runtime does", attempt, err, backoff)
		time.Sleep(backoff)
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

func batchKinds(batch []sdk.SinkRecord) []RecordKind {
	seen := map[RecordKind]bool{}
	for i := range batch {
		for _, k := range recordKinds(&batch[i]) {
			seen[k] = true
		}
	}
	var ks []RecordKind
	for _, k := range AllRecordKinds {
		if seen[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// batchString describes a batch: its offsets per partition and the kinds
// of its records.
func batchString(batch []sdk.SinkRecord) string {
	first, last := map[sdk.TopicPartition]int64{}, map[sdk.TopicPartition]int64{}
	var order []sdk.TopicPartition
	for _, r := range batch {
		tp := r.TopicPartition()
		if _, ok := first[tp]; !ok {
			first[tp] = r.Offset
			order = append(order, tp)
		}
		last[tp] = r.Offset
	}
	parts := make([]string, len(order))
	for i, tp := range order {
		parts[i] = fmt.Sprintf("%s@%d..%d", tp, first[tp], last[tp])
	}
	return fmt.Sprintf("records %s (kinds %v)", strings.Join(parts, ", "), batchKinds(batch))
}

// flush calls Flush and checks what it reports durable: never beyond what
// it was given for a partition (entries for partitions it was not given
// are ignored, as the runtime does), and honest: every record below a
// reported offset is readable now, without Close, and no record is held
// more often than allowed.
func (h *sinkRun) flush(given map[sdk.TopicPartition]int64) map[sdk.TopicPartition]int64 {
	h.t.Helper()
	var reported map[sdk.TopicPartition]int64
	err := h.call("flush", func() error {
		var err error
		reported, err = h.task.Flush(context.Background(), maps.Clone(given))
		return err
	})
	if err != nil {
		h.t.Fatalf("flush: %v%s", err, h.note)
	}
	durable := map[sdk.TopicPartition]int64{}
	for _, tp := range slices.SortedFunc(maps.Keys(reported), compareTP) {
		o := reported[tp]
		g, ok := given[tp]
		if !ok {
			h.t.Logf("flush reported %s durable up to %d, but was given %v only: ignored, as the runtime does", tp, o, given)
			continue
		}
		if o > g {
			why := ""
			if r, ok := h.rewound[tp]; ok {
				why = fmt.Sprintf(" (the task rewound %s to %d: records from there on are not durable until they are delivered and written again)", tp, r)
			}
			h.t.Fatalf("flush reported %s durable up to %d, but was given %v%s%s", tp, o, given, why, h.note)
		}
		durable[tp] = o
		h.committed[tp] = o
	}
	if len(durable) == 0 || maps.Equal(durable, h.checked) {
		return durable
	}
	h.checked = maps.Clone(durable)
	h.checkHeld(durable)
	return durable
}

// checkHeld checks ReadBack against the records the kit can render: those
// below the durable offsets are there, and none is held more often than it
// was handed to Put (once, if the driver says the sink is idempotent).
func (h *sinkRun) checkHeld(durable map[sdk.TopicPartition]int64) {
	h.t.Helper()
	held := map[string]int{}
	for _, s := range h.d.ReadBack(h.t, h.cfg) {
		held[s]++
	}
	for _, tp := range slices.SortedFunc(maps.Keys(durable), compareTP) {
		o := durable[tp]
		for off := range o {
			s, ok := h.render(tp, off)
			if !ok || held[s] > 0 {
				continue
			}
			what := ""
			if r := h.record(tp, off); recordKinds(&r)[0] != StringValues {
				what = fmt.Sprintf(" (kinds %v)", recordKinds(&r))
			}
			if h.d.JSON != nil {
				h.t.Fatalf("flush reported %s durable up to %d, but record %d%s is not in the external system as SinkDriver.JSON says the sink writes it: "+
					"want %s (schema.AppendJSON of the value with %+v)%s; render values with schema.AppendJSON(dst, r.ValueSchema, r.Value, opts), "+
					"or set SinkDriver.JSON to the options the sink uses%s", tp, o, off, what, s, *h.d.JSON, heldExample(held), h.note)
			}
			h.t.Fatalf("flush reported %s durable up to %d, but record %d%s is not in the external system%s", tp, o, off, what, h.note)
		}
	}
	type origin struct {
		tp  sdk.TopicPartition
		off int64
	}
	allowed, first := map[string]int{}, map[string]origin{}
	for _, tp := range h.tps {
		for off := range h.end[tp] {
			s, ok := h.render(tp, off)
			if !ok {
				continue
			}
			n := 0
			if a := h.attempts[tp]; off < int64(len(a)) {
				n = a[off]
			}
			if h.d.Idempotent {
				n = min(n, 1)
			}
			if _, ok := first[s]; !ok {
				first[s] = origin{tp, off}
			}
			allowed[s] += n
		}
	}
	for _, s := range slices.Sorted(maps.Keys(held)) {
		a, ok := allowed[s]
		if !ok || held[s] <= a {
			continue
		}
		o := first[s]
		if h.d.Idempotent {
			h.t.Fatalf("record %s@%d (%q) is held %d times in the external system; SinkDriver.Idempotent says each record is held once, however often it is delivered%s",
				o.tp, o.off, s, held[s], h.note)
		}
		h.t.Fatalf("record %s@%d (%q) is held %d times in the external system, but was handed to Put %d times: a sink may write a record again only when it is delivered again (after a retriable Put error or a rewind)%s",
			o.tp, o.off, s, held[s], a, h.note)
	}
}

// flushUntilDurable delivers what is pending and calls Flush again and
// again, without new records, until it reports every record durable.
//
// Flush is Kafka Connect's preCommit, whose contract is to return the
// offsets it was given once everything is flushed. An asynchronous sink
// may report earlier offsets, a subset or nothing at first, but the worker
// keeps calling Flush: with no new records, what it reports must reach
// what it was given. A sink that never reports progress never has its
// consumer offsets committed, and gets every record again after each
// restart.
func (h *sinkRun) flushUntilDurable() {
	h.t.Helper()
	deadline := time.Now().Add(h.d.Timeout)
	wait := 10 * time.Millisecond
	for flushes := 1; ; flushes++ {
		h.deliver()
		durable := h.flush(h.given())
		behind := h.tc.hasPending()
		for tp, o := range h.end {
			if !h.active[tp] && h.pos[tp] >= o {
				continue // nothing consumed since the (re)start
			}
			if g, ok := durable[tp]; !ok || g < o || h.pos[tp] < o {
				behind = true
			}
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("after Put of records up to %v and %d Flush calls over %v without new records, Flush still reports %v durable; "+
				"once everything is flushed it must report the offsets it was given (an asynchronous sink may lag, not stall)%s",
				h.end, flushes, h.d.Timeout, durable, h.note)
		}
		time.Sleep(wait)
		wait = min(2*wait, 250*time.Millisecond)
	}
}

func checkSinkDurable(t *testing.T, sp sdk.SinkPlugin, d SinkDriver) {
	defer verifyNoLeaks(t)()
	h := newSinkRun(t, sp, d)
	h.open()
	h.produce(10)
	h.deliver()
	h.produce(7)
	h.deliver()
	h.flushUntilDurable()
	// A flush given fewer partitions: what it reports of others is ignored.
	h.produce(4)
	h.deliver()
	h.applyRewinds()
	h.flush(map[sdk.TopicPartition]int64{h.tps[0]: h.pos[h.tps[0]]})
	h.close()
}

// checkSinkRewindAfterLoss runs a task until everything is durable, makes
// the external system lose its latest records (SinkDriver.Lose), and
// restarts the task from the committed offsets with a few more records: it
// must rewind to what the external system still holds, so that every
// record is held again.
func checkSinkRewindAfterLoss(t *testing.T, sp sdk.SinkPlugin, d SinkDriver) {
	defer verifyNoLeaks(t)()
	h := newSinkRun(t, sp, d)
	h.open()
	h.produce(12)
	h.deliver()
	h.flushUntilDurable()
	h.close()
	d.Lose(t, h.cfg)
	h.note = fmt.Sprintf(" (after SinkDriver.Lose, with the task restarted from the committed offsets %v: "+
		"a sink that keeps its offsets in the external system must Rewind to what it still holds)", h.committed)
	h.open()
	h.produce(6)
	h.deliver()
	h.flushUntilDurable()
	h.close()
}

package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

func consumeAll(t testing.TB, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(out), n)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func TestSourceFileToTopic(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "lines", 1)
	in := filepath.Join(t.TempDir(), "in.txt")
	lines := writeLines(t, in, 0, 500)
	adm := admin(t, addr)
	offsets := &memOffsets{}
	// Invariant 2: every offset written is covered by records already in
	// the topic (acked).
	offsets.check = func(ctx context.Context, offs []sdk.SourceOffset) error {
		n, err := endOffset(ctx, adm, "lines")
		if err != nil {
			return err
		}
		for _, o := range offs {
			pos, _ := o.Offset.Int64("position")
			if maxPos := n * int64(len("line-000000\n")); pos > maxPos {
				t.Errorf("offset position %d written with only %d records acked (max %d)", pos, n, maxPos)
			}
		}
		return nil
	}
	l := loader(t)
	info := sdk.TaskInfo{Connector: "src", Task: 0}
	pt, err := l.StartSourceTask(context.Background(), file.SourceClass, info,
		map[string]string{"file": in, "topic": "lines", "batch.size": "7"}, offsets)
	if err != nil {
		t.Fatal(err)
	}
	st := &statuses{}
	r, err := NewSource(SourceConfig{Info: info, Task: pt, Key: jsonConv(t, false), Value: jsonConv(t, true),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets, Status: st,
		FlushInterval: 20 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	recs := consumeAll(t, addr, "lines", len(lines))
	for i, rec := range recs {
		if want := fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"%s"}`, lines[i]); string(rec.Value) != want {
			t.Fatalf("record %d: %s, want %s", i, rec.Value, want)
		}
	}
	// Pause: no new lines flow until Resume.
	r.Pause()
	time.Sleep(100 * time.Millisecond)
	more := writeLines(t, in, 500, 10)
	time.Sleep(300 * time.Millisecond)
	if n, _ := endOffset(context.Background(), adm, "lines"); n != int64(len(lines)) {
		t.Fatalf("paused task produced: %d records", n)
	}
	r.Resume()
	consumeAll(t, addr, "lines", len(lines)+len(more))
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantPos := int64(len(lines)+len(more)) * int64(len("line-000000\n"))
	got, _ := offsets.latest[partitionKey(sdk.Partition{"filename": in})].Int64("position")
	if got != wantPos {
		t.Errorf("final offset %d, want %d", got, wantPos)
	}
	if want := []State{StateRunning, StatePaused, StateRunning}; fmt.Sprint(st.all) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", st.all, want)
	}
}

// flakySource fails after a few batches, and emits heartbeats.
type scriptedTask struct {
	batches [][]sdk.SourceRecord
	err     error
	i       int
	cmu     sync.Mutex
	commits [][]sdk.SourceOffset
}

// commitCount is how many times Committed was called.
func (s *scriptedTask) commitCount() int {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return len(s.commits)
}

func (s *scriptedTask) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	if s.i < len(s.batches) {
		s.i++
		return s.batches[s.i-1], nil
	}
	if s.err != nil {
		return nil, s.err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s *scriptedTask) Committed(_ context.Context, o []sdk.SourceOffset) error {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.commits = append(s.commits, o)
	return nil
}

func (s *scriptedTask) Stop(context.Context) error { return nil }

func TestSourceFailureAndHeartbeats(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "t", 3)
	p := sdk.Partition{"p": "a"}
	hb := sdk.Partition{"p": "hb"}
	task := &scriptedTask{
		batches: [][]sdk.SourceRecord{
			{{Partition: p, Offset: sdk.Offset{"n": int64(1)}, Topic: "t", Value: "x"},
				{Partition: hb, Offset: sdk.Offset{"n": int64(9)}}, // heartbeat: offset only
				{Partition: p, Offset: sdk.Offset{"n": int64(2)}, Topic: "t", Value: "dropped"}},
		},
		err: &sdk.TaskError{Message: "boom", Trace: "stack"},
	}
	drop := func(r *sdk.SourceRecord) (bool, error) { return r.Value != "dropped", nil }
	st := &statuses{}
	offsets := &memOffsets{}
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: task, Key: jsonConv(t, false),
		Value: jsonConv(t, false), Transform: drop, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
		Offsets: offsets, Status: st, FlushInterval: time.Hour, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	<-r.Done()
	if st.last() != StateFailed || st.err == nil || st.err.Trace != "stack" {
		t.Fatalf("status %v %v", st.all, st.err)
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n, _ := offsets.latest[partitionKey(p)].Int64("n"); n != 2 {
		t.Errorf("offset of p: %d, want 2 (dropped records advance offsets)", n)
	}
	if n, _ := offsets.latest[partitionKey(hb)].Int64("n"); n != 9 {
		t.Errorf("heartbeat offset: %d", n)
	}
	if len(task.commits) != 1 || len(task.commits[0]) != 2 {
		t.Errorf("Committed calls: %v", task.commits)
	}
	if recs := consumeAll(t, addr, "t", 1); len(recs) != 1 || string(recs[0].Value) != `"x"` {
		t.Errorf("records: %v", recs)
	}
}

func TestSourceOffsetWriteFailureRetried(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "t", 1)
	p := sdk.Partition{"p": "a"}
	task := &scriptedTask{batches: [][]sdk.SourceRecord{{{Partition: p, Offset: sdk.Offset{"n": int64(1)}, Topic: "t", Value: "x"}}}}
	fails := 2
	offsets := &memOffsets{}
	offsets.check = func(context.Context, []sdk.SourceOffset) error {
		if fails > 0 {
			fails--
			return errors.New("offsets topic unavailable")
		}
		return nil
	}
	r, err := NewSource(SourceConfig{Task: task, Key: jsonConv(t, false), Value: jsonConv(t, false),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets, FlushInterval: 10 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	waitFor(t, 10*time.Second, "offset written after failures", func() bool {
		offsets.mu.Lock()
		defer offsets.mu.Unlock()
		return len(offsets.writes) == 1
	})
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestPartKeyCache(t *testing.T) {
	var c partKeyCache
	a := sdk.Partition{"file": "a", "n": int64(1)}
	if got, want := c.keyOf(a), partitionKey(a); got != want {
		t.Fatalf("key %q, want %q", got, want)
	}
	for _, p := range []sdk.Partition{
		{"file": "b", "n": int64(1)},
		{"file": "a", "n": int64(2)},
		{"file": "a", "n": 1}, // int, not int64: a different value type
		{"file": "a"},
		{"file": "a", "n": int64(1), "x": true},
		{"file": "a", "n": []any{1}},
		{"file": "a", "n": int64(1)},
	} {
		if got, want := c.keyOf(p), partitionKey(p); got != want {
			t.Fatalf("keyOf(%v) = %q, want %q", p, got, want)
		}
	}
}

// TestSourceRawValues: datagen in a plugin process, JsonConverter values
// with and without the schema envelope. The runner has the plugin host
// leave values and source offsets in the wire encoding and writes values
// without building Go values; each record in Kafka must still be exactly
// what the converter writes for the generated value, and the committed
// offset must be the last record's.
func TestSourceRawValues(t *testing.T) {
	addr := startBroker(t)
	h := pluginHost(t)
	for _, schemas := range []bool{true, false} {
		topic := fmt.Sprintf("gen-%v", schemas)
		createTopic(t, addr, topic, 1)
		const n = 10000
		cfg := map[string]string{"kafka.topic": topic, "payload.bytes": "300", "iterations": fmt.Sprint(n), "batch.size": "700", "seed": "5"}
		info := sdk.TaskInfo{Connector: topic, Task: 0}
		pt, err := h.StartSourceTask(context.Background(), datagen.Class, info, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pt.(plugins.RawValueSource); !ok {
			t.Fatal("the plugin host's source task cannot leave values encoded")
		}
		counted := &rawCounter{SourceTask: pt}
		value := jsonConv(t, schemas)
		offsets := &memOffsets{}
		r, err := NewSource(SourceConfig{Info: info, Task: counted, Key: jsonConv(t, false), Value: value,
			ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets, FlushInterval: time.Second, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if !r.rawValues {
			t.Fatal("the runner does not take encoded values from a JsonConverter")
		}
		if r.encodedOffsets == nil {
			t.Fatal("the runner does not take encoded source offsets from the plugin host")
		}
		r.Start()
		recs := consumeAll(t, addr, topic, n)
		if err := r.Stop(stopCtx(t)); err != nil {
			t.Fatal(err)
		}
		// The batches decoded before the runner asked carry decoded
		// values: one waiting in the task's channel and one waiting to be
		// put there, each of up to the host's 2,000 records (a plugin
		// batch gathers several polls of 700).
		if got := counted.raw.Load(); got < n-2*2000 {
			t.Fatalf("only %d of %d values reached the runner encoded", got, n)
		}
		if got := counted.rawOffsets.Load(); got != n {
			t.Fatalf("%d of %d source offsets reached the runner encoded", got, n)
		}
		if seq, _ := offsets.latest[partitionKey(sdk.Partition{"datagen.task": int64(0)})].Int64("seq"); seq != n-1 {
			t.Fatalf("committed seq %d, want %d", seq, n-1)
		}
		// Received batches' memory was reused for later ones (the records
		// checked below were converted before theirs was).
		if rel, polled := counted.released.Load(), counted.polls.Load(); rel < polled-1 || rel < 3 {
			t.Fatalf("%d of %d batches released", rel, polled)
		}
		dcfg, err := sdk.ParseConfig[datagen.Config](cfg)
		if err != nil {
			t.Fatal(err)
		}
		gen := datagen.NewGenerator(dcfg)
		for i, rec := range recs {
			g := gen.Record(int64(i))
			want, err := value.FromConnect(topic, g.ValueSchema, g.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Value, want) {
				t.Fatalf("schemas.enable=%v, record %d:\n got %s\nwant %s", schemas, i, rec.Value, want)
			}
		}
	}
}

// rawCounter counts the values and source offsets a source task hands
// over still encoded.
type rawCounter struct {
	plugins.SourceTask
	raw, rawOffsets, released, polls atomic.Int64
}

func (c *rawCounter) ReleaseBatch(recs []sdk.SourceRecord) {
	c.released.Add(1)
	c.SourceTask.(plugins.EncodedOffsetSource).ReleaseBatch(recs)
}

func (c *rawCounter) Poll(ctx context.Context) ([]sdk.SourceRecord, error) {
	recs, err := c.SourceTask.Poll(ctx)
	c.count(recs, nil)
	return recs, err
}

func (c *rawCounter) EncodesOffsets() bool { return plugins.EncodesOffsets(c.SourceTask) != nil }

func (c *rawCounter) PollEncodedOffsets(ctx context.Context) ([]sdk.SourceRecord, [][]byte, error) {
	recs, offs, err := c.SourceTask.(plugins.EncodedOffsetSource).PollEncodedOffsets(ctx)
	if err == nil {
		c.polls.Add(1)
	}
	c.count(recs, offs)
	return recs, offs, err
}

func (c *rawCounter) count(recs []sdk.SourceRecord, offs [][]byte) {
	for i, r := range recs {
		if _, ok := r.Value.(*wire.Raw); ok {
			c.raw.Add(1)
		}
		if offs != nil && offs[i] != nil && r.Offset == nil {
			c.rawOffsets.Add(1)
		}
	}
}

func (c *rawCounter) KeepValuesEncoded() { c.SourceTask.(plugins.RawValueSource).KeepValuesEncoded() }

// TestSourceExplicitPartitions checks that a record's KafkaPartition picks
// its partition, that records without one are spread by key as Kafka's
// default partitioner does (the same key, the same partition), and that
// records without a source offset are produced without touching offsets.
func TestSourceExplicitPartitions(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "t", 3)
	part := func(n int32) *int32 { return &n }
	p := sdk.Partition{"p": "a"}
	var batch []sdk.SourceRecord
	for i := range 30 {
		rec := sdk.SourceRecord{Partition: p, Offset: sdk.Offset{"n": int64(i)}, Topic: "t",
			Key: fmt.Sprintf("k%d", i%4), Value: fmt.Sprintf("v%d", i)}
		if i%3 == 0 {
			rec.KafkaPartition = part(int32(i/3) % 3)
		}
		if i%5 == 4 {
			rec.Partition, rec.Offset = nil, nil // no source offset
		}
		batch = append(batch, rec)
	}
	task := &scriptedTask{batches: [][]sdk.SourceRecord{batch}}
	offsets := &memOffsets{}
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: task, Key: stringConv(t),
		Value: stringConv(t), ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
		Offsets: offsets, FlushInterval: time.Hour, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	recs := consumeAll(t, addr, "t", len(batch))
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	keyPart := map[string]int32{}
	for _, kr := range recs {
		var i int
		if _, err := fmt.Sscanf(string(kr.Value), "v%d", &i); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if want := int32(i/3) % 3; kr.Partition != want {
				t.Errorf("record %d in partition %d, want %d (explicit)", i, kr.Partition, want)
			}
			continue
		}
		if p, ok := keyPart[string(kr.Key)]; ok && p != kr.Partition {
			t.Errorf("key %s in partitions %d and %d", kr.Key, p, kr.Partition)
		}
		keyPart[string(kr.Key)] = kr.Partition
	}
	if n, _ := offsets.latest[partitionKey(p)].Int64("n"); n != 28 {
		t.Errorf("committed offset n=%d, want 28 (the last record with an offset)", n)
	}
}

// encodedTask is a scriptedTask that hands over source offsets encoded,
// as the plugin host does, and counts the batches released to it.
type encodedTask struct {
	scriptedTask
	released [][]sdk.SourceRecord
}

func (e *encodedTask) EncodesOffsets() bool { return true }

func (e *encodedTask) PollEncodedOffsets(ctx context.Context) ([]sdk.SourceRecord, [][]byte, error) {
	recs, err := e.Poll(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Encode the offsets as the plugin does and take them back encoded.
	var enc wire.Encoder
	for _, r := range recs {
		if err := enc.Append(&wire.Record{Partition: r.Partition, Offset: r.Offset, KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp}); err != nil {
			return nil, nil, err
		}
	}
	dec := wire.Decoder{RawOffsets: true}
	wrecs, err := dec.Decode(enc.Bytes(), len(recs))
	if err != nil {
		return nil, nil, err
	}
	out := make([]sdk.SourceRecord, len(recs))
	offs := make([][]byte, len(recs))
	for i := range recs {
		out[i], offs[i] = recs[i], wrecs[i].RawOffset
		out[i].Offset = nil
	}
	return out, offs, nil
}

func (e *encodedTask) ReleaseBatch(recs []sdk.SourceRecord) { e.released = append(e.released, recs) }

// TestSourceReleasesBatches checks when the runner hands a batch's memory
// back to an EncodedOffsetSource: only when every key and value it
// produced was copied (an appending converter) and no record had headers,
// since the producer keeps what it was given until it is acked.
func TestSourceReleasesBatches(t *testing.T) {
	addr := startBroker(t)
	p := sdk.Partition{"p": "a"}
	batch := func(topic string, n int, headers, bytesValue bool) []sdk.SourceRecord {
		var recs []sdk.SourceRecord
		for i := range n {
			r := sdk.SourceRecord{Partition: p, Offset: sdk.Offset{"n": int64(i)}, Topic: topic,
				KeySchema: schema.String, Key: "k", ValueSchema: schema.String, Value: "v"}
			if bytesValue {
				r.ValueSchema, r.Value = schema.Bytes, []byte("v")
			}
			if headers {
				r.Headers = []sdk.Header{{Key: "h", Schema: schema.String, Value: "x"}}
			}
			recs = append(recs, r)
		}
		return recs
	}
	for _, tc := range []struct {
		name     string
		value    convert.Converter
		headers  bool
		released bool
	}{
		{"appending converters", stringConvNoT(), false, true},
		{"ByteArrayConverter returns the value itself", convert.ByteArrayConverter{}, false, false},
		{"headers", stringConvNoT(), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("t%v%v", tc.released, tc.headers)
			createTopic(t, addr, topic, 1)
			_, bytesValue := tc.value.(convert.ByteArrayConverter)
			task := &encodedTask{scriptedTask: scriptedTask{batches: [][]sdk.SourceRecord{
				batch(topic, 10, tc.headers, bytesValue), batch(topic, 5, tc.headers, bytesValue)}}}
			offsets := &memOffsets{}
			r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: task, Key: stringConvNoT(),
				Value: tc.value, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
				Offsets: offsets, FlushInterval: time.Hour, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			if r.encodedOffsets == nil {
				t.Fatal("the runner does not take encoded offsets")
			}
			r.Start()
			recs := consumeAll(t, addr, topic, 15)
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			if got := len(task.released) == 2; got != tc.released {
				t.Fatalf("released %d batches, want released=%v", len(task.released), tc.released)
			}
			if n, _ := offsets.latest[partitionKey(p)].Int64("n"); n != 4 {
				t.Fatalf("committed n=%d, want 4 (decoded from the encoded offset)", n)
			}
			for _, kr := range recs {
				if string(kr.Key) != "k" || string(kr.Value) != "v" {
					t.Fatalf("record %q=%q", kr.Key, kr.Value)
				}
			}
		})
	}
}

// TestSourceCommitSkipsUndecodableOffset: an encoded offset that does not
// decode (the decoder checked it, so this takes a bug) costs only its own
// partition's commit; the others are still written.
func TestSourceCommitSkipsUndecodableOffset(t *testing.T) {
	offsets := &memOffsets{}
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: &encodedTask{}, Key: stringConvNoT(),
		Value: stringConvNoT(), ClientOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")},
		Offsets: offsets, FlushInterval: time.Hour, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.client.Close()
	good, bad := sdk.Partition{"p": "good"}, sdk.Partition{"p": "bad"}
	var enc wire.Encoder
	if err := enc.Append(&wire.Record{Offset: map[string]any{"n": int64(7)}, KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp}); err != nil {
		t.Fatal(err)
	}
	dec := wire.Decoder{RawOffsets: true}
	wrecs, err := dec.Decode(enc.Bytes(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r.parts[partitionKey(good)] = &partState{part: good, committableRaw: wrecs[0].RawOffset, dirty: true}
	r.parts[partitionKey(bad)] = &partState{part: bad, committableRaw: []byte{0xff}, dirty: true}
	if err := r.commitOffsets(context.Background()); err == nil {
		t.Fatal("no error for an offset that does not decode")
	}
	if n, _ := offsets.latest[partitionKey(good)].Int64("n"); n != 7 {
		t.Fatalf("good partition's offset n=%d, want 7", n)
	}
	if _, ok := offsets.latest[partitionKey(bad)]; ok {
		t.Fatal("an undecodable offset was written")
	}
	// The next flush has nothing left to fail on.
	if err := r.commitOffsets(context.Background()); err != nil {
		t.Fatalf("second flush: %v", err)
	}
}

// TestSourceCorruptValue: a value the plugin sent corrupt, cut out of its
// batch by its length and left for the converter to check, fails the send
// with an error that names the record and wraps wire.ErrCorrupt.
func TestSourceCorruptValue(t *testing.T) {
	r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: &encodedTask{}, Key: stringConvNoT(),
		Value: jsonConv(t, false), ClientOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")},
		Offsets: &memOffsets{}, FlushInterval: time.Hour, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.client.Close()
	s := schema.OptionalString
	enc := wire.Encoder{ValueLengths: true}
	if err := enc.Append(&wire.Record{Topic: "t", KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp,
		ValueSchema: s, Value: "bad"}); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), enc.Bytes()...)
	b[len(b)-5] = 7 // the presence byte of the value (1, 3, "bad")
	dec := wire.Decoder{RawValues: true}
	wrecs, err := dec.Decode(b, 1)
	if err != nil {
		t.Fatalf("the value was checked on arrival: %v", err)
	}
	for _, raw := range []bool{true, false} { // converted from the encoding, or decoded first
		r.rawValues = raw
		recs := []sdk.SourceRecord{{Topic: "t", ValueSchema: wrecs[0].ValueSchema, Value: wrecs[0].Value}}
		if _, err := r.send(recs, nil); !errors.Is(err, wire.ErrCorrupt) || !strings.Contains(err.Error(), "record 0 of the batch the plugin sent") {
			t.Fatalf("raw values %v: %v", raw, err)
		}
	}
}

package wire

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// writeValue writes v (schemaless: nil, bool, int64, float64, string,
// []any, map[string]any) with w.
func writeValue(w *ValueWriter, v any) {
	switch x := v.(type) {
	case nil:
		w.Null()
	case bool:
		w.Bool(x)
	case int64:
		w.Int64(x)
	case float64:
		w.Float64(x)
	case string:
		w.String([]byte(x))
	case []any:
		w.BeginArray()
		for _, e := range x {
			writeValue(w, e)
		}
		w.End()
	case map[string]any:
		w.BeginMap()
		for k, e := range x {
			w.Key([]byte(k))
			writeValue(w, e)
		}
		w.End()
	default:
		panic(x)
	}
}

func randomValue(rng *rand.Rand, depth int) any {
	switch n := rng.IntN(9); {
	case n == 0:
		return nil
	case n == 1:
		return rng.IntN(2) == 1
	case n == 2:
		return int64(rng.Uint64())
	case n == 3:
		return math.Float64frombits(rng.Uint64() &^ (0x7ff << 52)) // finite
	case n == 4 || depth > 3:
		return strconv.Itoa(rng.IntN(1000))
	case n == 5:
		// Long arrays of scalars: counts of two and three varint bytes.
		a := make([]any, []int{200, 20000}[rng.IntN(2)])
		for i := range a {
			a[i] = int64(i)
		}
		return a
	case n == 6:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomValue(rng, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for i := range rng.IntN(5) {
			m["k"+strconv.Itoa(i)] = randomValue(rng, depth+1)
		}
		if rng.IntN(4) == 0 {
			for i := range 150 {
				m["wide"+strconv.Itoa(i)] = "v"
			}
		}
		return m
	}
}

// TestValueWriter: values written piece by piece, several per chunk, come
// back from an encoded batch equal to what was written, with counts that
// need one to three varint bytes.
func TestValueWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var w ValueWriter
	var e Encoder
	var want []any
	for range 60 {
		v := randomValue(rng, 0)
		w.Begin(64)
		writeValue(&w, v)
		raw, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
		if err := e.Append(&Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, Value: raw}); err != nil {
			t.Fatal(err)
		}
		if got, err := raw.Decode(); err != nil || !schema.ValueEqual(got, v) {
			t.Fatalf("Raw.Decode = %v, %v", got, err)
		}
	}
	got, err := Decode(e.Bytes(), len(want))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !schema.ValueEqual(got[i].Value, want[i]) {
			t.Fatalf("value %d differs after the batch round trip", i)
		}
	}
	// An encoded value must keep its schema.
	w.Begin(64)
	w.Int64(1)
	raw, _ := w.Finish()
	if err := e.Append(&Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: schema.Int64, Value: raw}); err == nil {
		t.Fatal("a schemaless encoded value was accepted for an INT64 schema")
	}
}

// TestValueWriterDepth: values as deep as the decoder reads are written,
// one level more is refused.
func TestValueWriterDepth(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		var w ValueWriter
		w.Begin(64)
		for range depth {
			w.BeginArray()
		}
		w.Int64(7)
		for range depth {
			w.End()
		}
		raw, err := w.Finish()
		if depth > maxDepth {
			if !errors.Is(err, ErrTooDeep) {
				t.Fatalf("depth %d: %v", depth, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if _, err := raw.Decode(); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
	}
}

// TestValueWriterReuse: after Reuse the writer writes a batch of values
// the size of the last one into a single chunk (no allocation but the
// Raws), and the values written then are intact.
func TestValueWriterReuse(t *testing.T) {
	var w ValueWriter
	payload := make([]byte, 1000)
	batch := func() []*Raw {
		var out []*Raw
		for i := range 300 {
			w.Begin(2100)
			w.BeginMap()
			w.Key([]byte("id"))
			w.Int64(int64(i))
			w.Key([]byte("payload"))
			w.String(payload)
			w.End()
			raw, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, raw)
		}
		return out
	}
	batch()
	w.Reuse()
	allocs := testing.AllocsPerRun(5, func() {
		batch()
		w.Reuse()
	})
	// One Raw per value, and the out slice's growth.
	if allocs > 300+15 {
		t.Errorf("%.0f allocations per batch of 300 values after Reuse", allocs)
	}
	for i, raw := range batch() {
		v, err := raw.Decode()
		if err != nil {
			t.Fatal(err)
		}
		m := v.(map[string]any)
		if m["id"] != int64(i) || len(m["payload"].(string)) != 1000 {
			t.Fatalf("value %d: %v", i, m["id"])
		}
	}
}

// TestValueWriterEmptyDeepest: an empty container one level deeper than a
// value may be holds no value at that level, and both the writer and the
// decoder take it.
func TestValueWriterEmptyDeepest(t *testing.T) {
	var w ValueWriter
	w.Begin(256)
	for range maxDepth + 1 {
		w.BeginArray()
	}
	for range maxDepth + 1 {
		w.End()
	}
	raw, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Decode(); err != nil {
		t.Fatal(err)
	}
	w.Begin(16)
	if _, err := w.Finish(); err == nil {
		t.Fatal("Finish took a value with nothing written")
	}
}

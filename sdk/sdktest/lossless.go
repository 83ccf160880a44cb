package sdktest

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file is the sink check that nothing a record carries is lost: the
// kit writes struct values with every type of the data model, each
// differing from a base value in one field only, by the smallest change
// that type allows (the last bit of a double, one millisecond, one unit of
// a decimal's scale, null against an empty string, the order of an
// array), and fails when two of them are written identically.

var allTypesInner = schema.StructOf("dev.tributary.sdktest.Inner").
	Field("label", schema.String).
	Field("weight", schema.OptionalInt32).
	Build()

// allTypes is the schema of the lossless check's values.
var allTypes = schema.StructOf("dev.tributary.sdktest.AllTypes").
	Field("i8", schema.Int8).
	Field("i16", schema.Int16).
	Field("i32", schema.Int32).
	Field("i64", schema.Int64).
	Field("f32", schema.Float32).
	Field("f64", schema.Float64).
	Field("flag", schema.Boolean).
	Field("text", schema.String).
	Field("note", schema.OptionalString).
	Field("raw", schema.Bytes).
	Field("list", schema.ArrayOf(schema.Int32)).
	Field("tags", schema.MapOf(schema.String, schema.String)).
	Field("codes", schema.MapOf(schema.Int32, schema.String)).
	Field("inner", allTypesInner).
	Field("amount", schema.Decimal(2)).
	Field("day", schema.Date).
	Field("clock", schema.Time).
	Field("at", schema.Timestamp).
	Build()

// allTypesField is one field's base value and its variant.
type allTypesField struct {
	name          string
	base, variant func() any
}

func inner(label string, weight any) *schema.Struct {
	return schema.NewStruct(allTypesInner).Set("label", label).Set("weight", weight)
}

var allTypesFields = []allTypesField{
	{"i8", func() any { return int8(-7) }, func() any { return int8(-8) }},
	{"i16", func() any { return int16(300) }, func() any { return int16(301) }},
	{"i32", func() any { return int32(70000) }, func() any { return int32(70001) }},
	{"i64", func() any { return int64(1) << 53 }, func() any { return int64(1)<<53 + 1 }}, // equal as float64
	{"f32", func() any { return float32(0.1) }, func() any { return math.Nextafter32(0.1, 1) }},
	{"f64", func() any { return 0.1 }, func() any { return math.Nextafter(0.1, 1) }},
	{"flag", func() any { return false }, func() any { return true }},
	{"text", func() any { return "a\"b" }, func() any { return "a\\b" }},
	{"note", func() any { return nil }, func() any { return "" }},
	{"raw", func() any { return []byte{0, 1} }, func() any { return []byte{0, 2} }},
	{"list", func() any { return []any{int32(1), int32(2)} }, func() any { return []any{int32(2), int32(1)} }},
	{"tags", func() any { return map[string]any{"k": "v"} }, func() any { return map[string]any{"k": "w"} }},
	{"codes", func() any { return map[any]any{int32(1): "x"} }, func() any { return map[any]any{int32(2): "x"} }},
	{"inner", func() any { return inner("in", nil) }, func() any { return inner("in", int32(0)) }},
	{"amount", func() any { return big.NewInt(100) }, func() any { return big.NewInt(101) }},
	{"day", func() any { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }, func() any { return time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC) }},
	{"clock", func() any { return time.UnixMilli(1000).UTC() }, func() any { return time.UnixMilli(1001).UTC() }},
	{"at", func() any { return time.UnixMilli(1_700_000_000_000).UTC() }, func() any { return time.UnixMilli(1_700_000_000_001).UTC() }},
}

// allTypesValue is value i of the lossless check: 0 is the base value, i
// in 1..len(allTypesFields) the base with field i-1 changed.
func allTypesValue(i int) *schema.Struct {
	v := schema.NewStruct(allTypes)
	for j, f := range allTypesFields {
		if j == i-1 {
			v.Set(f.name, f.variant())
		} else {
			v.Set(f.name, f.base())
		}
	}
	if err := v.Validate(); err != nil {
		panic(err) // the kit's own mistake
	}
	return v
}

// allTypesDiff names how value i differs from the base value.
func allTypesDiff(i int) string {
	if i == 0 {
		return "the base value"
	}
	f := allTypesFields[i-1]
	return fmt.Sprintf("field %q %v instead of %v", f.name, show(f.variant()), show(f.base()))
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case time.Time:
		return x.Format("2006-01-02T15:04:05.000Z07:00")
	case float32, float64:
		return fmt.Sprintf("%.17g", x)
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// losslessRecords is the number of records of the lossless check.
var losslessRecords = len(allTypesFields) + 1

// allTypesRecord is record off of tp in the lossless check: value
// number off*2 (+1 on the second partition), with a STRING key.
func (h *sinkRun) allTypesRecord(tp sdk.TopicPartition, off int64) sdk.SinkRecord {
	i := int(off) * len(h.tps)
	i += slices.Index(h.tps, tp)
	return sdk.SinkRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: off,
		KeySchema: schema.String, Key: fmt.Sprintf("key %s-%d@%d", tp.Topic, tp.Partition, off),
		ValueSchema: allTypes, Value: allTypesValue(i % losslessRecords),
		Timestamp: time.UnixMilli(1_700_000_000_000)}
}

// checkSinkLossless writes the values of allTypesValue, one record each,
// and checks that records with different values are written differently:
// by the driver's rendering (RenderRecord, or SinkDriver.JSON) and in what
// ReadBack returns.
func checkSinkLossless(t *testing.T, sp sdk.SinkPlugin, d SinkDriver) {
	defer verifyNoLeaks(t)()
	h := newSinkRun(t, sp, d)
	h.allTypes = true
	h.note = " (in the lossless check, whose struct values hold every type of the data model)"
	h.open()
	h.produce(losslessRecords)
	h.deliver()
	h.flushUntilDurable()
	h.close()

	type rec struct {
		tp  sdk.TopicPartition
		off int64
		i   int
	}
	var recs []rec
	for _, tp := range h.tps {
		for off := range h.end[tp] {
			recs = append(recs, rec{tp, off, (int(off)*len(h.tps) + slices.Index(h.tps, tp)) % losslessRecords})
		}
	}
	hint := "; a sink must keep every field of every type (write values with schema.AppendJSON(dst, r.ValueSchema, r.Value, opts) " +
		"for Kafka's JsonConverter JSON; json.Marshal of a value holding maps with non-string keys, or fmt's %v, loses information)"

	// The driver's rendering: two different values must not render alike.
	if d.JSON != nil || d.RenderRecord != nil {
		byRender := map[string]rec{}
		for _, r := range recs {
			s, ok := h.render(r.tp, r.off)
			if !ok {
				continue
			}
			if o, dup := byRender[s]; dup {
				what := "RenderRecord renders"
				if d.JSON != nil {
					what = "schema.AppendJSON renders"
				}
				t.Fatalf("%s records %s@%d (%s) and %s@%d (%s) both as %s: the sink's rendering loses information%s",
					what, o.tp, o.off, allTypesDiff(o.i), r.tp, r.off, allTypesDiff(r.i), s, hint)
			}
			byRender[s] = r
		}
	}

	// What the external system holds: as many different strings as
	// records, when each record was handed to Put once.
	for _, tp := range h.tps {
		for _, n := range h.attempts[tp] {
			if n != 1 {
				t.Logf("a record was handed to Put %d times (retriable errors or rewinds): not counting what the external system holds", n)
				return
			}
		}
	}
	held := map[string]int{}
	for _, s := range d.ReadBack(t, h.cfg) {
		held[s]++
	}
	if len(held) >= len(recs) {
		return
	}
	var dups []string
	for _, s := range slices.Sorted(maps.Keys(held)) {
		if held[s] > 1 {
			dups = append(dups, fmt.Sprintf("%q %d times", s, held[s]))
		}
	}
	var diffs []string
	for i := range losslessRecords {
		diffs = append(diffs, allTypesDiff(i))
	}
	t.Fatalf("the kit wrote %d records with different values (the base value, and one with each of: %s), each once, but the external system holds %d different strings (%s): "+
		"records with different values were written identically%s",
		len(recs), strings.Join(diffs[1:], "; "), len(held), strings.Join(dups, ", "), hint)
}

// heldExample describes what the external system holds, for messages: one
// of its strings, or that it holds nothing.
func heldExample(held map[string]int) string {
	if len(held) == 0 {
		return ", and the external system holds nothing"
	}
	return fmt.Sprintf(", and the external system holds e.g. %s", slices.Sorted(maps.Keys(held))[0])
}

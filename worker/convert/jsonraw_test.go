package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// rawConfigs are the JsonConverter settings a value left encoded must be
// written under exactly as its decoded form.
func rawConfigs(t testing.TB) []Converter {
	var out []Converter
	for _, schemas := range []string{"true", "false"} {
		for _, format := range []string{"BASE64", "NUMERIC"} {
			for _, replace := range []string{"true", "false"} {
				c, err := NewJSON(map[string]string{"schemas.enable": schemas, "decimal.format": format, "replace.null.with.default": replace})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// encodeValues encodes one record per case, its value with the case's
// schema.
func encodeValues(t testing.TB, cases []goldenCase) []byte {
	return encodeValuesWith(t, &wire.Encoder{}, cases)
}

// encodeValuesWith is encodeValues with e.
func encodeValuesWith(t testing.TB, e *wire.Encoder, cases []goldenCase) []byte {
	for _, tc := range cases {
		r := wire.Record{Topic: "t", KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp, ValueSchema: tc.s, Value: tc.v}
		if err := e.Append(&r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	return append([]byte(nil), e.Bytes()...)
}

// compareRaw decodes data plainly and with values left encoded, and checks
// that every converter of convs writes each record's value identically
// both ways (or fails for both). A batch that decodes only with values
// left encoded hides its corruption in a value cut by its length: every
// converter must find it.
func compareRaw(t *testing.T, data []byte, convs []Converter, names func(i int) string) {
	plain, plainErr := wire.Decode(data, 16)
	dec := wire.Decoder{RawValues: true, AliasInput: true}
	raws, err := dec.Decode(data, 16)
	if plainErr != nil {
		if err == nil && !strings.Contains(plainErr.Error(), "exceeds what the batch can hold") {
			for ci, c := range convs {
				failed := false
				for i := range raws {
					if _, err := c.FromConnect("t", raws[i].ValueSchema, raws[i].Value); err != nil {
						failed = true
					}
				}
				if !failed {
					t.Fatalf("config %d: every value of a corrupt batch (%v) converted", ci, plainErr)
				}
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("RawValues decoding failed where the plain one succeeded: %v", err)
	}
	for ci, c := range convs {
		for i := range plain {
			want, wantErr := c.FromConnect("t", plain[i].ValueSchema, plain[i].Value)
			got, gotErr := c.FromConnect("t", raws[i].ValueSchema, raws[i].Value)
			if (wantErr == nil) != (gotErr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("config %d, %s: from the encoded value %q (error %v), from the decoded value %q (error %v)",
					ci, names(i), got, gotErr, want, wantErr)
			}
		}
	}
}

// TestJSONRaw: for every golden case and setting, the JSON written from a
// value left in the wire encoding equals the JSON written from the decoded
// value (itself checked against Kafka's in TestJSONGolden).
func TestJSONRaw(t *testing.T) {
	cases := append(goldenCases(), schemalessCases()...)
	big1 := new(big.Int).Lsh(big.NewInt(1), 70)
	dec := schema.Decimal(4).AsOptional()
	optMap := schema.MapOf(schema.String, schema.Int64).AsOptional()
	withMap := schema.StructOf("withMap").Field("m", optMap).Field("n", schema.OptionalInt32).Build()
	empty := schema.StructOf("empty").Build()
	empties := make([]any, 1500)
	for i := range empties {
		empties[i] = schema.NewStruct(empty)
	}
	cases = append(cases,
		goldenCase{name: "optional_map_absent", s: optMap, v: nil},
		goldenCase{name: "optional_map_empty", s: optMap, v: map[string]any{}},
		goldenCase{name: "optional_map_3", s: optMap, v: map[string]any{"c": int64(3), "a": int64(1), "b": int64(2)}},
		goldenCase{name: "array_of_optional_maps", s: schema.ArrayOf(optMap), v: []any{nil, map[string]any{"k": int64(9), "j": int64(8)}}},
		goldenCase{name: "struct_with_map", s: withMap, v: schema.NewStruct(withMap).Set("m", map[string]any{"b": int64(2), "a": int64(1)})},
		goldenCase{name: "array_of_empty_structs", s: schema.ArrayOf(empty), v: empties},
		goldenCase{name: "decimal_zero", s: schema.Decimal(2), v: big.NewInt(0)},
		goldenCase{name: "decimal_128", s: schema.Decimal(2), v: big.NewInt(128)},
		goldenCase{name: "decimal_-129", s: schema.Decimal(2), v: big.NewInt(-129)},
		goldenCase{name: "decimal_2^70", s: dec, v: big1},
		goldenCase{name: "array_of_structs", s: schema.ArrayOf(dec), v: []any{big.NewInt(-5), nil}},
	)
	compareRaw(t, encodeValues(t, cases), rawConfigs(t), func(i int) string { return cases[i].name })
	// Values cut by their length, checked as the converter reads them.
	compareRaw(t, encodeValuesWith(t, &wire.Encoder{ValueLengths: true}, cases), rawConfigs(t), func(i int) string { return cases[i].name + " (length)" })
}

// TestJSONRawCorrupt: a value cut by its length is checked as it is
// written: a corrupt one is an error, not JSON.
func TestJSONRawCorrupt(t *testing.T) {
	s := schema.StructOf("r").Field("id", schema.Int64).Field("name", schema.OptionalString).Build()
	good := encodeValuesWith(t, &wire.Encoder{ValueLengths: true},
		[]goldenCase{{s: s, v: schema.NewStruct(s).Set("id", int64(7)).Set("name", "abc")}})
	for _, c := range []struct {
		name    string
		corrupt func(b []byte) []byte
	}{
		// The value ends the batch: id 7 (zig-zag 14), present, 3, "abc".
		{"bad presence byte", func(b []byte) []byte { b[len(b)-5] = 9; return b }},
		{"string past the value", func(b []byte) []byte { b[len(b)-4] = 40; return b }},
		{"bytes after the value", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[len(b)-10:], 7)
			return append(b, 'x')
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := c.corrupt(append([]byte(nil), good...))
			dec := wire.Decoder{RawValues: true}
			recs, err := dec.Decode(data, 1)
			if err != nil {
				t.Fatalf("decoding: %v; want the value left to the converter", err)
			}
			for ci, conv := range rawConfigs(t) {
				if out, err := conv.FromConnect("t", recs[0].ValueSchema, recs[0].Value); !errors.Is(err, wire.ErrCorrupt) {
					t.Fatalf("config %d: %q, %v; want a wire.ErrCorrupt", ci, out, err)
				}
			}
		})
	}
}

// TestMinimalDecimal: minimalDecimal accepts exactly the encodings that
// AppendDecimal writes.
func TestMinimalDecimal(t *testing.T) {
	for _, b := range [][]byte{{}, {0}, {0x7f}, {0x80}, {0xff}, {0, 0}, {0, 0x7f}, {0, 0x80}, {0xff, 0x7f}, {0xff, 0x80},
		{0xff, 0xff}, {1, 0}, {0, 0, 0x80}, {0xff, 0x80, 0}} {
		x := schema.DecimalFromBytes(b)
		canonical := bytes.Equal(schema.AppendDecimal(nil, x), b)
		if got := minimalDecimal(b); got != canonical {
			t.Errorf("minimalDecimal(% x) = %v, AppendDecimal writes % x", b, got, schema.AppendDecimal(nil, x))
		}
	}
}

// FuzzJSONRaw: whatever batch decodes, its values are written identically
// from the encoding and from their decoded form, under every setting.
func FuzzJSONRaw(f *testing.F) {
	cases := append(goldenCases(), schemalessCases()...)
	f.Add(encodeValues(f, cases))
	for _, tc := range cases {
		f.Add(encodeValues(f, []goldenCase{tc}))
		f.Add(encodeValuesWith(f, &wire.Encoder{ValueLengths: true}, []goldenCase{tc}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareRaw(t, data, rawConfigs(t), func(i int) string { return "record " + strconv.Itoa(i) })
	})
}

// TestWirePlanSharedDeep: a schema shared at two depths, prepared first
// where its lower parts lie deeper than a value is written, is written in
// full where it is shallower.
func TestWirePlanSharedDeep(t *testing.T) {
	// shared: 10 nested structs, each with a field "x" and the next.
	var shared *schema.Schema
	for i := range 10 {
		b := schema.StructOf("level"+strconv.Itoa(i)).Field("x", schema.Int32)
		if shared != nil {
			b = b.Field("next", shared)
		}
		shared = b.Build()
	}
	// deep reaches shared at depth 95, the root's second field at depth 1.
	deep := shared
	for range 94 {
		deep = schema.StructOf("").Field("d", deep.AsOptional()).Build()
	}
	root := schema.StructOf("root").Field("deep", deep).Field("shared", shared).Build()
	p := newWirePlan(root, map[*schema.Schema]*wirePlan{}, 0)
	sp, cut := p.fields[1], false
	for q := sp; q != nil && len(q.s.Fields) > 1; q = q.fields[1] {
		cut = cut || q.cut
		if q.cut {
			break
		}
	}
	if !cut {
		t.Fatal("the shared schema's plan was not cut where it was first prepared: the test tests nothing")
	}
	v := nestedValue(shared, 0)
	data := encodeValues(t, []goldenCase{{name: "shared", s: shared, v: v}})
	recs, err := (&wire.Decoder{RawValues: true}).Decode(data, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewJSON(map[string]string{"schemas.enable": "false"})
	if err != nil {
		t.Fatal(err)
	}
	var vr wire.ValueReader
	vr.Reset(recs[0].Value.(*wire.Raw))
	got, err := c.appendWire(nil, sp, &vr, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.appendJSON(nil, shared, v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("wrote %s, want %s", got, want)
	}
}

// nestedValue is a value of s, one of the shared schemas above.
func nestedValue(s *schema.Schema, i int) any {
	v := schema.NewStruct(s).Set("x", int32(i))
	if len(s.Fields) > 1 {
		v.Set("next", nestedValue(s.Fields[1].Schema, i+1))
	}
	return v
}

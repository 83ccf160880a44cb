package convert

import (
	"bytes"
	"math/big"
	"strconv"
	"testing"

	"github.com/tributary-dev/tributary/plugins/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// rawConfigs are the JsonConverter settings a value left encoded must be
// written under exactly as its decoded form.
func rawConfigs(t testing.TB) []*JSONConverter {
	var out []*JSONConverter
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
	var e wire.Encoder
	for _, tc := range cases {
		r := wire.Record{Topic: "t", KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp, ValueSchema: tc.s, Value: tc.v}
		if err := e.Append(&r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	return append([]byte(nil), e.Bytes()...)
}

// compareRaw decodes data plainly and with values left encoded, and checks
// that every converter writes each record's value identically both ways
// (or fails for both).
func compareRaw(t *testing.T, data []byte, names func(i int) string) {
	plain, err := wire.Decode(data, 16)
	if err != nil {
		return
	}
	dec := wire.Decoder{RawValues: true, AliasInput: true}
	raws, err := dec.Decode(data, len(plain))
	if err != nil {
		t.Fatalf("RawValues decoding failed where the plain one succeeded: %v", err)
	}
	for ci, c := range rawConfigs(t) {
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
	compareRaw(t, encodeValues(t, cases), func(i int) string { return cases[i].name })
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
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareRaw(t, data, func(i int) string { return "record " + strconv.Itoa(i) })
	})
}

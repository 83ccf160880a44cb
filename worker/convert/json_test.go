package convert

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

type goldenCase struct {
	name string
	s    *schema.Schema
	v    any
	// want is the value ToConnect returns when it differs from v (a null
	// replaced by the schema default).
	want any
}

func bigInt(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return x
}

// goldenCases mirrors testdata/gen/Gen.java case by case.
func goldenCases() []goldenCase {
	inner := schema.StructOf("com.example.Inner").Optional().
		Field("x", schema.Int32).Field("y", schema.OptionalString).Build()
	outer := schema.StructOf("com.example.Outer").Version(2).Doc("outer doc").
		Field("id", schema.Int64).
		Field("name", schema.String).
		Field("score", schema.OptionalFloat64).
		Field("flag", schema.Boolean.WithDefault(false)).
		Field("inner", inner).
		Field("tags", schema.ArrayOf(schema.String)).
		Field("missing", schema.OptionalInt16).
		Build()
	innerV := schema.NewStruct(inner).Set("x", int32(1)).Set("y", "why")
	outerV := schema.NewStruct(outer).Set("id", int64(77)).Set("name", "n").Set("score", 0.5).
		Set("inner", innerV).Set("tags", []any{"a", "b"})
	logical := schema.StructOf("com.example.Logical").
		Field("amount", schema.Decimal(2)).
		Field("day", schema.Date.AsOptional()).
		Field("at", schema.Timestamp).Build()
	params := &schema.Schema{Type: schema.TypeString, Parameters: map[string]string{"a": "1", "b": "2"}}
	optDecimal := schema.Decimal(2).AsOptional()
	return []goldenCase{
		{name: "int8", s: schema.Int8, v: int8(-12)},
		{name: "int16", s: schema.Int16, v: int16(3000)},
		{name: "int32", s: schema.Int32, v: int32(123456)},
		{name: "int64", s: schema.Int64, v: int64(9007199254740993)},
		{name: "float32", s: schema.Float32, v: float32(1.5)},
		{name: "float64", s: schema.Float64, v: -2.25e-7},
		{name: "float64_big", s: schema.Float64, v: 1.0e21},
		{name: "float64_int", s: schema.Float64, v: 100.0},
		{name: "boolean", s: schema.Boolean, v: true},
		{name: "string", s: schema.String, v: "héllo \"world\"\n\t<>&\u2028"},
		{name: "bytes", s: schema.Bytes, v: []byte{0, 1, 2, 0xfe, 0xff}},
		{name: "optional_null", s: schema.OptionalString, v: nil},
		{name: "optional_int32", s: schema.OptionalInt32, v: int32(7)},
		{name: "default_int32", s: schema.Int32.WithDefault(int32(42)), v: int32(5)},
		{name: "default_null", s: schema.OptionalString.WithDefault("dflt"), v: nil, want: "dflt"},
		{name: "named", s: schema.String.WithName("com.example.Name").WithVersion(3).WithDoc("a doc"), v: "x"},
		{name: "params", s: params, v: "p"},
		{name: "struct_nested", s: outer, v: outerV},
		{name: "array_int32", s: schema.ArrayOf(schema.Int32), v: []any{int32(1), int32(2), int32(3)}},
		{name: "array_empty", s: schema.ArrayOf(schema.String).AsOptional(), v: []any{}},
		{name: "array_of_optional", s: schema.ArrayOf(schema.OptionalInt64), v: []any{int64(1), nil, int64(3)}},
		{name: "map_string", s: schema.MapOf(schema.String, schema.Int32),
			v: map[string]any{"a": int32(1), "b": int32(2), "c": int32(3)}},
		{name: "map_int", s: schema.MapOf(schema.Int32, schema.String),
			v: map[any]any{int32(-1): "minus", int32(1): "one", int32(2): "two"}},
		{name: "decimal", s: schema.Decimal(2), v: big.NewInt(1234567)},
		{name: "decimal_negative", s: schema.Decimal(3), v: big.NewInt(-1)},
		{name: "decimal_big", s: schema.Decimal(0), v: bigInt("123456789012345678901234567890")},
		{name: "decimal_optional_null", s: optDecimal, v: nil},
		{name: "date", s: schema.Date, v: time.UnixMilli(19000 * msPerDay).UTC()},
		{name: "time", s: schema.Time, v: time.UnixMilli(13*3600000 + 14*60000 + 15123).UTC()},
		{name: "timestamp", s: schema.Timestamp, v: time.UnixMilli(1700000000123).UTC()},
		{name: "timestamp_default", s: schema.Timestamp.WithDefault(time.UnixMilli(86400000).UTC()), v: time.UnixMilli(0).UTC()},
		{name: "struct_logical", s: logical, v: schema.NewStruct(logical).
			Set("amount", big.NewInt(-999)).Set("at", time.UnixMilli(1234567).UTC())},
		{name: "map_int64_struct", s: schema.MapOf(schema.Int64, inner),
			v: map[any]any{int64(5): schema.NewStruct(inner).Set("x", int32(5))}},
	}
}

func schemalessCases() []goldenCase {
	return []goldenCase{
		{name: "sl_object", v: map[string]any{"a": int64(1), "b": "two",
			"c": []any{true, nil, 2.5}, "d": map[string]any{"k": int64(-3)}}},
		{name: "sl_string", v: "just a string"},
		{name: "sl_int", v: int64(42)},
		{name: "sl_double", v: 3.25},
		{name: "sl_bool", v: false},
		{name: "sl_array", v: []any{int64(1), "x", nil}},
		// Bytes come back as their base64 string: JSON has no bytes.
		{name: "sl_bytes", v: []byte{9, 8, 7}, want: "CQgH"},
		// Java kept insertion order (s, n); Go maps have none, so keys are
		// sorted: equal as JSON, not byte for byte.
		{name: "sl_small", v: map[string]any{"s": "v", "n": int64(7)}},
	}
}

var unorderedGolden = map[string]bool{"sl_small": true}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil &&
		bytes.Equal(mustMarshal(x), mustMarshal(y))
}

func mustMarshal(v any) []byte { b, _ := json.Marshal(v); return b }

func TestJSONGolden(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"BASE64", "NUMERIC"} {
		c, err := NewJSON(map[string]string{"decimal.format": format})
		if err != nil {
			t.Fatal(err)
		}
		suffix := ".json"
		if format == "NUMERIC" {
			suffix = ".numeric.json"
		}
		for _, tc := range goldenCases() {
			t.Run("format="+format+"/"+tc.name, func(t *testing.T) {
				want := readGolden(t, tc.name+suffix)
				got, err := c.FromConnect("t", tc.s, tc.v)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("FromConnect:\n got %s\nwant %s", got, want)
				}
				checkRoundTrip(t, c, tc, got)
			})
		}
	}
}

func checkRoundTrip(t *testing.T, c Converter, tc goldenCase, b []byte) {
	t.Helper()
	s, v, err := c.ToConnect("t", b)
	if err != nil {
		t.Fatalf("ToConnect(%s): %v", b, err)
	}
	if tc.s != nil && !schema.Equal(s, tc.s) {
		t.Errorf("schema: got %v, want %v", s, tc.s)
	}
	want := tc.v
	if tc.want != nil {
		want = tc.want
	}
	if !schema.ValueEqual(v, want) {
		t.Errorf("value: got %#v, want %#v", v, want)
	}
}

func TestJSONSchemalessGolden(t *testing.T) {
	t.Parallel()
	for _, schemas := range []bool{true, false} {
		cfg := map[string]string{"schemas.enable": "false"}
		suffix := ".noschema.json"
		if schemas {
			cfg, suffix = nil, ".json"
		}
		c, err := NewJSON(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range schemalessCases() {
			t.Run(tc.name+suffix, func(t *testing.T) {
				want := readGolden(t, tc.name+suffix)
				got, err := c.FromConnect("t", nil, tc.v)
				if err != nil {
					t.Fatal(err)
				}
				if unorderedGolden[tc.name] {
					if !jsonEqual(got, want) {
						t.Fatalf("got %s, want (as JSON) %s", got, want)
					}
				} else if !bytes.Equal(got, want) {
					t.Fatalf("got %s\nwant %s", got, want)
				}
				checkRoundTrip(t, c, tc, got)
			})
		}
	}
}

func TestJSONNulls(t *testing.T) {
	t.Parallel()
	c, _ := NewJSON(nil)
	b, err := c.FromConnect("t", nil, nil)
	if err != nil || b != nil {
		t.Fatalf("null: %q %v", b, err)
	}
	s, v, err := c.ToConnect("t", nil)
	if err != nil || s != nil || v != nil {
		t.Fatalf("ToConnect(nil) = %v %v %v", s, v, err)
	}
	if _, err := c.FromConnect("t", schema.String, nil); err == nil {
		t.Fatal("null for a required string was accepted")
	}
	for _, bad := range []string{`{"payload":1}`, `{"schema":null,"payload":1,"x":2}`, `[1]`, `{`, `{"schema":{"type":"nope"},"payload":1}`,
		`{"schema":{"type":"int8","optional":false},"payload":1000}`, `{"schema":{"type":"int32"},"payload":null}`} {
		if _, _, err := c.ToConnect("t", []byte(bad)); err == nil {
			t.Errorf("ToConnect(%s) accepted", bad)
		}
	}
}

func TestJSONFloatFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{1.5, 64, "1.5"}, {100, 64, "100.0"}, {1e7, 64, "1.0E7"}, {9999999, 64, "9999999.0"},
		{0.001, 64, "0.001"}, {0.0001, 64, "1.0E-4"}, {-2.25e-7, 64, "-2.25E-7"}, {123.456, 64, "123.456"},
		{1e21, 64, "1.0E21"}, {0, 64, "0.0"}, {float64(float32(0.1)), 32, "0.1"}, {1.2345678e8, 64, "1.2345678E8"},
	} {
		if got := string(jackson.AppendJavaFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestBigDecimalFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u     string
		scale int32
		want  string
	}{
		{"1234567", 2, "12345.67"}, {"-1", 3, "-0.001"}, {"1", 10, "1E-10"}, {"123", -2, "1.23E+4"}, {"0", 2, "0.00"},
	} {
		if got := string(jackson.AppendBigDecimal(nil, bigInt(tc.u), tc.scale)); got != tc.want {
			t.Errorf("%s scale %d: got %s, want %s", tc.u, tc.scale, got, tc.want)
		}
	}
}

func FuzzJSONToConnect(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b, true)
		f.Add(b, false)
	}
	withSchema, _ := NewJSON(nil)
	numeric, _ := NewJSON(map[string]string{"decimal.format": "NUMERIC"})
	noSchema, _ := NewJSON(map[string]string{"schemas.enable": "false"})
	f.Fuzz(func(t *testing.T, b []byte, schemas bool) {
		convs := []*JSONConverter{noSchema}
		if schemas {
			convs = []*JSONConverter{withSchema, numeric}
		}
		for _, c := range convs {
			s, v, err := c.ToConnect("t", b)
			if err != nil {
				continue
			}
			// Whatever was accepted must serialize and read back equal.
			out, err := c.FromConnect("t", s, v)
			if err != nil {
				continue // e.g. a Date schema with an out-of-range day
			}
			s2, v2, err := c.ToConnect("t", out)
			if err != nil {
				t.Fatalf("re-read %s (from %s): %v", out, b, err)
			}
			if s == nil && hasNonFinite(v) {
				// Like Jackson, a schemaless NaN or ±Infinity is written as
				// the string "NaN"/"Infinity", which reads back as a string.
				continue
			}
			if !schema.Equal(s, s2) || !schema.ValueEqual(v, v2) {
				t.Fatalf("round trip of %s: %v %#v -> %s -> %v %#v", b, s, v, out, s2, v2)
			}
		}
	})
}

// hasNonFinite reports whether a schemaless value holds a NaN or infinite
// float anywhere.
func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	}
	return false
}

package transform

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// The golden test runs the records and chains of testdata/cases.json
// through Tributary's chain and compares every outcome (the record, its
// drop, or the error's class and message) with what Kafka Connect 4.4's and
// Debezium 3.6.1's own classes produced (testdata/golden/transforms.jsonl,
// written by testdata/gen/TransformGen.java; the integration test
// TestTransformGoldens regenerates it with the real jars and checks it is
// the committed file). The encoding is described in TransformGen.java.

type goldenFile struct {
	Records map[string]json.RawMessage `json:"records"`
	Cases   []goldenCaseDef            `json:"cases"`
}

type goldenCaseDef struct {
	Name    string            `json:"name"`
	Mode    string            `json:"mode"`
	Config  map[string]string `json:"config"`
	Records []string          `json:"records"`
}

type goldenRecord struct {
	Topic       string          `json:"topic"`
	Partition   *int32          `json:"partition"`
	Offset      int64           `json:"offset"`
	Timestamp   *int64          `json:"timestamp"`
	KeySchema   json.RawMessage `json:"keySchema"`
	Key         json.RawMessage `json:"key"`
	ValueSchema json.RawMessage `json:"valueSchema"`
	Value       json.RawMessage `json:"value"`
	Headers     []struct {
		Key    string          `json:"key"`
		Schema json.RawMessage `json:"schema"`
		Value  json.RawMessage `json:"value"`
	} `json:"headers"`
}

type goldenLine struct {
	Case        string          `json:"case"`
	Record      string          `json:"record"`
	ConfigError *goldenError    `json:"configError"`
	Error       *goldenError    `json:"error"`
	Dropped     bool            `json:"dropped"`
	Out         json.RawMessage `json:"out"`
}

type goldenError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

func loadCases(t testing.TB) goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f goldenFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// decodeSchema reads the encoding's schema.
func decodeSchema(raw json.RawMessage) (*schema.Schema, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var n struct {
		Type       string            `json:"type"`
		Optional   bool              `json:"optional"`
		Name       string            `json:"name"`
		Version    int32             `json:"version"`
		Doc        string            `json:"doc"`
		Parameters map[string]string `json:"parameters"`
		Default    json.RawMessage   `json:"default"`
		Fields     []struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"fields"`
		KeySchema   json.RawMessage `json:"keySchema"`
		ValueSchema json.RawMessage `json:"valueSchema"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	types := map[string]schema.Type{"int8": schema.TypeInt8, "int16": schema.TypeInt16, "int32": schema.TypeInt32,
		"int64": schema.TypeInt64, "float32": schema.TypeFloat32, "float64": schema.TypeFloat64, "boolean": schema.TypeBoolean,
		"string": schema.TypeString, "bytes": schema.TypeBytes, "array": schema.TypeArray, "map": schema.TypeMap, "struct": schema.TypeStruct}
	s := &schema.Schema{Type: types[n.Type], Optional: n.Optional, Name: n.Name, Version: n.Version, Doc: n.Doc, Parameters: n.Parameters}
	var err error
	for i, f := range n.Fields {
		fs, err := decodeSchema(f.Schema)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, schema.Field{Name: f.Name, Index: i, Schema: fs})
	}
	if s.KeySchema, err = decodeSchema(n.KeySchema); err != nil {
		return nil, err
	}
	if s.ValueSchema, err = decodeSchema(n.ValueSchema); err != nil {
		return nil, err
	}
	if len(n.Default) > 0 && string(n.Default) != "null" {
		if s.Default, err = decodeValue(s, n.Default); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// decodeValue reads the encoding's value; s (may be nil) gives decimals
// their scale and structs their schema.
func decodeValue(s *schema.Schema, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for kind, v := range m {
		var str string
		_ = json.Unmarshal(v, &str)
		switch kind {
		case "int8", "int16", "int32", "int64":
			bits := map[string]int{"int8": 8, "int16": 16, "int32": 32, "int64": 64}[kind]
			n, err := strconv.ParseInt(str, 10, bits)
			if err != nil {
				return nil, err
			}
			switch bits {
			case 8:
				return int8(n), nil
			case 16:
				return int16(n), nil
			case 32:
				return int32(n), nil
			}
			return n, nil
		case "float32":
			f, ok := javaParseDouble(str, 32)
			if !ok {
				return nil, fmt.Errorf("float %q", str)
			}
			return float32(f), nil
		case "float64":
			f, ok := javaParseDouble(str, 64)
			if !ok {
				return nil, fmt.Errorf("float %q", str)
			}
			return f, nil
		case "boolean":
			var b bool
			err := json.Unmarshal(v, &b)
			return b, err
		case "string":
			return str, nil
		case "bytes":
			return base64.StdEncoding.DecodeString(str)
		case "decimal":
			x, ok := new(big.Int).SetString(str, 10)
			if !ok {
				return nil, fmt.Errorf("decimal %q", str)
			}
			return x, nil
		case "date":
			var ms int64
			err := json.Unmarshal(v, &ms)
			return time.UnixMilli(ms).UTC(), err
		case "array":
			var elems []json.RawMessage
			if err := json.Unmarshal(v, &elems); err != nil {
				return nil, err
			}
			var es *schema.Schema
			if s != nil {
				es = s.ValueSchema
			}
			out := make([]any, 0, len(elems))
			for _, e := range elems {
				x, err := decodeValue(es, e)
				if err != nil {
					return nil, err
				}
				out = append(out, x)
			}
			return out, nil
		case "map":
			var pairs [][2]json.RawMessage
			if err := json.Unmarshal(v, &pairs); err != nil {
				return nil, err
			}
			var ks, vs *schema.Schema
			if s != nil {
				ks, vs = s.KeySchema, s.ValueSchema
			}
			out := map[string]any{}
			var other map[any]any
			for _, p := range pairs {
				k, err := decodeValue(ks, p[0])
				if err != nil {
					return nil, err
				}
				x, err := decodeValue(vs, p[1])
				if err != nil {
					return nil, err
				}
				if sk, ok := k.(string); ok && other == nil {
					out[sk] = x
					continue
				}
				if other == nil {
					other = map[any]any{}
					for kk, vv := range out {
						other[kk] = vv
					}
				}
				other[k] = x
			}
			if other != nil {
				return other, nil
			}
			return out, nil
		case "struct":
			var pairs [][2]json.RawMessage
			if err := json.Unmarshal(v, &pairs); err != nil {
				return nil, err
			}
			st := schema.NewStruct(s)
			for _, p := range pairs {
				var name string
				if err := json.Unmarshal(p[0], &name); err != nil {
					return nil, err
				}
				f := s.Field(name)
				x, err := decodeValue(f.Schema, p[1])
				if err != nil {
					return nil, err
				}
				st.SetIndex(f.Index, x)
			}
			return st, nil
		}
		return nil, fmt.Errorf("unknown value kind %q", kind)
	}
	return nil, errors.New("empty value")
}

func decodeRecord(raw json.RawMessage, sink bool) (Record, error) {
	var g goldenRecord
	if err := json.Unmarshal(raw, &g); err != nil {
		return Record{}, err
	}
	r := Record{Topic: g.Topic, Sink: sink}
	if sink {
		r.Offset, r.HasPartition = g.Offset, true
		if g.Partition != nil {
			r.Partition = *g.Partition
		}
	} else if g.Partition != nil {
		r.Partition, r.HasPartition = *g.Partition, true
	}
	if g.Timestamp != nil {
		r.Timestamp = time.UnixMilli(*g.Timestamp).UTC()
	}
	var err error
	if r.KeySchema, err = decodeSchema(g.KeySchema); err != nil {
		return r, err
	}
	if r.Key, err = decodeValue(r.KeySchema, g.Key); err != nil {
		return r, err
	}
	if r.ValueSchema, err = decodeSchema(g.ValueSchema); err != nil {
		return r, err
	}
	if r.Value, err = decodeValue(r.ValueSchema, g.Value); err != nil {
		return r, err
	}
	for _, h := range g.Headers {
		hs, err := decodeSchema(h.Schema)
		if err != nil {
			return r, err
		}
		hv, err := decodeValue(hs, h.Value)
		if err != nil {
			return r, err
		}
		r.Headers = append(r.Headers, sdk.Header{Key: h.Key, Schema: hs, Value: hv})
	}
	return r, nil
}

// encodeSchema and encodeValue write the encoding as generic JSON values.
func encodeSchema(s *schema.Schema) any {
	if s == nil {
		return nil
	}
	o := map[string]any{"type": s.Type.String()}
	if s.Optional {
		o["optional"] = true
	}
	if s.Name != "" {
		o["name"] = s.Name
	}
	if s.Version != 0 {
		o["version"] = s.Version
	}
	if s.Doc != "" {
		o["doc"] = s.Doc
	}
	if len(s.Parameters) > 0 {
		p := map[string]any{}
		for k, v := range s.Parameters {
			p[k] = v
		}
		o["parameters"] = p
	}
	if s.Default != nil {
		o["default"] = encodeValue(s, s.Default)
	}
	switch s.Type {
	case schema.TypeStruct:
		fs := []any{}
		for _, f := range s.Fields {
			fs = append(fs, map[string]any{"name": f.Name, "schema": encodeSchema(f.Schema)})
		}
		o["fields"] = fs
	case schema.TypeMap:
		o["keySchema"], o["valueSchema"] = encodeSchema(s.KeySchema), encodeSchema(s.ValueSchema)
	case schema.TypeArray:
		o["valueSchema"] = encodeSchema(s.ValueSchema)
	}
	return o
}

func encodeValue(s *schema.Schema, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int8:
		return map[string]any{"int8": strconv.FormatInt(int64(x), 10)}
	case int16:
		return map[string]any{"int16": strconv.FormatInt(int64(x), 10)}
	case int32:
		return map[string]any{"int32": strconv.FormatInt(int64(x), 10)}
	case int64:
		return map[string]any{"int64": strconv.FormatInt(x, 10)}
	case float32:
		return map[string]any{"float32": convert.JavaFloatString(float64(x), 32)}
	case float64:
		return map[string]any{"float64": convert.JavaFloatString(x, 64)}
	case bool:
		return map[string]any{"boolean": x}
	case string:
		return map[string]any{"string": x}
	case []byte:
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString(x)}
	case *big.Int:
		return map[string]any{"decimal": x.String(), "scale": float64(decimalScale(s))}
	case time.Time:
		return map[string]any{"date": float64(x.UnixMilli())}
	case []any:
		var es *schema.Schema
		if s != nil {
			es = s.ValueSchema
		}
		out := []any{}
		for _, e := range x {
			out = append(out, encodeValue(es, e))
		}
		return map[string]any{"array": out}
	case map[string]any:
		var ks, vs *schema.Schema
		if s != nil {
			ks, vs = s.KeySchema, s.ValueSchema
		}
		out := []any{}
		for k, e := range x {
			out = append(out, []any{encodeValue(ks, k), encodeValue(vs, e)})
		}
		return map[string]any{"map": out}
	case map[any]any:
		var ks, vs *schema.Schema
		if s != nil {
			ks, vs = s.KeySchema, s.ValueSchema
		}
		out := []any{}
		for k, e := range x {
			out = append(out, []any{encodeValue(ks, k), encodeValue(vs, e)})
		}
		return map[string]any{"map": out}
	case *schema.Struct:
		out := []any{}
		for i, f := range x.Schema().Fields {
			out = append(out, []any{f.Name, encodeValue(f.Schema, x.GetIndexWithoutDefault(i))})
		}
		return map[string]any{"struct": out}
	}
	return map[string]any{"unknown": fmt.Sprintf("%T", v)}
}

func encodeRecord(r *Record) any {
	o := map[string]any{"topic": r.Topic, "keySchema": encodeSchema(r.KeySchema), "key": encodeValue(r.KeySchema, r.Key),
		"valueSchema": encodeSchema(r.ValueSchema), "value": encodeValue(r.ValueSchema, r.Value)}
	if r.HasPartition {
		o["partition"] = float64(r.Partition)
	}
	if r.Sink {
		o["offset"] = float64(r.Offset)
	}
	if !r.Timestamp.IsZero() {
		o["timestamp"] = float64(r.Timestamp.UnixMilli())
	}
	hs := []any{}
	for _, h := range r.Headers {
		hs = append(hs, map[string]any{"key": h.Key, "schema": encodeSchema(h.Schema), "value": encodeValue(h.Schema, h.Value)})
	}
	o["headers"] = hs
	return o
}

// canonical normalizes an encoded value for comparison: floats by their
// bits (Java 17 and 19+ print some differently), map entries sorted, JSON
// numbers as float64.
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		if len(x) == 1 {
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "float32" || k == "float64") {
					bits := 64
					if k == "float32" {
						bits = 32
					}
					f, _ := javaParseDouble(s, bits)
					if bits == 32 {
						return map[string]any{k: fmt.Sprintf("%08x", math.Float32bits(float32(f)))}
					}
					return map[string]any{k: fmt.Sprintf("%016x", math.Float64bits(f))}
				}
			}
		}
		// Decimals compare by value: Tributary's carry their schema's
		// scale, where Kafka's MaskField gives BigDecimal.ZERO or the
		// replacement's own scale (which Kafka's converters then refuse
		// as "mismatching scale").
		if d, ok := out["decimal"].(string); ok {
			scale, _ := out["scale"].(float64)
			return map[string]any{"decimal": normalizeDecimal(d, int(scale))}
		}
		if m, ok := out["map"].([]any); ok && len(out) == 1 {
			sort.Slice(m, func(i, j int) bool { return jsonString(m[i]) < jsonString(m[j]) })
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	}
	return v
}

// firstDiff finds where two canonical values differ: its path and both
// sides there ("" and equal sides when they do not).
func firstDiff(path string, a, b any) (string, string, string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if p, g, w := firstDiff(path+"/"+k, am[k], bm[k]); p != "" {
				return p, g, w
			}
		}
		return "", "", ""
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			if p, g, w := firstDiff(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i]); p != "" {
				return p, g, w
			}
		}
		return "", "", ""
	}
	if g, w := jsonString(a), jsonString(b); g != w {
		if path == "" {
			path = "/"
		}
		return path, g, w
	}
	return "", "", ""
}

// normalizeDecimal renders unscaled×10^-scale without trailing zeros.
func normalizeDecimal(unscaled string, scale int) string {
	x, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		return unscaled
	}
	ten := big.NewInt(10)
	for x.Sign() != 0 {
		q, m := new(big.Int).QuoRem(x, ten, new(big.Int))
		if m.Sign() != 0 {
			break
		}
		x, scale = q, scale-1
	}
	if x.Sign() == 0 {
		scale = 0
	}
	return x.String() + "e-" + strconv.Itoa(scale)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func generic(raw json.RawMessage) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&v); err != nil {
		return err.Error()
	}
	return v
}

func roundTrip(v any) any {
	var out any
	_ = json.Unmarshal([]byte(jsonString(v)), &out)
	return out
}

// errorOf is the Java class and message of an error of the chain.
func errorOf(err error) goldenError {
	var e *Error
	if errors.As(err, &e) {
		return goldenError{e.Class, e.Message}
	}
	var c *ConfigError
	if errors.As(err, &c) {
		return goldenError{ConfigException, c.Message}
	}
	return goldenError{"?", err.Error()}
}

// messageDeviations are outcomes where Tributary's error message cannot be
// Java's (the class still must match): Java's regex engine words its own
// errors, and Go's RE2 refuses a pattern differently.
var messageDeviations = map[string]string{
	"regex_router_bad_regex":       "java.util.regex error text",
	"predicate_bad_pattern":        "java.util.regex error text",
	"insert_static_no_value_value": "Kafka prints its InsertionSpec object's identity hash",
	"timestamp_router":             "Kafka prints the whole record in the message",
	"timestamp_router_fmt":         "Kafka prints the whole record in the message",
}

func TestGoldens(t *testing.T) {
	f := loadCases(t)
	file, err := os.Open(filepath.Join("testdata", "golden", "transforms.jsonl"))
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./integration -run TestTransformGoldens -args -rewrite)", err)
	}
	defer file.Close()
	want := map[string]goldenLine{}
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l goldenLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		want[l.Case+"/"+l.Record] = l
	}
	compared := 0
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			chain, err := New(c.Config)
			if w, ok := want[c.Name+"/"]; ok {
				if err == nil {
					t.Fatalf("configure: no error, want %s: %s", w.ConfigError.Class, w.ConfigError.Message)
				}
				got := errorOf(err)
				if got.Class != w.ConfigError.Class || (got.Message != w.ConfigError.Message && messageDeviations[c.Name] == "") {
					t.Errorf("configure error:\n got %s: %s\nwant %s: %s", got.Class, got.Message, w.ConfigError.Class, w.ConfigError.Message)
				}
				compared++
				return
			}
			if err != nil {
				t.Fatalf("configure: %v", err)
			}
			for _, name := range c.Records {
				w, ok := want[c.Name+"/"+name]
				if !ok {
					t.Errorf("%s: no golden outcome (regenerate the goldens)", name)
					continue
				}
				r, err := decodeRecord(f.Records[name], c.Mode != "source")
				if err != nil {
					t.Fatal(err)
				}
				keep, err := chain.Apply(&r)
				compared++
				switch {
				case w.Error != nil:
					if err == nil {
						t.Errorf("%s: no error, want %s: %s", name, w.Error.Class, w.Error.Message)
						continue
					}
					got := errorOf(err)
					if got.Class != w.Error.Class || (got.Message != w.Error.Message && messageDeviations[c.Name] == "") {
						t.Errorf("%s: error\n got %s: %s\nwant %s: %s", name, got.Class, got.Message, w.Error.Class, w.Error.Message)
					}
				case err != nil:
					t.Errorf("%s: unexpected error %v", name, err)
				case w.Dropped:
					if keep {
						t.Errorf("%s: kept, want dropped", name)
					}
				case !keep:
					t.Errorf("%s: dropped, want %s", name, w.Out)
				default:
					got := canonical(roundTrip(encodeRecord(&r)))
					exp := canonical(generic(w.Out))
					if path, g, w := firstDiff("", got, exp); path != "" || g != w {
						t.Errorf("%s: at %s\n got %s\nwant %s", name, path, g, w)
					}
				}
			}
		})
	}
	if compared == 0 {
		t.Fatal("nothing compared")
	}
	t.Logf("%d outcomes compared with Kafka Connect's", compared)
}

package schema

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// This file renders values as Kafka's JsonConverter
// (org.apache.kafka.connect.json.JsonConverter) writes them, byte for byte:
// Jackson's string escapes and Java's Double.toString (package jackson),
// decimals in base64 or as BigDecimal.toString, the logical types as
// numbers, maps with string keys as objects and other maps as arrays of
// [key, value] pairs. It is the one Java-compatible JSON writer of
// Tributary: connectors, the worker's JsonConverter and its internal topics
// all write through it.

// JSONOptions are the settings of Kafka's JsonConverter that change what
// AppendJSON writes. The zero value is JsonConverter's defaults but for
// the envelope: schemas.enable=false, decimal.format=BASE64,
// replace.null.with.default=true.
type JSONOptions struct {
	// Envelope writes {"schema":…,"payload":…}, JsonConverter's
	// schemas.enable=true (its default); false writes the payload alone.
	Envelope bool
	// DecimalFormat is JsonConverter's decimal.format: "BASE64" (also for
	// "") writes a Decimal as the base64 of its unscaled two's-complement
	// bytes, "NUMERIC" as a JSON number (Java's BigDecimal.toString).
	// Case does not matter.
	DecimalFormat string
	// KeepNulls is JsonConverter's replace.null.with.default=false: a nil
	// value is written as null even where its schema has a default (by
	// default the default is written instead).
	KeepNulls bool
}

// writer returns the jsonWriter for o, or an error for a DecimalFormat
// JsonConverter does not know.
func (o JSONOptions) writer() (jsonWriter, error) {
	w := jsonWriter{replaceNull: !o.KeepNulls}
	switch o.DecimalFormat {
	case "", "BASE64":
	case "NUMERIC":
		w.numeric = true
	default:
		switch {
		case strings.EqualFold(o.DecimalFormat, "BASE64"):
		case strings.EqualFold(o.DecimalFormat, "NUMERIC"):
			w.numeric = true
		default:
			return w, fmt.Errorf("schema: JSON decimal format %q: want BASE64 or NUMERIC", o.DecimalFormat)
		}
	}
	return w, nil
}

// AppendJSON appends v, a value of schema s (or a schemaless value when s
// is nil; see the package doc for the Go types of each), exactly as
// Kafka's JsonConverter writes it with the settings o, and returns the
// extended buffer. A value that does not match its schema (or a schemaless
// value of a Go type outside the data model) is an error, and dst is
// returned as it was given. A nil value of a nil schema is written as null.
//
// Besides the data model's types, schemaless values may hold Go's int and
// unsigned integer types, written as their decimal value.
//
// Maps are written in a fixed order: string keys sorted, other keys
// numbers first by value, then strings, then the rest by their printed
// form (Kafka keeps a Java map's iteration order; a Go map has none).
func AppendJSON(dst []byte, s *Schema, v any, o JSONOptions) ([]byte, error) {
	w, err := o.writer()
	if err != nil {
		return dst, err
	}
	if !o.Envelope {
		b, err := w.appendValue(dst, s, v, 0)
		if err != nil {
			return dst, err
		}
		return b, nil
	}
	b := append(dst, `{"schema":`...)
	if s == nil {
		b = append(b, "null"...)
	} else if b, err = w.appendSchema(b, s, "", false, 0); err != nil {
		return dst, err
	}
	b = append(b, `,"payload":`...)
	if b, err = w.appendValue(b, s, v, 0); err != nil {
		return dst, err
	}
	return append(b, '}'), nil
}

// AppendJSONSchema appends the "schema" member of JsonConverter's envelope
// for s (null for a nil schema): for writers that render the envelope
// themselves and keep the schema's JSON between records. Only
// o.DecimalFormat matters (it shapes Decimal defaults).
func AppendJSONSchema(dst []byte, s *Schema, o JSONOptions) ([]byte, error) {
	w, err := o.writer()
	if err != nil {
		return dst, err
	}
	if s == nil {
		return append(dst, "null"...), nil
	}
	b, err := w.appendSchema(dst, s, "", false, 0)
	if err != nil {
		return dst, err
	}
	return b, nil
}

// MarshalJSON implements json.Marshaler: the struct's fields as AppendJSON
// writes them with the zero JSONOptions (a JSON object in field order, the
// logical types as JsonConverter writes them). A Struct whose Set failed,
// or whose values do not match its schema, fails to marshal.
func (s Struct) MarshalJSON() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.schema == nil || s.schema.Type != TypeStruct {
		return nil, fmt.Errorf("schema: marshal a Struct without a struct schema")
	}
	return AppendJSON(nil, s.schema, &s, JSONOptions{})
}

// jsonWriter writes values and schemas with one set of JSONOptions.
type jsonWriter struct {
	numeric     bool // decimal.format=NUMERIC
	replaceNull bool // replace.null.with.default=true
}

var jsonTypeNames = map[Type]string{
	TypeInt8: "int8", TypeInt16: "int16", TypeInt32: "int32", TypeInt64: "int64",
	TypeFloat32: "float", TypeFloat64: "double", TypeBoolean: "boolean",
	TypeString: "string", TypeBytes: "bytes", TypeArray: "array",
	TypeMap: "map", TypeStruct: "struct",
}

// appendSchema writes s in Kafka's order: type, items|keys,values|fields,
// optional, name, version, doc, parameters, default, and for a struct
// field its name last.
func (w jsonWriter) appendSchema(b []byte, s *Schema, field string, isField bool, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("schema: schema nested deeper than %d", maxDepth)
	}
	name, ok := jsonTypeNames[s.Type]
	if !ok {
		return nil, fmt.Errorf("schema: invalid schema type %v", s.Type)
	}
	b = append(b, `{"type":"`...)
	b = append(b, name...)
	b = append(b, '"')
	var err error
	switch s.Type {
	case TypeArray:
		if s.ValueSchema == nil {
			return nil, fmt.Errorf("schema: array schema without element schema")
		}
		b = append(b, `,"items":`...)
		if b, err = w.appendSchema(b, s.ValueSchema, "", false, depth+1); err != nil {
			return nil, err
		}
	case TypeMap:
		if s.KeySchema == nil || s.ValueSchema == nil {
			return nil, fmt.Errorf("schema: map schema without key or value schema")
		}
		b = append(b, `,"keys":`...)
		if b, err = w.appendSchema(b, s.KeySchema, "", false, depth+1); err != nil {
			return nil, err
		}
		b = append(b, `,"values":`...)
		if b, err = w.appendSchema(b, s.ValueSchema, "", false, depth+1); err != nil {
			return nil, err
		}
	case TypeStruct:
		b = append(b, `,"fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			if f.Schema == nil {
				return nil, fmt.Errorf("schema: struct field %q without schema", f.Name)
			}
			if b, err = w.appendSchema(b, f.Schema, f.Name, true, depth+1); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if s.Optional {
		b = append(b, `,"optional":true`...)
	} else {
		b = append(b, `,"optional":false`...)
	}
	if s.Name != "" {
		b = append(b, `,"name":`...)
		b = jackson.AppendString(b, s.Name)
	}
	if s.Version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(s.Version), 10)
	}
	if s.Doc != "" {
		b = append(b, `,"doc":`...)
		b = jackson.AppendString(b, s.Doc)
	}
	if len(s.Parameters) > 0 {
		// Kafka keeps insertion order; Go maps have none, so sort.
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, `,"parameters":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, k)
			b = append(b, ':')
			b = jackson.AppendString(b, s.Parameters[k])
		}
		b = append(b, '}')
	}
	if s.Default != nil {
		b = append(b, `,"default":`...)
		if b, err = w.appendValue(b, s, s.Default, depth+1); err != nil {
			return nil, fmt.Errorf("schema: default value: %w", err)
		}
	}
	if isField {
		b = append(b, `,"field":`...)
		b = jackson.AppendString(b, field)
	}
	return append(b, '}'), nil
}

const msPerDay = 24 * 60 * 60 * 1000

// appendValue writes v described by s (nil: schemaless).
func (w jsonWriter) appendValue(b []byte, s *Schema, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("schema: value nested deeper than %d", maxDepth)
	}
	if s == nil {
		return w.appendSchemaless(b, v, depth)
	}
	if v == nil {
		if s.Default != nil && w.replaceNull {
			return w.appendValue(b, s, s.Default, depth+1)
		}
		if s.Optional {
			return append(b, "null"...), nil
		}
		return nil, fmt.Errorf("schema: null value for required %v without default", s)
	}
	switch s.Name {
	case DecimalName:
		x, ok := v.(*big.Int)
		if !ok {
			return nil, mismatch(s, v)
		}
		if w.numeric {
			scale, err := s.Scale()
			if err != nil {
				return nil, err
			}
			return jackson.AppendBigDecimal(b, x, scale), nil
		}
		return jackson.AppendBase64(b, AppendDecimal(nil, x)), nil
	case DateName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, mismatch(s, v)
		}
		ms := t.UnixMilli()
		if ms%msPerDay != 0 || t.Nanosecond()%1e6 != 0 {
			return nil, fmt.Errorf("schema: Kafka Connect Date type should not have any time fields set to non-zero values")
		}
		return strconv.AppendInt(b, ms/msPerDay, 10), nil
	case TimeName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, mismatch(s, v)
		}
		ms := t.UnixMilli()
		if ms < 0 || ms >= msPerDay {
			return nil, fmt.Errorf("schema: Kafka Connect Time type should not have any date fields set to non-zero values")
		}
		return strconv.AppendInt(b, ms, 10), nil
	case TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendInt(b, t.UnixMilli(), 10), nil
	}
	switch s.Type {
	case TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendInt(b, int64(x), 10), nil
	case TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendInt(b, int64(x), 10), nil
	case TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendInt(b, int64(x), 10), nil
	case TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendInt(b, x, 10), nil
	case TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return nil, mismatch(s, v)
		}
		return jackson.AppendJavaFloat(b, float64(x), 32), nil
	case TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return nil, mismatch(s, v)
		}
		return jackson.AppendJavaFloat(b, x, 64), nil
	case TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return nil, mismatch(s, v)
		}
		return strconv.AppendBool(b, x), nil
	case TypeString:
		x, ok := v.(string)
		if !ok {
			return nil, mismatch(s, v)
		}
		return jackson.AppendString(b, x), nil
	case TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return nil, mismatch(s, v)
		}
		return jackson.AppendBase64(b, x), nil
	case TypeArray:
		a, ok := v.([]any)
		if !ok {
			return nil, mismatch(s, v)
		}
		b = append(b, '[')
		var err error
		for i, e := range a {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = w.appendValue(b, s.ValueSchema, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case TypeMap:
		return w.appendMap(b, s, v, depth)
	case TypeStruct:
		st, ok := v.(*Struct)
		if !ok {
			return nil, mismatch(s, v)
		}
		if st.Schema() != s && !Equal(st.Schema(), s) {
			return nil, fmt.Errorf("schema: struct schema %v does not match %v", st.Schema(), s)
		}
		b = append(b, '{')
		var err error
		for i, f := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, f.Name)
			b = append(b, ':')
			if b, err = w.appendValue(b, f.Schema, st.GetIndex(i), depth+1); err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("schema: invalid schema type %v", s.Type)
}

func (w jsonWriter) appendMap(b []byte, s *Schema, v any, depth int) ([]byte, error) {
	type entry struct{ k, v any }
	var entries []entry
	switch m := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(m) {
			entries = append(entries, entry{k, m[k]})
		}
	case map[any]any:
		for _, k := range sortedAnyKeys(m) {
			entries = append(entries, entry{k, m[k]})
		}
	default:
		return nil, mismatch(s, v)
	}
	var err error
	if s.KeySchema.Type == TypeString && !s.KeySchema.Optional {
		// String keys: a JSON object.
		b = append(b, '{')
		for i, e := range entries {
			ks, ok := e.k.(string)
			if !ok {
				return nil, mismatch(s.KeySchema, e.k)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, ks)
			b = append(b, ':')
			if b, err = w.appendValue(b, s.ValueSchema, e.v, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	// Other keys: an array of [key, value] pairs, as Kafka writes them.
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		if b, err = w.appendValue(b, s.KeySchema, e.k, depth+1); err != nil {
			return nil, err
		}
		b = append(b, ',')
		if b, err = w.appendValue(b, s.ValueSchema, e.v, depth+1); err != nil {
			return nil, err
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedAnyKeys orders map keys deterministically: numbers by value, then
// strings, then anything else by its printed form.
func sortedAnyKeys(m map[any]any) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lessKey(keys[i], keys[j]) })
	return keys
}

func keyNum(k any) (float64, bool) {
	switch x := k.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func lessKey(a, b any) bool {
	an, aok := keyNum(a)
	bn, bok := keyNum(b)
	switch {
	case aok && bok:
		if an != bn {
			return an < bn
		}
		ai, _ := a.(int64)
		bi, _ := b.(int64)
		return ai < bi
	case aok != bok:
		return aok
	}
	as, aok := a.(string)
	bs, bok := b.(string)
	switch {
	case aok && bok:
		return as < bs
	case aok != bok:
		return aok
	}
	return fmt.Sprint(a) < fmt.Sprint(b)
}

// appendSchemaless writes a value without a schema, as Kafka infers one
// from the Java type.
func (w jsonWriter) appendSchemaless(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("schema: value nested deeper than %d", maxDepth)
	}
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float32:
		return jackson.AppendJavaFloat(b, float64(x), 32), nil
	case float64:
		return jackson.AppendJavaFloat(b, x, 64), nil
	case string:
		return jackson.AppendString(b, x), nil
	case []byte:
		return jackson.AppendBase64(b, x), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = w.appendSchemaless(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, k)
			b = append(b, ':')
			if b, err = w.appendSchemaless(b, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case map[any]any:
		keys := sortedAnyKeys(x)
		object := true
		for _, k := range keys {
			if _, ok := k.(string); !ok {
				object = false
				break
			}
		}
		b = append(b, "{["[boolIdx(!object)])
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if object {
				b = jackson.AppendString(b, k.(string))
				b = append(b, ':')
			} else {
				b = append(b, '[')
				if b, err = w.appendSchemaless(b, k, depth+1); err != nil {
					return nil, err
				}
				b = append(b, ',')
			}
			if b, err = w.appendSchemaless(b, x[k], depth+1); err != nil {
				return nil, err
			}
			if !object {
				b = append(b, ']')
			}
		}
		return append(b, "}]"[boolIdx(!object)]), nil
	case *Struct:
		return w.appendValue(b, x.Schema(), x, depth+1)
	}
	return nil, fmt.Errorf("schema: Go type %T has no schemaless JSON form", v)
}

func boolIdx(b bool) int {
	if b {
		return 1
	}
	return 0
}

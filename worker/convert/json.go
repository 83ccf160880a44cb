package convert

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// JSONConverter is Kafka's org.apache.kafka.connect.json.JsonConverter.
type JSONConverter struct {
	schemas         bool
	numericDecimal  bool
	replaceNull     bool
	opts            schema.JSONOptions // what FromConnect writes, without the envelope
	cacheSize       int
	mu              sync.Mutex
	schemaJSON      map[*schema.Schema][]byte    // FromConnect cache
	schemaFromBytes map[string]*schema.Schema    // ToConnect cache
	plans           map[*schema.Schema]*wirePlan // appendRaw's (see wirePlanFor)
	// lastSchema holds the bytes of the last envelope schema ToConnect
	// parsed, for the next record's envelope to skip re-validating it.
	lastSchema atomic.Pointer[[]byte]
}

// NewJSON returns a JsonConverter configured with Kafka's settings:
// schemas.enable (default true), decimal.format (BASE64 or NUMERIC, default
// BASE64), replace.null.with.default (default true) and schemas.cache.size
// (default 1000). converter.type is accepted and ignored.
func NewJSON(config map[string]string) (*JSONConverter, error) {
	c := &JSONConverter{schemas: true, replaceNull: true, cacheSize: 1000,
		schemaJSON: map[*schema.Schema][]byte{}, schemaFromBytes: map[string]*schema.Schema{}}
	var errs []string
	boolean := func(key string, dst *bool) {
		if v, ok := config[key]; ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true":
				*dst = true
			case "false":
				*dst = false
			default:
				errs = append(errs, fmt.Sprintf("Invalid value %s for configuration %s: Expected value to be either true or false", v, key))
			}
		}
	}
	boolean("schemas.enable", &c.schemas)
	boolean("replace.null.with.default", &c.replaceNull)
	if v, ok := config["decimal.format"]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "BASE64":
		case "NUMERIC":
			c.numericDecimal = true
		default:
			errs = append(errs, fmt.Sprintf("Invalid value %s for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC", v))
		}
	}
	if v, ok := config["schemas.cache.size"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("Invalid value %s for configuration schemas.cache.size", v))
		}
		c.cacheSize = n
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convert: JsonConverter: %s", strings.Join(errs, "; "))
	}
	c.opts = jsonOptions(c.numericDecimal, c.replaceNull)
	return c, nil
}

// jsonOptions are the settings schema.AppendJSON writes a payload with.
func jsonOptions(numericDecimal, replaceNull bool) schema.JSONOptions {
	o := schema.JSONOptions{KeepNulls: !replaceNull}
	if numericDecimal {
		o.DecimalFormat = "NUMERIC"
	}
	return o
}

// FromConnect implements Converter.
func (c *JSONConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	size := 128
	if c.schemas {
		size = 256
	}
	b, null, err := c.AppendFromConnect(make([]byte, 0, size), topic, s, v)
	if null || err != nil {
		return nil, err
	}
	return b, nil
}

// AppendFromConnect implements Appender.
func (c *JSONConverter) AppendFromConnect(b []byte, _ string, s *schema.Schema, v any) (out []byte, null bool, err error) {
	if s == nil && v == nil {
		return b, true, nil
	}
	if raw, ok := v.(*wire.Raw); ok {
		out, err := c.appendRaw(b, s, raw)
		return out, false, err
	}
	if c.schemas {
		b = append(b, `{"schema":`...)
		if b, err = c.appendSchemaCached(b, s); err != nil {
			return nil, false, err
		}
		b = append(b, `,"payload":`...)
		if b, err = c.appendJSON(b, s, v); err != nil {
			return nil, false, err
		}
		return append(b, '}'), false, nil
	}
	if b, err = c.appendJSON(b, s, v); err != nil {
		return nil, false, err
	}
	return b, false, nil
}

// appendJSON writes v of schema s (nil: schemaless) without the envelope.
func (c *JSONConverter) appendJSON(b []byte, s *schema.Schema, v any) ([]byte, error) {
	out, err := schema.AppendJSON(b, s, v, c.opts)
	if err != nil {
		return nil, fmt.Errorf("convert: JsonConverter: %w", err)
	}
	return out, nil
}

func (c *JSONConverter) appendSchemaCached(b []byte, s *schema.Schema) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	c.mu.Lock()
	cached, ok := c.schemaJSON[s]
	c.mu.Unlock()
	if ok {
		return append(b, cached...), nil
	}
	enc, err := schema.AppendJSONSchema(nil, s, c.opts)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if c.cacheSize > 0 {
		c.mu.Lock()
		if len(c.schemaJSON) >= c.cacheSize {
			clear(c.schemaJSON)
		}
		c.schemaJSON[s] = enc
		c.mu.Unlock()
	}
	return append(b, enc...), nil
}

const (
	maxDepth = 100
	msPerDay = 24 * 60 * 60 * 1000
)

// ToConnect implements Converter.
func (c *JSONConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	return c.toConnectBytes(b, false)
}

// ToConnectAliased implements Aliaser.
func (c *JSONConverter) ToConnectAliased(_ string, b []byte) (*schema.Schema, any, error) {
	return c.toConnectBytes(b, true)
}

func (c *JSONConverter) toConnectBytes(b []byte, alias bool) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	if !c.schemas {
		v, ok := fastDecode(b, alias)
		if !ok {
			var err error
			if v, err = decodeJSON(b); err != nil {
				return nil, nil, err
			}
		}
		out, err := c.toConnect(nil, v, 0)
		return nil, out, err
	}
	var known []byte
	if p := c.lastSchema.Load(); p != nil {
		known = *p
	}
	if raw, payload, ok := fastEnvelope(b, known, alias); ok {
		s, err := c.schemaCached(raw)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(raw, known) {
			keep := bytes.Clone(raw)
			c.lastSchema.Store(&keep)
		}
		v, err := c.toConnect(s, payload, 0)
		if err != nil {
			return nil, nil, err
		}
		return s, v, nil
	}
	// Not a well-formed envelope: encoding/json finds the error to report.
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil || len(env) != 2 || env["schema"] == nil || env["payload"] == nil {
		if err != nil && !isObject(b) {
			if _, perr := decodeJSON(b); perr != nil {
				return nil, nil, perr
			}
		}
		return nil, nil, fmt.Errorf("convert: JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration")
	}
	s, err := c.schemaCached(env["schema"])
	if err != nil {
		return nil, nil, err
	}
	payload, err := decodeJSON(env["payload"])
	if err != nil {
		return nil, nil, err
	}
	v, err := c.toConnect(s, payload, 0)
	if err != nil {
		return nil, nil, err
	}
	return s, v, nil
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("convert: converting byte[] to Kafka Connect data failed due to serialization error: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("convert: converting byte[] to Kafka Connect data failed: trailing data after JSON value")
	}
	return v, nil
}

func (c *JSONConverter) schemaCached(raw json.RawMessage) (*schema.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	c.mu.Lock()
	s, ok := c.schemaFromBytes[string(raw)]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	s, err = c.parseSchema(v, 0)
	if err != nil {
		return nil, err
	}
	if c.cacheSize > 0 {
		c.mu.Lock()
		if len(c.schemaFromBytes) >= c.cacheSize {
			clear(c.schemaFromBytes)
		}
		c.schemaFromBytes[string(raw)] = s
		c.mu.Unlock()
	}
	return s, nil
}

var jsonTypes = map[string]schema.Type{
	"int8": schema.TypeInt8, "int16": schema.TypeInt16, "int32": schema.TypeInt32, "int64": schema.TypeInt64,
	"float": schema.TypeFloat32, "double": schema.TypeFloat64, "boolean": schema.TypeBoolean,
	"string": schema.TypeString, "bytes": schema.TypeBytes, "array": schema.TypeArray,
	"map": schema.TypeMap, "struct": schema.TypeStruct,
}

// parseSchema is Kafka's asConnectSchema.
func (c *JSONConverter) parseSchema(v any, depth int) (*schema.Schema, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("convert: schema nested deeper than %d", maxDepth)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("convert: schema must be a JSON object")
	}
	tn, _ := obj["type"].(string)
	t, ok := jsonTypes[tn]
	if !ok {
		return nil, fmt.Errorf("convert: unknown schema type: %v", obj["type"])
	}
	s := &schema.Schema{Type: t}
	var err error
	switch t {
	case schema.TypeArray:
		items, ok := obj["items"]
		if !ok || items == nil {
			return nil, fmt.Errorf("convert: array schema did not specify the element type")
		}
		if s.ValueSchema, err = c.parseSchema(items, depth+1); err != nil {
			return nil, err
		}
	case schema.TypeMap:
		keys, vals := obj["keys"], obj["values"]
		if keys == nil || vals == nil {
			return nil, fmt.Errorf("convert: map schema did not specify the key or value type")
		}
		if s.KeySchema, err = c.parseSchema(keys, depth+1); err != nil {
			return nil, err
		}
		if s.ValueSchema, err = c.parseSchema(vals, depth+1); err != nil {
			return nil, err
		}
	case schema.TypeStruct:
		fields, ok := obj["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf("convert: struct schema's \"fields\" argument is not an array")
		}
		seen := map[string]bool{}
		for i, f := range fields {
			fo, ok := f.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("convert: struct field %d is not an object", i)
			}
			name, ok := fo["field"].(string)
			if !ok {
				return nil, fmt.Errorf("convert: struct schema's field name not specified properly")
			}
			if seen[name] {
				return nil, fmt.Errorf("convert: struct field %q duplicated", name)
			}
			seen[name] = true
			fs, err := c.parseSchema(fo, depth+1)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, schema.Field{Name: name, Index: i, Schema: fs})
		}
	}
	if o, ok := obj["optional"].(bool); ok && o {
		s.Optional = true
	}
	if n, ok := obj["name"].(string); ok {
		s.Name = n
	}
	if n, ok := obj["version"].(json.Number); ok {
		ver, err := strconv.ParseInt(string(n), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("convert: schema version %q: %w", n, err)
		}
		s.Version = int32(ver)
	}
	if d, ok := obj["doc"].(string); ok {
		s.Doc = d
	}
	if p, ok := obj["parameters"]; ok && p != nil {
		po, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("convert: schema parameters must be an object")
		}
		s.Parameters = make(map[string]string, len(po))
		for k, pv := range po {
			ps, ok := pv.(string)
			if !ok {
				return nil, fmt.Errorf("convert: schema parameter %q must be a string", k)
			}
			s.Parameters[k] = ps
		}
	}
	if s.Name == schema.DecimalName {
		if _, err := s.Scale(); err != nil || s.Type != schema.TypeBytes {
			return nil, fmt.Errorf("convert: invalid Decimal schema")
		}
	}
	if (s.Name == schema.DateName || s.Name == schema.TimeName) && s.Type != schema.TypeInt32 ||
		s.Name == schema.TimestampName && s.Type != schema.TypeInt64 {
		return nil, fmt.Errorf("convert: logical type %s on %v", s.Name, s.Type)
	}
	if d, ok := obj["default"]; ok && d != nil {
		if s.Default, err = c.toConnect(s, d, depth+1); err != nil {
			return nil, fmt.Errorf("convert: schema default: %w", err)
		}
	}
	return s, nil
}

func typeErr(s *schema.Schema, v any) error {
	return fmt.Errorf("convert: JSON value %.40v does not match schema %v", v, s)
}

// toConnect is Kafka's convertToConnect: v is a decoded JSON value
// (json.Number for numbers).
func (c *JSONConverter) toConnect(s *schema.Schema, v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("convert: value nested deeper than %d", maxDepth)
	}
	if s == nil {
		return schemalessToConnect(v, depth)
	}
	if v == nil {
		if s.Default != nil {
			return s.Default, nil
		}
		if s.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("convert: invalid null value for required %v field", s.Type)
	}
	switch s.Name {
	case schema.DecimalName:
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case string:
			raw, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("convert: Decimal: %w", err)
			}
			if len(raw) == 0 {
				return nil, fmt.Errorf("convert: Decimal: zero length BigInteger")
			}
			return schema.DecimalFromBytes(raw), nil
		case json.Number:
			return unscaled(string(x), scale)
		}
		return nil, typeErr(s, v)
	case schema.DateName, schema.TimeName, schema.TimestampName:
		n, ok := v.(json.Number)
		if !ok {
			return nil, typeErr(s, v)
		}
		ms, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("convert: %s: %w", s.Name, err)
		}
		if s.Name == schema.DateName {
			if ms > math.MaxInt64/msPerDay || ms < math.MinInt64/msPerDay {
				return nil, fmt.Errorf("convert: Date %d out of range", ms)
			}
			ms *= msPerDay
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		n, ok := v.(json.Number)
		if !ok {
			return nil, typeErr(s, v)
		}
		bits := 64
		switch s.Type {
		case schema.TypeInt8:
			bits = 8
		case schema.TypeInt16:
			bits = 16
		case schema.TypeInt32:
			bits = 32
		}
		x, err := strconv.ParseInt(string(n), 10, bits)
		if err != nil {
			return nil, fmt.Errorf("convert: %v: %w", s.Type, err)
		}
		return NarrowInt(s.Type, x), nil
	case schema.TypeFloat32, schema.TypeFloat64:
		bits := 64
		if s.Type == schema.TypeFloat32 {
			bits = 32
		}
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), bits); err != nil {
				return nil, fmt.Errorf("convert: %v: %w", s.Type, err)
			}
		case string:
			switch x {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return nil, typeErr(s, v)
			}
		default:
			return nil, typeErr(s, v)
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return nil, typeErr(s, v)
		}
		return x, nil
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return nil, typeErr(s, v)
		}
		return x, nil
	case schema.TypeBytes:
		x, ok := v.(string)
		if !ok {
			return nil, typeErr(s, v)
		}
		raw, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, fmt.Errorf("convert: bytes: %w", err)
		}
		return raw, nil
	case schema.TypeArray:
		a, ok := v.([]any)
		if !ok {
			return nil, typeErr(s, v)
		}
		out := make([]any, len(a))
		for i, e := range a {
			var err error
			if out[i], err = c.toConnect(s.ValueSchema, e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case schema.TypeMap:
		switch m := v.(type) {
		case map[string]any:
			if s.KeySchema.Type != schema.TypeString {
				return nil, typeErr(s, v)
			}
			out := make(map[string]any, len(m))
			for k, e := range m {
				cv, err := c.toConnect(s.ValueSchema, e, depth+1)
				if err != nil {
					return nil, err
				}
				out[k] = cv
			}
			return out, nil
		case []any:
			out := make(map[any]any, len(m))
			for _, e := range m {
				pair, ok := e.([]any)
				if !ok || len(pair) != 2 {
					return nil, fmt.Errorf("convert: found invalid map entry instead of array tuple")
				}
				k, err := c.toConnect(s.KeySchema, pair[0], depth+1)
				if err != nil {
					return nil, err
				}
				if !hashable(k) {
					return nil, fmt.Errorf("convert: map key of Go type %T cannot be a map key", k)
				}
				val, err := c.toConnect(s.ValueSchema, pair[1], depth+1)
				if err != nil {
					return nil, err
				}
				out[k] = val
			}
			return out, nil
		}
		return nil, typeErr(s, v)
	case schema.TypeStruct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, typeErr(s, v)
		}
		st := schema.NewStruct(s)
		for i, f := range s.Fields {
			fv, err := c.toConnect(f.Schema, obj[f.Name], depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			st.SetIndex(i, fv)
		}
		return st, nil
	}
	return nil, fmt.Errorf("convert: invalid schema type %v", s.Type)
}

func hashable(k any) bool {
	switch k.(type) {
	case nil, bool, int8, int16, int32, int64, float32, float64, string, *schema.Struct, time.Time:
		return true
	}
	return false
}

// unscaled parses a JSON number as a decimal with the given scale and
// returns its unscaled value; digits beyond the scale must be zero (Java's
// BigDecimal.setScale without rounding).
func unscaled(num string, scale int32) (*big.Int, error) {
	mant, expStr, hasExp := strings.Cut(strings.ToLower(num), "e")
	exp := int64(0)
	if hasExp {
		var err error
		if exp, err = strconv.ParseInt(expStr, 10, 32); err != nil {
			return nil, fmt.Errorf("convert: Decimal %q: %w", num, err)
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	cur := int64(len(frac)) - exp // the number's own scale
	x, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, fmt.Errorf("convert: Decimal %q is not a number", num)
	}
	diff := int64(scale) - cur
	if diff > 1000 || diff < -1000 {
		return nil, fmt.Errorf("convert: Decimal %q: scale out of range", num)
	}
	switch {
	case diff > 0:
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(diff), nil))
	case diff < 0:
		q, r := new(big.Int).QuoRem(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(-diff), nil), new(big.Int))
		if r.Sign() != 0 {
			return nil, fmt.Errorf("convert: Decimal %q: rounding necessary for scale %d", num, scale)
		}
		x = q
	}
	return x, nil
}

func schemalessToConnect(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("convert: value nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("convert: number %q: %w", x, err)
		}
		return f, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = schemalessToConnect(e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			cv, err := schemalessToConnect(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = cv
		}
		return out, nil
	}
	return nil, fmt.Errorf("convert: unexpected JSON value %T", v)
}

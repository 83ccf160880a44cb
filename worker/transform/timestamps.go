package transform

import (
	"math"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// SetSchemaMetadata and TimestampConverter.

var setSchemaMetadataKeys = []Key{
	{Name: "schema.name", Type: TypeString, Default: nil, Importance: "HIGH", Doc: "Schema name to set."},
	{Name: "schema.version", Type: TypeInt, Default: nil, Importance: "HIGH", Doc: "Schema version to set."},
	replaceNullWithDefaultKey,
}

// setSchemaMetadata is SetSchemaMetadata$Key/$Value.
type setSchemaMetadata struct {
	side        side
	name        *string
	version     *int32
	withDefault bool
	cache       schemaCache
}

func newSetSchemaMetadata(c Config, s side) (Transformation, error) {
	t := &setSchemaMetadata{side: s, withDefault: c.Bool("replace.null.with.default")}
	if !c.IsNull("schema.name") {
		n := c.String("schema.name")
		t.name = &n
	}
	if !c.IsNull("schema.version") {
		v := c.Int("schema.version")
		t.version = &v
	}
	if t.name == nil && t.version == nil {
		return nil, &ConfigError{"Neither schema name nor version configured"}
	}
	return t, nil
}

func (t *setSchemaMetadata) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if v == nil && s == nil {
		return true, nil
	}
	if s == nil {
		return false, dataErr("Schema required for [updating schema metadata]")
	}
	if s.Type != schema.TypeStruct {
		// Kafka copies the schema's fields, which only a struct has.
		return false, dataErr("Cannot list fields on non-struct type")
	}
	ns := t.cache.get(s)
	if ns == nil {
		c := *s
		if t.name != nil {
			c.Name = *t.name
		}
		if t.version != nil {
			c.Version = *t.version
		}
		if c.Type != schema.TypeMap {
			c.KeySchema = nil
		}
		if c.Type != schema.TypeMap && c.Type != schema.TypeArray {
			c.ValueSchema = nil
		}
		ns = &c
		t.cache.put(s, ns)
	}
	if st, ok := v.(*schema.Struct); ok {
		out := schema.NewStruct(ns)
		for i, f := range ns.Fields {
			fv := st.GetIndexWithoutDefault(f.Index)
			if fv == nil && t.withDefault {
				fv = f.Schema.Default
			}
			if err := put(out, i, fv); err != nil {
				return false, err
			}
		}
		v = out
	}
	t.side.set(r, ns, v)
	return true, nil
}

var timestampConverterKeys = []Key{
	{Name: "field", Type: TypeString, Default: "", Importance: "HIGH",
		Doc: "The field containing the timestamp, or empty if the entire value is a timestamp"},
	{Name: "target.type", Type: TypeString, Default: NoDefault, Validator: validString("string", "unix", "Date", "Time", "Timestamp"), Importance: "HIGH",
		Doc: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"},
	{Name: "format", Type: TypeString, Default: "", Importance: "MEDIUM",
		Doc: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."},
	{Name: "unix.precision", Type: TypeString, Default: "milliseconds", Validator: validString("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance: "LOW",
		Doc: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."},
	replaceNullWithDefaultKey,
}

// The timestamp representations of TimestampConverter.
const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

// timestampConverter is TimestampConverter$Key/$Value.
type timestampConverter struct {
	side        side
	field       string
	target      string
	format      *dateFormat
	precision   string
	withDefault bool
	cache       schemaCache
}

func newTimestampConverter(c Config, s side) (Transformation, error) {
	t := &timestampConverter{side: s, field: c.String("field"), target: c.String("target.type"),
		precision: c.String("unix.precision"), withDefault: c.Bool("replace.null.with.default")}
	pattern := c.String("format")
	if t.target == tsString && javaTrim(pattern) == "" {
		return nil, &ConfigError{"TimestampConverter requires format option to be specified when using string timestamps"}
	}
	if javaTrim(pattern) != "" {
		f, err := newDateFormat(pattern)
		if err != nil {
			return nil, &ConfigError{"TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: " + pattern}
		}
		t.format = f
	}
	return t, nil
}

const timestampPurpose = "converting timestamp formats"

// The optional schemas, made once: converters cache schemas by identity.
var (
	optionalDate = schema.Date.AsOptional()
	optionalTime = schema.Time.AsOptional()
)

// targetSchema is the target representation's schema.
func (t *timestampConverter) targetSchema(optional bool) *schema.Schema {
	if !optional {
		switch t.target {
		case tsString:
			return schema.String
		case tsUnix:
			return schema.Int64
		case tsDate:
			return schema.Date
		case tsTime:
			return schema.Time
		}
		return schema.Timestamp
	}
	switch t.target {
	case tsString:
		return schema.OptionalString
	case tsUnix:
		return schema.OptionalInt64
	case tsDate:
		return optionalDate
	case tsTime:
		return optionalTime
	}
	return optionalTimestamp
}

func (t *timestampConverter) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if s == nil {
		if v == nil || t.field == "" {
			out, err := t.convert(v, "")
			if err != nil {
				return false, err
			}
			t.side.set(r, nil, out)
			return true, nil
		}
		m, err := requireMap(v, timestampPurpose)
		if err != nil {
			return false, err
		}
		cv, err := t.convert(m[t.field], "")
		if err != nil {
			return false, err
		}
		out := t.side.writable(r, m, 1)
		out[t.field] = cv
		t.side.setOwned(r, out)
		return true, nil
	}
	if t.field == "" {
		from, err := formatOfSchema(s)
		if err != nil {
			return false, err
		}
		out, err := t.convert(v, from)
		if err != nil {
			return false, err
		}
		t.side.set(r, t.targetSchema(s.Optional), out)
		return true, nil
	}
	st, err := requireStructOrNull(v, timestampPurpose)
	if err != nil {
		return false, err
	}
	ns := t.cache.get(s)
	if ns == nil {
		if s.Type != schema.TypeStruct {
			return false, dataErr("Cannot list fields on non-struct type")
		}
		ns = copyBasics(s, schema.TypeStruct)
		for _, f := range s.Fields {
			fs := f.Schema
			if f.Name == t.field {
				fs = t.targetSchema(f.Schema.Optional)
			}
			if err := withField(ns, f.Name, fs); err != nil {
				return false, err
			}
		}
		ns.Optional = s.Optional
		if d, ok := s.Default.(*schema.Struct); ok {
			dv, err := t.convertStruct(d, ns)
			if err != nil {
				return false, err
			}
			ns.Default = dv
		}
		t.cache.put(s, ns)
	}
	if st == nil {
		t.side.set(r, ns, nil)
		return true, nil
	}
	out, err := t.convertStruct(st, ns)
	if err != nil {
		return false, err
	}
	t.side.set(r, ns, out)
	return true, nil
}

func (t *timestampConverter) convertStruct(st *schema.Struct, ns *schema.Schema) (*schema.Struct, error) {
	out := schema.NewStruct(ns)
	for i, f := range st.Schema().Fields {
		fv := get(st, i, t.withDefault)
		if f.Name == t.field {
			from, err := formatOfSchema(f.Schema)
			if err != nil {
				return nil, err
			}
			if fv, err = t.convert(fv, from); err != nil {
				return nil, err
			}
		}
		if err := putName(out, f.Name, fv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// formatOfSchema is timestampTypeFromSchema.
func formatOfSchema(s *schema.Schema) (string, error) {
	switch {
	case s.Name == schema.TimestampName:
		return tsTimestamp, nil
	case s.Name == schema.DateName:
		return tsDate, nil
	case s.Name == schema.TimeName:
		return tsTime, nil
	case s.Type == schema.TypeString:
		return tsString, nil
	case s.Type == schema.TypeInt64:
		return tsUnix, nil
	}
	return "", failure(ConnectException, "Schema %s does not correspond to a known timestamp type format", schemaString(s))
}

// convert is convertTimestamp: v read in the from representation (inferred
// from the value when ""), written in the target one.
func (t *timestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case time.Time:
			from = tsTimestamp
		case int64:
			from = tsUnix
		case string:
			from = tsString
		default:
			return nil, dataErr("TimestampConverter does not support %s objects as timestamps", classOf(v))
		}
	}
	var ms int64
	switch from {
	case tsString:
		s, ok := v.(string)
		if !ok {
			return nil, dataErr("Expected string timestamp to be a String, but found %s", classOf(v))
		}
		if t.format == nil {
			return nil, failure(NullPointerException, "Cannot invoke \"java.text.SimpleDateFormat.parse(String)\" because \"config.format\" is null")
		}
		if ms, ok = t.format.parse(s); !ok {
			return nil, dataErr("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.pattern)
		}
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return nil, dataErr("Expected Unix timestamp to be a Long, but found %s", classOf(v))
		}
		switch t.precision {
		case "seconds":
			ms = saturatingMul(n, 1000)
		case "microseconds":
			ms = n / 1000
		case "nanoseconds":
			ms = n / 1000000
		default:
			ms = n
		}
	default:
		tv, ok := v.(time.Time)
		if !ok {
			return nil, dataErr("Expected %s to be a java.util.Date, but found %s", from, classOf(v))
		}
		ms = tv.UnixMilli()
	}
	switch t.target {
	case tsString:
		return t.format.format(ms), nil
	case tsUnix:
		switch t.precision {
		case "seconds":
			return ms / 1000, nil
		case "microseconds":
			return saturatingMul(ms, 1000), nil
		case "nanoseconds":
			return saturatingMul(ms, 1000000), nil
		}
		return ms, nil
	case tsDate:
		return time.UnixMilli(floorDiv(ms, msPerDay) * msPerDay).UTC(), nil
	case tsTime:
		return time.UnixMilli(ms - floorDiv(ms, msPerDay)*msPerDay).UTC(), nil
	}
	return time.UnixMilli(ms).UTC(), nil
}

// saturatingMul is TimeUnit's conversion up: a*b, clamped to int64.
func saturatingMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	if a < math.MinInt64/b {
		return math.MinInt64
	}
	return a * b
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

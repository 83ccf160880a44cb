package transform

import (
	"encoding/base64"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

var castKeys = []Key{
	{Name: "spec", Type: TypeList, Default: NoDefault, Validator: func(name string, v any) error {
		l, _ := v.([]string)
		if len(l) == 0 {
			return &ConfigError{"Must specify at least one field to cast."}
		}
		_, _, err := parseCastSpec(l)
		return err
	}, Importance: "HIGH",
		Doc: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."},
	replaceNullWithDefaultKey,
}

var castTypes = map[string]schema.Type{
	"INT8": schema.TypeInt8, "INT16": schema.TypeInt16, "INT32": schema.TypeInt32, "INT64": schema.TypeInt64,
	"FLOAT32": schema.TypeFloat32, "FLOAT64": schema.TypeFloat64, "BOOLEAN": schema.TypeBoolean, "STRING": schema.TypeString,
	"BYTES": schema.TypeBytes, "ARRAY": schema.TypeArray, "MAP": schema.TypeMap, "STRUCT": schema.TypeStruct,
}

const (
	castOutputTypes = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"
	castInputTypes  = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
)

// parseCastSpec is Cast.parseFieldTypes: the field casts, or the whole
// value's (whole true).
func parseCastSpec(mappings []string) (map[string]schema.Type, *schema.Type, error) {
	casts := map[string]schema.Type{}
	var whole *schema.Type
	parseType := func(s string) (schema.Type, error) {
		name := strings.ToUpper(javaTrim(s))
		t, ok := castTypes[name]
		if !ok {
			// Kafka passes the enum's exception as the value of a
			// ConfigException(name, value).
			return 0, invalid("Invalid type found in casting spec: "+javaTrim(s),
				"java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type."+name, "")
		}
		if t > schema.TypeString {
			return 0, &ConfigError{"Cast transformation does not support casting to " + name + "; supported types are " + castOutputTypes}
		}
		return t, nil
	}
	for _, m := range mappings {
		parts := javaSplit(m, ":")
		switch {
		case len(parts) > 2:
			return nil, nil, invalid("renames", mappings, "Invalid rename mapping: "+m)
		case len(parts) <= 1:
			p := ""
			if len(parts) == 1 {
				p = parts[0]
			}
			t, err := parseType(p)
			if err != nil {
				return nil, nil, err
			}
			whole = &t
		default:
			t, err := parseType(parts[1])
			if err != nil {
				return nil, nil, err
			}
			casts[javaTrim(parts[0])] = t
		}
	}
	if whole != nil && len(mappings) > 1 {
		return nil, nil, &ConfigError{"Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"}
	}
	return casts, whole, nil
}

// cast is Cast$Key/$Value.
type cast struct {
	side        side
	casts       map[string]schema.Type
	whole       *schema.Type
	withDefault bool
	cache       schemaCache
}

func newCast(c Config, s side) (Transformation, error) {
	casts, whole, err := parseCastSpec(c.List("spec"))
	if err != nil {
		return nil, err
	}
	return &cast{side: s, casts: casts, whole: whole, withDefault: c.Bool("replace.null.with.default")}, nil
}

const castPurpose = "cast types"

func (t *cast) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if v == nil {
		return true, nil
	}
	if s == nil {
		if t.whole != nil {
			out, err := castValue(nil, v, *t.whole)
			if err != nil {
				return false, err
			}
			t.side.set(r, nil, out)
			return true, nil
		}
		m, err := requireMap(v, castPurpose)
		if err != nil {
			return false, err
		}
		out := t.side.writable(r, m, len(t.casts))
		for f, typ := range t.casts {
			cv, err := castValue(nil, out[f], typ)
			if err != nil {
				return false, err
			}
			out[f] = cv
		}
		t.side.setOwned(r, out)
		return true, nil
	}
	ns := t.cache.get(s)
	if ns == nil {
		var err error
		if ns, err = t.updatedSchema(s); err != nil {
			return false, err
		}
		t.cache.put(s, ns)
	}
	if t.whole != nil {
		out, err := castValue(s, v, *t.whole)
		if err != nil {
			return false, err
		}
		t.side.set(r, ns, out)
		return true, nil
	}
	st, err := requireStruct(v, castPurpose)
	if err != nil {
		return false, err
	}
	out := schema.NewStruct(ns)
	for i, f := range st.Schema().Fields {
		fv := get(st, i, t.withDefault)
		if typ, ok := t.casts[f.Name]; ok {
			if fv, err = castValue(f.Schema, fv, typ); err != nil {
				return false, err
			}
		}
		of := ns.Field(f.Name)
		if of == nil {
			return false, dataErr("field cannot be null.")
		}
		if err := put(out, of.Index, fv); err != nil {
			return false, err
		}
	}
	t.side.set(r, ns, out)
	return true, nil
}

func primitiveSchema(t schema.Type) *schema.Schema { return &schema.Schema{Type: t} }

func (t *cast) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	var ns *schema.Schema
	if t.whole != nil {
		ns = copyBasics(s, *t.whole)
	} else {
		if s.Type != schema.TypeStruct {
			return nil, dataErr("Cannot list fields on non-struct type")
		}
		ns = copyBasics(s, schema.TypeStruct)
		for _, f := range s.Fields {
			typ, ok := t.casts[f.Name]
			if !ok {
				if err := withField(ns, f.Name, f.Schema); err != nil {
					return nil, err
				}
				continue
			}
			fs := primitiveSchema(typ)
			fs.Optional = f.Schema.Optional
			if f.Schema.Default != nil {
				d, err := castValue(f.Schema, f.Schema.Default, typ)
				if err != nil {
					return nil, err
				}
				fs.Default = d
			}
			if err := withField(ns, f.Name, fs); err != nil {
				return nil, err
			}
		}
	}
	ns.Optional = ns.Optional || s.Optional
	if s.Default != nil {
		d, err := castValue(s, s.Default, ns.Type)
		if err != nil {
			return nil, err
		}
		ns.Default = d
	}
	return ns, nil
}

// castValue is Cast.castValueToType: Java's conversions between numbers,
// booleans and strings; logical values are first encoded as their integer
// form unless cast to a string.
func castValue(s *schema.Schema, v any, to schema.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	var from schema.Type
	if s != nil {
		from = s.Type
	} else {
		var ok bool
		if from, ok = schemaType(v); !ok {
			return nil, dataErr("Cast transformation was passed a value of type %s which is not supported by Connect's data API", classOf(v))
		}
	}
	if from > schema.TypeBytes {
		return nil, dataErr("Cast transformation does not support casting from %s; supported types are %s", typeName(from), castInputTypes)
	}
	if s != nil && s.Name != "" && to != schema.TypeString {
		var err error
		if v, err = encodeLogical(s, v); err != nil {
			return nil, err
		}
	}
	outOfRange := func() error {
		return dataErr("Value (%s) was out of range for requested data type", javaToString(s, v))
	}
	switch to {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		var n int64
		switch x := v.(type) {
		case bool:
			if x {
				n = 1
			}
		case string:
			bits := map[schema.Type]int{schema.TypeInt8: 8, schema.TypeInt16: 16, schema.TypeInt32: 32, schema.TypeInt64: 64}[to]
			var ok bool
			if n, ok = javaParseInt(x, bits); !ok {
				return nil, outOfRange()
			}
		default:
			var ok bool
			if n, ok = javaIntValue(s, v, to); !ok {
				return nil, dataErr("Unexpected type in Cast transformation: %s", classOf(v))
			}
		}
		return convert.NarrowInt(to, n), nil
	case schema.TypeFloat32, schema.TypeFloat64:
		bits := 64
		if to == schema.TypeFloat32 {
			bits = 32
		}
		var f float64
		switch x := v.(type) {
		case bool:
			if x {
				f = 1
			}
		case string:
			var ok bool
			if f, ok = javaParseDouble(x, bits); !ok {
				return nil, outOfRange()
			}
		default:
			var ok bool
			if f, ok = javaFloatValue(s, v, bits); !ok {
				return nil, dataErr("Unexpected type in Cast transformation: %s", classOf(v))
			}
		}
		if to == schema.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case schema.TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
		n, ok := javaLongValue(s, v)
		if !ok {
			return nil, dataErr("Unexpected type in Cast transformation: %s", classOf(v))
		}
		return n != 0, nil
	case schema.TypeString:
		return javaToString(s, v), nil
	}
	return nil, dataErr("%s is not supported in the Cast transformation.", typeName(to))
}

// encodeLogical is Cast.encodeLogicalType: Date to its INT32 days, Time to
// its INT32 milliseconds, Timestamp to its INT64 milliseconds.
func encodeLogical(s *schema.Schema, v any) (any, error) {
	t, isTime := v.(time.Time)
	switch s.Name {
	case schema.DateName:
		if !isTime {
			return nil, failure(ClassCastException, "class %s cannot be cast to class java.util.Date", javaClass(v))
		}
		ms := t.UnixMilli()
		if ms%msPerDay != 0 {
			return nil, dataErr("Kafka Connect Date type should not have any time fields set to non-zero values.")
		}
		return int32(ms / msPerDay), nil
	case schema.TimeName:
		if !isTime {
			return nil, failure(ClassCastException, "class %s cannot be cast to class java.util.Date", javaClass(v))
		}
		ms := t.UnixMilli()
		if ms < 0 || ms > msPerDay {
			return nil, dataErr("Kafka Connect Time type should not have any date fields set to non-zero values.")
		}
		return int32(ms), nil
	case schema.TimestampName:
		if !isTime {
			return nil, failure(ClassCastException, "class %s cannot be cast to class java.util.Date", javaClass(v))
		}
		return t.UnixMilli(), nil
	}
	return v, nil
}

const msPerDay = 24 * 60 * 60 * 1000

// decimalScale is the scale of a Decimal value's schema.
func decimalScale(s *schema.Schema) int32 {
	if s == nil {
		return 0
	}
	scale, _ := s.Scale()
	return scale
}

// javaLongValue is Number.longValue.
func javaLongValue(s *schema.Schema, v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float32:
		return convert.JavaF2L(float64(x)), true
	case float64:
		return convert.JavaF2L(x), true
	case *big.Int:
		return convert.BigDecimalLong(x, decimalScale(s)), true
	}
	return 0, false
}

// javaIntValue is Number.byteValue, shortValue, intValue or longValue for
// the target type: floats narrow through int (or long), integers and
// decimals keep their low bits.
func javaIntValue(s *schema.Schema, v any, to schema.Type) (int64, bool) {
	var f float64
	switch x := v.(type) {
	case float32:
		f = float64(x)
	case float64:
		f = x
	default:
		return javaLongValue(s, v)
	}
	if to == schema.TypeInt64 {
		return convert.JavaF2L(f), true
	}
	return int64(convert.JavaF2I(f)), true
}

// javaFloatValue is Number.floatValue (bits 32) or doubleValue.
func javaFloatValue(s *schema.Schema, v any, bits int) (float64, bool) {
	switch x := v.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		if bits == 32 {
			return float64(float32(x)), true
		}
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case *big.Int:
		return convert.BigDecimalFloat(x, decimalScale(s), bits), true
	}
	return 0, false
}

// javaToString is Cast.castToString: dates in Values' ISO forms, bytes in
// base64, anything else as Java's toString.
func javaToString(s *schema.Schema, v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case time.Time:
		return convert.JavaDateString(x.UnixMilli())
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return convert.JavaFloatString(float64(x), 32)
	case float64:
		return convert.JavaFloatString(x, 64)
	case *big.Int:
		return convert.BigDecimalString(x, decimalScale(s))
	}
	return "?"
}

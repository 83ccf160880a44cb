package transform

import (
	"math/big"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// This file holds the pieces of Kafka Connect's data API the
// transformations share, with Java's behaviour and messages: struct field
// access with and without defaults, validated puts, schema copies, the Java
// class names of values.

// javaClass is value.getClass().getName() for a value of the data model.
func javaClass(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case string:
		return "java.lang.String"
	case []byte:
		return "[B"
	case []any:
		return "java.util.ArrayList"
	case map[string]any, map[any]any:
		return "java.util.HashMap"
	case *schema.Struct:
		return "org.apache.kafka.connect.data.Struct"
	case *big.Int:
		return "java.math.BigDecimal"
	case time.Time:
		return "java.util.Date"
	}
	return "java.lang.Object"
}

// classOf is Java's Class.toString of a value's class: "class
// java.lang.Long" ("null" for null, as string concatenation of a null
// class would fail earlier in Java).
func classOf(v any) string {
	if v == nil {
		return "null"
	}
	return "class " + javaClass(v)
}

// typeName is a schema type as Java's Schema.Type prints: INT32, STRUCT, …
func typeName(t schema.Type) string { return strings.ToUpper(t.String()) }

// schemaString is ConnectSchema.toString.
func schemaString(s *schema.Schema) string {
	if s == nil {
		return "null"
	}
	if s.Name != "" {
		return "Schema{" + s.Name + ":" + typeName(s.Type) + "}"
	}
	return "Schema{" + typeName(s.Type) + "}"
}

// get is Struct.get(field) (withDefault) or getWithoutDefault.
func get(st *schema.Struct, i int, withDefault bool) any {
	if withDefault {
		return st.GetIndex(i)
	}
	return st.GetIndexWithoutDefault(i)
}

// fieldIndex is Struct.lookupField: the index of a field, or Kafka's
// DataException for a name the struct does not have.
func fieldIndex(st *schema.Struct, name string) (int, error) {
	if f := st.Schema().Field(name); f != nil {
		return f.Index, nil
	}
	return 0, dataErr("%s is not a valid field name", name)
}

// put is Struct.put: the value is checked against the field's schema first
// (ConnectSchema.validateValue).
func put(st *schema.Struct, i int, v any) error {
	f := &st.Schema().Fields[i]
	if err := validateValue(f.Schema, v, location{field: f.Name}); err != nil {
		return err
	}
	st.SetIndex(i, v)
	return nil
}

// location is where validateValue is, as Kafka's messages say it: a
// field ("field: \"name\""), possibly within arrays and maps (prefix).
// It is rendered only for an error.
type location struct {
	prefix, field string
}

func (l location) String() string { return l.prefix + `field: "` + l.field + `"` }

func (l location) within(p string) location { return location{p + l.prefix, l.field} }

// putName is Struct.put(String, Object).
func putName(st *schema.Struct, name string, v any) error {
	i, err := fieldIndex(st, name)
	if err != nil {
		return err
	}
	return put(st, i, v)
}

// validateValue is ConnectSchema.validateValue(schema, value, location).
func validateValue(s *schema.Schema, v any, loc location) error {
	if v == nil {
		if !s.Optional {
			return dataErr("Invalid value: null used for required %s, schema type: %s", loc, typeName(s.Type))
		}
		return nil
	}
	if !valueMatches(s, v) {
		var b strings.Builder
		b.WriteString("Invalid Java object for schema")
		if s.Name != "" {
			b.WriteString(` "` + s.Name + `"`)
		}
		b.WriteString(" with type " + typeName(s.Type) + ": " + classOf(v) + " for " + loc.String())
		return dataErr("%s", b.String())
	}
	switch s.Type {
	case schema.TypeStruct:
		st := v.(*schema.Struct)
		if st.Schema() != s && !schema.Equal(st.Schema(), s) {
			return dataErr("Struct schemas do not match.")
		}
		return validateStruct(st)
	case schema.TypeArray:
		eloc := loc.within("element of array ")
		if s.ValueSchema == nil {
			return dataErr("No schema defined for %s", eloc)
		}
		for _, e := range v.([]any) {
			if err := validateValue(s.ValueSchema, e, eloc); err != nil {
				return err
			}
		}
	case schema.TypeMap:
		kloc, vloc := loc.within("key of map "), loc.within("value of map ")
		if s.KeySchema == nil {
			return dataErr("No schema defined for %s", kloc)
		}
		if s.ValueSchema == nil {
			return dataErr("No schema defined for %s", vloc)
		}
		switch m := v.(type) {
		case map[string]any:
			for k, e := range m {
				if err := validateValue(s.KeySchema, k, kloc); err != nil {
					return err
				}
				if err := validateValue(s.ValueSchema, e, vloc); err != nil {
					return err
				}
			}
		case map[any]any:
			for k, e := range m {
				if err := validateValue(s.KeySchema, k, kloc); err != nil {
					return err
				}
				if err := validateValue(s.ValueSchema, e, vloc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validateStruct is Struct.validate: a null field is fine when optional or
// defaulted.
func validateStruct(st *schema.Struct) error {
	for i, f := range st.Schema().Fields {
		v := st.GetIndexWithoutDefault(i)
		if v == nil && (f.Schema.Optional || f.Schema.Default != nil) {
			continue
		}
		if err := validateValue(f.Schema, v, location{field: f.Name}); err != nil {
			return err
		}
	}
	return nil
}

// valueMatches reports whether v's Go type is one Java would accept for s
// (ConnectSchema.expectedClassesFor: by logical name, else by type).
func valueMatches(s *schema.Schema, v any) bool {
	switch s.Name {
	case schema.DecimalName:
		_, ok := v.(*big.Int)
		return ok
	case schema.DateName, schema.TimeName, schema.TimestampName:
		_, ok := v.(time.Time)
		return ok
	}
	switch s.Type {
	case schema.TypeInt8:
		_, ok := v.(int8)
		return ok
	case schema.TypeInt16:
		_, ok := v.(int16)
		return ok
	case schema.TypeInt32:
		_, ok := v.(int32)
		return ok
	case schema.TypeInt64:
		_, ok := v.(int64)
		return ok
	case schema.TypeFloat32:
		_, ok := v.(float32)
		return ok
	case schema.TypeFloat64:
		_, ok := v.(float64)
		return ok
	case schema.TypeBoolean:
		_, ok := v.(bool)
		return ok
	case schema.TypeString:
		_, ok := v.(string)
		return ok
	case schema.TypeBytes:
		_, ok := v.([]byte)
		return ok
	case schema.TypeArray:
		_, ok := v.([]any)
		return ok
	case schema.TypeMap:
		switch v.(type) {
		case map[string]any, map[any]any:
			return true
		}
	case schema.TypeStruct:
		_, ok := v.(*schema.Struct)
		return ok
	}
	return false
}

// schemaType is ConnectSchema.schemaType(value.getClass()): the type of a
// schemaless value, false for a class Connect has no type for.
func schemaType(v any) (schema.Type, bool) {
	switch v.(type) {
	case int8:
		return schema.TypeInt8, true
	case int16:
		return schema.TypeInt16, true
	case int32:
		return schema.TypeInt32, true
	case int64:
		return schema.TypeInt64, true
	case float32:
		return schema.TypeFloat32, true
	case float64:
		return schema.TypeFloat64, true
	case bool:
		return schema.TypeBoolean, true
	case string:
		return schema.TypeString, true
	case []byte:
		return schema.TypeBytes, true
	case []any:
		return schema.TypeArray, true
	case map[string]any, map[any]any:
		return schema.TypeMap, true
	case *schema.Struct:
		return schema.TypeStruct, true
	}
	return 0, false
}

// copyBasics is SchemaUtil.copySchemaBasics(source, builder of type t):
// name, version, doc and parameters; an array keeps its element schema.
func copyBasics(src *schema.Schema, t schema.Type) *schema.Schema {
	out := &schema.Schema{Type: t, Name: src.Name, Version: src.Version, Doc: src.Doc, Parameters: src.Parameters}
	if t == schema.TypeArray {
		out.ValueSchema = src.ValueSchema
	}
	return out
}

// withField appends a field to a struct schema under construction, or
// fails on a duplicate name as SchemaBuilder.field does.
func withField(s *schema.Schema, name string, fs *schema.Schema) error {
	if s.Field(name) != nil {
		return failure("org.apache.kafka.connect.errors.SchemaBuilderException", "Cannot create field because of field name duplication %s", name)
	}
	s.Fields = append(s.Fields, schema.Field{Name: name, Index: len(s.Fields), Schema: fs})
	return nil
}

// requireMap is Requirements.requireMap: a schemaless map, or Kafka's
// DataException.
func requireMap(v any, purpose string) (map[string]any, error) {
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case map[any]any:
		// Java's maps hold any keys; fields are named by strings, so
		// only string keys can match.
		out := make(map[string]any, len(m))
		for k, e := range m {
			if s, ok := k.(string); ok {
				out[s] = e
			}
		}
		if len(out) != len(m) {
			return nil, failure(ClassCastException, "class %s cannot be cast to class java.lang.String", firstNonString(m))
		}
		return out, nil
	}
	return nil, dataErr("Only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClass(v))
}

func firstNonString(m map[any]any) string {
	for k := range m {
		if _, ok := k.(string); !ok {
			return javaClass(k)
		}
	}
	return "java.lang.Object"
}

// requireStruct is Requirements.requireStruct.
func requireStruct(v any, purpose string) (*schema.Struct, error) {
	if st, ok := v.(*schema.Struct); ok {
		return st, nil
	}
	return nil, dataErr("Only Struct objects supported for [%s], found: %s", purpose, javaClass(v))
}

// requireStructOrNull is Requirements.requireStructOrNull.
func requireStructOrNull(v any, purpose string) (*schema.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

// cloneMap is new HashMap<>(m).
func cloneMap(m map[string]any, extra int) map[string]any {
	out := make(map[string]any, len(m)+extra)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// javaDoubleString is Double.toString.
func javaDoubleString(f float64) string { return convert.JavaFloatString(f, 64) }

// schemaCache remembers what a transformation made of the schemas it saw,
// by identity: converters hand out the same *Schema for the same schema, so
// a record costs one map lookup. It is bounded like Kafka's LRU caches; a
// full cache starts over.
type schemaCache struct {
	m map[*schema.Schema]*schema.Schema
}

const schemaCacheSize = 64

func (c *schemaCache) get(s *schema.Schema) *schema.Schema { return c.m[s] }

func (c *schemaCache) put(s, out *schema.Schema) {
	if c.m == nil || len(c.m) >= schemaCacheSize {
		c.m = make(map[*schema.Schema]*schema.Schema, 8)
	}
	c.m[s] = out
}

// side is the part of a record a Key or Value transformation works on.
type side bool

const (
	keySide   side = true
	valueSide side = false
)

func (s side) schema(r *Record) *schema.Schema {
	if s == keySide {
		return r.KeySchema
	}
	return r.ValueSchema
}

func (s side) value(r *Record) any {
	if s == keySide {
		return r.Key
	}
	return r.Value
}

func (s side) set(r *Record, sch *schema.Schema, v any) {
	if s == keySide {
		r.KeySchema, r.Key, r.ownKey = sch, v, false
	} else {
		r.ValueSchema, r.Value, r.ownValue = sch, v, false
	}
}

// setOwned is set for a map made by the transformation: later ones of the
// pass may change it in place.
func (s side) setOwned(r *Record, m map[string]any) {
	s.set(r, nil, m)
	if s == keySide {
		r.ownKey = true
	} else {
		r.ownValue = true
	}
}

func (s side) owned(r *Record) bool {
	if s == keySide {
		return r.ownKey
	}
	return r.ownValue
}

// writable returns m to change: m itself when the chain's pass made it,
// else a copy (Kafka's new HashMap<>(m)) with room for extra entries.
func (s side) writable(r *Record, m map[string]any, extra int) map[string]any {
	if s.owned(r) {
		return m
	}
	return cloneMap(m, extra)
}

package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is a Kafka Connect schema type.
type Type uint8

// The Kafka Connect schema types.
const (
	TypeInt8 Type = iota + 1
	TypeInt16
	TypeInt32
	TypeInt64
	TypeFloat32
	TypeFloat64
	TypeBoolean
	TypeString
	TypeBytes
	TypeArray
	TypeMap
	TypeStruct
)

var typeNames = [...]string{
	TypeInt8: "int8", TypeInt16: "int16", TypeInt32: "int32", TypeInt64: "int64",
	TypeFloat32: "float32", TypeFloat64: "float64", TypeBoolean: "boolean",
	TypeString: "string", TypeBytes: "bytes", TypeArray: "array", TypeMap: "map",
	TypeStruct: "struct",
}

// String returns the lower-case Kafka Connect name ("int32", "struct", …).
func (t Type) String() string {
	if t >= TypeInt8 && t <= TypeStruct {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Valid reports whether t is one of the defined types.
func (t Type) Valid() bool { return t >= TypeInt8 && t <= TypeStruct }

// Primitive reports whether t is neither array, map nor struct.
func (t Type) Primitive() bool { return t >= TypeInt8 && t <= TypeBytes }

// Names of the logical types, as Kafka Connect spells them.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
	// ScaleParameter is the Decimal schema parameter holding the scale.
	ScaleParameter = "scale"
)

// Schema describes a value. Schemas are immutable once built: share them
// freely between goroutines and records, and derive variants with the With…
// and AsOptional methods, which return copies.
type Schema struct {
	Type     Type
	Optional bool
	// Default is the value used when a field holding this schema is null;
	// nil means no default.
	Default    any
	Name       string
	Version    int32
	Doc        string
	Parameters map[string]string
	// Fields of a struct, in order.
	Fields []Field
	// KeySchema of a map.
	KeySchema *Schema
	// ValueSchema of a map or the element schema of an array.
	ValueSchema *Schema
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

func prim(t Type, optional bool) *Schema { return &Schema{Type: t, Optional: optional} }

// Predefined primitive schemas, required and optional.
var (
	Int8            = prim(TypeInt8, false)
	Int16           = prim(TypeInt16, false)
	Int32           = prim(TypeInt32, false)
	Int64           = prim(TypeInt64, false)
	Float32         = prim(TypeFloat32, false)
	Float64         = prim(TypeFloat64, false)
	Boolean         = prim(TypeBoolean, false)
	String          = prim(TypeString, false)
	Bytes           = prim(TypeBytes, false)
	OptionalInt8    = prim(TypeInt8, true)
	OptionalInt16   = prim(TypeInt16, true)
	OptionalInt32   = prim(TypeInt32, true)
	OptionalInt64   = prim(TypeInt64, true)
	OptionalFloat32 = prim(TypeFloat32, true)
	OptionalFloat64 = prim(TypeFloat64, true)
	OptionalBoolean = prim(TypeBoolean, true)
	OptionalString  = prim(TypeString, true)
	OptionalBytes   = prim(TypeBytes, true)

	// Date is Kafka Connect's Date logical type: INT32 days since the epoch.
	Date = &Schema{Type: TypeInt32, Name: DateName, Version: 1}
	// Time is Kafka Connect's Time logical type: INT32 milliseconds since midnight.
	Time = &Schema{Type: TypeInt32, Name: TimeName, Version: 1}
	// Timestamp is Kafka Connect's Timestamp logical type: INT64 milliseconds since the epoch.
	Timestamp = &Schema{Type: TypeInt64, Name: TimestampName, Version: 1}
)

// Decimal returns Kafka Connect's Decimal logical type with the given scale:
// BYTES holding the big-endian two's-complement unscaled value.
func Decimal(scale int32) *Schema {
	return &Schema{Type: TypeBytes, Name: DecimalName, Version: 1,
		Parameters: map[string]string{ScaleParameter: fmt.Sprint(scale)}}
}

// ArrayOf returns a required array schema with the given element schema.
func ArrayOf(elem *Schema) *Schema { return &Schema{Type: TypeArray, ValueSchema: elem} }

// MapOf returns a required map schema.
func MapOf(key, value *Schema) *Schema {
	return &Schema{Type: TypeMap, KeySchema: key, ValueSchema: value}
}

func (s *Schema) clone() *Schema {
	c := *s
	return &c
}

// AsOptional returns an optional copy of s.
func (s *Schema) AsOptional() *Schema { c := s.clone(); c.Optional = true; return c }

// WithDefault returns a copy of s with a default value.
func (s *Schema) WithDefault(v any) *Schema { c := s.clone(); c.Default = v; return c }

// WithName returns a copy of s with a name.
func (s *Schema) WithName(name string) *Schema { c := s.clone(); c.Name = name; return c }

// WithVersion returns a copy of s with a version.
func (s *Schema) WithVersion(v int32) *Schema { c := s.clone(); c.Version = v; return c }

// WithDoc returns a copy of s with documentation.
func (s *Schema) WithDoc(doc string) *Schema { c := s.clone(); c.Doc = doc; return c }

// Field returns the struct field with the given name, or nil.
func (s *Schema) Field(name string) *Field {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i]
		}
	}
	return nil
}

// Scale returns the scale of a Decimal schema.
func (s *Schema) Scale() (int32, error) {
	// Like Kafka's Integer.parseInt (and not fmt.Sscan, which is slow on
	// this per-record path and accepts surrounding spaces).
	scale, err := strconv.ParseInt(s.Parameters[ScaleParameter], 10, 32)
	if err != nil {
		return 0, fmt.Errorf("schema: decimal %q has no valid scale parameter: %w", s.Name, err)
	}
	return int32(scale), nil
}

// String renders a compact description, e.g. "struct{a:int64,b:string?}".
func (s *Schema) String() string {
	if s == nil {
		return "<nil>"
	}
	var b strings.Builder
	s.write(&b)
	return b.String()
}

func (s *Schema) write(b *strings.Builder) {
	if s.Name != "" {
		b.WriteString(s.Name)
		b.WriteByte(':')
	}
	b.WriteString(s.Type.String())
	switch s.Type {
	case TypeStruct:
		b.WriteByte('{')
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.Name)
			b.WriteByte(':')
			f.Schema.write(b)
		}
		b.WriteByte('}')
	case TypeArray:
		b.WriteByte('<')
		s.ValueSchema.write(b)
		b.WriteByte('>')
	case TypeMap:
		b.WriteByte('<')
		s.KeySchema.write(b)
		b.WriteByte(',')
		s.ValueSchema.write(b)
		b.WriteByte('>')
	}
	if s.Optional {
		b.WriteByte('?')
	}
}

// Builder builds a struct schema field by field.
type Builder struct {
	s   Schema
	err error
}

// StructOf starts a struct schema with the given name (may be empty).
func StructOf(name string) *Builder {
	return &Builder{s: Schema{Type: TypeStruct, Name: name}}
}

// Field appends a field. Duplicate names make Build fail.
func (b *Builder) Field(name string, s *Schema) *Builder {
	if b.err == nil && (s == nil || b.s.Field(name) != nil) {
		b.err = fmt.Errorf("schema: struct %q: field %q duplicated or nil", b.s.Name, name)
	}
	b.s.Fields = append(b.s.Fields, Field{Name: name, Index: len(b.s.Fields), Schema: s})
	return b
}

// Optional makes the struct optional.
func (b *Builder) Optional() *Builder { b.s.Optional = true; return b }

// Doc sets the struct's documentation.
func (b *Builder) Doc(doc string) *Builder { b.s.Doc = doc; return b }

// Version sets the struct's version.
func (b *Builder) Version(v int32) *Builder { b.s.Version = v; return b }

// Build returns the schema; it panics on a duplicate or nil field, which is
// a programming error caught by the first test that builds the schema. Use
// BuildErr to get the error instead.
func (b *Builder) Build() *Schema {
	s, err := b.BuildErr()
	if err != nil {
		panic(err)
	}
	return s
}

// BuildErr returns the schema or the first error.
func (b *Builder) BuildErr() (*Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	s.Fields = append([]Field(nil), b.s.Fields...)
	return &s, nil
}

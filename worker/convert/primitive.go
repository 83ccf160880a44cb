package convert

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Class names of Kafka's primitive converters.
const (
	BooleanClass = "org.apache.kafka.connect.converters.BooleanConverter"
	DoubleClass  = "org.apache.kafka.connect.converters.DoubleConverter"
	FloatClass   = "org.apache.kafka.connect.converters.FloatConverter"
	IntegerClass = "org.apache.kafka.connect.converters.IntegerConverter"
	LongClass    = "org.apache.kafka.connect.converters.LongConverter"
	ShortClass   = "org.apache.kafka.connect.converters.ShortConverter"
)

// NumberConverter is one of Kafka's primitive number converters
// (DoubleConverter, FloatConverter, IntegerConverter, LongConverter,
// ShortConverter): a value is the big-endian bytes Kafka's matching
// serializer writes (IEEE 754 bits for floats), read back with the
// optional schema of its type. The schema given to FromConnect is ignored,
// as in Kafka; the value must be of the converter's Go type (float64,
// float32, int32, int64, int16). A converter is also a header converter.
type NumberConverter struct {
	typeName string // Kafka's name of the type, for messages
	deser    string // Kafka's deserializer, for messages
	size     int
	schema   *schema.Schema
}

// The number converters.
var (
	DoubleConverter  = NumberConverter{"double", "DoubleDeserializer", 8, schema.OptionalFloat64}
	FloatConverter   = NumberConverter{"float", "Deserializer", 4, schema.OptionalFloat32}
	IntegerConverter = NumberConverter{"integer", "IntegerDeserializer", 4, schema.OptionalInt32}
	LongConverter    = NumberConverter{"long", "LongDeserializer", 8, schema.OptionalInt64}
	ShortConverter   = NumberConverter{"short", "ShortDeserializer", 2, schema.OptionalInt16}
)

// FromConnect implements Converter.
func (c NumberConverter) FromConnect(_ string, _ *schema.Schema, v any) ([]byte, error) {
	out, null, err := c.AppendFromConnect(nil, "", nil, v)
	if null {
		return nil, err
	}
	return out, err
}

// AppendFromConnect implements Appender.
func (c NumberConverter) AppendFromConnect(dst []byte, _ string, _ *schema.Schema, v any) ([]byte, bool, error) {
	if v == nil {
		return dst, true, nil
	}
	ok := false
	switch x := v.(type) {
	case float64:
		if ok = c.size == 8 && c.schema.Type == schema.TypeFloat64; ok {
			dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(x))
		}
	case float32:
		if ok = c.schema.Type == schema.TypeFloat32; ok {
			dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(x))
		}
	case int64:
		if ok = c.schema.Type == schema.TypeInt64; ok {
			dst = binary.BigEndian.AppendUint64(dst, uint64(x))
		}
	case int32:
		if ok = c.schema.Type == schema.TypeInt32; ok {
			dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		}
	case int16:
		if ok = c.schema.Type == schema.TypeInt16; ok {
			dst = binary.BigEndian.AppendUint16(dst, uint16(x))
		}
	}
	if !ok {
		return nil, false, fmt.Errorf("convert: Failed to serialize to %s (was %s)", c.typeName, javaClassOf(v))
	}
	return dst, false, nil
}

// ToConnect implements Converter.
func (c NumberConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return c.schema, nil, nil
	}
	if len(b) != c.size {
		return nil, nil, fmt.Errorf("convert: Failed to deserialize %s: Size of data received by %s is not %d", c.typeName, c.deser, c.size)
	}
	switch c.schema.Type {
	case schema.TypeFloat64:
		return c.schema, math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case schema.TypeFloat32:
		return c.schema, math.Float32frombits(binary.BigEndian.Uint32(b)), nil
	case schema.TypeInt64:
		return c.schema, int64(binary.BigEndian.Uint64(b)), nil
	case schema.TypeInt32:
		return c.schema, int32(binary.BigEndian.Uint32(b)), nil
	default:
		return c.schema, int16(binary.BigEndian.Uint16(b)), nil
	}
}

// FromConnectHeader implements HeaderConverter.
func (c NumberConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c NumberConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// BooleanConverter is Kafka's org.apache.kafka.connect.converters.
// BooleanConverter: one byte, 1 for true and 0 for false, read back as an
// optional boolean. A schema given to FromConnect must be a boolean one.
type BooleanConverter struct{}

// FromConnect implements Converter.
func (BooleanConverter) FromConnect(_ string, s *schema.Schema, v any) ([]byte, error) {
	if s != nil && s.Type != schema.TypeBoolean {
		return nil, fmt.Errorf("convert: Invalid schema type for BooleanConverter: %s", javaTypeName(s.Type))
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if x {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	return nil, fmt.Errorf("convert: BooleanConverter is not compatible with objects of type %s", javaClassOf(v))
}

// ToConnect implements Converter.
func (BooleanConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	switch {
	case b == nil:
		return schema.OptionalBoolean, nil, nil
	case len(b) != 1:
		return nil, nil, fmt.Errorf("convert: Failed to deserialize boolean: Size of data received by BooleanDeserializer is not 1")
	case b[0] == 1:
		return schema.OptionalBoolean, true, nil
	case b[0] == 0:
		return schema.OptionalBoolean, false, nil
	}
	return nil, nil, fmt.Errorf("convert: Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: %d", int8(b[0]))
}

// FromConnectHeader implements HeaderConverter.
func (c BooleanConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c BooleanConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// javaTypeName is Kafka's Schema.Type name (upper case).
func javaTypeName(t schema.Type) string {
	s := t.String()
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// javaClassOf names the Java class Kafka Connect would see for a Go value
// of the Connect data model, for messages.
func javaClassOf(v any) string {
	switch v.(type) {
	case string:
		return "class java.lang.String"
	case bool:
		return "class java.lang.Boolean"
	case int8:
		return "class java.lang.Byte"
	case int16:
		return "class java.lang.Short"
	case int32:
		return "class java.lang.Integer"
	case int64:
		return "class java.lang.Long"
	case float32:
		return "class java.lang.Float"
	case float64:
		return "class java.lang.Double"
	case []byte:
		return "class [B"
	case []any:
		return "class java.util.ArrayList"
	case map[string]any:
		return "class java.util.HashMap"
	case *schema.Struct:
		return "class org.apache.kafka.connect.data.Struct"
	}
	return fmt.Sprintf("%T", v)
}

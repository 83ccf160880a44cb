package convert

import (
	"fmt"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// StringConverter is Kafka's org.apache.kafka.connect.storage.StringConverter
// (UTF-8): values are written as their string form and read as optional
// strings.
type StringConverter struct{}

// FromConnect implements Converter.
func (StringConverter) FromConnect(_ string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if str, ok := v.(string); ok {
		return []byte(str), nil
	}
	str, err := javaString(s, v)
	if err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// AppendFromConnect implements Appender.
func (StringConverter) AppendFromConnect(dst []byte, _ string, s *schema.Schema, v any) ([]byte, bool, error) {
	if v == nil {
		return dst, true, nil
	}
	if str, ok := v.(string); ok {
		return append(dst, str...), false, nil
	}
	str, err := javaString(s, v)
	if err != nil {
		return nil, false, err
	}
	return append(dst, str...), false, nil
}

// ToConnect implements Converter.
func (StringConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return schema.OptionalString, nil, nil
	}
	return schema.OptionalString, string(b), nil
}

// ToConnectAliased implements Aliaser.
func (StringConverter) ToConnectAliased(_ string, b []byte) (*schema.Schema, any, error) {
	if len(b) == 0 {
		return StringConverter{}.ToConnect("", b)
	}
	return schema.OptionalString, unsafe.String(&b[0], len(b)), nil
}

// FromConnectHeader implements HeaderConverter.
func (c StringConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c StringConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// ByteArrayConverter is Kafka's
// org.apache.kafka.connect.converters.ByteArrayConverter: BYTES pass through.
type ByteArrayConverter struct{}

// FromConnect implements Converter.
func (ByteArrayConverter) FromConnect(_ string, s *schema.Schema, v any) ([]byte, error) {
	if s != nil && s.Type != schema.TypeBytes {
		return nil, fmt.Errorf("convert: invalid schema type for ByteArrayConverter: %v", s.Type)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("convert: ByteArrayConverter is not compatible with objects of type %T", v)
}

// ToConnect implements Converter.
func (ByteArrayConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return schema.OptionalBytes, nil, nil
	}
	return schema.OptionalBytes, b, nil
}

// FromConnectHeader implements HeaderConverter.
func (c ByteArrayConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c ByteArrayConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// SimpleHeaderConverter is Kafka's default header converter,
// org.apache.kafka.connect.storage.SimpleHeaderConverter. It writes values
// as Kafka's Values.convertToString does (see FromConnectHeader) and reads
// them back with ParseString, a port of Values.parseString that infers the
// schema: booleans, the smallest integer type that holds a number, FLOAT32
// (FLOAT64 past FLOAT32's range) for other numbers, Decimal past INT64 and
// FLOAT64, the Date, Time and Timestamp logical types for Kafka's ISO-8601
// forms (2023-11-14, 22:13:20.123Z, 2023-11-14T22:13:20.123Z, all UTC), and
// arrays ([1,2]) and maps ({"a":1}) of those; anything else stays the
// STRING it was.
//
// The port keeps Kafka's rules and quirks, checked against golden files
// generated with Kafka Connect 4.4 (testdata/gen/HeaderGen.java): for
// example "1.0" is INT8 1, "0.1" FLOAT32, "12:30" and "1,2" the INT8 12 and
// 1 (parsing stops at the first delimiter), "[1,2]xyz" the array [1,2],
// "[1,null]" and "{a:1}" strings, " [x" the string " ", [1,"a"] an array
// whose element schema is nil, and dates before 1970 are written back as
// times of day.
// Header values that are not valid UTF-8 are decoded as Java decodes them
// (each malformed sequence becomes U+FFFD).
type SimpleHeaderConverter struct{}

// FromConnectHeader implements HeaderConverter, writing v as Kafka's
// Values.convertToString: numbers as Java prints them, bytes in base64,
// java.util.Date values (Date, Time and Timestamp alike) as a time of day
// before 1970-01-02, as a date at midnight and as a timestamp otherwise,
// arrays as [a,b], maps and structs as {k:v,...} with strings quoted and
// their backslashes and double quotes escaped. Go maps have no order: their
// entries are written sorted by the written key.
func (SimpleHeaderConverter) FromConnectHeader(_, _ string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return appendValuesString([]byte{}, s, v, false, 0)
}

// ToConnectHeader implements HeaderConverter. Like Kafka, it returns a
// BYTES header holding the raw value when the value cannot be read (here:
// arrays or maps nested deeper than Kafka's stack allows), and a nil schema
// and value for the string "null".
func (SimpleHeaderConverter) ToConnectHeader(_, _ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	str := javaUTF8(b)
	s, v, err := parseValues(str)
	if err != nil {
		return schema.Bytes, b, nil
	}
	if untypedCollection(s) {
		return schema.String, str, nil
	}
	return s, v, nil
}

// untypedCollection reports whether s holds an array without an element
// schema or a map without a key or value schema. Kafka's Values gives them
// to "[]", "{}", "[null]" or "[1,\"a\"]", but Tributary's data model (the
// plugin encoding, schema checks) requires those schemas, so such a header
// stays the STRING it was.
func untypedCollection(s *schema.Schema) bool {
	if s == nil {
		return false
	}
	switch s.Type {
	case schema.TypeArray:
		return s.ValueSchema == nil || untypedCollection(s.ValueSchema)
	case schema.TypeMap:
		return s.KeySchema == nil || s.ValueSchema == nil || untypedCollection(s.KeySchema) || untypedCollection(s.ValueSchema)
	}
	return false
}

// FromConnect implements Converter, so that SimpleHeaderConverter can also
// be a key or value converter, as in Kafka.
func (c SimpleHeaderConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnectHeader(topic, "", s, v)
}

// ToConnect implements Converter.
func (c SimpleHeaderConverter) ToConnect(topic string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnectHeader(topic, "", b)
}

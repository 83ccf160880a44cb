package convert

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/tributary-dev/tributary/internal/jackson"
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
// org.apache.kafka.connect.storage.SimpleHeaderConverter: values are written
// as strings, and read back with their type inferred (booleans, the
// smallest integer type that holds the number, float32 or float64,
// otherwise a string).
type SimpleHeaderConverter struct{}

// FromConnectHeader implements HeaderConverter.
func (SimpleHeaderConverter) FromConnectHeader(_, _ string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	str, err := javaString(s, v)
	if err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// ToConnectHeader implements HeaderConverter.
func (SimpleHeaderConverter) ToConnectHeader(_, _ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	s, v := ParseString(string(b))
	return s, v, nil
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

// ParseString infers a schema and value from a string, like Kafka's
// Values.parseString for the scalar cases.
func ParseString(str string) (*schema.Schema, any) {
	t := strings.TrimSpace(str)
	switch strings.ToLower(t) {
	case "true":
		return schema.Boolean, true
	case "false":
		return schema.Boolean, false
	}
	if t == "" || t != str {
		return schema.String, str
	}
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		switch {
		case i >= math.MinInt8 && i <= math.MaxInt8:
			return schema.Int8, int8(i)
		case i >= math.MinInt16 && i <= math.MaxInt16:
			return schema.Int16, int16(i)
		case i >= math.MinInt32 && i <= math.MaxInt32:
			return schema.Int32, int32(i)
		}
		return schema.Int64, i
	}
	if looksNumeric(t) {
		if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
			if f32 := float32(f); float64(f32) == f {
				return schema.Float32, f32
			}
			return schema.Float64, f
		}
	}
	return schema.String, str
}

func looksNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

var schemalessJSON = &JSONConverter{schemas: false, replaceNull: true}

// javaString renders v the way Kafka's Values.convertToString does for the
// common cases: numbers as Java prints them, bytes as base64, logical types
// in their ISO forms, and composite values as JSON.
func javaString(s *schema.Schema, v any) (string, error) {
	if s != nil {
		switch s.Name {
		case schema.DecimalName:
			if x, ok := v.(*big.Int); ok {
				scale, err := s.Scale()
				if err != nil {
					return "", err
				}
				return string(appendBigDecimal(nil, x, scale)), nil
			}
		case schema.DateName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02"), nil
			}
		case schema.TimeName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("15:04:05.000Z"), nil
			}
		case schema.TimestampName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
			}
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float32:
		return string(jackson.AppendJavaFloat(nil, float64(x), 32)), nil
	case float64:
		return string(jackson.AppendJavaFloat(nil, x, 64)), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	}
	b, err := schemalessJSON.appendValue(nil, s, v, 0)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

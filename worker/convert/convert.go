package convert

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Converter converts record keys or values between the Connect data model
// and bytes. Implementations are safe for concurrent use; they neither keep
// nor modify the values and byte slices they are given.
type Converter interface {
	// FromConnect serializes v (described by s, nil for a schemaless
	// value). A nil result is a Kafka null.
	FromConnect(topic string, s *schema.Schema, v any) ([]byte, error)
	// ToConnect deserializes b (nil for a Kafka null) into a schema (nil
	// when the format carries none) and a value.
	ToConnect(topic string, b []byte) (*schema.Schema, any, error)
}

// Aliaser is implemented by converters that can deserialize without
// copying: the string values ToConnectAliased returns may share b's memory
// (as ByteArrayConverter's bytes always do), so b must stay unmodified while
// they are in use. The sink runner uses it: the client never reuses the
// fetched bytes (only the Record structs that point into them).
type Aliaser interface {
	ToConnectAliased(topic string, b []byte) (*schema.Schema, any, error)
}

// Appender is implemented by converters that can serialize into a buffer
// of the caller's, so that a runner converts a whole batch into a few large
// allocations instead of one growing buffer per record. AppendFromConnect
// appends what FromConnect would return to dst; null reports a Kafka null
// (FromConnect's nil), in which case out is dst unchanged.
type Appender interface {
	AppendFromConnect(dst []byte, topic string, s *schema.Schema, v any) (out []byte, null bool, err error)
}

// HeaderConverter converts record header values, like Kafka Connect's
// HeaderConverter. Implementations are safe for concurrent use.
type HeaderConverter interface {
	FromConnectHeader(topic, key string, s *schema.Schema, v any) ([]byte, error)
	ToConnectHeader(topic, key string, b []byte) (*schema.Schema, any, error)
}

// ErrUnknown is wrapped when no converter has the requested class name.
var ErrUnknown = errors.New("convert: unknown converter class")

// Class names, as in Apache Kafka.
const (
	JSONClass         = "org.apache.kafka.connect.json.JsonConverter"
	StringClass       = "org.apache.kafka.connect.storage.StringConverter"
	ByteArrayClass    = "org.apache.kafka.connect.converters.ByteArrayConverter"
	SimpleHeaderClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
)

type factory func(isKey bool, config map[string]string) (any, error)

var registry = map[string]factory{
	JSONClass:         func(isKey bool, c map[string]string) (any, error) { return NewJSON(c) },
	StringClass:       func(bool, map[string]string) (any, error) { return StringConverter{}, nil },
	ByteArrayClass:    func(bool, map[string]string) (any, error) { return ByteArrayConverter{}, nil },
	SimpleHeaderClass: func(bool, map[string]string) (any, error) { return SimpleHeaderConverter{}, nil },
	BooleanClass:      func(bool, map[string]string) (any, error) { return BooleanConverter{}, nil },
	DoubleClass:       func(bool, map[string]string) (any, error) { return DoubleConverter, nil },
	FloatClass:        func(bool, map[string]string) (any, error) { return FloatConverter, nil },
	IntegerClass:      func(bool, map[string]string) (any, error) { return IntegerConverter, nil },
	LongClass:         func(bool, map[string]string) (any, error) { return LongConverter, nil },
	ShortClass:        func(bool, map[string]string) (any, error) { return ShortConverter, nil },
	AvroClass:         func(isKey bool, c map[string]string) (any, error) { return NewAvro(isKey, c, nil) },
	JSONSchemaClass:   func(isKey bool, c map[string]string) (any, error) { return NewJSONSchema(isKey, c, nil) },
	ProtobufClass:     func(isKey bool, c map[string]string) (any, error) { return NewProtobuf(isKey, c, nil) },
}

// Canonical returns the class name of a converter class name or alias
// (see canonical); false if no converter has it.
func Canonical(class string) (string, bool) { return canonical(class) }

// canonical resolves a class name or alias (the simple class name, or the
// simple name without its "Converter" suffix, as Kafka's plugin aliases).
func canonical(class string) (string, bool) {
	class = strings.TrimSpace(class)
	if _, ok := registry[class]; ok {
		return class, true
	}
	for full := range registry {
		simple := full[strings.LastIndexByte(full, '.')+1:]
		if class == simple || class == strings.TrimSuffix(simple, "Converter") {
			return full, true
		}
	}
	return "", false
}

// Classes lists the converter class names, sorted.
func Classes() []string {
	out := make([]string, 0, len(registry))
	for c := range registry {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// New returns the key (isKey) or value converter of the given class or
// alias. config holds the converter's settings with the prefix stripped
// (key.converter.schemas.enable becomes schemas.enable).
func New(class string, isKey bool, config map[string]string) (Converter, error) {
	full, ok := canonical(class)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknown, class)
	}
	c, err := registry[full](isKey, config)
	if err != nil {
		return nil, err
	}
	conv, ok := c.(Converter)
	if !ok {
		return nil, fmt.Errorf("convert: %s is a header converter only", full)
	}
	return conv, nil
}

// NewHeader returns the header converter of the given class or alias; an
// empty class is Kafka's default, SimpleHeaderConverter. Every converter
// class also works as a header converter.
func NewHeader(class string, config map[string]string) (HeaderConverter, error) {
	if strings.TrimSpace(class) == "" {
		class = SimpleHeaderClass
	}
	full, ok := canonical(class)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknown, class)
	}
	c, err := registry[full](false, config)
	if err != nil {
		return nil, err
	}
	switch c := c.(type) {
	case HeaderConverter:
		return c, nil
	case Converter:
		return headerAdapter{c}, nil
	}
	return nil, fmt.Errorf("convert: %s cannot convert headers", full)
}

// Prefixed returns the entries of config whose key starts with prefix,
// with the prefix removed.
func Prefixed(config map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range config {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

type headerAdapter struct{ c Converter }

func (h headerAdapter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return h.c.FromConnect(topic, s, v)
}

func (h headerAdapter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return h.c.ToConnect(topic, b)
}

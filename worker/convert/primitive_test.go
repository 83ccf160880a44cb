package convert

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// TestPrimitiveConverters: Kafka's primitive converters write the bytes of
// Kafka's serializers (big-endian; IEEE 754 for floats), read them back
// with the optional schema of their type, and refuse other types and
// lengths with Kafka's messages.
func TestPrimitiveConverters(t *testing.T) {
	for _, tc := range []struct {
		class  string
		value  any
		hex    string
		schema *schema.Schema
	}{
		{"IntegerConverter", int32(1), "00000001", schema.OptionalInt32},
		{"org.apache.kafka.connect.converters.IntegerConverter", int32(-2), "fffffffe", schema.OptionalInt32},
		{"Long", int64(math.MaxInt64), "7fffffffffffffff", schema.OptionalInt64},
		{"ShortConverter", int16(-1), "ffff", schema.OptionalInt16},
		{"DoubleConverter", 1.5, "3ff8000000000000", schema.OptionalFloat64},
		{"FloatConverter", float32(math.Inf(-1)), "ff800000", schema.OptionalFloat32},
		{"FloatConverter", float32(2.5), "40200000", schema.OptionalFloat32},
		{"BooleanConverter", true, "01", schema.OptionalBoolean},
		{"Boolean", false, "00", schema.OptionalBoolean},
	} {
		c, err := New(tc.class, false, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.class, err)
		}
		b, err := c.FromConnect("t", nil, tc.value)
		if err != nil || hex.EncodeToString(b) != tc.hex {
			t.Errorf("%s.FromConnect(%v) = %x, %v; want %s", tc.class, tc.value, b, err, tc.hex)
		}
		s, v, err := c.ToConnect("t", b)
		if err != nil || v != tc.value || s != tc.schema {
			t.Errorf("%s.ToConnect(%x) = %v %#v %v", tc.class, b, s, v, err)
		}
		if s, v, err := c.ToConnect("t", nil); err != nil || v != nil || s != tc.schema {
			t.Errorf("%s.ToConnect(nil) = %v %v %v; want a null of the optional schema", tc.class, s, v, err)
		}
		if b, err := c.FromConnect("t", nil, nil); err != nil || b != nil {
			t.Errorf("%s.FromConnect(nil) = %x %v", tc.class, b, err)
		}
		h, err := NewHeader(tc.class, nil)
		if err != nil {
			t.Fatalf("header %s: %v", tc.class, err)
		}
		if hb, err := h.FromConnectHeader("t", "k", nil, tc.value); err != nil || !bytes.Equal(hb, b) {
			t.Errorf("%s header = %x %v", tc.class, hb, err)
		}
	}
	for _, tc := range []struct {
		class string
		value any
		bytes []byte
		want  string
	}{
		{"IntegerConverter", int64(1), nil, "Failed to serialize to integer (was class java.lang.Long)"},
		{"DoubleConverter", "1.5", nil, "Failed to serialize to double (was class java.lang.String)"},
		{"IntegerConverter", nil, []byte{1, 2}, "Failed to deserialize integer: Size of data received by IntegerDeserializer is not 4"},
		{"FloatConverter", nil, []byte{}, "Failed to deserialize float: Size of data received by Deserializer is not 4"},
		{"BooleanConverter", "true", nil, "BooleanConverter is not compatible with objects of type class java.lang.String"},
		{"BooleanConverter", nil, []byte{2}, "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: 2"},
	} {
		c, _ := New(tc.class, false, nil)
		var err error
		if tc.bytes != nil {
			_, _, err = c.ToConnect("t", tc.bytes)
		} else {
			_, err = c.FromConnect("t", nil, tc.value)
		}
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s(%v %x): %v; want %q", tc.class, tc.value, tc.bytes, err, tc.want)
		}
	}
	if _, err := (BooleanConverter{}).FromConnect("t", schema.String, "x"); err == nil || !strings.HasSuffix(err.Error(), "Invalid schema type for BooleanConverter: STRING") {
		t.Errorf("boolean with a string schema: %v", err)
	}
}

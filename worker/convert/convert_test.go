package convert

import (
	"errors"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, name := range []string{JSONClass, "JsonConverter", "Json", StringClass, "StringConverter", "String",
		ByteArrayClass, "ByteArray", SimpleHeaderClass, "SimpleHeaderConverter"} {
		if _, err := New(name, false, nil); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
		if _, err := NewHeader(name, nil); err != nil {
			t.Errorf("NewHeader(%q): %v", name, err)
		}
	}
	if _, err := New("com.example.Nope", true, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := New("JsonConverter", false, map[string]string{"schemas.enable": "maybe"}); err == nil {
		t.Error("schemas.enable=maybe accepted")
	}
	c, err := New("JsonConverter", false, Prefixed(map[string]string{"value.converter.schemas.enable": "false", "x": "y"}, "value.converter."))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.FromConnect("t", schema.String, "s")
	if string(b) != `"s"` {
		t.Errorf("schemas.enable=false: %s", b)
	}
	if h, _ := NewHeader("", nil); h != (SimpleHeaderConverter{}) {
		t.Errorf("default header converter: %T", h)
	}
}

func TestStringAndByteArray(t *testing.T) {
	t.Parallel()
	var sc StringConverter
	for _, tc := range []struct {
		s    *schema.Schema
		v    any
		want string
	}{{schema.String, "héllo", "héllo"}, {schema.Int32, int32(5), "5"}, {schema.Float64, 1.0, "1.0"}, {schema.Boolean, true, "true"}} {
		b, err := sc.FromConnect("t", tc.s, tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("String.FromConnect(%v) = %q, %v", tc.v, b, err)
		}
	}
	s, v, _ := sc.ToConnect("t", []byte("x"))
	if s != schema.OptionalString || v != "x" {
		t.Errorf("String.ToConnect = %v %v", s, v)
	}
	var bc ByteArrayConverter
	if _, err := bc.FromConnect("t", schema.String, "x"); err == nil {
		t.Error("ByteArray accepted a string schema")
	}
	b, _ := bc.FromConnect("t", schema.Bytes, []byte{1, 2})
	s, v, _ = bc.ToConnect("t", b)
	if s != schema.OptionalBytes || !schema.ValueEqual(v, []byte{1, 2}) {
		t.Errorf("ByteArray round trip: %v %v", s, v)
	}
}

func TestSimpleHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	var h SimpleHeaderConverter
	for _, tc := range []struct {
		s     *schema.Schema
		v     any
		wantS *schema.Schema
		wantV any
	}{
		{schema.String, "hello", schema.String, "hello"},
		{schema.String, "", schema.String, ""},
		{schema.Boolean, true, schema.Boolean, true},
		{schema.Int8, int8(-5), schema.Int8, int8(-5)},
		{schema.Int16, int16(300), schema.Int16, int16(300)},
		{schema.Int32, int32(70000), schema.Int32, int32(70000)},
		{schema.Int64, int64(1) << 40, schema.Int64, int64(1) << 40},
		{schema.Float32, float32(1.5), schema.Float32, float32(1.5)},
		// Kafka reads numbers with a fraction as FLOAT32 while they fit.
		{schema.Float64, 0.1, schema.Float32, float32(0.1)},
		{schema.Float64, 1e300, schema.Float64, 1e300},
		{schema.String, " padded ", schema.String, " padded "},
		{schema.String, "12abc", schema.String, "12abc"},
	} {
		b, err := h.FromConnectHeader("t", "k", tc.s, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		s, v, err := h.ToConnectHeader("t", "k", b)
		if err != nil || s != tc.wantS || !schema.ValueEqual(v, tc.wantV) {
			t.Errorf("%v %#v -> %q -> %v %#v (%v)", tc.s, tc.v, b, s, v, err)
		}
	}
}

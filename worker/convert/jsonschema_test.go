package convert

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

func TestJSONSchemaRoundTrip(t *testing.T) {
	reg := newFakeRegistry(t)
	conv, err := New(JSONSchemaClass, false, map[string]string{"schema.registry.url": reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := conv.(*JSONSchemaConverter)
	dec := schema.Decimal(2)
	dec.Parameters[connectDecPrecision] = "10"
	value := schema.StructOf("shop.public.items.Value").
		Field("id", schema.Int32).Field("name", schema.OptionalString).Field("price", dec.AsOptional()).
		Field("day", schema.Date).Field("tiny", schema.Int8).Field("raw", schema.Bytes).
		Field("tags", schema.ArrayOf(schema.String)).Field("attrs", schema.MapOf(schema.String, schema.Int64)).
		Field("codes", schema.MapOf(schema.Int32, schema.String)).Optional().Build()
	env := schema.StructOf("shop.public.items.Envelope").Field("before", value).Field("after", value).
		Field("op", schema.String).Version(1).Build()
	row := schema.NewStruct(value).Set("id", int32(7)).Set("price", big.NewInt(1999)).
		Set("day", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)).Set("tiny", int8(-3)).Set("raw", []byte{1, 2}).
		Set("tags", []any{"a"}).Set("attrs", map[string]any{"x": int64(1)}).Set("codes", map[any]any{int32(4): "d"})
	v := schema.NewStruct(env).Set("after", row).Set("op", "c")
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := c.FromConnect("items", env, v)
	if err != nil {
		t.Fatal(err)
	}
	text := reg.texts[0]
	var doc any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("registered schema is not JSON: %v\n%s", err, text)
	}
	for _, want := range []string{`"title":"shop.public.items.Envelope"`, `"connect.version":1`,
		`{"oneOf":[{"type":"null"},{"type":"object","properties":{"id":{"type":"integer","connect.type":"int32","connect.index":0}`,
		`"connect.type":"bytes"`, `"connect.type":"map"`} {
		if !strings.Contains(text, want) {
			t.Errorf("schema lacks %s:\n%s", want, text)
		}
	}
	if b[0] != 0 || !json.Valid(b[5:]) {
		t.Fatalf("not the wire format with JSON: %q", b)
	}
	s, got, err := c.ToConnect("items", b)
	if err != nil {
		t.Fatal(err)
	}
	w1, _ := schema.AppendJSON(nil, env, v, schema.JSONOptions{})
	w2, err := schema.AppendJSON(nil, s, got, schema.JSONOptions{})
	if err != nil || !bytes.Equal(w1, w2) {
		t.Errorf("round trip\n got: %s %v\nwant: %s", w2, err, w1)
	}
	if s.Field("after").Schema.Field("price").Schema.Name != schema.DecimalName || s.Version != 1 {
		t.Errorf("schema read back: %v", s)
	}
	// An Avro schema id is refused by the JSON Schema converter.
	av, _ := New(AvroClass, false, map[string]string{"schema.registry.url": reg.URL})
	ab, err := av.FromConnect("other", schema.String, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ToConnect("other", ab); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("Avro record read as JSON: %v", err)
	}
}

func FuzzJSONSchemaParse(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"integer","connect.index":0},"b":{"oneOf":[{"type":"null"},{"type":"string"}]}}}`)
	f.Add(`{"type":"array","items":{"$ref":"#"}}`)
	f.Add(`{"oneOf":[{"type":"string"},{"type":"integer"}],"default":"x"}`)
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := decodeOrdered(text)
		if err != nil {
			return
		}
		root, _ := doc.(map[string]any)
		p := jsParser{root: root, conv: &JSONConverter{schemas: true, replaceNull: true}}
		_, _ = p.convert(doc, 1, false, 0)
	})
}

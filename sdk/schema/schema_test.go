package schema

import (
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestStructValidation(t *testing.T) {
	addr := StructOf("Address").Field("street", String).Field("zip", OptionalInt32).Build()
	person := StructOf("Person").
		Field("name", String).
		Field("age", Int32.WithDefault(int32(18))).
		Field("tags", ArrayOf(String)).
		Field("attrs", MapOf(String, OptionalString)).
		Field("home", addr.AsOptional()).
		Field("balance", Decimal(2)).
		Field("born", Date).
		Build()
	p := NewStruct(person).Set("name", "ada").Set("tags", []any{"x"}).
		Set("attrs", map[string]any{"k": nil}).Set("balance", big.NewInt(1234)).
		Set("born", time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC))
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Get("age") != int32(18) || p.Get("home") != nil {
		t.Errorf("defaults: age %v home %v", p.Get("age"), p.Get("home"))
	}
	bad := []struct {
		name string
		s    *Struct
		msg  string
	}{
		{"wrong type", NewStruct(person).Set("name", 3), `field "name"`},
		{"unknown field", NewStruct(person).Set("nope", 1), `no field "nope"`},
		{"missing required", NewStruct(person).Set("name", "x"), "null used for required"},
		{"array element", NewStruct(person).Set("tags", []any{1}), "element 0"},
		{"nested struct schema", NewStruct(person).Set("home", NewStruct(person)), "schema"},
		{"decimal type", NewStruct(person).Set("balance", 1.5), "does not match"},
	}
	for _, b := range bad {
		err := b.s.Validate()
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: %v, want error containing %q", b.name, err, b.msg)
		}
	}
}

func TestSchemalessAndEqual(t *testing.T) {
	if err := Validate(nil, map[string]any{"a": []any{int64(1), "x", nil, map[any]any{int32(1): true}}}); err != nil {
		t.Error(err)
	}
	if err := Validate(nil, struct{}{}); err == nil {
		t.Error("struct{} accepted as schemaless value")
	}
	if !Equal(Decimal(2), Decimal(2)) || Equal(Decimal(2), Decimal(3)) || Equal(Int32, OptionalInt32) {
		t.Error("Equal")
	}
	if Timestamp.String() != "org.apache.kafka.connect.data.Timestamp:int64" {
		t.Errorf("String %s", Timestamp)
	}
	if s, err := Decimal(4).Scale(); err != nil || s != 4 {
		t.Errorf("scale %d %v", s, err)
	}
	if _, err := StructOf("x").Field("a", Int8).Field("a", Int8).BuildErr(); err == nil {
		t.Error("duplicate field accepted")
	}
}

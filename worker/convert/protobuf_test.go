package convert

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-dev/tributary/restapi/schemaregistry"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// memSchemaLog is a schemaregistry.Log in memory: records apply as they
// are written.
type memSchemaLog struct{ reg *schemaregistry.Registry }

func (m memSchemaLog) Write(_ context.Context, decide func() ([]schemaregistry.Record, error)) error {
	recs, err := decide()
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := m.reg.Apply(r); err != nil {
			return err
		}
	}
	return nil
}

func (memSchemaLog) Sync(context.Context) error { return nil }

// bundledRegistry serves Tributary's own registry (its REST API, schemas
// kept in memory) and counts the requests it answers.
type bundledRegistry struct {
	url      string
	requests atomic.Int64
}

func newBundledRegistry(t testing.TB) *bundledRegistry {
	reg := schemaregistry.NewRegistry(nil)
	reg.SetLog(memSchemaLog{reg})
	h := schemaregistry.Handler(reg, nil)
	b := &bundledRegistry{}
	srv := httptest.NewServer(countRequests(&b.requests, h))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

func newTestProtobuf(t testing.TB, url string, isKey bool, extra map[string]string) *ProtobufConverter {
	t.Helper()
	cfg := map[string]string{"schema.registry.url": url}
	for k, v := range extra {
		cfg[k] = v
	}
	c, err := NewProtobuf(isKey, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// protoKitchen is a Connect schema with every type ProtobufData maps.
func protoKitchen() *schema.Schema {
	dec := schema.Decimal(2)
	dec.Parameters[pbPrecisionProp] = "10"
	status := &schema.Schema{Type: schema.TypeString, Name: "Status", Parameters: map[string]string{
		pbEnumParam: "Status", pbEnumParam + ".ACTIVE": "0", pbEnumParam + ".INACTIVE": "1"}}
	address := schema.StructOf("Address").Field("city", schema.String).Field("zip", schema.OptionalInt32).Build()
	union := &schema.Schema{Type: schema.TypeStruct, Name: pbUnionPrefix + "contact", Optional: true, Fields: []schema.Field{
		{Name: "email", Index: 0, Schema: &schema.Schema{Type: schema.TypeString, Optional: true, Parameters: map[string]string{pbTagParam: "30"}}},
		{Name: "phone", Index: 1, Schema: &schema.Schema{Type: schema.TypeInt64, Optional: true, Parameters: map[string]string{pbTagParam: "31"}}},
	}}
	return schema.StructOf("ex.orders.Order").
		Field("i8", schema.Int8).
		Field("i16", schema.Int16).
		Field("i32", schema.Int32).
		Field("i64", schema.Int64).
		Field("f32", schema.Float32).
		Field("f64", schema.Float64).
		Field("flag", schema.Boolean).
		Field("name", schema.OptionalString).
		Field("raw", schema.Bytes).
		Field("tags", schema.ArrayOf(schema.String)).
		Field("counts", schema.MapOf(schema.String, schema.Int32)).
		Field("by_id", schema.MapOf(schema.Int32, schema.String).WithName("by_id")).
		Field("ship_to", address).
		Field("lines", schema.ArrayOf(schema.StructOf("").Field("sku", schema.String).Field("qty", schema.Int32).Build())).
		Field("total", dec).
		Field("day", schema.Date).
		Field("at_time", schema.Time).
		Field("at", schema.Timestamp).
		Field("status", status).
		Field("contact", union).
		Build()
}

func protoKitchenValue(s *schema.Schema) *schema.Struct {
	addr := schema.NewStruct(s.Field("ship_to").Schema).Set("city", "Lyon").Set("zip", int32(69001))
	lineSchema := s.Field("lines").Schema.ValueSchema
	line := func(sku string, qty int32) any { return schema.NewStruct(lineSchema).Set("sku", sku).Set("qty", qty) }
	contact := schema.NewStruct(s.Field("contact").Schema).Set("phone", int64(33123456789))
	return schema.NewStruct(s).
		Set("i8", int8(-8)).
		Set("i16", int16(1600)).
		Set("i32", int32(-32)).
		Set("i64", int64(1)<<40).
		Set("f32", float32(1.5)).
		Set("f64", 2.25).
		Set("flag", true).
		Set("name", "Ada").
		Set("raw", []byte{0, 1, 2}).
		Set("tags", []any{"a", "b"}).
		Set("counts", map[string]any{"x": int32(1), "y": int32(2)}).
		Set("by_id", map[any]any{int32(7): "seven"}).
		Set("ship_to", addr).
		Set("lines", []any{line("A-1", 2), line("B-2", 1)}).
		Set("total", big.NewInt(-12345)).
		Set("day", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)).
		Set("at_time", time.UnixMilli(13*3600000+5*60000+7123).UTC()).
		Set("at", time.UnixMilli(1717171717123).UTC()).
		Set("status", "INACTIVE").
		Set("contact", contact)
}

// protoKitchenText is the schema Confluent's ProtobufData writes for
// protoKitchen, in ProtobufSchemaUtils' formatting.
const protoKitchenText = `syntax = "proto3";
package ex.orders;

import "confluent/type/decimal.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
import "google/protobuf/timestamp.proto";

message Order {
  int32 i8 = 1 [(confluent.field_meta) = {
    params: [
      {
        key: "connect.type",
        value: "int8"
      }
    ]
  }];
  int32 i16 = 2 [(confluent.field_meta) = {
    params: [
      {
        key: "connect.type",
        value: "int16"
      }
    ]
  }];
  int32 i32 = 3;
  int64 i64 = 4;
  float f32 = 5;
  double f64 = 6;
  bool flag = 7;
  string name = 8;
  bytes raw = 9;
  repeated string tags = 10;
  repeated ConnectDefault1Entry counts = 11;
  repeated ByIdEntry by_id = 12;
  Address ship_to = 13;
  repeated ConnectDefault2 lines = 14;
  confluent.type.Decimal total = 15 [(confluent.field_meta) = {
    params: [
      {
        value: "10",
        key: "precision"
      },
      {
        value: "2",
        key: "scale"
      }
    ]
  }];
  google.type.Date day = 16;
  google.type.TimeOfDay at_time = 17;
  google.protobuf.Timestamp at = 18;
  Status status = 19;

  oneof contact {
    string email = 30;
    int64 phone = 31;
  }

  message ConnectDefault1Entry {
    string key = 1;
    int32 value = 2;
  }
  message ByIdEntry {
    int32 key = 1;
    string value = 2;
  }
  message Address {
    string city = 1;
    int32 zip = 2;
  }
  message ConnectDefault2 {
    string sku = 1;
    int32 qty = 2;
  }
  enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
  }
}
`

func TestProtobufSchemaText(t *testing.T) {
	text, message, err := protoSchemaOf(protoKitchen(), &protoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if message != "ex.orders.Order" {
		t.Errorf("message %s", message)
	}
	if text != protoKitchenText {
		t.Errorf("schema text:\n%s\nwant:\n%s", text, protoKitchenText)
	}
	if _, err := sr.CompileProtobuf("", text, nil); err != nil {
		t.Fatal(err)
	}
	// An unnamed struct is ConnectDefault1 without a package; optional
	// fields become proto3 optional with optional.for.nullables, and
	// wrappers with wrapper.for.nullables.
	s := schema.StructOf("").Field("a", schema.OptionalInt64).Field("b", schema.String).Build()
	for _, c := range []struct {
		opts protoOptions
		want string
	}{
		{protoOptions{}, "syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  int64 a = 1;\n  string b = 2;\n}\n"},
		{protoOptions{optionalForNullable: true}, "syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  optional int64 a = 1;\n  string b = 2;\n}\n"},
		{protoOptions{wrapperForNullable: true}, "syntax = \"proto3\";\n\nimport \"google/protobuf/wrappers.proto\";\n\nmessage ConnectDefault1 {\n  google.protobuf.Int64Value a = 1;\n  string b = 2;\n}\n"},
	} {
		got, _, err := protoSchemaOf(s, &c.opts)
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v; want %q", c.opts, got, err, c.want)
		}
	}
	for _, bad := range []*schema.Schema{schema.ArrayOf(schema.String), schema.StructOf("").Field("x", schema.ArrayOf(schema.ArrayOf(schema.String))).Build()} {
		if _, _, err := protoSchemaOf(bad, &protoOptions{}); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// protoKitchenConnect is the Connect schema ProtobufData reads for
// protoKitchen's Protobuf schema: every field optional, the field numbers
// as parameters, the oneof first.
func protoKitchenConnect(version int32) *schema.Schema {
	tag := func(s *schema.Schema, n string) *schema.Schema {
		c := *s
		c.Optional = true
		c.Parameters = map[string]string{pbTagParam: n}
		for k, v := range s.Parameters {
			c.Parameters[k] = v
		}
		return &c
	}
	dec := schema.Decimal(2)
	dec.Parameters[pbPrecisionProp] = "10"
	elem := func(s *schema.Schema) *schema.Schema { c := *s; c.Optional = true; return &c }
	f := func(name string, s *schema.Schema) schema.Field { return schema.Field{Name: name, Schema: s} }
	status := &schema.Schema{Type: schema.TypeString, Name: "Status", Parameters: map[string]string{
		pbEnumParam: "Status", pbEnumParam + ".ACTIVE": "0", pbEnumParam + ".INACTIVE": "1"}}
	fields := []schema.Field{
		f("contact_0", &schema.Schema{Type: schema.TypeStruct, Name: pbUnionPrefix + "contact", Optional: true, Fields: []schema.Field{
			{Name: "email", Index: 0, Schema: tag(schema.String, "30")}, {Name: "phone", Index: 1, Schema: tag(schema.Int64, "31")}}}),
		f("i8", tag(schema.Int8, "1")), f("i16", tag(schema.Int16, "2")), f("i32", tag(schema.Int32, "3")),
		f("i64", tag(schema.Int64, "4")), f("f32", tag(schema.Float32, "5")), f("f64", tag(schema.Float64, "6")),
		f("flag", tag(schema.Boolean, "7")), f("name", tag(schema.String, "8")), f("raw", tag(schema.Bytes, "9")),
		f("tags", tag(schema.ArrayOf(elem(schema.String)), "10")),
		f("counts", tag(&schema.Schema{Type: schema.TypeMap, Name: "connect_default1", KeySchema: tag(schema.String, "1"), ValueSchema: tag(schema.Int32, "2")}, "11")),
		f("by_id", tag(&schema.Schema{Type: schema.TypeMap, Name: "by_id", KeySchema: tag(schema.Int32, "1"), ValueSchema: tag(schema.String, "2")}, "12")),
		f("ship_to", tag(&schema.Schema{Type: schema.TypeStruct, Name: "Address", Fields: []schema.Field{
			{Name: "city", Index: 0, Schema: tag(schema.String, "1")}, {Name: "zip", Index: 1, Schema: tag(schema.Int32, "2")}}}, "13")),
		f("lines", tag(schema.ArrayOf(elem(&schema.Schema{Type: schema.TypeStruct, Name: "ConnectDefault2", Fields: []schema.Field{
			{Name: "sku", Index: 0, Schema: tag(schema.String, "1")}, {Name: "qty", Index: 1, Schema: tag(schema.Int32, "2")}}})), "14")),
		f("total", tag(dec, "15")), f("day", tag(schema.Date, "16")), f("at_time", tag(schema.Time, "17")),
		f("at", tag(schema.Timestamp, "18")), f("status", tag(status, "19")),
	}
	for i := range fields {
		fields[i].Index = i
	}
	return &schema.Schema{Type: schema.TypeStruct, Name: "Order", Version: version, Fields: fields}
}

func TestProtobufRoundTrip(t *testing.T) {
	reg := newBundledRegistry(t)
	c := newTestProtobuf(t, reg.url, false, nil)
	s := protoKitchen()
	v := protoKitchenValue(s)
	b, err := c.FromConnect("orders", s, v)
	if err != nil {
		t.Fatal(err)
	}
	// Magic byte, id 1, message indexes [0] as the single byte 0.
	if !strings.HasPrefix(string(b), "\x00\x00\x00\x00\x01\x00") {
		t.Fatalf("header % x", b[:8])
	}
	gotSchema, got, err := c.ToConnect("orders", b)
	if err != nil {
		t.Fatal(err)
	}
	want := protoKitchenConnect(1)
	if d := schemaDiff(gotSchema, want, "$"); d != "" {
		t.Fatalf("read schema differs: %s", d)
	}
	// The value reads back field by field, in the read schema's layout.
	st := got.(*schema.Struct)
	for _, f := range s.Fields {
		name := f.Name
		if name == "contact" {
			name = "contact_0"
		}
		a, e := st.Get(name), v.Get(f.Name)
		if name == "contact_0" {
			a, e = a.(*schema.Struct).Get("phone"), e.(*schema.Struct).Get("phone")
		}
		if !valueEqualLoose(a, e) {
			t.Errorf("field %s: got %#v, want %#v", f.Name, a, e)
		}
	}
	// The read schema writes the same payload back (under another
	// subject: ProtobufData names the message without its package, which
	// a BACKWARD subject refuses as PACKAGE_CHANGED, as Confluent's does).
	b2, err := c.FromConnect("orders-copy", gotSchema, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b2[6:]) != string(b[6:]) {
		t.Errorf("re-encoded payload differs:\n% x\n% x", b2, b)
	}
	// Asked once: register and fetch, then everything is cached.
	n := reg.requests.Load()
	for range 3 {
		if _, err := c.FromConnect("orders", s, v); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ToConnect("orders", b); err != nil {
			t.Fatal(err)
		}
	}
	if reg.requests.Load() != n {
		t.Errorf("%d more registry requests for cached schemas", reg.requests.Load()-n)
	}
}

// valueEqualLoose compares Connect values, maps of either Go shape alike
// and structs by their fields' names and values.
func valueEqualLoose(a, b any) bool {
	if as, ok := a.(*schema.Struct); ok {
		bs, ok := b.(*schema.Struct)
		if !ok || len(as.Schema().Fields) != len(bs.Schema().Fields) {
			return false
		}
		for i, f := range as.Schema().Fields {
			if !valueEqualLoose(as.GetIndex(i), bs.Get(f.Name)) {
				return false
			}
		}
		return true
	}
	if al, ok := a.([]any); ok {
		bl, ok := b.([]any)
		if !ok || len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !valueEqualLoose(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	if am, ok := a.(map[string]any); ok {
		bm, ok := b.(map[string]any)
		if !ok || len(am) != len(bm) {
			return false
		}
		for k, v := range am {
			if !valueEqualLoose(v, bm[k]) {
				return false
			}
		}
		return true
	}
	return schema.ValueEqual(a, b)
}

func countRequests(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

// schemaDiff describes the first difference between two schemas, "" when
// schema.Equal holds.
func schemaDiff(a, b *schema.Schema, path string) string {
	if schema.Equal(a, b) {
		return ""
	}
	if a == nil || b == nil || a.Type != b.Type || len(a.Fields) != len(b.Fields) {
		return fmt.Sprintf("%s: %v vs %v", path, a, b)
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name {
			return fmt.Sprintf("%s: field %d is %s vs %s", path, i, a.Fields[i].Name, b.Fields[i].Name)
		}
		if d := schemaDiff(a.Fields[i].Schema, b.Fields[i].Schema, path+"."+a.Fields[i].Name); d != "" {
			return d
		}
	}
	if d := schemaDiff(a.KeySchema, b.KeySchema, path+".key"); a.KeySchema != nil && d != "" {
		return d
	}
	if d := schemaDiff(a.ValueSchema, b.ValueSchema, path+".value"); a.ValueSchema != nil && d != "" {
		return d
	}
	return fmt.Sprintf("%s: {%v optional=%v name=%q version=%d params=%v} vs {%v optional=%v name=%q version=%d params=%v}", path,
		a.Type, a.Optional, a.Name, a.Version, a.Parameters, b.Type, b.Optional, b.Name, b.Version, b.Parameters)
}

// TestProtobufReadsRegisteredSchemas reads records of schemas other
// clients registered: .proto text with a reference, the record's message
// nested (indexes [0, 0]), field kinds ProtobufData maps with parameters
// (sint32, fixed64, uint64), a map field, proto3 optional and wrappers.
func TestProtobufReadsRegisteredSchemas(t *testing.T) {
	reg := newBundledRegistry(t)
	client, err := sr.New(sr.Config{URLs: []string{reg.url}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	common := "syntax = \"proto3\";\npackage ex.common;\nmessage Money { int64 cents = 1; string currency = 2; }\n"
	main := `syntax = "proto3";
package ex;
import "ex/common.proto";
import "google/protobuf/wrappers.proto";
message Outer {
  message Inner {
    sint32 delta = 1;
    fixed64 big = 2;
    uint64 huge = 3;
    map<string, ex.common.Money> prices = 4;
    optional string maybe = 5;
    google.protobuf.StringValue wrapped = 6;
    Kind kind = 7;
    enum Kind { A = 0; B = 5; }
  }
  Inner inner = 1;
}
`
	if _, err := client.Register(ctx, "ex/common.proto", sr.Schema{Schema: common, Type: "PROTOBUF"}, false); err != nil {
		t.Fatal(err)
	}
	id, err := client.Register(ctx, "inner-value", sr.Schema{Schema: main, Type: "PROTOBUF",
		References: []sr.Reference{{Name: "ex/common.proto", Subject: "ex/common.proto", Version: 1}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := sr.CompileProtobuf("", main, map[string]string{"ex/common.proto": common})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := sr.ProtobufMessage(fd, []int{0, 0})
	if err != nil || inner.FullName() != "ex.Outer.Inner" {
		t.Fatalf("%v %v", inner, err)
	}
	msg := dynamicpb.NewMessage(inner)
	f := inner.Fields()
	msg.Set(f.ByName("delta"), protoreflect.ValueOfInt32(-5))
	msg.Set(f.ByName("big"), protoreflect.ValueOfUint64(1<<63+1))
	msg.Set(f.ByName("huge"), protoreflect.ValueOfUint64(7))
	money := msg.Mutable(f.ByName("prices")).Map().NewValue().Message()
	money.Set(money.Descriptor().Fields().ByName("cents"), protoreflect.ValueOfInt64(250))
	msg.Mutable(f.ByName("prices")).Map().Set(protoreflect.ValueOfString("eur").MapKey(), protoreflect.ValueOfMessage(money))
	wrapped := msg.Mutable(f.ByName("wrapped")).Message()
	wrapped.Set(wrapped.Descriptor().Fields().ByName("value"), protoreflect.ValueOfString("w"))
	msg.Set(f.ByName("kind"), protoreflect.ValueOfEnum(5))
	payload, err := proto.Marshal(msg.Interface())
	if err != nil {
		t.Fatal(err)
	}
	b := append(sr.AppendIndexes(sr.AppendHeader(nil, id), []int{0, 0}), payload...)

	for _, c := range []struct {
		config map[string]string
		check  func(s *schema.Schema, st *schema.Struct) string
	}{
		{map[string]string{}, func(s *schema.Schema, st *schema.Struct) string {
			prices := st.Get("prices").(map[string]any)["eur"].(*schema.Struct)
			switch {
			case s.Name != "Inner" || s.Version != 1:
				return fmt.Sprintf("schema %s v%d", s.Name, s.Version)
			case st.Get("delta") != int32(-5) || s.Field("delta").Schema.Parameters[pbTypeParam] != "sint32":
				return fmt.Sprintf("delta %v %v", st.Get("delta"), s.Field("delta").Schema.Parameters)
			case st.Get("big") != int64(-9223372036854775807) || st.Get("huge") != int64(7):
				return fmt.Sprintf("big %v huge %v", st.Get("big"), st.Get("huge"))
			case prices.Get("cents") != int64(250) || prices.Get("currency") != "":
				return fmt.Sprintf("prices %v", prices)
			case st.Get("maybe") != nil:
				return fmt.Sprintf("maybe %v, want null (proto3 optional, unset)", st.Get("maybe"))
			case st.Get("wrapped").(*schema.Struct).Get("value") != "w":
				return fmt.Sprintf("wrapped %v", st.Get("wrapped"))
			case st.Get("kind") != "B" || s.Field("kind").Schema.Parameters[pbEnumParam+".B"] != "5":
				return fmt.Sprintf("kind %v", st.Get("kind"))
			}
			return ""
		}},
		{map[string]string{"wrapper.for.nullables": "true", "int.for.enums": "true", "enhanced.protobuf.schema.support": "true"}, func(s *schema.Schema, st *schema.Struct) string {
			switch {
			case s.Name != "ex.Outer.Inner":
				return "name " + s.Name
			case st.Get("wrapped") != "w" || s.Field("wrapped").Schema.Type != schema.TypeString || !s.Field("wrapped").Schema.Optional:
				return fmt.Sprintf("wrapped %v %v", st.Get("wrapped"), s.Field("wrapped").Schema)
			case s.Field("delta").Schema.Optional:
				return "delta optional with wrapper.for.nullables"
			case s.Field("maybe").Schema.Optional || st.Get("maybe") != nil:
				// As ProtobufData: the unset proto3 optional is left null
				// though its schema is required (Java's Struct.put is not
				// called, so nothing validates it).
				return fmt.Sprintf("maybe %v", st.Get("maybe"))
			case st.Get("kind") != int32(5):
				return fmt.Sprintf("kind %#v", st.Get("kind"))
			}
			return ""
		}},
	} {
		conv := newTestProtobuf(t, reg.url, false, c.config)
		s, v, err := conv.ToConnect("inner", b)
		if err != nil {
			t.Fatalf("%v: %v", c.config, err)
		}
		if err := schema.Validate(s, v); err != nil && len(c.config) == 0 {
			t.Fatalf("%v: the value fails its schema: %v", c.config, err)
		}
		if d := c.check(s, v.(*schema.Struct)); d != "" {
			t.Errorf("%v: %s", c.config, d)
		}
	}
}

// TestProtobufOptions covers the writing settings: a primitive root as
// its wrapper message, wrapper.for.nullables and optional.for.nullables
// round trips, auto.register.schemas=false and use.latest.version.
func TestProtobufOptions(t *testing.T) {
	reg := newBundledRegistry(t)
	// A primitive is Google's wrapper message (Int64Value: index 2 of
	// wrappers.proto), read back as the primitive.
	c := newTestProtobuf(t, reg.url, true, nil)
	b, err := c.FromConnect("keys", schema.Int64, int64(42))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x00\x00\x00\x00\x01\x02\x04\x08\x2a"; string(b) != want {
		t.Fatalf("Int64 key: % x, want % x", b, want)
	}
	s, v, err := c.ToConnect("keys", b)
	if err != nil || s.Type != schema.TypeInt64 || v != int64(42) {
		t.Fatalf("Int64 key read as %v %v %v", s, v, err)
	}

	row := schema.StructOf("ex.Row").Field("a", schema.OptionalInt32).Field("b", schema.OptionalString).Field("c", schema.Int64).Build()
	for _, cfg := range []map[string]string{{"wrapper.for.nullables": "true"}, {"optional.for.nullables": "true"}} {
		c := newTestProtobuf(t, reg.url, false, cfg)
		topic := "rows-" + strings.Join(mapKeys(cfg), "")
		for _, v := range []*schema.Struct{
			schema.NewStruct(row).Set("a", int32(0)).Set("b", "").Set("c", int64(0)),
			schema.NewStruct(row).Set("c", int64(3)),
		} {
			b, err := c.FromConnect(topic, row, v)
			if err != nil {
				t.Fatal(err)
			}
			s, got, err := c.ToConnect(topic, b)
			if err != nil {
				t.Fatal(err)
			}
			// Both keep null apart from zero: wrappers by presence, proto3
			// optional by its synthetic oneof.
			st := got.(*schema.Struct)
			if st.Get("a") != v.Get("a") || st.Get("b") != v.Get("b") || st.Get("c") != v.Get("c") || !s.Field("a").Schema.Optional || s.Field("c").Schema.Optional {
				t.Errorf("%v: %v read back as %v (%v)", cfg, v, st, s)
			}
		}
	}

	// auto.register.schemas=false looks the schema up: unknown, a clear
	// error; use.latest.version writes with the subject's latest schema.
	strict := newTestProtobuf(t, reg.url, false, map[string]string{"auto.register.schemas": "false"})
	if _, err := strict.FromConnect("unknown", row, schema.NewStruct(row).Set("c", int64(1))); err == nil || !strings.Contains(err.Error(), "auto.register.schemas=false") {
		t.Fatalf("lookup of an unregistered schema: %v", err)
	}
	latest := newTestProtobuf(t, reg.url, false, map[string]string{"auto.register.schemas": "false", "use.latest.version": "true"})
	registered := newTestProtobuf(t, reg.url, false, nil)
	first, err := registered.FromConnect("latest", row, schema.NewStruct(row).Set("c", int64(9)))
	if err != nil {
		t.Fatal(err)
	}
	b, err = latest.FromConnect("latest", row, schema.NewStruct(row).Set("c", int64(9)))
	if err != nil || string(b) != string(first) {
		t.Fatalf("use.latest.version: % x %v, want % x", b, err, first)
	}
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestProtobufMalformed: bad bytes are errors, never panics or values.
func TestProtobufMalformed(t *testing.T) {
	reg := newBundledRegistry(t)
	c := newTestProtobuf(t, reg.url, false, nil)
	s := protoKitchen()
	good, err := c.FromConnect("orders", s, protoKitchenValue(s))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"short":          {0, 0, 0},
		"magic":          append([]byte{1}, good[1:]...),
		"unknown id":     append([]byte{0, 0, 0, 0, 9}, good[5:]...),
		"no indexes":     good[:5],
		"bad index":      append(append([]byte{}, good[:5]...), 2, 8),
		"negative count": append(append([]byte{}, good[:5]...), 1),
		"truncated":      good[:len(good)-3],
		"cut length":     append(append([]byte{}, good[:6]...), 0x4a, 0x0a, 0x01),
		"bad utf-8":      append(append([]byte{}, good[:6]...), 0x42, 0x02, 0xff, 0xfe),
	} {
		if s, v, err := c.ToConnect("orders", b); err == nil {
			t.Errorf("%s: read as %v %v", name, s, v)
		}
	}
	if _, err := c.FromConnect("orders", s, "not a struct"); err == nil {
		t.Error("a string for a struct schema wrote")
	}
	bad := schema.NewStruct(s).Set("status", "GONE")
	if _, err := c.FromConnect("orders", s, bad); err == nil || !strings.Contains(err.Error(), "GONE") {
		t.Errorf("unknown enum symbol: %v", err)
	}
}

var protoFuzz struct {
	once sync.Once
	url  string
	ids  int
}

// FuzzProtobufToConnect feeds arbitrary message indexes and payloads
// behind the ids of a registry holding protoKitchen's schema and a
// nested, referencing one: decoding gives an error or a value that
// satisfies its schema, never a panic.
func FuzzProtobufToConnect(f *testing.F) {
	protoFuzz.once.Do(func() {
		reg := newBundledRegistry(f)
		c := newTestProtobuf(f, reg.url, false, nil)
		s := protoKitchen()
		b, err := c.FromConnect("fuzz", s, protoKitchenValue(s))
		if err != nil {
			f.Fatal(err)
		}
		protoFuzz.url = reg.url
		protoFuzz.ids = 1
		f.Add(byte(1), b[5:])
	})
	f.Add(byte(1), []byte{0})
	f.Add(byte(1), []byte{2, 0, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, id byte, payload []byte) {
		c := newTestProtobuf(t, protoFuzz.url, false, nil)
		b := append(sr.AppendHeader(nil, int(id)%(protoFuzz.ids+1)), payload...)
		s, v, err := c.ToConnect("fuzz", b)
		if err != nil {
			return
		}
		if err := schema.Validate(s, v); err != nil {
			t.Fatalf("decoded value fails its schema: %v", err)
		}
	})
}

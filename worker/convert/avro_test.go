package convert

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

func newAvroT(t *testing.T, isKey bool, cfg map[string]string) *AvroConverter {
	t.Helper()
	c, err := New(AvroClass, isKey, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*AvroConverter)
}

func TestAvroConfig(t *testing.T) {
	for _, alias := range []string{"AvroConverter", "Avro", AvroClass} {
		if got, ok := Canonical(alias); !ok || got != AvroClass {
			t.Errorf("Canonical(%q) = %q %v", alias, got, ok)
		}
	}
	for _, bad := range []map[string]string{
		{},
		{"schema.registry.url": "http://x", "auto.register.schemas": "maybe"},
		{"schema.registry.url": "http://x", "value.subject.name.strategy": "Nope"},
		{"schema.registry.url": "http://x", "schemas.cache.config": "many"},
	} {
		if _, err := New(AvroClass, false, bad); err == nil {
			t.Errorf("config %v accepted", bad)
		}
	}
}

func TestAvroSubjectsAndRegistration(t *testing.T) {
	reg := newFakeRegistry(t)
	rec := schema.StructOf("shop.Order").Field("id", schema.Int64).Build()
	v := schema.NewStruct(rec).Set("id", int64(1))

	// RecordNameStrategy for values, TopicNameStrategy for keys.
	c := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL,
		"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"})
	if _, err := c.FromConnect("orders", rec, v); err != nil {
		t.Fatal(err)
	}
	k := newAvroT(t, true, map[string]string{"schema.registry.url": reg.URL})
	if _, err := k.FromConnect("orders", schema.Int64, int64(1)); err != nil {
		t.Fatal(err)
	}
	tr := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL,
		"value.subject.name.strategy": "TopicRecordNameStrategy"})
	b, err := tr.FromConnect("orders", rec, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"shop.Order", "orders-key", "orders-shop.Order"} {
		if len(reg.subjects[s]) != 1 {
			t.Errorf("subject %s has %d versions, want 1 (subjects %v)", s, len(reg.subjects[s]), reg.subjects)
		}
	}
	// The reader looks the version up under the same strategy's subject.
	s, got, err := tr.ToConnect("orders", b)
	if err != nil || s.Version != 1 || got.(*schema.Struct).Get("id") != int64(1) {
		t.Fatalf("ToConnect = %v %v %v", s, got, err)
	}

	// auto.register.schemas=false looks the schema up and fails clearly
	// when the subject lacks it.
	lookup := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL, "auto.register.schemas": "false"})
	if _, err := lookup.FromConnect("orders", rec, v); err == nil || !strings.Contains(err.Error(), "40401") {
		t.Errorf("lookup of an unregistered subject: %v", err)
	}
	if _, err := c.FromConnect("orders2", rec, v); err != nil { // registers under shop.Order again: same id
		t.Fatal(err)
	}
	reg.mu.Lock()
	reg.subjects["orders-value"] = reg.subjects["shop.Order"]
	reg.mu.Unlock()
	b2, err := lookup.FromConnect("orders", rec, v)
	if err != nil || !bytes.Equal(b2, b) {
		t.Errorf("lookup: %x %v, want %x", b2, err, b)
	}
	// use.latest.version takes the latest id when it is the record's schema.
	latest := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL, "auto.register.schemas": "false", "use.latest.version": "true"})
	if b3, err := latest.FromConnect("orders", rec, v); err != nil || !bytes.Equal(b3, b) {
		t.Errorf("use.latest.version: %x %v", b3, err)
	}
	other := schema.StructOf("shop.Order").Field("id", schema.Int64).Field("x", schema.OptionalString).Build()
	if _, err := latest.FromConnect("orders", other, schema.NewStruct(other).Set("id", int64(1))); err == nil {
		t.Error("use.latest.version with another schema: no error")
	}
	// use.schema.id writes that id without asking.
	fixed := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL, "use.schema.id": "1"})
	before := reg.requests.Load()
	if b4, err := fixed.FromConnect("orders", rec, v); err != nil || b4[4] != 1 || reg.requests.Load() != before {
		t.Errorf("use.schema.id: %x %v", b4, err)
	}
}

func TestAvroNullsAndErrors(t *testing.T) {
	reg := newFakeRegistry(t)
	c := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL})
	if b, err := c.FromConnect("t", nil, nil); b != nil || err != nil {
		t.Errorf("tombstone: %x %v", b, err)
	}
	if b, err := c.FromConnect("t", schema.OptionalString, nil); b != nil || err != nil {
		t.Errorf("optional null: %x %v", b, err)
	}
	if _, err := c.FromConnect("t", schema.String, nil); err == nil {
		t.Error("null of a required schema accepted")
	}
	if _, err := c.FromConnect("t", nil, "schemaless"); err == nil {
		t.Error("schemaless value accepted")
	}
	if _, err := c.FromConnect("t", schema.Int32, int64(1)); err == nil {
		t.Error("int64 for an int32 schema accepted")
	}
	if s, v, err := c.ToConnect("t", nil); s != nil || v != nil || err != nil {
		t.Errorf("ToConnect(nil) = %v %v %v", s, v, err)
	}
	for _, bad := range [][]byte{{1, 0, 0, 0, 1}, {0, 0}, {0, 0, 0, 0, 99, 2}} {
		if _, _, err := c.ToConnect("t", bad); err == nil {
			t.Errorf("ToConnect(%x) accepted", bad)
		}
	}
	// A registry that cannot be reached is an error naming it, not a hang.
	down := newAvroT(t, false, map[string]string{"schema.registry.url": "http://127.0.0.1:1", "http.read.timeout.ms": "2000"})
	if _, err := down.FromConnect("t", schema.String, "x"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("registry down: %v", err)
	}
	// Truncated payloads are refused.
	b, err := c.FromConnect("t", schema.String, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ToConnect("t", b[:len(b)-1]); err == nil {
		t.Error("truncated string accepted")
	}
}

// TestAvroRoundTrips covers the mapping's less common corners: union
// structs, maps with optional and struct values, arrays of structs, a
// struct used twice, unnamed structs (ConnectDefault), defaults of
// every kind, scrubbed names and enums with enhanced.avro.schema.support.
func TestAvroRoundTrips(t *testing.T) {
	reg := newFakeRegistry(t)
	c := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL, "enhanced.avro.schema.support": "true"})
	union := &schema.Schema{Type: schema.TypeStruct, Name: avroUnionName, Optional: true, Fields: []schema.Field{
		{Name: "int", Index: 0, Schema: schema.OptionalInt32}, {Name: "string", Index: 1, Schema: schema.OptionalString}}}
	point := schema.StructOf("geo.Point").Field("x", schema.Float64).Field("y", schema.Float64).Build()
	anon := schema.StructOf("").Field("a", schema.Int32).Build()
	enum := &schema.Schema{Type: schema.TypeString, Parameters: map[string]string{avroEnumParam: "shop.Color",
		avroEnumParam + ".RED": "RED", avroEnumParam + ".BLUE": "BLUE"}}
	s := schema.StructOf("test.Corners").
		Field("u", union).
		Field("m", schema.MapOf(schema.String, schema.OptionalInt64)).
		Field("pts", schema.ArrayOf(point)).
		Field("home", point.AsOptional()).
		Field("anon", anon).
		Field("anon2", schema.StructOf("").Field("b", schema.String).Build()).
		Field("color", enum).
		Field("d8", schema.Int8.WithDefault(int8(3))).
		Field("dbytes", schema.Bytes.WithDefault([]byte{0xff, 0})).
		Field("ddec", schema.Decimal(1).WithDefault(big.NewInt(-15))).
		Field("ddate", schema.Date.WithDefault(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC))).
		Field("optmap", schema.MapOf(schema.OptionalString, schema.Int32).AsOptional()).
		Build()
	v := schema.NewStruct(s).
		Set("u", schema.NewStruct(union).Set("string", "s")).
		Set("m", map[string]any{"a": int64(1), "b": nil}).
		Set("pts", []any{schema.NewStruct(point).Set("x", 1.0).Set("y", 2.0)}).
		Set("home", schema.NewStruct(s.Field("home").Schema).Set("x", 3.0).Set("y", 4.0)).
		Set("anon", schema.NewStruct(anon).Set("a", int32(5))).
		Set("anon2", schema.NewStruct(s.Field("anon2").Schema).Set("b", "x")).
		Set("color", "BLUE").
		Set("optmap", map[any]any{"k": int32(1)})
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	text, err := avroSchemaOf(s, &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"name":"u","type":["null","int","string"],"default":null}`,
		`{"name":"home","type":["null","geo.Point"],"default":null}`,
		`"name":"ConnectDefault","namespace":"io.confluent.connect.avro"`,
		`"name":"ConnectDefault2"`,
		`{"type":"enum","name":"Color","namespace":"shop","symbols":["BLUE","RED"]`,
		`{"name":"d8","type":{"type":"int","connect.default":3,"connect.type":"int8"},"default":3}`,
		`{"name":"dbytes","type":{"type":"bytes","connect.default":"ÿ\u0000"},"default":"ÿ\u0000"}`,
		`"name":"MapEntry"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("schema lacks %s:\n%s", want, text)
		}
	}
	b, err := c.FromConnect("corners", s, v)
	if err != nil {
		t.Fatal(err)
	}
	gs, gv, err := c.ToConnect("corners", b)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := schema.AppendJSON(nil, s, v, schema.JSONOptions{})
	got, err := schema.AppendJSON(nil, gs, gv, schema.JSONOptions{})
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("round trip\n got: %s %v\nwant: %s", got, err, want)
	}
	// Written again from what was read: the same bytes.
	b2, err := c.FromConnect("corners", gs, gv)
	if err != nil || !bytes.Equal(b2[5:], b[5:]) {
		t.Errorf("rewritten: %x %v\nwant %x", b2, err, b)
	}
	if d := gs.Field("ddate").Schema.Default; !d.(time.Time).Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date default read back as %v", d)
	}

	// scrub.invalid.names makes invalid Avro names valid.
	sc := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL, "scrub.invalid.names": "true"})
	text, err = avroSchemaOf(schema.StructOf("my-ns.1bad").Field("bad-name", schema.Int32).Build(), &sc.opts)
	if err != nil || !strings.Contains(text, `"name":"bad_name"`) || !strings.Contains(text, `"name":"x1bad","namespace":"my_ns"`) {
		t.Errorf("scrubbed: %s %v", text, err)
	}
}

// FuzzAvroToConnect feeds arbitrary payloads under the goldens' schemas:
// the decoder errors or returns a value its schema accepts, never panics.
func FuzzAvroToConnect(f *testing.F) {
	for _, g := range loadGoldensF(f) {
		b := mustHex(g.Hex)
		f.Add(b[4], b[5:])
	}
	f.Fuzz(func(t *testing.T, id byte, payload []byte) {
		reg := fuzzRegistry(t)
		c := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL})
		b := append(sr.AppendHeader(nil, int(id%6)), payload...)
		s, v, err := c.ToConnect("golden-fuzz", b)
		if err != nil {
			return
		}
		if err := schema.Validate(s, v); err != nil {
			t.Fatalf("decoded value fails its schema: %v", err)
		}
	})
}

// TestAvroConcurrent: one converter shared by goroutines (as the task
// runners share it) writes and reads consistently; the registry sees one
// registration and one version lookup however many goroutines race.
func TestAvroConcurrent(t *testing.T) {
	reg := newFakeRegistry(t)
	c := newAvroT(t, false, map[string]string{"schema.registry.url": reg.URL})
	s, v := lakeEnvelope()
	want, _ := schema.AppendJSON(nil, s, v, schema.JSONOptions{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				b, err := c.FromConnect("lake", s, v)
				if err != nil {
					errs <- err
					return
				}
				gs, gv, err := c.ToConnect("lake", b)
				if err != nil {
					errs <- err
					return
				}
				if got, _ := schema.AppendJSON(nil, gs, gv, schema.JSONOptions{}); !bytes.Equal(got, want) {
					errs <- fmt.Errorf("read back %s", got)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Racing first calls may each ask; far fewer than the 800 conversions.
	if n := reg.requests.Load(); n > 3*8 {
		t.Errorf("%d registry requests for one schema", n)
	}
}

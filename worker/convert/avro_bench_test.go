package convert

import (
	"math/big"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// lakeEnvelope is a Debezium change event of the README's orders table
// (id, customer, amount numeric(10,2), placed date, created timestamp,
// qty) as the Postgres source emits it.
func lakeEnvelope() (*schema.Schema, *schema.Struct) {
	dec := schema.Decimal(2)
	dec.Parameters[connectDecPrecision] = "10"
	value := schema.StructOf("shop.public.orders.Value").Field("id", schema.Int64).Field("customer", schema.String).
		Field("amount", dec).Field("placed", schema.Date).Field("created", schema.Timestamp).
		Field("qty", schema.Int32).Field("note", schema.OptionalString).Optional().Build()
	source := schema.StructOf("io.debezium.connector.postgresql.Source").Field("version", schema.String).
		Field("connector", schema.String).Field("name", schema.String).Field("ts_ms", schema.Int64).
		Field("snapshot", (&schema.Schema{Type: schema.TypeString, Name: "io.debezium.data.Enum", Version: 1,
			Parameters: map[string]string{"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}).
			AsOptional().WithDefault("false")).
		Field("db", schema.String).Field("sequence", schema.OptionalString).Field("ts_us", schema.OptionalInt64).
		Field("ts_ns", schema.OptionalInt64).Field("schema", schema.String).Field("table", schema.String).
		Field("txId", schema.OptionalInt64).Field("lsn", schema.OptionalInt64).Field("xmin", schema.OptionalInt64).Build()
	block := schema.StructOf("event.block").Field("id", schema.String).Field("total_order", schema.Int64).
		Field("data_collection_order", schema.Int64).Optional().Version(1).Build()
	env := schema.StructOf("shop.public.orders.Envelope").Field("before", value).Field("after", value).
		Field("source", source).Field("transaction", block).Field("op", schema.String).
		Field("ts_ms", schema.OptionalInt64).Field("ts_us", schema.OptionalInt64).Field("ts_ns", schema.OptionalInt64).
		Version(2).Build()
	after := schema.NewStruct(value).Set("id", int64(123456)).Set("customer", "customer-3").
		Set("amount", big.NewInt(370395)).Set("placed", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)).
		Set("created", time.Date(2025, 6, 1, 12, 0, 1, 500e6, time.UTC)).Set("qty", int32(1)).Set("note", "note 123456 v1")
	src := schema.NewStruct(source).Set("version", "3.6.1.Final").Set("connector", "postgresql").Set("name", "shop").
		Set("ts_ms", int64(1796562855000)).Set("snapshot", "true").Set("db", "shop").Set("sequence", `[null,"23456789"]`).
		Set("ts_us", int64(1796562855000000)).Set("ts_ns", int64(1796562855000000000)).Set("schema", "public").
		Set("table", "orders").Set("txId", int64(771)).Set("lsn", int64(23456789))
	return env, schema.NewStruct(env).Set("after", after).Set("source", src).Set("op", "r").
		Set("ts_ms", int64(1796562855123)).Set("ts_us", int64(1796562855123456)).Set("ts_ns", int64(1796562855123456789))
}

// BenchmarkConvertersLakeEvent compares the bytes and time per change
// event of JsonConverter with schemas and the registry converters (the
// registry asked once, then cached).
func BenchmarkConvertersLakeEvent(b *testing.B) {
	s, v := lakeEnvelope()
	if err := v.Validate(); err != nil {
		b.Fatal(err)
	}
	reg := newFakeRegistryB(b)
	for _, tc := range []struct {
		name, class string
		cfg         map[string]string
	}{
		{"converter=json-schemas", JSONClass, map[string]string{}},
		{"converter=avro", AvroClass, map[string]string{"schema.registry.url": reg.URL}},
		{"converter=jsonschema", JSONSchemaClass, map[string]string{"schema.registry.url": reg.URL}},
		{"converter=protobuf", ProtobufClass, map[string]string{"schema.registry.url": reg.URL}},
	} {
		c, err := New(tc.class, false, tc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := c.FromConnect("shop.public.orders", s, v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name+"/dir=write", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if _, err := c.FromConnect("shop.public.orders", s, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes/event")
		})
		b.Run(tc.name+"/dir=read", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if _, _, err := c.ToConnect("shop.public.orders", out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes/event")
		})
	}
}

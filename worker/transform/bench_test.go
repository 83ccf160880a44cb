package transform

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// BenchmarkTransforms measures each transformation alone, and the
// benchmark's chain (InsertField, ReplaceField, RegexRouter), on a record
// like the pipelines carry: a 10-field row of about 1 KiB, with a schema (a
// struct, as from JsonConverter with schemas or a Debezium source) and
// without (a map, as from schemaless JSON). The schema is the same *Schema
// for every record, as converters hand it out, so the schema caches hit.
// Run with:
//
//	go test ./worker/transform -run '^$' -bench Transforms -benchmem
func BenchmarkTransforms(b *testing.B) {
	row := schema.StructOf("bench.Row").
		Field("id", schema.Int64).Field("name", schema.String).Field("email", schema.OptionalString).
		Field("age", schema.Int32).Field("score", schema.Float64).Field("active", schema.Boolean).
		Field("created", schema.Timestamp).Field("city", schema.OptionalString).Field("tags", schema.ArrayOf(schema.String)).
		Field("payload", schema.String).Build()
	payload := strings.Repeat("x", 850)
	now := time.UnixMilli(1700000000000).UTC()
	structValue := func() *schema.Struct {
		return schema.NewStruct(row).Set("id", int64(42)).Set("name", "Ann").Set("email", "ann@example.com").
			Set("age", int32(33)).Set("score", 9.5).Set("active", true).Set("created", now).Set("city", "Oslo").
			Set("tags", []any{"a", "b"}).Set("payload", payload)
	}
	mapValue := func() map[string]any {
		return map[string]any{"id": int64(42), "name": "Ann", "email": "ann@example.com", "age": int64(33), "score": 9.5,
			"active": true, "created": int64(1700000000000), "city": "Oslo", "tags": []any{"a", "b"}, "payload": payload}
	}
	const K = "org.apache.kafka.connect.transforms."
	cases := []struct {
		name  string
		props map[string]string
	}{
		{"InsertField", map[string]string{"type": K + "InsertField$Value", "topic.field": "src_topic", "static.field": "origin", "static.value": "bench"}},
		{"ReplaceField", map[string]string{"type": K + "ReplaceField$Value", "exclude": "payload", "renames": "name:full_name"}},
		{"RegexRouter", map[string]string{"type": K + "RegexRouter", "regex": "(.*)", "replacement": "$1-routed"}},
		{"MaskField", map[string]string{"type": K + "MaskField$Value", "fields": "email,city"}},
		{"Cast", map[string]string{"type": K + "Cast$Value", "spec": "age:int64,score:string"}},
		{"ExtractField", map[string]string{"type": K + "ExtractField$Value", "field": "name"}},
		{"Flatten", map[string]string{"type": K + "Flatten$Value"}},
		{"HoistField", map[string]string{"type": K + "HoistField$Value", "field": "row"}},
		{"ValueToKey", map[string]string{"type": K + "ValueToKey", "fields": "id"}},
		{"TimestampConverter", map[string]string{"type": K + "TimestampConverter$Value", "field": "created", "target.type": "string", "format": "yyyy-MM-dd HH:mm:ss"}},
		{"TimestampRouter", map[string]string{"type": K + "TimestampRouter"}},
		{"SetSchemaMetadata", map[string]string{"type": K + "SetSchemaMetadata$Value", "schema.name": "bench.Renamed"}},
		{"InsertHeader", map[string]string{"type": K + "InsertHeader", "header": "h", "value.literal": "v"}},
		{"Filter+TopicNameMatches", map[string]string{"type": K + "Filter", "predicate": "p"}},
	}
	chainProps := map[string]string{"transforms": "ins,rf,route",
		"transforms.ins.type": K + "InsertField$Value", "transforms.ins.topic.field": "src_topic",
		"transforms.ins.static.field": "origin", "transforms.ins.static.value": "bench",
		"transforms.rf.type": K + "ReplaceField$Value", "transforms.rf.exclude": "payload", "transforms.rf.renames": "name:full_name",
		"transforms.route.type": K + "RegexRouter", "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-routed"}
	for _, withSchema := range []bool{true, false} {
		run := func(b *testing.B, props map[string]string) {
			c, err := New(props)
			if err != nil {
				b.Fatal(err)
			}
			sv, mv := structValue(), mapValue()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := Record{Topic: "db.users", Partition: 1, HasPartition: true, Timestamp: now, Sink: true, Offset: int64(i)}
				if withSchema {
					r.ValueSchema, r.Value = row, sv
				} else {
					r.Value = mv
				}
				if _, err := c.Apply(&r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		}
		for _, tc := range cases {
			if tc.name == "SetSchemaMetadata" && !withSchema {
				continue // it needs a schema
			}
			props := map[string]string{"transforms": "t", "predicates": "p",
				"predicates.p.type": K + "predicates.TopicNameMatches", "predicates.p.pattern": "nomatch"}
			for k, v := range tc.props {
				props["transforms.t."+k] = v
			}
			b.Run(fmt.Sprintf("schema=%v/transform=%s", withSchema, tc.name), func(b *testing.B) { run(b, props) })
		}
		b.Run(fmt.Sprintf("schema=%v/transform=chain3", withSchema), func(b *testing.B) { run(b, chainProps) })
	}
	b.Run("schema=true/transform=ExtractNewRecordState", func(b *testing.B) {
		env := schema.StructOf("db.public.users.Envelope").Field("before", row.AsOptional()).Field("after", row.AsOptional()).
			Field("source", schema.StructOf("io.debezium.connector.postgresql.Source").Field("ts_ms", schema.Int64).Build()).
			Field("op", schema.String).Field("ts_ms", schema.OptionalInt64).Build()
		src := schema.NewStruct(env.Field("source").Schema).Set("ts_ms", int64(1700000000000))
		ev := schema.NewStruct(env)
		ev.SetIndex(1, structValue())
		ev.SetIndex(2, src)
		ev.SetIndex(3, "c")
		c, err := New(map[string]string{"transforms": "u", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState",
			"transforms.u.add.fields": "op,source.ts_ms", "transforms.u.delete.tombstone.handling.mode": "rewrite"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := Record{Topic: "db.public.users", ValueSchema: env, Value: ev, Timestamp: now}
			if _, err := c.Apply(&r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	// Debezium's MongoDB unwrap on events of Debezium's MongoDB envelope
	// (testdata/cases.json): a 7-field document (ObjectId, string,
	// array, date, int64, decimal, binary) and a 19-field one with nested
	// documents, flattened.
	f := loadCases(b)
	for _, tc := range []struct {
		name, record string
		props        map[string]string
	}{
		{"ExtractNewDocumentState", "mongo_read1", map[string]string{"add.fields": "op,source.ts_ms"}},
		{"ExtractNewDocumentState-flatten", "mongo_scalars", map[string]string{"flatten.struct": "true", "delete.tombstone.handling.mode": "rewrite"}},
	} {
		b.Run("schema=true/transform="+tc.name, func(b *testing.B) {
			in, err := decodeRecord(f.Records[tc.record], true)
			if err != nil {
				b.Fatal(err)
			}
			props := map[string]string{"transforms": "u", "transforms.u.type": mongoUnwrapClass}
			for k, v := range tc.props {
				props["transforms.u."+k] = v
			}
			c, err := New(props)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := in
				if _, err := c.Apply(&r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

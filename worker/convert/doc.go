// Package convert holds Kafka Connect's converters: the code that turns a
// record's key, value and headers from the Connect data model (sdk/schema)
// into bytes for Kafka and back.
//
// Converters are addressed by Kafka's class names or their aliases, like
// Kafka Connect's key.converter / value.converter / header.converter
// settings:
//
//	org.apache.kafka.connect.json.JsonConverter          (JsonConverter, Json)
//	org.apache.kafka.connect.storage.StringConverter     (StringConverter, String)
//	org.apache.kafka.connect.converters.ByteArrayConverter (ByteArrayConverter, ByteArray)
//	org.apache.kafka.connect.storage.SimpleHeaderConverter (SimpleHeaderConverter, SimpleHeader)
//	org.apache.kafka.connect.converters.BooleanConverter, DoubleConverter,
//	FloatConverter, IntegerConverter, LongConverter, ShortConverter (and
//	their aliases): Kafka's primitive converters, the big-endian bytes of
//	Kafka's serializers
//	io.confluent.connect.avro.AvroConverter (AvroConverter, Avro)
//	io.confluent.connect.json.JsonSchemaConverter (JsonSchemaConverter, JsonSchema)
//	io.confluent.connect.protobuf.ProtobufConverter (ProtobufConverter, Protobuf):
//	Confluent's schema-registry converters (package sr is their registry
//	client, wire format and Protobuf schema compiler)
//
// AvroConverter maps Connect schemas to Avro ones and back exactly as
// Confluent's AvroData (connect.name, connect.version, connect.doc,
// connect.parameters, connect.default, connect.type; optional schemas as
// unions with null; Decimal, Date, Time and Timestamp as Avro logical
// types; maps with non-string keys as MapEntry arrays), kept so by golden
// bytes recorded with Confluent's Python AvroSerializer
// (testdata/avro/gen.py). JsonSchemaConverter follows JsonSchemaData,
// ProtobufConverter ProtobufData (Connect schemas printed as .proto text
// the way Confluent's ProtobufSchemaUtils prints them; any registered
// Protobuf schema, references included, read back).
//
// JsonConverter writes the schemas.enable envelope byte for byte as Kafka's
// (Jackson's compact output, Kafka's schema field order), including the
// logical types and decimal.format; golden files generated with the real
// Kafka 4.4 converter (testdata/gen/Gen.java) keep it so.
//
// SimpleHeaderConverter reads and writes header strings as Kafka's
// Values.parseString and convertToString do, kept so by golden files from
// Kafka 4.4 (testdata/gen/HeaderGen.java).
//
// Usage sketch (the task runner):
//
//	val, err := convert.New(cfg["value.converter"], false, convert.Prefixed(cfg, "value.converter."))
//	hdr, err := convert.NewHeader(cfg["header.converter"], convert.Prefixed(cfg, "header.converter."))
//	b, err := val.FromConnect(rec.Topic, rec.ValueSchema, rec.Value) // source path
//	s, v, err := val.ToConnect(kr.Topic, kr.Value)                     // sink path
//
// Converters are safe for concurrent use.
package convert

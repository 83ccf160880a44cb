// Package kafkarest serves Confluent REST Proxy's v2 and v3 APIs over any
// Kafka cluster, talking to it only through franz-go (kgo for produce and
// consume, kadm for administration).
//
// The paths, content types, JSON shapes and error bodies
// ({"error_code": …, "message": …}, with Confluent's codes such as 40401
// topic not found, 40403 consumer instance not found, 42206 schema registry
// missing, 50002 Kafka error) are Confluent's, so the same curl commands and
// HTTP clients work.
//
// Usage:
//
//	p, err := kafkarest.New(kafkarest.Config{Seeds: []string{"127.0.0.1:9092"}})
//	if err != nil { ... }
//	defer p.Close()
//	http.Serve(ln, p.Handler())
//
// Durability: produced records are reported only after the broker
// acknowledged them with acks=all (idempotent producer). Consumer
// instances commit only offsets of records they returned. A request whose
// body does not parse changes nothing: it is answered with a 4xx naming
// the field before any record is produced.
//
// The v3 produce endpoint (POST /v3/clusters/{id}/topics/{t}/records)
// reads its body as a stream of concatenated JSON records; with a chunked
// request it answers one delivery report per record, in order, each written
// as soon as that record (and every one before it) is acknowledged.
//
// The Avro, Protobuf and JSON Schema formats (v2 and v3) go through the
// schema registry of Config.SchemaRegistryURL: records are written and
// read in Confluent's wire format (magic byte, schema id, for Protobuf the
// message indexes, payload). A Protobuf record given as JSON is Protobuf's
// JSON mapping of the schema's first message (message indexes [0], as
// Confluent's proxy writes), and a protobuf consumer instance shows
// records in that mapping with the fields at their defaults. v3 payloads
// name their schema by schema_id, inline schema, schema_version or the
// subject's latest, their subject by subject or subject_name_strategy
// (TOPIC_NAME, RECORD_NAME, TOPIC_RECORD_NAME). Without a registry these
// formats are answered with Confluent's error for a missing registry (422,
// error_code 42206).
package kafkarest

// Package schemaregistry is a schema registry server that speaks Confluent
// Schema Registry's REST API and keeps its state in a compacted, one-partition
// Kafka topic (_schemas) in the record format Confluent Schema Registry and
// Karapace write, so either of them can read or take over the topic.
//
// The package is layered so that every decision is made without sockets:
//
//   - records.go: the _schemas keys and values (canonical key JSON, byte for
//     byte what Confluent writes), decoded and encoded;
//   - state.go: the registry's state, built by applying _schemas records in
//     offset order (a pure fold: the same records give the same state);
//   - compat*.go, avro.go, jsonschema.go, protobuf.go: schema parsing,
//     canonicalisation and the compatibility rules of each schema type;
//   - registry.go: the operations (register, look up, delete, config, mode),
//     which decide against the state and return the records to write;
//   - kafkalog.go: the topic, through a franz-go client: a reader that keeps
//     the state up to date and a writer that appends and waits until its own
//     record has been read back;
//   - http.go: the REST routes, Confluent's JSON shapes and error bodies.
//
// Usage:
//
//	srv, err := schemaregistry.New(ctx, schemaregistry.Config{Brokers: []string{"127.0.0.1:9092"}, Logger: l})
//	ln, _ := net.Listen("tcp", "127.0.0.1:8081")
//	go srv.Serve(ln)
//	defer srv.Close(context.Background())
//
// Writes are serialized: within a process by one mutex, and across processes
// sharing the topic by a leader lease in the topic itself (see kafkalog.go).
package schemaregistry

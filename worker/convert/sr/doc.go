// Package sr is a client of schema registries that speak Confluent Schema
// Registry's REST API (Confluent's own, Karapace, Apicurio's ccompat API,
// Redpanda's, Tributary's), as the schema-registry converters need it:
// register or look up a schema under a subject, fetch a schema by its id,
// and read a subject's latest version. Answers are cached, so a converter
// asks the registry once per schema and subject; a subject's latest
// version only for Config.LatestTTL (none by default), bounded by
// Config.LatestCacheSize and dropped when the client registers under the
// subject.
//
// It also holds the Confluent wire format (magic byte 0, a 4-byte
// big-endian schema id, and for Protobuf the message indexes) and the
// subject name strategies, and the compiling of Protobuf schemas with
// their references into descriptors (CompileProtobuf) with the mapping
// between message descriptors and Confluent's message indexes
// (ProtobufMessage, ProtobufIndexes).
//
// Usage sketch:
//
//	c, err := sr.NewFromConfig(cfg) // schema.registry.url, basic.auth.*
//	id, err := c.Register(ctx, "orders-value", sr.Schema{Schema: avroJSON})
//	b := sr.AppendHeader(nil, id)
//	s, err := c.SchemaByID(ctx, id)
//
// A Client is safe for concurrent use.
package sr

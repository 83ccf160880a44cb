// Package transform runs single message transforms (SMTs) and predicates:
// Kafka Connect's transformation chain, between a task and the converters.
//
// A connector configures its chain with Kafka Connect's settings, which run
// unchanged:
//
//	transforms=unwrap,route
//	transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
//	transforms.unwrap.add.fields=op,source.ts_ms
//	transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
//	transforms.route.regex=(.*)
//	transforms.route.replacement=lake.$1
//	transforms.route.predicate=notHeartbeat
//	transforms.route.negate=true
//	predicates=notHeartbeat
//	predicates.notHeartbeat.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
//	predicates.notHeartbeat.pattern=__debezium-heartbeat.*
//
// The classes are Kafka's built-in transformations (Cast, DropHeaders,
// ExtractField, Filter, Flatten, HeaderFrom, HoistField, InsertField,
// InsertHeader, MaskField, RegexRouter, ReplaceField, SetSchemaMetadata,
// TimestampConverter, TimestampRouter, ValueToKey, each $Key and $Value
// where Kafka has both) and predicates (HasHeaderKey, RecordIsTombstone,
// TopicNameMatches), and Debezium's ExtractNewRecordState and
// ByLogicalTableRouter. Each behaves as the Java class does, record for
// record, schemaful and schemaless, errors included: golden files written
// by the real classes (testdata/gen/TransformGen.java) keep it so.
//
// Usage sketch (the worker, per task):
//
//	if v := transform.Validate(connectorConfig, version); … // on create
//	chain, err := transform.New(connectorConfig)
//	keep, err := chain.Source(&sourceRecord) // or chain.Sink(&sinkRecord)
//	// keep false: dropped (offsets still advance); err: a *StageError
//	// naming the transformation, handled by errors.tolerance
//
// A chain belongs to one task: transformations cache the schemas they
// derive, by identity, without locks. Transformations never modify the
// values of the records they are given; they build new ones.
package transform

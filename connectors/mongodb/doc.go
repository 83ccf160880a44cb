// Package mongodb is a MongoDB source connector that produces Debezium's
// MongoDB change events (class io.debezium.connector.mongodb.MongoDbConnector,
// Debezium 3.6.1's configuration keys).
//
// With a change-stream capture.mode the task first takes the change
// stream's position, then copies the captured collections (read events,
// op r) and then streams the changes from that position, so that nothing
// between the two is missed (changes made during the snapshot may appear
// twice). Offsets hold the resume token in Debezium's form; the worker
// stores them only for records Kafka acknowledged. A resume token that
// left the oplog fails the task with what to do, or takes a new snapshot
// with snapshot.mode=when_needed.
//
// With capture.mode=poll (for MongoDB-wire servers without change streams,
// such as FerretDB) the task copies each collection and then scans it by an
// increasing field (poll.go).
//
// Events: key {"id": <_id as relaxed extended JSON>}; value the envelope
// {before, after (documents as the Java driver's legacy strict extended
// JSON), updateDescription {removedFields, updatedFields, truncatedArrays},
// source, op, ts_ms, transaction}; topic <topic.prefix>.<db>.<collection>;
// a tombstone after each delete unless tombstones.on.delete=false.
// extjson.go reproduces the Java driver's JSON writer byte for byte.
package mongodb

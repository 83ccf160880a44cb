// Package datagen is a source connector that generates keyed records with
// schemas, for demos, tests and benchmarks (class
// dev.tributary.connect.datagen.DatagenConnector, alias Datagen).
//
// Each task produces the sequence 0, 1, 2, … of records whose content is a
// pure function of (seed, task, sequence number), so a restarted task that
// resumes from its committed offset ({"seq": n} in partition
// {"datagen.task": i}) produces exactly the records that follow. Settings
// bound the count (iterations) and the rate (records.per.sec) per task.
//
// Key: STRING "key-<k>", k cycling through key.cardinality values.
// Value: struct tributary.datagen.Record {id int64, key string,
// amount Decimal(2), created Timestamp, payload string (payload.bytes
// random letters)}.
package datagen

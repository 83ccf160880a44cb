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
// random letters of base64url's alphabet)}. A payload of up to 64 KiB is a
// window, at a random offset, of a 1 MiB random text the task draws when it
// starts, so that generating it costs no more than a slice (Kafka's own
// producer benchmark sends one payload over and over). Records still differ;
// about one in eight shares part of its text with one of the 64 records
// before it, so compression codecs shrink a batch of them by a few percent
// (snappy, lz4 and gzip) or more (zstd). Since this scheme, a seed
// generates other payloads and amounts than in earlier versions.
package datagen

// Package s3 is the S3 sink connector, compatible with Confluent's
// io.confluent.connect.s3.S3SinkConnector: the same configuration keys and
// defaults, the same object keys, and JSON, Avro, Parquet and ByteArray
// files, written to S3 with aws-sdk-go-v2 or, with a file:// store.url, to
// a local directory in the same layout.
//
// # Layout
//
// Each Kafka partition writes files named
//
//	<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset><ext>
//
// where the encoded partition is partition=<p> (DefaultPartitioner),
// <field>=<value> (FieldPartitioner) or the record's time bucket formatted
// with path.format (TimeBasedPartitioner, DailyPartitioner,
// HourlyPartitioner), and the start offset, zero-padded to
// filename.offset.zero.pad.width digits, is the offset of the file's first
// record. store.kafka.keys and store.kafka.headers add <name>.keys<ext> and
// <name>.headers<ext> beside each file.
//
// # Exactly once
//
// A Kafka partition's files rotate together (flush.size counts the
// partition's records; rotate.interval.ms, rotate.schedule.interval.ms and
// a schema change rotate all of them), and Flush reports a partition's
// offset durable only once all the files holding its records are uploaded
// completely: the worker commits no further. After a crash or a rebalance
// the partition is consumed again from that offset, and with a
// deterministic configuration the same records make the same files under
// the same names. They are created with If-None-Match: * (where the server
// supports it; enable.conditional.writes), so an object already uploaded is
// kept and never written twice; without conditional writes it is replaced
// by an identical one. Each record is then in exactly one object.
//
// Deterministic: DefaultPartitioner and FieldPartitioner; the time-based
// partitioners with timestamp.extractor Record or RecordField; rotation by
// flush.size, by rotate.interval.ms with those extractors, and by schema
// changes; the memory bound (it never changes file contents). At least
// once: timestamp.extractor=Wallclock, and rotate.schedule.interval.ms
// (file boundaries then depend on when records arrive, so a replay can
// write a record into a file of another name). Those configurations write
// without If-None-Match, as Confluent's sink: a replayed file can hold
// more records than the object a crashed task left under its name (it
// uploaded it, then died before the offsets were committed), and keeping
// that object would lose the difference.
//
// # Memory
//
// A task holds in memory, for each open file, its encoder's buffer (Parquet:
// the row group being built) and the bytes not yet uploaded (at most
// s3.part.size before a multipart part goes out). memory.buffer.max.bytes
// bounds their sum: when it is exceeded, the largest open files flush their
// encoders and move their pending bytes to an unlinked local spill file
// until the sum is under three quarters of the bound. So a task's memory is
// about
//
//	memory.buffer.max.bytes + ~70 MiB (Go runtime and GC headroom, SDK, AWS
//	client, one record batch, up to 16 MiB of Arrow buffers the Parquet
//	writers recycle)
//
// whatever the number of partitions and open files, instead of Confluent's
// s3.part.size × open files; the spill files take the rest on local disk
// (up to s3.part.size per open file). Rotated files are uploaded by a
// goroutine of the task while it encodes the next ones; at most two
// rotations (one uploading, one waiting) are outside the bound, and Flush
// waits for them before it reports offsets.
//
// Measured (integration/s3_memory_test.go, 100 partitions, 156 MiB of open
// files, flush.size never reached): peak RSS 55 MiB with a 4 MiB bound,
// 97 MiB with 32 MiB, 130 MiB with 64 MiB, 366 MiB without a bound.
//
// # Parquet files
//
// Written with arrow-go as Confluent's sink writes them with parquet-mr:
// snappy by default, dictionary encoding, dropped for a column whose first
// page it does not make smaller than plain values (parquet-mr's fallback
// rule), 64 KiB data pages, V1 data pages, min/max statistics.
package s3

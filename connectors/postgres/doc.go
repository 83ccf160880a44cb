// Package postgres is Tributary's PostgreSQL change-data-capture source,
// compatible with Debezium's PostgreSQL connector: it accepts a Debezium
// configuration (class io.debezium.connector.postgresql.PostgresConnector)
// and produces the same change events, keys, topics and offsets.
//
// How it works:
//
//   - Open connects, creates the publication if asked
//     (publication.autocreate.mode), reads the stored offset and the slot,
//     and decides with snapshot.mode whether to take a snapshot.
//   - A snapshot creates the slot exporting a snapshot; snapshot.max.threads
//     connections import it (SET TRANSACTION SNAPSHOT) and read the tables
//     with COPY in chunks of snapshot.fetch.size rows (by primary key, or by
//     ctid range without one), so memory stays bounded. Streaming then
//     starts at the slot's consistent point: no gap, no overlap.
//   - Streaming reads the slot with pgoutput (text values, decoded by the
//     same functions as the snapshot's COPY rows), protocol version 2 with
//     streaming on where the server has it (14+): the server sends large
//     transactions while they run; streamedTxs keeps their messages per
//     transaction (spilling to an unlinked file past
//     pgoutput.stream.buffer.bytes) until Stream Commit replays them
//     through the protocol-1 path, or Stream Abort drops them.
//   - Offsets are Debezium's (lsn, lsn_proc, lsn_commit, txId, ts_usec,
//     messageType, lsn_events_processed) under partition {"server":
//     topic.prefix). The slot's confirmed flush LSN is advanced only in
//     OffsetsCommitted, to the commit LSN of the latest committed offset:
//     a restarted task asks the slot for what follows it and skips what it
//     had delivered.
//   - Heartbeats (heartbeat.interval.ms) write a logical decoding message
//     (or run heartbeat.action.query) and emit a record carrying the latest
//     position, so an idle or filtered database still moves the slot.
//   - A lost connection (transient: a server crash or restart, a terminated
//     walsender, a network cut) is retried by the task itself, within
//     errors.max.retries, waiting up to retriable.restart.connector.wait.ms
//     between attempts (recoveryFor decides): a stream resumes after the
//     last record Poll handed out; a snapshot not yet out whole is taken
//     again from a new slot, never followed by streaming. Any other error
//     fails the task. The task's lifecycle is one value (lifecycle.go)
//     with pure transitions: events in, the action to take out.
//   - Signals (signal.go) come from the signal table through the stream,
//     from a Kafka topic or from a file; the stream's goroutine acts on
//     them. Incremental snapshots (incremental.go) read chunks between
//     watermarks and de-duplicate them against the changes streamed while
//     a chunk's window is open; their state rides in every offset. A
//     blocking snapshot stops the stream while it reads.
//   - Column transformations and message.key.columns (columns.go) change
//     converters and schemas when a table is described; transaction
//     metadata (txmeta.go) adds BEGIN/END records and transaction blocks.
//   - slot.failover creates a PostgreSQL 17 failover slot; with several
//     hosts in database.hostname the connection goes to the writable one.
package postgres

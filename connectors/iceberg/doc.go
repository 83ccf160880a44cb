// Package iceberg is the Iceberg sink connector, compatible with Apache
// Iceberg's org.apache.iceberg.connect.IcebergSinkConnector (and Tabular's
// io.tabular.iceberg.connect.IcebergSinkConnector, whose upsert mode
// Apache dropped): the same configuration keys and defaults, tables
// written with apache/iceberg-go into a REST, SQL (SQLite, PostgreSQL) or
// Glue catalog, on S3 or a local directory.
//
// # Changes
//
// A record is a Debezium change event (op c, r, u, d, t with before and
// after: no unwrapping transform needed), or a flat row whose operation is
// in iceberg.tables.cdc-field (I, U, D, or Debezium's codes, as
// ExtractNewRecordState's __op gives them, with __deleted=true for a
// delete), or, in append mode, just a row. In upsert mode
// (iceberg.tables.upsert-mode-enabled) or with a CDC field, each table
// keeps, between two commits, the last change per key (the id columns, by
// default the record key's fields), in offset order; a commit then writes
// in one row delta the rows of inserted and updated keys as data files,
// and the keys whose earlier rows go (updated or deleted; every key in
// upsert mode) as an equality delete file on the id columns. An equality
// delete applies only to data files of earlier commits, so the rows of
// the same commit survive it; a truncate removes every data file in the
// same transaction. The deciding core (batch.add, batch.plan) is pure.
//
// # Exactly once
//
// Every commit stores, in its snapshot's summary, the offsets of every
// partition the table has consumed: kafka.connect.offsets.<topic>.<group>
// = {"<partition>": <next offset>} with the Connect group (connect-<name>),
// carried forward from the snapshot it is built on, beside
// kafka.connect.commit-id, kafka.connect.task-id and
// kafka.connect.valid-through-ts. When partitions are assigned, the task
// reads the tables' offsets and rewinds to them (the consumer group is
// only the fallback of a table that holds none); Flush reports to the
// worker, per partition, the first offset not yet committed to every
// table.
//
// Several tasks write one table without a coordinator: each commits its
// own partitions, and each commit is a compare-and-set. It asserts the
// snapshot it was built on (the catalog refuses it if the table moved),
// and before each attempt it checks that, for every partition it
// advances, the table's offset is still the one its changes start from.
// A partition is consumed by one task at a time, so a commit conflict
// with another task's commit is retried on the new snapshot; but a task
// that lost a partition in a rebalance (a zombie) and still holds changes
// of it finds the table's offset moved by the partition's new owner (or
// moves it first, and then the new owner finds it moved), and the commit
// that would apply changes twice or skip some is refused instead: that
// task drops them and rewinds to the table's offsets. A crash between
// writing files and the catalog commit leaves only unreferenced files.
package iceberg

package postgres

import (
	"strconv"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// debeziumVersion is what source.version says: the Debezium release whose
// events these reproduce.
const debeziumVersion = "3.6.1.Final"

// Values of source.snapshot.
const (
	snapTrue       = "true"
	snapFirst      = "first"
	snapFirstTable = "first_in_data_collection"
	snapLastTable  = "last_in_data_collection"
	snapLast       = "last"
	snapFalse      = "false"
)

// Field positions of the source struct.
const (
	srcVersion = iota
	srcConnector
	srcName
	srcTsMs
	srcSnapshot
	srcDB
	srcSequence
	srcTsUs
	srcTsNs
	srcSchema
	srcTable
	srcTxID
	srcLSN
	srcXmin
	srcOrigin
	srcOriginLSN
)

// Field positions of the envelope.
const (
	envBefore = iota
	envAfter
	envSource
	envTransaction
	envOp
	envTsMs
	envTsUs
	envTsNs
)

// sourceSchemas holds the schemas shared by every table's events.
type sourceSchemas struct {
	source, block                *schema.Schema
	heartbeatKey, heartbeatValue *schema.Schema
	// The transaction metadata topic's key and value.
	txKey, txValue, txCollection *schema.Schema
}

func newSourceSchemas() *sourceSchemas {
	snapshot := &schema.Schema{Type: schema.TypeString, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
		Default:    snapFalse,
		Parameters: map[string]string{"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}
	s := &sourceSchemas{
		source: schema.StructOf("io.debezium.connector.postgresql.Source").Version(1).
			Field("version", schema.String).
			Field("connector", schema.String).
			Field("name", schema.String).
			Field("ts_ms", schema.Int64).
			Field("snapshot", snapshot).
			Field("db", schema.String).
			Field("sequence", schema.OptionalString).
			Field("ts_us", schema.OptionalInt64).
			Field("ts_ns", schema.OptionalInt64).
			Field("schema", schema.String).
			Field("table", schema.String).
			Field("txId", schema.OptionalInt64).
			Field("lsn", schema.OptionalInt64).
			Field("xmin", schema.OptionalInt64).
			Field("origin", schema.OptionalString).
			Field("origin_lsn", schema.OptionalInt64).
			Build(),
		block: schema.StructOf("event.block").Version(1).Optional().
			Field("id", schema.String).
			Field("total_order", schema.Int64).
			Field("data_collection_order", schema.Int64).
			Build(),
		heartbeatKey: schema.StructOf("io.debezium.connector.common.ServerNameKey").Version(1).
			Field("serverName", schema.String).Build(),
		heartbeatValue: schema.StructOf("io.debezium.connector.common.Heartbeat").Version(1).
			Field("ts_ms", schema.Int64).Build(),
		txKey: schema.StructOf("io.debezium.connector.common.TransactionMetadataKey").Version(1).
			Field("id", schema.String).Build(),
	}
	s.txCollection = schema.StructOf("event.collection").Version(1).Optional().
		Field("data_collection", schema.String).
		Field("event_count", schema.Int64).
		Build()
	s.txValue = schema.StructOf("io.debezium.connector.common.TransactionMetadataValue").Version(1).
		Field("status", schema.String).
		Field("id", schema.String).
		Field("event_count", schema.OptionalInt64).
		Field("data_collections", schema.ArrayOf(s.txCollection).AsOptional()).
		Field("ts_ms", schema.Int64).
		Build()
	return s
}

// envelope returns the change event schema of a table.
// The transaction block is always in the schema (as Debezium's); it is
// null unless provide.transaction.metadata is set.
func (s *sourceSchemas) envelope(name string, value *schema.Schema) *schema.Schema {
	return schema.StructOf(name).Version(2).
		Field("before", value).
		Field("after", value).
		Field("source", s.source).
		Field("transaction", s.block).
		Field("op", schema.String).
		Field("ts_ms", schema.OptionalInt64).
		Field("ts_us", schema.OptionalInt64).
		Field("ts_ns", schema.OptionalInt64).
		Build()
}

// position is where an event comes from in the WAL.
type position struct {
	lsn        uint64 // the change's LSN (the snapshot's for reads)
	commit     uint64 // commit LSN of its transaction; 0 in the snapshot
	lastCommit uint64 // end LSN of the transaction before (for source.sequence)
	txID       int64
	commitTs   time.Time
	n          int64 // events at the same LSN before this one

	// The transaction's values boxed once for all its events (an event
	// would otherwise allocate each of them again); nil until set by box.
	boxed *txBoxes
}

// txBoxes are a transaction's source and offset values, boxed.
type txBoxes struct {
	txID, tsMs, tsUs, tsNs, commit, tsUsec any
	seqPrefix                              string // `["<last commit>","`
}

// box fills pos.boxed from the other fields.
func (pos *position) box() {
	us := pos.commitTs.UnixMicro()
	last := "null"
	if pos.lastCommit != 0 {
		last = `"` + strconv.FormatUint(pos.lastCommit, 10) + `"`
	}
	pos.boxed = &txBoxes{txID: pos.txID, tsMs: floorDiv(us, 1000), tsUs: us, tsNs: us * 1000,
		commit: int64(pos.commit), tsUsec: us, seqPrefix: "[" + last + `,"`}
}

// sourceStruct builds the source struct of an event; lsn is pos.lsn,
// boxed (the offset shares it).
func (s *sourceSchemas) sourceStruct(cfg *Config, t *table, pos *position, lsn any, snapshot string) *schema.Struct {
	if pos.boxed == nil {
		pos.box()
	}
	b := pos.boxed
	src := schema.NewStruct(s.source)
	src.SetIndex(srcVersion, debeziumVersion)
	src.SetIndex(srcConnector, "postgresql")
	src.SetIndex(srcName, t.boxedPrefix)
	src.SetIndex(srcTsMs, b.tsMs)
	src.SetIndex(srcSnapshot, snapshot)
	src.SetIndex(srcDB, t.boxedDB)
	src.SetIndex(srcTsUs, b.tsUs)
	src.SetIndex(srcTsNs, b.tsNs)
	src.SetIndex(srcSchema, t.boxedSchema)
	src.SetIndex(srcTable, t.boxedTable)
	src.SetIndex(srcTxID, b.txID)
	src.SetIndex(srcLSN, lsn)
	seq := make([]byte, 0, len(b.seqPrefix)+24)
	seq = append(seq, b.seqPrefix...)
	seq = strconv.AppendUint(seq, pos.lsn, 10)
	seq = append(seq, '"', ']')
	src.SetIndex(srcSequence, string(seq))
	return src
}

// event builds a change event's value.
func (s *sourceSchemas) event(t *table, op string, before, after *schema.Struct, src *schema.Struct, now time.Time) *schema.Struct {
	us := now.UnixMicro()
	return fillEvent(schema.NewStruct(t.envelopeSchema), op, before, after, src, us/1000, us, now.UnixNano())
}

// fillEvent sets the fields of v, an empty envelope, to a change event's;
// the times (int64s) come boxed, so that a caller can share them between
// events.
func fillEvent(v *schema.Struct, op string, before, after, src *schema.Struct, tsMs, tsUs, tsNs any) *schema.Struct {
	if before != nil {
		v.SetIndex(envBefore, before)
	}
	if after != nil {
		v.SetIndex(envAfter, after)
	}
	v.SetIndex(envSource, src)
	v.SetIndex(envOp, op)
	v.SetIndex(envTsMs, tsMs)
	v.SetIndex(envTsUs, tsUs)
	v.SetIndex(envTsNs, tsNs)
	return v
}

// Offset keys, Debezium's.
const (
	offLSN          = "lsn"
	offLSNProc      = "lsn_proc"
	offLSNCommit    = "lsn_commit"
	offTxID         = "txId"
	offTsUsec       = "ts_usec"
	offMessageType  = "messageType"
	offEventsAtLSN  = "lsn_events_processed"
	offSnapshot     = "snapshot"
	offLastSnapshot = "last_snapshot_record"
	offSnapshotDone = "snapshot_completed"
)

// streamOffset is the offset of a streamed change; lsn is pos.lsn, boxed.
func streamOffset(pos *position, lsn any, msgType string) sdk.Offset {
	if pos.boxed == nil {
		pos.box()
	}
	o := sdk.Offset{
		offLSN:         lsn,
		offLSNProc:     lsn,
		offLSNCommit:   pos.boxed.commit,
		offTxID:        pos.boxed.txID,
		offTsUsec:      pos.boxed.tsUsec,
		offMessageType: msgType,
	}
	if pos.n > 0 {
		o[offEventsAtLSN] = pos.n + 1
	}
	return o
}

// snapshotOffset is the offset of a snapshot record.
func snapshotOffset(lsn uint64, txID int64, ts time.Time, last bool) sdk.Offset {
	return sdk.Offset{
		offLSN:          int64(lsn),
		offTxID:         txID,
		offTsUsec:       ts.UnixMicro(),
		offSnapshot:     "INITIAL",
		offLastSnapshot: last,
		offSnapshotDone: last,
	}
}

// keyStruct builds the key of a row from its values (indexed as the
// table's columns).
func keyStruct(t *table, vals []any) *schema.Struct {
	if t.keySchema == nil {
		return nil
	}
	return fillStruct(schema.NewStruct(t.keySchema), t.key, vals)
}

// valueStruct builds the row struct from the columns' values.
func valueStruct(t *table, vals []any) *schema.Struct {
	return fillStruct(schema.NewStruct(t.valueSchema), t.valueCols, vals)
}

// fillStruct sets the fields of v, an empty struct, to the values of the
// columns cols (a field per column, in order).
func fillStruct(v *schema.Struct, cols []int, vals []any) *schema.Struct {
	for i, c := range cols {
		v.SetIndex(i, vals[c])
	}
	return v
}

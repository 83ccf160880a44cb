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
}

func newSourceSchemas() *sourceSchemas {
	snapshot := &schema.Schema{Type: schema.TypeString, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
		Default:    snapFalse,
		Parameters: map[string]string{"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}
	return &sourceSchemas{
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
	}
}

// envelope returns the change event schema of a table.
// The transaction block is always in the schema (as Debezium's); it is
// null, since provide.transaction.metadata is not supported yet.
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
	lastCommit uint64 // commit LSN of the transaction before (for source.sequence)
	txID       int64
	commitTs   time.Time
	n          int64 // events at the same LSN before this one
}

// source builds the source struct of an event.
func (s *sourceSchemas) sourceStruct(cfg *Config, t *table, pos *position, snapshot string) *schema.Struct {
	src := schema.NewStruct(s.source)
	us := pos.commitTs.UnixMicro()
	src.SetIndex(srcVersion, debeziumVersion)
	src.SetIndex(srcConnector, "postgresql")
	src.SetIndex(srcName, cfg.TopicPrefix)
	src.SetIndex(srcTsMs, floorDiv(us, 1000))
	src.SetIndex(srcSnapshot, snapshot)
	src.SetIndex(srcDB, cfg.DBName)
	src.SetIndex(srcTsUs, us)
	src.SetIndex(srcTsNs, us*1000)
	src.SetIndex(srcSchema, t.id.schema)
	src.SetIndex(srcTable, t.id.name)
	src.SetIndex(srcTxID, pos.txID)
	src.SetIndex(srcLSN, int64(pos.lsn))
	{
		last := "null"
		if pos.lastCommit != 0 {
			last = strconv.Quote(strconv.FormatUint(pos.lastCommit, 10))
		}
		src.SetIndex(srcSequence, "["+last+","+strconv.Quote(strconv.FormatUint(pos.lsn, 10))+"]")
	}
	return src
}

// event builds a change event's value.
func (s *sourceSchemas) event(t *table, op string, before, after *schema.Struct, src *schema.Struct, now time.Time) *schema.Struct {
	v := schema.NewStruct(t.envelopeSchema)
	if before != nil {
		v.SetIndex(envBefore, before)
	}
	if after != nil {
		v.SetIndex(envAfter, after)
	}
	v.SetIndex(envSource, src)
	v.SetIndex(envOp, op)
	us := now.UnixMicro()
	v.SetIndex(envTsMs, us/1000)
	v.SetIndex(envTsUs, us)
	v.SetIndex(envTsNs, now.UnixNano())
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

// streamOffset is the offset of a streamed change.
func streamOffset(pos *position, msgType string) sdk.Offset {
	o := sdk.Offset{
		offLSN:         int64(pos.lsn),
		offLSNProc:     int64(pos.lsn),
		offLSNCommit:   int64(pos.commit),
		offTxID:        pos.txID,
		offTsUsec:      pos.commitTs.UnixMicro(),
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
	k := schema.NewStruct(t.keySchema)
	for i, c := range t.pk {
		k.SetIndex(i, vals[c])
	}
	return k
}

// valueStruct builds the row struct from the columns' values.
func valueStruct(t *table, vals []any) *schema.Struct {
	v := schema.NewStruct(t.valueSchema)
	for i, c := range t.valueCols {
		v.SetIndex(i, vals[c])
	}
	return v
}

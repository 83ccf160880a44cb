package mongodb

import (
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// debeziumVersion is what source.version says: the Debezium release whose
// events these reproduce.
const debeziumVersion = "3.6.1.Final"

// Values of source.snapshot.
const (
	snapTrue  = "true"
	snapLast  = "last"
	snapFalse = "false"
)

// Field positions of the source struct (MongoDbSourceInfoStructMaker).
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
	srcCollection
	srcOrd
	srcLsid
	srcTxnNumber
	srcWallTime
)

// Field positions of the envelope (MongoDbSchema).
const (
	envBefore = iota
	envAfter
	envUpdate
	envSource
	envOp
	envTsMs
	envTransaction
)

// jsonSchema is Debezium's io.debezium.data.Json: a string holding JSON.
var jsonSchema = &schema.Schema{Type: schema.TypeString, Optional: true, Name: "io.debezium.data.Json", Version: 1}

var (
	truncatedArraySchema = schema.StructOf("io.debezium.connector.mongodb.changestream.truncatedarray").Version(1).
				Field("field", schema.String).
				Field("size", schema.Int32).
				Build()
	updateDescriptionSchema = schema.StructOf("io.debezium.connector.mongodb.changestream.updatedescription").Version(1).Optional().
				Field("removedFields", schema.ArrayOf(schema.String).AsOptional()).
				Field("updatedFields", jsonSchema).
				Field("truncatedArrays", schema.ArrayOf(truncatedArraySchema).AsOptional()).
				Build()
	sourceSchema = schema.StructOf("io.debezium.connector.mongo.Source").Version(1).
			Field("version", schema.String).
			Field("connector", schema.String).
			Field("name", schema.String).
			Field("ts_ms", schema.Int64).
			Field("snapshot", &schema.Schema{Type: schema.TypeString, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
			Default:    snapFalse,
			Parameters: map[string]string{"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}).
		Field("db", schema.String).
		Field("sequence", schema.OptionalString).
		Field("ts_us", schema.OptionalInt64).
		Field("ts_ns", schema.OptionalInt64).
		Field("collection", schema.String).
		Field("ord", schema.Int32).
		Field("lsid", schema.OptionalString).
		Field("txnNumber", schema.OptionalInt64).
		Field("wallTime", schema.OptionalInt64).
		Build()
	blockSchema = schema.StructOf("event.block").Version(1).Optional().
			Field("id", schema.String).
			Field("total_order", schema.Int64).
			Field("data_collection_order", schema.Int64).
			Build()
	heartbeatKeySchema = schema.StructOf("io.debezium.connector.common.ServerNameKey").Version(1).
				Field("serverName", schema.String).Build()
	heartbeatValueSchema = schema.StructOf("io.debezium.connector.common.Heartbeat").Version(1).
				Field("ts_ms", schema.Int64).Build()
)

// collectionSchemas are one collection's topic and schemas.
type collectionSchemas struct {
	db, coll string
	topic    string
	key      *schema.Schema
	envelope *schema.Schema
	excl     exclusions
}

// envelopes builds change events; it is shared by a task's goroutines.
type envelopes struct {
	prefix  string
	filters *filters
	mu      sync.Mutex
	cols    map[string]*collectionSchemas
	now     func() time.Time
}

func newEnvelopes(prefix string, f *filters) *envelopes {
	return &envelopes{prefix: prefix, filters: f, cols: map[string]*collectionSchemas{}, now: time.Now}
}

// collection returns the schemas of db.coll, topic <prefix>.<db>.<coll>.
func (e *envelopes) collection(db, coll string) *collectionSchemas {
	ns := db + "." + coll
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.cols[ns]; ok {
		return c
	}
	topic := e.prefix + "." + ns
	c := &collectionSchemas{
		db: db, coll: coll, topic: topic,
		key: schema.StructOf(topic+".Key").Field("id", schema.String).Build(),
		envelope: schema.StructOf(topic+".Envelope").
			Field("before", jsonSchema).
			Field("after", jsonSchema).
			Field("updateDescription", updateDescriptionSchema).
			Field("source", sourceSchema).
			Field("op", schema.OptionalString).
			Field("ts_ms", schema.OptionalInt64).
			Field("transaction", blockSchema).
			Build(),
		excl: e.filters.excluded(ns),
	}
	e.cols[ns] = c
	return c
}

// position is a point of the change stream: the cluster time of an event
// (when known) and its resume token.
type position struct {
	t, i    uint32
	hasTime bool
	token   bson.Raw // nil when only the time is known
}

// sourceInfo is what source carries besides the collection.
type sourceInfo struct {
	pos       position
	snapshot  string
	wallTime  int64
	lsid      bson.Raw
	txnNumber int64
	hasTxn    bool
}

func (e *envelopes) source(c *collectionSchemas, si *sourceInfo) (*schema.Struct, error) {
	var ts time.Time
	switch {
	case si.wallTime != 0:
		ts = time.UnixMilli(si.wallTime)
	case si.pos.hasTime:
		ts = time.Unix(int64(si.pos.t), 0)
	default:
		ts = e.now()
	}
	s := schema.NewStruct(sourceSchema)
	s.SetIndex(srcVersion, debeziumVersion)
	s.SetIndex(srcConnector, "mongodb")
	s.SetIndex(srcName, e.prefix)
	s.SetIndex(srcTsMs, ts.UnixMilli())
	if si.snapshot != snapFalse {
		s.SetIndex(srcSnapshot, si.snapshot)
	}
	s.SetIndex(srcDB, c.db)
	s.SetIndex(srcTsUs, ts.UnixMicro())
	s.SetIndex(srcTsNs, ts.UnixNano())
	s.SetIndex(srcCollection, c.coll)
	ord := int32(-1)
	if si.pos.hasTime {
		ord = int32(si.pos.i)
	}
	s.SetIndex(srcOrd, ord)
	if si.lsid != nil && si.hasTxn {
		w := jsonWriter{mode: modeStrict}
		if err := w.document(si.lsid, nil); err != nil {
			return nil, fmt.Errorf("lsid: %w", err)
		}
		s.SetIndex(srcLsid, string(w.buf))
		s.SetIndex(srcTxnNumber, si.txnNumber)
	}
	if si.wallTime != 0 {
		s.SetIndex(srcWallTime, si.wallTime)
	}
	return s, nil
}

// keyOf returns the key struct of a document (or documentKey): {"id": the
// _id in relaxed extended JSON}.
func keyOf(c *collectionSchemas, doc bson.Raw) (*schema.Struct, error) {
	id, err := bsoncore.Document(doc).LookupErr("_id")
	if err != nil {
		return nil, fmt.Errorf("document without _id")
	}
	w := jsonWriter{mode: modeRelaxed}
	if err := w.value(id, nil); err != nil {
		return nil, fmt.Errorf("_id: %w", err)
	}
	k := schema.NewStruct(c.key)
	k.SetIndex(0, string(w.buf))
	return k, nil
}

// documentJSON renders a document as Debezium's after/before strings.
func documentJSON(doc bson.Raw, excl exclusions) (string, error) {
	w := jsonWriter{mode: modeStrict, buf: make([]byte, 0, len(doc)+len(doc)/4)}
	if err := w.document(doc, excl); err != nil {
		return "", err
	}
	return string(w.buf), nil
}

// readRecord builds the read (op r) event of a snapshotted document.
func (e *envelopes) readRecord(c *collectionSchemas, doc bson.Raw, si *sourceInfo, op string, r *sdk.SourceRecord) error {
	key, err := keyOf(c, doc)
	if err != nil {
		return fmt.Errorf("%s.%s: %w", c.db, c.coll, err)
	}
	after, err := documentJSON(doc, c.excl)
	if err != nil {
		return fmt.Errorf("%s.%s: document %v: %w", c.db, c.coll, key.GetIndex(0), err)
	}
	src, err := e.source(c, si)
	if err != nil {
		return err
	}
	v := schema.NewStruct(c.envelope)
	v.SetIndex(envAfter, after)
	v.SetIndex(envSource, src)
	v.SetIndex(envOp, op)
	v.SetIndex(envTsMs, e.now().UnixMilli())
	r.Topic, r.KeySchema, r.Key, r.ValueSchema, r.Value = c.topic, c.key, key, c.envelope, v
	return nil
}

// opCodes maps change stream operation types to Debezium's op codes.
var opCodes = map[string]string{"insert": "c", "update": "u", "replace": "u", "delete": "d"}

// changeRecord builds the change event of ev; ok is false for operation
// types the connector does not turn into events.
func (e *envelopes) changeRecord(ev *changeEvent, r *sdk.SourceRecord) (ok bool, err error) {
	op, ok := opCodes[ev.op]
	if !ok {
		return false, nil
	}
	if ev.key == nil {
		return false, fmt.Errorf("%s event on %s.%s without documentKey", ev.op, ev.db, ev.coll)
	}
	c := e.collection(ev.db, ev.coll)
	key, err := keyOf(c, ev.key)
	if err != nil {
		return false, fmt.Errorf("%s.%s: documentKey: %w", ev.db, ev.coll, err)
	}
	v := schema.NewStruct(c.envelope)
	doc := func(field int, d bson.Raw) error {
		if d == nil {
			return nil
		}
		s, err := documentJSON(d, c.excl)
		if err != nil {
			return fmt.Errorf("%s.%s: %s event of %v: %w", ev.db, ev.coll, ev.op, key.GetIndex(0), err)
		}
		v.SetIndex(field, s)
		return nil
	}
	switch op {
	case "c":
		err = doc(envAfter, ev.after)
	case "u":
		if err = doc(envBefore, ev.before); err == nil {
			err = doc(envAfter, ev.after)
		}
		if err == nil && ev.update != nil {
			var ud *schema.Struct
			ud, err = updateStruct(ev.update, c.excl)
			v.SetIndex(envUpdate, ud)
		}
	case "d":
		err = doc(envBefore, ev.before)
	}
	if err != nil {
		return false, err
	}
	src, err := e.source(c, &sourceInfo{
		pos:      position{t: ev.clusterT, i: ev.clusterI, hasTime: ev.hasTime, token: ev.token},
		snapshot: snapFalse, wallTime: ev.wallTime, lsid: ev.lsid, txnNumber: ev.txnNumber, hasTxn: ev.hasTxn,
	})
	if err != nil {
		return false, err
	}
	v.SetIndex(envSource, src)
	v.SetIndex(envOp, op)
	v.SetIndex(envTsMs, e.now().UnixMilli())
	r.Topic, r.KeySchema, r.Key, r.ValueSchema, r.Value = c.topic, c.key, key, c.envelope, v
	return true, nil
}

// updateStruct renders an updateDescription, leaving out excluded fields.
func updateStruct(ud *updateDescription, excl exclusions) (*schema.Struct, error) {
	s := schema.NewStruct(updateDescriptionSchema)
	if len(ud.removed) > 0 {
		var kept []any
		for _, f := range ud.removed {
			if !excl.dotted(f) {
				kept = append(kept, f)
			}
		}
		if len(kept) > 0 {
			s.SetIndex(0, kept)
		}
	}
	if ud.updated != nil {
		w := jsonWriter{mode: modeRelaxedSpaced}
		if err := w.dottedDocument(ud.updated, excl); err != nil {
			return nil, fmt.Errorf("updatedFields: %w", err)
		}
		s.SetIndex(1, string(w.buf))
	}
	if len(ud.truncated) > 0 {
		var kept []any
		for _, ta := range ud.truncated {
			if excl.dotted(ta.field) {
				continue
			}
			t := schema.NewStruct(truncatedArraySchema)
			t.SetIndex(0, ta.field)
			t.SetIndex(1, ta.size)
			kept = append(kept, t)
		}
		if len(kept) > 0 {
			s.SetIndex(2, kept)
		}
	}
	return s, nil
}

// heartbeat builds Debezium's heartbeat record.
func (e *envelopes) heartbeat(topic string) (key, value *schema.Struct) {
	key = schema.NewStruct(heartbeatKeySchema)
	key.SetIndex(0, e.prefix)
	value = schema.NewStruct(heartbeatValueSchema)
	value.SetIndex(0, e.now().UnixMilli())
	return key, value
}

// tokenString encodes a resume token as Debezium stores it in offsets:
// base64 of the token document's BSON.
func tokenString(tok bson.Raw) string { return base64.StdEncoding.EncodeToString(tok) }

// parseToken decodes a stored resume token: base64 BSON (Debezium 2.x and
// later), or an older hex _data string.
func parseToken(s string) (bson.Raw, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && bsoncore.Document(b).Validate() == nil {
		return bson.Raw(b), nil
	}
	doc, err := bson.Marshal(bson.D{{Key: "_data", Value: s}})
	if err != nil {
		return nil, err
	}
	return bson.Raw(doc), nil
}

// setSnapshotLast marks a read event as the snapshot's last
// (source.snapshot "last").
func setSnapshotLast(r *sdk.SourceRecord) {
	if v, ok := r.Value.(*schema.Struct); ok {
		if src, ok := v.GetIndex(envSource).(*schema.Struct); ok {
			src.SetIndex(srcSnapshot, snapLast)
		}
	}
}

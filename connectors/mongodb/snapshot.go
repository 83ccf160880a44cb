package mongodb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// A snapshot copies each collection in _id order, so that it can resume
// after a restart: every read event's offset says where each collection
// being copied got to, and the copy goes on after that _id. (Debezium
// starts an interrupted snapshot over.) Up to snapshot.max.threads
// collections are read at once (snapplan.go, snapfeed.go).
//
// _id values of different BSON types sort by type bracket first; a range
// query ($gt) only sees its own bracket, so a resumed collection is read
// in two queries: the rest of the _id's bracket, then the brackets after it.

// idBrackets are MongoDB's comparison order of the BSON types an _id can
// have, as $type aliases (arrays and regular expressions cannot be _id
// values; MinKey, MaxKey and the deprecated symbol are left out, as
// FerretDB does not know their aliases).
var idBrackets = [][]string{
	{}, {"null"}, {"double", "int", "long", "decimal"}, {"string"}, {"object"},
	{"binData"}, {"objectId"}, {"bool"}, {"date"}, {"timestamp"}, {}, {},
}

func bracketOf(t bsoncore.Type) int {
	switch t {
	case bsoncore.TypeMinKey:
		return 0
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return 1
	case bsoncore.TypeDouble, bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDecimal128:
		return 2
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		return 3
	case bsoncore.TypeEmbeddedDocument:
		return 4
	case bsoncore.TypeBinary:
		return 5
	case bsoncore.TypeObjectID:
		return 6
	case bsoncore.TypeBoolean:
		return 7
	case bsoncore.TypeDateTime:
		return 8
	case bsoncore.TypeTimestamp:
		return 9
	case bsoncore.TypeRegex:
		return 10
	case bsoncore.TypeMaxKey:
		return 11
	}
	return -1
}

// filtersAfter returns the queries that together read the documents whose
// _id sorts after the _id in after (a {"_id": v} document), in _id order;
// a nil after reads everything.
func filtersAfter(after bson.Raw) ([]bson.D, error) {
	if after == nil {
		return []bson.D{{}}, nil
	}
	v, err := after.LookupErr("_id")
	if err != nil {
		return nil, fmt.Errorf("snapshot position %v has no _id", after)
	}
	b := bracketOf(bsoncore.Type(v.Type))
	if b < 0 {
		return nil, fmt.Errorf("snapshot position: _id of type %s", v.Type)
	}
	out := []bson.D{{{Key: "_id", Value: bson.D{{Key: "$gt", Value: v}}}}}
	var later bson.A
	for _, aliases := range idBrackets[b+1:] {
		for _, a := range aliases {
			later = append(later, a)
		}
	}
	if len(later) > 0 {
		out = append(out, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: later}}}})
	}
	return out, nil
}

// snapshotReader reads the documents of one collection in _id order.
type snapshotReader struct {
	client    *mongo.Client
	fetchSize int32
	ns        namespace
	queries   []bson.D // queries left
	cur       *mongo.Cursor
	after     bson.Raw // {_id} of the last document handed out (nil: none yet)
}

// newSnapshotReader reads ns after the _id in after (nil: from the start).
func newSnapshotReader(client *mongo.Client, fetchSize int32, ns namespace, after bson.Raw) (*snapshotReader, error) {
	r := &snapshotReader{client: client, fetchSize: fetchSize, ns: ns, after: after}
	var err error
	r.queries, err = filtersAfter(after)
	return r, err
}

// next returns the next document (valid until the following call), or nil
// at the end of the collection.
func (r *snapshotReader) next(ctx context.Context) (bson.Raw, error) {
	for {
		if r.cur == nil {
			if len(r.queries) == 0 {
				return nil, nil
			}
			opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
			if r.fetchSize > 0 {
				opts.SetBatchSize(r.fetchSize)
			}
			cur, err := r.client.Database(r.ns.db).Collection(r.ns.coll).Find(ctx, r.queries[0], opts)
			if err != nil {
				return nil, fmt.Errorf("mongodb: snapshot of %s: %w", r.ns, err)
			}
			r.cur, r.queries = cur, r.queries[1:]
		}
		if r.cur.Next(ctx) {
			doc := r.cur.Current
			after, err := idDoc(doc)
			if err != nil {
				return nil, fmt.Errorf("mongodb: snapshot of %s: %w", r.ns, err)
			}
			r.after = after
			return doc, nil
		}
		err := r.cur.Err()
		r.cur.Close(context.WithoutCancel(ctx))
		r.cur = nil
		if err != nil {
			// The query broke off (a lost connection, a killed cursor):
			// the next call reads on after the last document handed out,
			// not from the query after it.
			if q, qerr := filtersAfter(r.after); qerr == nil {
				r.queries = q
			}
			return nil, fmt.Errorf("mongodb: snapshot of %s: %w", r.ns, err)
		}
	}
}

// buffered is the number of documents the reader holds from the server
// that next hands out without asking it again.
func (r *snapshotReader) buffered() int {
	if r.cur == nil {
		return 0
	}
	return r.cur.RemainingBatchLength()
}

func (r *snapshotReader) close(ctx context.Context) {
	if r.cur != nil {
		r.cur.Close(ctx)
		r.cur = nil
	}
}

// idDoc returns {"_id": <doc's _id>} as BSON.
func idDoc(doc bson.Raw) (bson.Raw, error) {
	v, err := doc.LookupErr("_id")
	if err != nil {
		return nil, fmt.Errorf("document without _id")
	}
	idx, b := bsoncore.AppendDocumentStart(nil)
	b = bsoncore.AppendValueElement(b, "_id", bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	b, err = bsoncore.AppendDocumentEnd(b, idx)
	return bson.Raw(b), err
}

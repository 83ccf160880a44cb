package mongodb

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// changeEvent is the part of a change stream event document
// (https://www.mongodb.com/docs/manual/reference/change-events/) the
// connector uses. Its byte slices point into the event document.
type changeEvent struct {
	token     bson.Raw // _id: the resume token
	op        string   // operationType
	db, coll  string   // ns
	key       bson.Raw // documentKey
	after     bson.Raw // fullDocument (nil when absent or null)
	before    bson.Raw // fullDocumentBeforeChange
	update    *updateDescription
	clusterT  uint32 // clusterTime
	clusterI  uint32
	hasTime   bool
	wallTime  int64 // ms; 0 when absent
	lsid      bson.Raw
	txnNumber int64
	hasTxn    bool
	fragment  int32 // splitEvent.fragment; 0 when not split
	fragments int32 // splitEvent.of
}

type updateDescription struct {
	updated   bson.Raw
	removed   []string
	truncated []truncatedArray
}

type truncatedArray struct {
	field string
	size  int32
}

// parseChangeEvent decodes an event document. It refuses documents that are
// not well-formed BSON or lack what their operation type needs.
func parseChangeEvent(doc bson.Raw) (changeEvent, error) {
	var ev changeEvent
	if err := bsoncore.Document(doc).Validate(); err != nil {
		return ev, fmt.Errorf("change event is not valid BSON: %w", err)
	}
	elems, err := bsoncore.Document(doc).Elements()
	if err != nil {
		return ev, fmt.Errorf("change event: %w", err)
	}
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "_id":
			d, ok := v.DocumentOK()
			if !ok {
				return ev, fmt.Errorf("change event: _id (the resume token) is a %s, not a document", v.Type)
			}
			ev.token = bson.Raw(d)
		case "operationType":
			s, ok := v.StringValueOK()
			if !ok {
				return ev, fmt.Errorf("change event: operationType is a %s, not a string", v.Type)
			}
			ev.op = s
		case "ns":
			d, ok := v.DocumentOK()
			if !ok {
				return ev, fmt.Errorf("change event: ns is a %s, not a document", v.Type)
			}
			if db, ok := d.Lookup("db").StringValueOK(); ok {
				ev.db = db
			}
			if coll, ok := d.Lookup("coll").StringValueOK(); ok {
				ev.coll = coll
			}
		case "documentKey":
			if d, ok := v.DocumentOK(); ok {
				ev.key = bson.Raw(d)
			}
		case "fullDocument":
			if d, ok := v.DocumentOK(); ok {
				ev.after = bson.Raw(d)
			}
		case "fullDocumentBeforeChange":
			if d, ok := v.DocumentOK(); ok {
				ev.before = bson.Raw(d)
			}
		case "updateDescription":
			d, ok := v.DocumentOK()
			if !ok {
				continue
			}
			ud, err := parseUpdateDescription(d)
			if err != nil {
				return ev, err
			}
			ev.update = ud
		case "clusterTime":
			t, i, ok := v.TimestampOK()
			if ok {
				ev.clusterT, ev.clusterI, ev.hasTime = t, i, true
			}
		case "wallTime":
			if ms, ok := v.DateTimeOK(); ok {
				ev.wallTime = ms
			}
		case "lsid":
			if d, ok := v.DocumentOK(); ok {
				ev.lsid = bson.Raw(d)
			}
		case "txnNumber":
			if n, ok := v.AsInt64OK(); ok {
				ev.txnNumber, ev.hasTxn = n, true
			}
		case "splitEvent":
			d, ok := v.DocumentOK()
			if !ok {
				continue
			}
			f, ok1 := d.Lookup("fragment").AsInt32OK()
			of, ok2 := d.Lookup("of").AsInt32OK()
			if !ok1 || !ok2 || f < 1 || of < 1 || f > of {
				return ev, fmt.Errorf("change event: malformed splitEvent %s", bson.Raw(d))
			}
			ev.fragment, ev.fragments = f, of
		}
	}
	if ev.token == nil {
		return ev, fmt.Errorf("change event without a resume token (_id)")
	}
	if ev.op == "" && ev.fragment == 0 {
		return ev, fmt.Errorf("change event without an operationType")
	}
	return ev, nil
}

func parseUpdateDescription(d bsoncore.Document) (*updateDescription, error) {
	ud := &updateDescription{}
	if v, err := d.LookupErr("updatedFields"); err == nil {
		if doc, ok := v.DocumentOK(); ok {
			ud.updated = bson.Raw(doc)
		}
	}
	if v, err := d.LookupErr("removedFields"); err == nil {
		if arr, ok := v.ArrayOK(); ok {
			vals, err := arr.Values()
			if err != nil {
				return nil, fmt.Errorf("change event: removedFields: %w", err)
			}
			for _, f := range vals {
				s, ok := f.StringValueOK()
				if !ok {
					return nil, fmt.Errorf("change event: removedFields holds a %s", f.Type)
				}
				ud.removed = append(ud.removed, s)
			}
		}
	}
	if v, err := d.LookupErr("truncatedArrays"); err == nil {
		if arr, ok := v.ArrayOK(); ok {
			vals, err := arr.Values()
			if err != nil {
				return nil, fmt.Errorf("change event: truncatedArrays: %w", err)
			}
			for _, ta := range vals {
				doc, ok := ta.DocumentOK()
				if !ok {
					return nil, fmt.Errorf("change event: truncatedArrays holds a %s", ta.Type)
				}
				field, ok1 := doc.Lookup("field").StringValueOK()
				size, ok2 := doc.Lookup("newSize").AsInt32OK()
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("change event: malformed truncatedArrays entry %s", bson.Raw(doc))
				}
				ud.truncated = append(ud.truncated, truncatedArray{field, size})
			}
		}
	}
	return ud, nil
}

// splitJoiner joins the fragments of events that $changeStreamSplitLargeEvent
// split: each field comes from the first fragment that has it, the resume
// token from the last, as Debezium merges them.
type splitJoiner struct {
	parts []changeEvent
}

// add takes the next event; it returns the whole event once the last
// fragment arrived (or at once for an event that was not split).
func (j *splitJoiner) add(ev changeEvent) (changeEvent, bool, error) {
	if ev.fragment == 0 {
		if len(j.parts) > 0 {
			return ev, false, fmt.Errorf("change stream: an event arrived before the last of the %d fragments of a split event (%d of them seen)", j.parts[0].fragments, len(j.parts))
		}
		return ev, true, nil
	}
	if ev.fragment != int32(len(j.parts))+1 {
		return ev, false, fmt.Errorf("change stream: fragment %d of %d of a split event arrived after %d fragments", ev.fragment, ev.fragments, len(j.parts))
	}
	j.parts = append(j.parts, ev)
	if ev.fragment < ev.fragments {
		return ev, false, nil
	}
	out := j.parts[0]
	for _, p := range j.parts[1:] {
		if out.op == "" {
			out.op = p.op
		}
		if out.db == "" {
			out.db, out.coll = p.db, p.coll
		}
		if out.key == nil {
			out.key = p.key
		}
		if out.after == nil {
			out.after = p.after
		}
		if out.before == nil {
			out.before = p.before
		}
		if out.update == nil {
			out.update = p.update
		}
		if !out.hasTime {
			out.clusterT, out.clusterI, out.hasTime = p.clusterT, p.clusterI, p.hasTime
		}
		if out.wallTime == 0 {
			out.wallTime = p.wallTime
		}
		if out.lsid == nil {
			out.lsid = p.lsid
		}
		if !out.hasTxn {
			out.txnNumber, out.hasTxn = p.txnNumber, p.hasTxn
		}
	}
	out.token = ev.token
	out.fragment, out.fragments = 0, 0
	j.parts = nil
	return out, true, nil
}

// pending reports whether fragments of a split event are waiting.
func (j *splitJoiner) pending() bool { return len(j.parts) > 0 }

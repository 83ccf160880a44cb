package mongodb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/tributary-dev/tributary/sdk"
)

// capture.mode=poll: each collection is its own source partition
// {"server_id": <topic.prefix>, "collection": "<db>.<coll>"}. Its snapshot
// reads it in _id order (read events; offsets {"initsync": true,
// "snapshot_after", "high"}), remembering first the highest value of
// capture.poll.field ("high"; with _id, the last document the snapshot
// read); then it is scanned for documents whose
// field (with _id breaking ties) is above the last one seen (offset
// {"last": base64 BSON {"v": value, "id": _id}}). With the field _id, what
// the scans find are inserts (op c); with another field, a document whose
// ObjectId _id is above every _id seen before is an insert (c), any other
// an update (u). Deletes are not seen.
const (
	offPollLast = "last"
	offPollHigh = "high"
	offMaxOID   = "max_oid"
	offField    = "field"
)

// collectionRelist is how often poll mode looks for new collections.
const collectionRelist = 10 * time.Second

type pollColl struct {
	ns   namespace
	part sdk.Partition
	// snapshotting is set while the snapshot has yet to copy the
	// collection, from after the _id in snapAfter (nil: from the start).
	snapshotting bool
	snapAfter    bson.Raw
	// changes is the open scan for changes after last, kept across polls
	// until it is exhausted (one find, not one per poll: a page per poll
	// costs the server a new query each max.batch.size documents).
	changes *mongo.Cursor
	high    bson.Raw // {v, id} of the highest field value when the snapshot began
	last    bson.Raw // {v, id} of the last document seen; nil: from the start
	maxOID  bson.ObjectID
	hasOID  bool
	idle    bool // initial_only: done
}

type poller struct {
	t     *task
	colls []*pollColl
	// snap copies the collections to snapshot, snapshot.max.threads at
	// once; snapColls[i] is its plan's collection i. Nil when none is left.
	snap      *snapshotFeed
	snapColls []*pollColl
	byNS      map[string]*pollColl
	listedAt  time.Time
	next      int // round-robin start
}

func newPoller(ctx context.Context, t *task) (*poller, error) {
	p := &poller{t: t, byNS: map[string]*pollColl{}}
	if err := p.discover(ctx, true); err != nil {
		return nil, err
	}
	return p, nil
}

// discover lists the collections and sets up the new ones; first says
// whether this is the task's start (when snapshot.mode applies).
func (p *poller) discover(ctx context.Context, first bool) error {
	nss, err := p.t.collections(ctx)
	if err != nil {
		return transient(ctx, err)
	}
	p.listedAt = time.Now()
	var fresh []*pollColl
	var parts []sdk.Partition
	for _, ns := range nss {
		if _, ok := p.byNS[ns.String()]; ok {
			continue
		}
		pc := &pollColl{ns: ns, part: sdk.Partition{"server_id": p.t.cfg.TopicPrefix, "collection": ns.String()}}
		fresh = append(fresh, pc)
		parts = append(parts, pc.part)
	}
	if len(fresh) == 0 {
		return nil
	}
	offs, err := p.t.tc.Offsets(ctx, parts)
	if err != nil {
		return fmt.Errorf("mongodb: read offsets: %w", err)
	}
	mode := p.t.cfg.SnapshotMode
	for i, pc := range fresh {
		off := offs[i]
		if err := p.setup(ctx, pc, off, first, mode); err != nil {
			return err
		}
		p.colls = append(p.colls, pc)
		p.byNS[pc.ns.String()] = pc
		if pc.snapshotting {
			if p.snap == nil {
				p.snap = newSnapshotFeed(ctx, p.t.client, p.t.cfg.SnapshotFetchSize, newSnapshotPlan(nil, p.t.cfg.SnapshotMaxThreads))
			}
			p.snap.plan.add(pc.ns, pc.snapAfter)
			p.snapColls = append(p.snapColls, pc)
		}
	}
	return nil
}

func (p *poller) setup(ctx context.Context, pc *pollColl, off sdk.Offset, first bool, mode string) error {
	snapshot := func(after bson.Raw) error {
		if !p.t.f.snapshotted(pc.ns.String()) {
			return p.fromHigh(ctx, pc)
		}
		pc.snapshotting, pc.snapAfter = true, after
		return nil
	}
	if off != nil {
		if f, _ := off.String(offField); f != "" && f != p.t.cfg.PollField {
			return fmt.Errorf("mongodb: the stored offsets of %s track capture.poll.field %q, not %q: delete the connector's offsets (or use a new topic.prefix) to change the field", pc.ns, f, p.t.cfg.PollField)
		}
		if hex, ok := off.String(offMaxOID); ok {
			if oid, err := bson.ObjectIDFromHex(hex); err == nil {
				pc.maxOID, pc.hasOID = oid, true
			}
		}
	}
	switch {
	case off == nil && !first:
		// A collection created while the task runs: everything in it is new.
		return nil
	case off == nil && (mode == SnapshotNoData || mode == SnapshotNever):
		return p.fromHigh(ctx, pc)
	case off == nil:
		if err := p.snapshotHigh(ctx, pc); err != nil {
			return err
		}
		return snapshot(nil)
	}
	if b, _ := off[offInitSync].(bool); b {
		var err error
		if pc.high, err = offsetDoc(off, offPollHigh); err != nil {
			return err
		}
		after, err := offsetDoc(off, offSnapshotAfter)
		if err != nil {
			return err
		}
		return snapshot(after)
	}
	last, err := offsetDoc(off, offPollLast)
	if err != nil {
		return err
	}
	switch mode {
	case SnapshotAlways:
		if err := p.snapshotHigh(ctx, pc); err != nil {
			return err
		}
		return snapshot(nil)
	case SnapshotInitialOnly:
		pc.idle = true
	}
	pc.last = last
	return nil
}

func offsetDoc(off sdk.Offset, key string) (bson.Raw, error) {
	s, ok := off.String(key)
	if !ok || s == "" {
		return nil, nil
	}
	b, err := parseToken(s)
	if err != nil {
		return nil, fmt.Errorf("mongodb: stored offset %s=%q: %w", key, s, err)
	}
	return b, nil
}

// snapshotHigh sets where the scans for changes start once a snapshot of
// pc is done. With the field _id the snapshot itself, reading in _id order,
// finds it: the last document it reads (pollSnapshot). Asking the server
// first would cost a second pass over the collection on servers that do
// not sort by the _id index (FerretDB's: about as long as the snapshot's
// own read).
func (p *poller) snapshotHigh(ctx context.Context, pc *pollColl) error {
	if p.t.cfg.PollField == "_id" {
		pc.high = nil
		return nil
	}
	return p.takeHigh(ctx, pc)
}

// takeHigh remembers the highest value of the poll field before a snapshot.
func (p *poller) takeHigh(ctx context.Context, pc *pollColl) error {
	f := p.t.cfg.PollField
	sort := bson.D{{Key: f, Value: -1}}
	if f != "_id" {
		sort = append(sort, bson.E{Key: "_id", Value: -1})
	}
	var doc bson.Raw
	err := p.t.client.Database(pc.ns.db).Collection(pc.ns.coll).
		FindOne(ctx, bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: true}}}}, options.FindOne().SetSort(sort)).Decode(&doc)
	if err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			pc.high = nil
			return nil
		}
		return transient(ctx, fmt.Errorf("mongodb: highest %s of %s: %w", f, pc.ns, err))
	}
	pc.high, err = p.position(doc)
	return err
}

// fromHigh starts scanning after the current highest value (no snapshot).
func (p *poller) fromHigh(ctx context.Context, pc *pollColl) error {
	if err := p.takeHigh(ctx, pc); err != nil {
		return err
	}
	pc.last, pc.high = pc.high, nil
	return nil
}

// position returns {v: doc's poll field, id: doc's _id}.
func (p *poller) position(doc bson.Raw) (bson.Raw, error) {
	id, err := doc.LookupErr("_id")
	if err != nil {
		return nil, fmt.Errorf("document without _id")
	}
	v, err := doc.LookupErr(p.t.cfg.PollField)
	if err != nil {
		return nil, fmt.Errorf("document %s without %s", id, p.t.cfg.PollField)
	}
	idx, b := bsoncore.AppendDocumentStart(nil)
	b = bsoncore.AppendValueElement(b, "v", bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	b = bsoncore.AppendValueElement(b, "id", bsoncore.Value{Type: bsoncore.Type(id.Type), Data: id.Value})
	b, err = bsoncore.AppendDocumentEnd(b, idx)
	return bson.Raw(b), err
}

func (p *poller) poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	if time.Since(p.listedAt) >= collectionRelist {
		if err := p.discover(ctx, false); err != nil {
			return nil, err
		}
	}
	if p.snap != nil {
		return p.pollSnapshot(ctx, max)
	}
	var recs []sdk.SourceRecord
	n := len(p.colls)
	for k := 0; k < n && len(recs) < max; k++ {
		pc := p.colls[(p.next+k)%n]
		if pc.idle {
			continue
		}
		var err error
		recs, err = p.pollChanges(ctx, pc, recs, max)
		if err != nil {
			if len(recs) > 0 {
				return recs, nil // the error comes again at the next read
			}
			return nil, err
		}
	}
	if n > 0 {
		p.next = (p.next + 1) % n
	}
	if len(recs) == 0 {
		wait(ctx, p.t.cfg.PollInterval)
	}
	return recs, nil
}

// pollSnapshot returns the next read events of the collections being
// copied, and for each collection copied the offset that starts its scans.
func (p *poller) pollSnapshot(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	var recs []sdk.SourceRecord
	for len(recs) < max && p.snap != nil {
		it, err := p.snap.next(ctx)
		if err != nil {
			if len(recs) > 0 {
				return recs, nil // the error comes again at the next read
			}
			return nil, transient(ctx, err)
		}
		if it.done {
			p.snap.close()
			p.snap, p.snapColls = nil, nil
			break
		}
		pc := p.snapColls[it.i]
		if it.end {
			recs = p.snapshotCopied(pc, recs)
			continue
		}
		doc := it.doc
		var r sdk.SourceRecord
		if err := p.t.env.readRecord(p.t.env.collection(pc.ns.db, pc.ns.coll), doc, &sourceInfo{snapshot: snapTrue}, "r", &r); err != nil {
			return nil, fmt.Errorf("mongodb: %w", err)
		}
		after, err := idDoc(doc)
		if err != nil {
			return nil, fmt.Errorf("mongodb: %s: %w", pc.ns, err)
		}
		if id, ok := doc.Lookup("_id").ObjectIDOK(); ok && (!pc.hasOID || bytes.Compare(id[:], pc.maxOID[:]) > 0) {
			pc.maxOID, pc.hasOID = id, true
		}
		if p.t.cfg.PollField == "_id" { // see snapshotHigh
			if pc.high, err = p.position(doc); err != nil {
				return nil, fmt.Errorf("mongodb: %s: %w", pc.ns, err)
			}
		}
		off := sdk.Offset{offInitSync: true, offField: p.t.cfg.PollField, offSnapshotAfter: tokenString(after)}
		if pc.high != nil {
			off[offPollHigh] = tokenString(pc.high)
		}
		p.addOID(pc, off)
		r.Partition, r.Offset = pc.part, off
		recs = append(recs, r)
	}
	return recs, nil
}

// snapshotCopied ends the snapshot of pc: the last read event of the
// whole snapshot, if in recs, is marked so, and an offset record starts
// pc's scans from the highest value the snapshot began with.
func (p *poller) snapshotCopied(pc *pollColl, recs []sdk.SourceRecord) []sdk.SourceRecord {
	if p.snap.plan.done() {
		for k := len(recs) - 1; k >= 0; k-- {
			if recs[k].Value != nil {
				setSnapshotLast(&recs[k])
				break
			}
		}
	}
	pc.snapshotting, pc.snapAfter = false, nil
	pc.last, pc.high = pc.high, nil
	recs = append(recs, sdk.SourceRecord{Partition: pc.part, Offset: p.offset(pc)}) // offset only
	p.t.log.Info("poll mode: snapshot of collection complete", "collection", pc.ns.String())
	if p.t.cfg.SnapshotMode == SnapshotInitialOnly {
		pc.idle = true
	}
	return recs
}

func (p *poller) addOID(pc *pollColl, off sdk.Offset) {
	if pc.hasOID {
		off[offMaxOID] = pc.maxOID.Hex()
	}
}

func (p *poller) offset(pc *pollColl) sdk.Offset {
	off := sdk.Offset{offField: p.t.cfg.PollField}
	if pc.last != nil {
		off[offPollLast] = tokenString(pc.last)
	}
	p.addOID(pc, off)
	return off
}

// changesFilter selects the documents after pc.last, old enough for
// capture.poll.delay.ms.
func (p *poller) changesFilter(pc *pollColl) bson.D {
	f := p.t.cfg.PollField
	var conds bson.A
	var lastV bson.RawValue
	if pc.last == nil {
		conds = append(conds, bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: true}}}})
	} else {
		lastV = pc.last.Lookup("v")
		if f == "_id" {
			conds = append(conds, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: lastV}}}})
		} else {
			conds = append(conds, bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: f, Value: bson.D{{Key: "$gt", Value: lastV}}}},
				bson.D{{Key: f, Value: lastV}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: pc.last.Lookup("id")}}}},
			}}})
		}
	}
	if d := p.t.cfg.PollDelay; d > 0 {
		cutoff := time.Now().Add(-d)
		switch {
		case lastV.Type == bson.TypeDateTime:
			conds = append(conds, bson.D{{Key: f, Value: bson.D{{Key: "$lt", Value: cutoff}}}})
		case lastV.Type == bson.TypeObjectID || (lastV.Type == 0 && f == "_id"):
			conds = append(conds, bson.D{{Key: f, Value: bson.D{{Key: "$lt", Value: bson.NewObjectIDFromTimestamp(cutoff)}}}})
		}
	}
	if len(conds) == 1 {
		return conds[0].(bson.D)
	}
	return bson.D{{Key: "$and", Value: conds}}
}

// pollChanges appends the changes of one collection after pc.last, from
// the collection's open scan or a new one. A scan that ends, or fails, is
// closed; the next poll opens a new one after pc.last.
func (p *poller) pollChanges(ctx context.Context, pc *pollColl, recs []sdk.SourceRecord, max int) ([]sdk.SourceRecord, error) {
	f := p.t.cfg.PollField
	if pc.changes == nil {
		sort := bson.D{{Key: f, Value: 1}}
		if f != "_id" {
			sort = append(sort, bson.E{Key: "_id", Value: 1})
		}
		opts := options.Find().SetSort(sort).SetBatchSize(p.t.cfg.MaxBatchSize)
		cur, err := p.t.client.Database(pc.ns.db).Collection(pc.ns.coll).Find(ctx, p.changesFilter(pc), opts)
		if err != nil {
			return recs, transient(ctx, fmt.Errorf("mongodb: poll %s: %w", pc.ns, err))
		}
		pc.changes = cur
	}
	cur := pc.changes
	c := p.t.env.collection(pc.ns.db, pc.ns.coll)
	for len(recs) < max {
		if !cur.Next(ctx) {
			err := cur.Err()
			p.closeChanges(ctx, pc)
			if err != nil {
				return recs, transient(ctx, fmt.Errorf("mongodb: poll %s: %w", pc.ns, err))
			}
			return recs, nil
		}
		doc := cur.Current
		op := "c"
		if f != "_id" {
			op = "u"
			if id, ok := doc.Lookup("_id").ObjectIDOK(); ok && (!pc.hasOID || bytes.Compare(id[:], pc.maxOID[:]) > 0) {
				op = "c"
			}
		}
		if id, ok := doc.Lookup("_id").ObjectIDOK(); ok && (!pc.hasOID || bytes.Compare(id[:], pc.maxOID[:]) > 0) {
			pc.maxOID, pc.hasOID = id, true
		}
		var r sdk.SourceRecord
		if err := p.t.env.readRecord(c, doc, &sourceInfo{snapshot: snapFalse}, op, &r); err != nil {
			p.closeChanges(ctx, pc)
			return recs, fmt.Errorf("mongodb: %w", err)
		}
		last, err := p.position(doc)
		if err != nil {
			p.closeChanges(ctx, pc)
			return recs, fmt.Errorf("mongodb: poll %s: %w", pc.ns, err)
		}
		pc.last = last
		r.Partition, r.Offset = pc.part, p.offset(pc)
		recs = append(recs, r)
	}
	return recs, nil
}

// closeChanges closes the collection's open scan for changes, if any.
func (p *poller) closeChanges(ctx context.Context, pc *pollColl) {
	if pc.changes != nil {
		pc.changes.Close(context.WithoutCancel(ctx))
		pc.changes = nil
	}
}

func (p *poller) close(ctx context.Context) {
	if p.snap != nil {
		p.snap.close()
	}
	for _, pc := range p.colls {
		p.closeChanges(ctx, pc)
	}
}

package mongodb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk"
)

// A snapshot copies up to snapshot.max.threads collections at once
// (Debezium's semantics; 1 by default: one after the other). snapshotPlan
// is its bookkeeping, with no I/O: which collections are copied, which are
// being read and after which _id, which wait. snapshotFeed runs the
// readers it asks for; the task records each document it hands out (read)
// and each collection's end (finish) in the order its records go out, so
// that the progress stored with a record is exactly what precedes it.
//
// In the change-stream modes the progress travels in the one offset of
// the task (see storeProgress); in poll mode each collection has its own
// partition, whose offset holds that collection's position.

// collPhase is where one collection of a snapshot stands.
type collPhase uint8

const (
	phaseWaiting collPhase = iota // not started (or resumed after a restart, from after)
	phaseReading                  // a reader runs
	phaseStopped                  // its reader ended with an error: to be started again after after
	phaseCopied                   // every document was handed out
)

func (p collPhase) String() string {
	return [...]string{"waiting", "reading", "stopped", "copied"}[p]
}

type planColl struct {
	ns    namespace
	phase collPhase
	after bson.Raw // {_id} of the last document handed out; nil: none yet
}

// snapshotPlan is the state of a snapshot of several collections.
type snapshotPlan struct {
	threads int
	colls   []planColl
}

// newSnapshotPlan plans the copy of nss, threads at a time.
func newSnapshotPlan(nss []namespace, threads int32) *snapshotPlan {
	p := &snapshotPlan{threads: max(int(threads), 1)}
	for _, ns := range nss {
		p.add(ns, nil)
	}
	return p
}

// add appends a collection to copy, from after its _id in after (nil: from
// the start).
func (p *snapshotPlan) add(ns namespace, after bson.Raw) {
	p.colls = append(p.colls, planColl{ns: ns, after: after})
}

// start returns the collections whose readers should start now (each
// after its after), and marks them reading: stopped ones first, then
// those a restart interrupted, then waiting ones in order, while fewer
// than threads are being read.
func (p *snapshotPlan) start() []int {
	reading := 0
	for _, c := range p.colls {
		if c.phase == phaseReading {
			reading++
		}
	}
	var out []int
	for _, pick := range []func(planColl) bool{
		func(c planColl) bool { return c.phase == phaseStopped },
		func(c planColl) bool { return c.phase == phaseWaiting && c.after != nil },
		func(c planColl) bool { return c.phase == phaseWaiting },
	} {
		for i := range p.colls {
			if reading >= p.threads {
				return out
			}
			if pick(p.colls[i]) {
				p.colls[i].phase = phaseReading
				out = append(out, i)
				reading++
			}
		}
	}
	return out
}

// read records that the document with _id after (an {_id} document) of
// collection i was handed out.
func (p *snapshotPlan) read(i int, after bson.Raw) { p.colls[i].after = after }

// stopped records that the reader of collection i ended with an error.
func (p *snapshotPlan) stopped(i int) {
	if p.colls[i].phase == phaseReading {
		p.colls[i].phase = phaseStopped
	}
}

// finish records that every document of collection i was handed out.
func (p *snapshotPlan) finish(i int) { p.colls[i].phase = phaseCopied }

// done reports whether every collection is copied.
func (p *snapshotPlan) done() bool { return p.remaining() == 0 }

// remaining is the number of collections not yet copied.
func (p *snapshotPlan) remaining() int {
	n := 0
	for _, c := range p.colls {
		if c.phase != phaseCopied {
			n++
		}
	}
	return n
}

// String shows the plan as "<ns>:<phase>[@<_id>] …", for logs and tests.
func (p *snapshotPlan) String() string {
	var b strings.Builder
	for i, c := range p.colls {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s", c.ns, c.phase)
		if c.after != nil && c.phase != phaseCopied {
			fmt.Fprintf(&b, "@%s", c.after.Lookup("_id"))
		}
	}
	return b.String()
}

// The stored progress of a change-stream snapshot: offSnapshotColl is the
// first collection (in the plan's order, by name) not yet copied and
// offSnapshotAfter the _id it reached, as a snapshot of one thread stores
// them; with more threads, offSnapshotReading holds the positions of the
// other collections being read (a JSON object of <db>.<coll> to base64
// BSON {_id}) and offSnapshotCopied the collections after the first one
// that are copied already (a JSON array). Both are left out when empty.
const (
	offSnapshotReading = "snapshot_reading"
	offSnapshotCopied  = "snapshot_copied"
)

// storeProgress writes the plan's progress into off.
func (p *snapshotPlan) storeProgress(off sdk.Offset) {
	first := slices.IndexFunc(p.colls, func(c planColl) bool { return c.phase != phaseCopied })
	if first < 0 {
		return
	}
	off[offSnapshotColl] = p.colls[first].ns.String()
	if a := p.colls[first].after; a != nil {
		off[offSnapshotAfter] = tokenString(a)
	}
	reading := map[string]string{}
	var copied []string
	for _, c := range p.colls[first+1:] {
		switch {
		case c.phase == phaseCopied:
			copied = append(copied, c.ns.String())
		case c.after != nil:
			reading[c.ns.String()] = tokenString(c.after)
		}
	}
	if len(reading) > 0 {
		b, _ := json.Marshal(reading) // a map of strings always marshals
		off[offSnapshotReading] = string(b)
	}
	if len(copied) > 0 {
		b, _ := json.Marshal(copied)
		off[offSnapshotCopied] = string(b)
	}
}

// resumePlan rebuilds the plan of an interrupted snapshot of nss (sorted
// by name) from the progress stored in off: the collections before
// offSnapshotColl and those in offSnapshotCopied are copied, the others go
// on after the _id stored for them, or from the start.
func resumePlan(nss []namespace, threads int32, off sdk.Offset) (*snapshotPlan, error) {
	first, _ := off.String(offSnapshotColl)
	after := map[string]bson.Raw{}
	if a, ok := off.String(offSnapshotAfter); ok && a != "" {
		b, err := parsePosition(a)
		if err != nil {
			return nil, fmt.Errorf("mongodb: stored snapshot position of %s: %w", first, err)
		}
		after[first] = b
	}
	if s, ok := off.String(offSnapshotReading); ok && s != "" {
		var reading map[string]string
		if err := json.Unmarshal([]byte(s), &reading); err != nil {
			return nil, fmt.Errorf("mongodb: stored %s %q: %w", offSnapshotReading, s, err)
		}
		for ns, a := range reading {
			b, err := parsePosition(a)
			if err != nil {
				return nil, fmt.Errorf("mongodb: stored snapshot position of %s: %w", ns, err)
			}
			after[ns] = b
		}
	}
	var copied []string
	if s, ok := off.String(offSnapshotCopied); ok && s != "" {
		if err := json.Unmarshal([]byte(s), &copied); err != nil {
			return nil, fmt.Errorf("mongodb: stored %s %q: %w", offSnapshotCopied, s, err)
		}
	}
	p := newSnapshotPlan(nil, threads)
	for _, ns := range nss {
		name := ns.String()
		p.add(ns, after[name])
		if name < first || slices.Contains(copied, name) {
			p.finish(len(p.colls) - 1)
		}
	}
	return p, nil
}

// parsePosition decodes a stored snapshot position: base64 BSON {_id: …}.
func parsePosition(s string) (bson.Raw, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err == nil {
		err = bson.Raw(b).Validate()
	}
	if err == nil {
		_, err = bson.Raw(b).LookupErr("_id")
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a base64 BSON {_id: …} document: %w", s, err)
	}
	return bson.Raw(b), nil
}

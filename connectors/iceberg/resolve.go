package iceberg

import (
	"maps"
	"slices"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Op is what a change does to the row of its key.
type Op uint8

// The operations of a change stream, after Debezium's op (c, r, u, d, t)
// or Tabular's cdc-field values (I, U, D).
const (
	OpInsert   Op = iota + 1 // a new row (c, r, I): appended; in upsert mode it replaces the key's row
	OpUpdate                 // a changed row (u, U): replaces the key's row
	OpDelete                 // a removed row (d, D, __deleted=true): removes the key's row
	OpTruncate               // every row goes (t)
)

func (o Op) String() string {
	switch o {
	case OpInsert:
		return "insert"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	case OpTruncate:
		return "truncate"
	}
	return "op?"
}

// Change is one record's effect on one table.
type Change struct {
	TP     sdk.TopicPartition
	Offset int64
	Time   time.Time // the Kafka record's timestamp
	Op     Op
	// Key is the canonical encoding of the id columns' values (see
	// encodeKey); empty in append mode and for a truncate.
	Key string
	// Row is the row the change leaves (insert, update), or, for a
	// delete, a row holding at least the id columns; nil for a truncate.
	Row *schema.Struct
}

// batch gathers the changes of one table between two commits, and decides
// what the commit writes: it is the pure core of the sink, free of I/O.
//
// In upsert mode (or with a CDC field) the last change per key wins, in
// the order changes are added (offset order within a partition: a key
// lives in one partition); a truncate forgets every change before it. In
// append mode every insert or update is a new row and deletes are
// ignored, as Apache Iceberg's sink does.
type batch struct {
	upsert bool // every key of the commit replaces earlier rows (upsert mode)
	keyed  bool // changes carry keys: upsert mode or a CDC field
	// last holds, per key, the index in changes of its latest change;
	// changes are kept in arrival order.
	last    map[string]int
	changes []Change
	// touched marks the keys whose rows of earlier commits must go: in
	// upsert mode every key seen, otherwise the keys that saw an update or
	// a delete in this batch.
	touched  map[string]bool
	truncate bool
	// first and next are, per partition, the offset of the first change
	// taken and the offset after the last; maxTime the latest record
	// timestamp per partition.
	first, next map[sdk.TopicPartition]int64
	maxTime     map[sdk.TopicPartition]time.Time
	records     int // changes taken, superseded ones included
}

func newBatch(upsert, keyed bool) *batch {
	return &batch{upsert: upsert, keyed: keyed || upsert, last: map[string]int{}, touched: map[string]bool{},
		first: map[sdk.TopicPartition]int64{}, next: map[sdk.TopicPartition]int64{}, maxTime: map[sdk.TopicPartition]time.Time{}}
}

// empty reports whether the batch holds nothing to commit (not even an
// offset to advance).
func (b *batch) empty() bool { return len(b.next) == 0 }

// add takes a change. Changes of a partition must come in offset order.
func (b *batch) add(c Change) {
	if _, ok := b.first[c.TP]; !ok {
		b.first[c.TP] = c.Offset
	}
	b.next[c.TP] = c.Offset + 1
	if c.Time.After(b.maxTime[c.TP]) {
		b.maxTime[c.TP] = c.Time
	}
	b.records++
	switch {
	case c.Op == OpTruncate:
		if !b.keyed {
			// Append mode keeps history: a truncate is not applied.
			return
		}
		clear(b.last)
		clear(b.touched)
		b.changes = b.changes[:0]
		b.truncate = true
		return
	case !b.keyed:
		if c.Op != OpDelete {
			b.changes = append(b.changes, c)
		}
		return
	}
	if b.upsert || c.Op != OpInsert {
		b.touched[c.Key] = true
	}
	if i, ok := b.last[c.Key]; ok {
		b.changes[i].Row = nil // superseded: let it go
		b.changes[i].Op = 0
	}
	b.last[c.Key] = len(b.changes)
	b.changes = append(b.changes, c)
	// Superseded changes are compacted away once they are most of the
	// slice, so that a hot key does not grow it without bound.
	if len(b.changes) > 1024 && len(b.changes) > 2*len(b.last) {
		b.compact()
	}
}

func (b *batch) compact() {
	kept := b.changes[:0]
	for _, c := range b.changes {
		if c.Op != 0 {
			b.last[c.Key] = len(kept)
			kept = append(kept, c)
		}
	}
	clear(b.changes[len(kept):])
	b.changes = kept
}

// plan is what a commit writes.
type plan struct {
	// truncate: the commit first removes every row of the table.
	truncate bool
	// rows are the rows to append: the final insert or update of each key
	// (every insert or update in append mode), in arrival order.
	rows []*schema.Struct
	// deletes are rows holding the id columns of the keys whose rows of
	// earlier commits go (equality deletes): keys updated or deleted (in
	// upsert mode, every key). None after a truncate, or when the table
	// holds no rows (noEarlier).
	deletes []*schema.Struct
	// next is, per partition, the offset after the last change taken;
	// validThrough the earliest over partitions of their latest record
	// time (Apache's kafka.connect.valid-through-ts).
	next         map[sdk.TopicPartition]int64
	validThrough time.Time
	records      int
}

// plan decides the commit. noEarlier tells that the table holds no rows
// (no snapshot yet): equality deletes would match nothing.
func (b *batch) plan(noEarlier bool) plan {
	p := plan{truncate: b.truncate, next: maps.Clone(b.next), records: b.records}
	for _, c := range b.changes {
		if c.Op == 0 {
			continue
		}
		if b.keyed && b.touched[c.Key] && !b.truncate && !noEarlier {
			p.deletes = append(p.deletes, c.Row)
		}
		if c.Op != OpDelete {
			p.rows = append(p.rows, c.Row)
		}
	}
	for _, tp := range slices.SortedFunc(maps.Keys(b.maxTime), compareTP) {
		if t := b.maxTime[tp]; p.validThrough.IsZero() || t.Before(p.validThrough) {
			p.validThrough = t
		}
	}
	return p
}

func compareTP(a, b sdk.TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

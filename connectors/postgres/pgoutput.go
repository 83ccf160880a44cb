package postgres

import (
	"encoding/binary"
	"fmt"
)

// relationInfo is what a pgoutput Relation message says about a table: the
// columns, in the order tuples carry them.
type relationInfo struct {
	id       uint32
	table    tableID
	identity byte
	columns  []relColumn
}

type relColumn struct {
	name   string
	key    bool
	typ    uint32
	typmod int32
}

func (r *relationInfo) equal(o *relationInfo) bool {
	if r.table != o.table || r.identity != o.identity || len(r.columns) != len(o.columns) {
		return false
	}
	for i := range r.columns {
		if r.columns[i] != o.columns[i] {
			return false
		}
	}
	return true
}

// Tuple column kinds.
const (
	tupleNull  = 'n'
	tupleToast = 'u'
	tupleText  = 't'
)

// tupleColumn is one column of a tuple: kind and text value, pointing into
// the message.
type tupleColumn struct {
	kind byte
	data []byte
}

// msgReader reads the fields of a pgoutput message.
type msgReader struct {
	b   []byte
	err error
}

func (r *msgReader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("postgres: pgoutput message truncated")
		return false
	}
	return true
}

func (r *msgReader) u8() byte {
	if !r.need(1) {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *msgReader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}

func (r *msgReader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *msgReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *msgReader) str() string {
	for i, c := range r.b {
		if c == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	if r.err == nil {
		r.err = fmt.Errorf("postgres: pgoutput string not terminated")
	}
	return ""
}

// tuple reads TupleData into cols (reused).
func (r *msgReader) tuple(cols []tupleColumn) []tupleColumn {
	n := int(r.u16())
	cols = cols[:0]
	for range n {
		kind := r.u8()
		c := tupleColumn{kind: kind}
		switch kind {
		case tupleText, 'b':
			l := int(r.u32())
			if !r.need(l) {
				return cols
			}
			c.data = r.b[:l:l]
			r.b = r.b[l:]
		case tupleNull, tupleToast:
		default:
			if r.err == nil {
				r.err = fmt.Errorf("postgres: pgoutput tuple column kind %q", kind)
			}
			return cols
		}
		cols = append(cols, c)
	}
	return cols
}

// parseRelation decodes a Relation message (after its type byte).
func parseRelation(b []byte) (*relationInfo, error) {
	r := &msgReader{b: b}
	rel := &relationInfo{id: r.u32()}
	rel.table.schema = r.str()
	rel.table.name = r.str()
	rel.identity = r.u8()
	n := int(r.u16())
	for range n {
		var c relColumn
		c.key = r.u8()&1 != 0
		c.name = r.str()
		c.typ = r.u32()
		c.typmod = int32(r.u32())
		rel.columns = append(rel.columns, c)
	}
	return rel, r.err
}

package wire

import (
	"encoding/binary"
	"math"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Raw is a value in the wire encoding: left so by a Decoder with RawValues
// set, for the worker to serialize it for Kafka straight from these bytes (a
// ValueReader walks them) instead of building Go values first, or written
// by a ValueWriter. Decode builds the Go value when one is needed. A Raw
// from a Decoder is immutable and, like the other decoded values, may share
// the batch's memory; one from a ValueWriter is valid until the writer's
// Reuse.
type Raw struct {
	schema *schema.Schema // nil: a schemaless value
	data   []byte         // exactly the value's encoding
	alias  bool           // decoded strings and bytes may share data
	// budget, unless 0, is the number of elements the value may hold:
	// it was cut from its batch by its length, not walked
	// (flagValueLength), and whoever reads it checks it, as a ValueReader
	// and Decode do; an Encoder checks it before copying (see valueSlack).
	// 0: the value was checked when the Raw was made.
	budget int
}

// Schema returns the value's schema (nil: schemaless).
func (r *Raw) Schema() *schema.Schema { return r.schema }

// Checked reports whether the value was checked when the Raw was made. A
// value that a Decoder cut out by its length was not: it is checked as it
// is read.
func (r *Raw) Checked() bool { return r.budget == 0 }

// Decode returns the value as the Decoder would have returned it.
func (r *Raw) Decode() (any, error) {
	var vr ValueReader
	vr.Reset(r)
	v, err := vr.Value(r.schema)
	if err == nil {
		err = vr.Done()
	}
	return v, err
}

// A ValueReader reads a Raw value in the order of its encoding, which is
// the order of its schema: a struct's fields one after the other, an
// array's count then its elements. Each method reads what its schema
// says comes next and checks it as the Decoder does. The zero value is
// not ready: call Reset.
type ValueReader struct {
	d decoder
}

// Reset positions the reader at the start of r. A value walked when the
// Raw was made was checked against the element budget of its whole batch,
// so no budget applies then; a value cut by its length may hold
// valueSlack more elements than it has bytes.
func (vr *ValueReader) Reset(r *Raw) {
	budget := math.MaxInt
	if r.budget > 0 {
		budget = r.budget
	}
	vr.d = decoder{data: r.data, budget: budget, aliasOK: r.alias, aliasing: r.alias}
}

// check walks an unchecked value with the decoder's checks.
func (r *Raw) check() error {
	var vr ValueReader
	vr.Reset(r)
	err := vr.d.skipValue(r.schema)
	if err == nil {
		err = vr.Done()
	}
	return err
}

// Present reads the presence of an optional value: false means null.
func (vr *ValueReader) Present() (bool, error) { return vr.d.present() }

// Int reads a present value of an integer type, Date (days since the
// epoch), Time (milliseconds of the day) or Timestamp (milliseconds since
// the epoch).
func (vr *ValueReader) Int(s *schema.Schema) (int64, error) { return vr.d.integer(s) }

// integer reads an integer, Date, Time or Timestamp value of schema s with
// typed's range checks; Date is in days.
func (d *decoder) integer(s *schema.Schema) (int64, error) {
	switch s.Name {
	case schema.DateName:
		v, err := d.varint()
		if err == nil && (v > math.MaxInt32 || v < math.MinInt32) {
			err = d.fail("date out of range")
		}
		return v, err
	case schema.TimeName:
		v, err := d.varint()
		if err == nil && (v < 0 || v >= 86400000) {
			err = d.fail("time of day %d ms out of range", v)
		}
		return v, err
	case schema.TimestampName:
		return d.varint()
	}
	switch s.Type {
	case schema.TypeInt8:
		b, err := d.byte()
		return int64(int8(b)), err
	case schema.TypeInt16:
		v, err := d.varint()
		if err == nil && (v < math.MinInt16 || v > math.MaxInt16) {
			err = d.fail("int16 out of range")
		}
		return v, err
	case schema.TypeInt32:
		v, err := d.varint()
		if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
			err = d.fail("int32 out of range")
		}
		return v, err
	case schema.TypeInt64:
		return d.varint()
	}
	return 0, d.fail("%v is not an integer", s.Type)
}

// Float32 reads a present FLOAT32 value.
func (vr *ValueReader) Float32() (float32, error) { return vr.d.float32() }

// Float64 reads a present FLOAT64 value.
func (vr *ValueReader) Float64() (float64, error) { return vr.d.float64() }

// Bool reads a present BOOLEAN value.
func (vr *ValueReader) Bool() (bool, error) { return vr.d.boolean() }

func (d *decoder) float32() (float32, error) {
	b, err := d.fixed(4)
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
}

func (d *decoder) float64() (float64, error) {
	b, err := d.fixed(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

func (d *decoder) boolean() (bool, error) {
	b, err := d.byte()
	if err == nil && b > 1 {
		err = d.fail("bad boolean %d", b)
	}
	return b == 1, err
}

// Bytes reads a present STRING (its UTF-8 bytes), BYTES or Decimal (the
// unscaled value in big-endian two's complement) value. The bytes are the
// reader's input: they must not be modified.
func (vr *ValueReader) Bytes() ([]byte, error) { return vr.d.raw() }

// Count reads a present ARRAY's element count.
func (vr *ValueReader) Count() (int, error) { return vr.d.count() }

// Value decodes the next value (s nil: schemaless) into Go values, as the
// Decoder does.
func (vr *ValueReader) Value(s *schema.Schema) (any, error) { return vr.d.value(s) }

// Done reports an error unless the whole value was read.
func (vr *ValueReader) Done() error {
	if vr.d.pos != len(vr.d.data) {
		return vr.d.fail("%d bytes left after the value", len(vr.d.data)-vr.d.pos)
	}
	return nil
}

// rawValue reads a record's value (after its schema reference) as a Raw,
// checking it as typed and schemaless would: nil for a null value, which
// has nothing to convert.
func (d *decoder) rawValue(s *schema.Schema) (any, error) {
	start := d.pos
	if err := d.skipValue(s); err != nil {
		return nil, err
	}
	if isNull(s, d.data[start:d.pos]) {
		return nil, nil
	}
	return d.newRaw(s, d.data[start:d.pos:d.pos]), nil
}

// skipValue advances past a value of schema s (nil: schemaless) with the
// checks of value.
func (d *decoder) skipValue(s *schema.Schema) error {
	if s == nil {
		return d.skipSchemalessChecked(0)
	}
	return d.skipTyped(s, 0)
}

// isNull reports whether enc, the encoding of a value of schema s (nil:
// schemaless), starts as a null's does; it may be empty (a struct without
// fields).
func isNull(s *schema.Schema, enc []byte) bool {
	if len(enc) == 0 {
		return false
	}
	if s == nil {
		return enc[0] == tagNull
	}
	return s.Optional && enc[0] == 0
}

// newRaw returns a Raw of data, a value of schema s in d's input (copied
// unless aliasOK).
func (d *decoder) newRaw(s *schema.Schema, data []byte) *Raw {
	if !d.aliasOK { // the caller may reuse the batch's memory
		data = append([]byte(nil), data...)
	}
	// Raws are allocated in blocks, like struct values (see newStruct).
	if len(d.raws) == 0 {
		d.rawBlock = min(max(2*d.rawBlock, 1), maxStructBlock)
		d.raws = make([]Raw, d.rawBlock)
	}
	r := &d.raws[0]
	d.raws = d.raws[1:]
	*r = Raw{schema: s, data: data, alias: d.aliasOK}
	return r
}

// skipTyped advances past a value of schema s with the checks of typed,
// without building it.
func (d *decoder) skipTyped(s *schema.Schema, depth int) error {
	if depth > maxDepth {
		return d.fail("value nested too deeply")
	}
	if s.Optional {
		if present, err := d.present(); !present || err != nil {
			return err
		}
	}
	var err error
	if s.Name == schema.DecimalName {
		_, err = d.raw()
		return err
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		_, err = d.integer(s) // with Date's, Time's and Timestamp's checks
	case schema.TypeFloat32:
		_, err = d.float32()
	case schema.TypeFloat64:
		_, err = d.float64()
	case schema.TypeBoolean:
		_, err = d.boolean()
	case schema.TypeString, schema.TypeBytes:
		_, err = d.raw()
	case schema.TypeArray:
		var n int
		if n, err = d.count(); err != nil {
			return err
		}
		for range n {
			if err := d.skipTyped(s.ValueSchema, depth+1); err != nil {
				return err
			}
		}
	case schema.TypeMap:
		// Maps are checked by decoding them (their keys must be
		// comparable): rare in bulk data, and exact.
		_, err = d.typedPresent(s, depth)
	case schema.TypeStruct:
		for _, f := range s.Fields {
			if err := d.skipTyped(f.Schema, depth+1); err != nil {
				return err
			}
		}
	default:
		err = d.fail("invalid schema type %d", s.Type)
	}
	return err
}

// skipSchemalessChecked advances past a schemaless value with the checks
// of schemaless: it decodes the value unless it is a scalar.
func (d *decoder) skipSchemalessChecked(depth int) error {
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case tagNull, tagFalse, tagTrue, tagInt64, tagFloat32, tagFloat64, tagString, tagBytes:
			return d.skipSchemaless(depth)
		}
	}
	_, err := d.schemaless(depth)
	return err
}

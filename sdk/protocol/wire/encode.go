package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"time"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Schemaless value tags.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagFloat32
	tagFloat64
	tagString
	tagBytes
	tagArray
	tagStringMap
	tagAnyMap
	tagEnd
)

// Record flags.
const (
	flagTimestamp = 1 << iota
	flagKafkaPartition
	flagHeaders
	// flagValueLength: the value's schema reference is followed by the
	// value's length in bytes (u32, little-endian), so that a decoder can
	// keep the value encoded without walking it (Encoder.ValueLengths).
	flagValueLength
)

// Schema flags.
const (
	sflagOptional = 1 << iota
	sflagDefault
	sflagName
	sflagVersion
	sflagDoc
	sflagParams
)

// Schema references.
const (
	refNone   = 0
	refInline = 1
	refBase   = 2
)

const maxDepth = 64

// Encoder appends records to a batch. The zero value is ready to use; Reset
// starts a new batch and keeps the buffer.
type Encoder struct {
	buf     []byte
	schemas map[*schema.Schema]uint64
	count   int
	// canonical sorts the keys of maps, so that equal maps encode to equal
	// bytes: set while source partitions and offsets are encoded (they are
	// compared and used as keys); keys, values and headers are written in
	// map order, which costs no allocation.
	canonical bool

	// ReusePartitions lets Append copy the encoding of the previous
	// record's source partition when the record's Partition is the very
	// same map (the same map object, not merely equal contents), until
	// ForgetPartition. A source task's records usually share one
	// partition map, and encoding a map costs an iteration of it (about a
	// sixth of encoding a 1 KiB record). The same goes for a record's
	// Offset that is the very map of the record before (a connector may
	// share one among records at the same position, such as the rows of
	// a snapshot read in the same millisecond). Set it only for records
	// handed over together, whose maps nobody modifies meanwhile, and call
	// ForgetPartition before the next such group.
	ReusePartitions bool
	part            unsafe.Pointer // the map partEnc encodes; nil: none
	partEnc         []byte
	off             unsafe.Pointer // the offset map offEnc encodes; nil: none
	offEnc          []byte

	// ValueLengths writes each record's value length before the value
	// (see Decoder.RawValues), unless the value is a *Raw or holds more
	// array elements and map entries than its length allows (valueSlack).
	// Set it only for a decoder that reads lengths: the plugin SDK does
	// when the host's TaskStart says so.
	ValueLengths bool
	elems        int // array elements and map entries of the value being written

	// soleKey is the key of the last source offset or partition of one
	// entry encoded: such a map holding it is read with a lookup instead
	// of an iteration, which costs several times more (the records of a
	// source task usually have offsets such as {"seq": n}, each a new
	// map).
	soleKey string
}

// ForgetPartition drops the partition encoding ReusePartitions keeps.
func (e *Encoder) ForgetPartition() { e.part, e.off = nil, nil }

// Reset starts a new batch, keeping allocated memory.
func (e *Encoder) Reset() {
	e.buf = e.buf[:0]
	clear(e.schemas)
	e.count = 0
}

// ResetWith starts a new batch in buf's memory (from its start) instead of
// the encoder's own: use it when the previous batch's bytes were handed to
// someone who keeps them. buf may be nil.
func (e *Encoder) ResetWith(buf []byte) {
	e.Reset()
	e.buf = buf[:0]
}

// Len is the size of the batch so far in bytes.
func (e *Encoder) Len() int { return len(e.buf) }

// Count is the number of records in the batch.
func (e *Encoder) Count() int { return e.count }

// Bytes returns the batch; it is valid until the next Reset or Append.
func (e *Encoder) Bytes() []byte { return e.buf }

// Append encodes r. On error the batch is left as it was before the call.
// Encoding checks every value against its schema.
func (e *Encoder) Append(r *Record) error {
	nSchemas := len(e.schemas)
	b, err := e.appendRecord(e.buf, r)
	if err != nil { // e.buf is as it was: only the schemas need undoing
		if len(e.schemas) != nSchemas {
			for s, i := range e.schemas {
				if i >= uint64(nSchemas) {
					delete(e.schemas, s)
				}
			}
		}
		return err
	}
	e.buf = b
	e.count++
	return nil
}

// appendRecord appends r's encoding to b. The encoding functions take and
// return the batch rather than update e.buf: a slice held in registers
// costs no loads and stores of the Encoder, nor the write barriers that
// storing a pointer into it costs while the collector runs.
func (e *Encoder) appendRecord(b []byte, r *Record) ([]byte, error) {
	var flags byte
	if r.Timestamp != NoTimestamp {
		flags |= flagTimestamp
	}
	if r.KafkaPartition != NoPartition {
		flags |= flagKafkaPartition
	}
	if len(r.Headers) > 0 {
		flags |= flagHeaders
	}
	if _, raw := r.Value.(*Raw); e.ValueLengths && !raw {
		flags |= flagValueLength
	}
	flagsAt := len(b)
	b = append(b, flags)
	e.canonical = true
	var err error
	if b, err = e.partition(b, r.Partition); err != nil {
		e.canonical = false
		return b, fmt.Errorf("wire: source partition: %w", err)
	}
	if b, err = e.offset(b, r.Offset); err != nil {
		e.canonical = false
		return b, fmt.Errorf("wire: source offset: %w", err)
	}
	e.canonical = false
	b = appendStr(b, r.Topic)
	if flags&flagKafkaPartition != 0 {
		b = binary.AppendVarint(b, int64(r.KafkaPartition))
	}
	b = binary.AppendVarint(b, r.KafkaOffset)
	if flags&flagTimestamp != 0 {
		b = binary.AppendVarint(b, r.Timestamp)
	}
	if b, err = e.schemaAndValue(b, r.KeySchema, r.Key); err != nil {
		return b, fmt.Errorf("wire: key: %w", err)
	}
	if flags&flagValueLength != 0 {
		b, err = e.valueWithLength(b, flagsAt, r.ValueSchema, r.Value)
	} else {
		b, err = e.schemaAndValue(b, r.ValueSchema, r.Value)
	}
	if err != nil {
		return b, fmt.Errorf("wire: value: %w", err)
	}
	if flags&flagHeaders != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Headers)))
		for _, h := range r.Headers {
			b = appendStr(b, h.Key)
			if b, err = e.schemaAndValue(b, h.Schema, h.Value); err != nil {
				return b, fmt.Errorf("wire: header %q: %w", h.Key, err)
			}
		}
	}
	return b, nil
}

// mapValue turns a nil map into an untyped nil so it encodes as null.
func mapValue(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (e *Encoder) schemaAndValue(b []byte, s *schema.Schema, v any) ([]byte, error) {
	b, err := e.schemaRefOrNone(b, s)
	if err != nil {
		return b, err
	}
	return e.value(b, s, v)
}

// valueSlack is how many more array elements and map entries than bytes
// a value written with its length may hold: an element can take no bytes
// (an empty struct), and the reader of a value cut out of its batch
// unwalked gets this budget instead of the batch's, so that reading all
// of a batch's values stays linear in its size. The Encoder writes a value
// that holds more without its length.
const valueSlack = 16

// valueWithLength is schemaAndValue for a record's value under
// flagValueLength: the length goes between the schema reference and the
// value, written once the value is. A value with more elements than its
// length allows is left without it, and the flag at flagsAt cleared.
func (e *Encoder) valueWithLength(b []byte, flagsAt int, s *schema.Schema, v any) ([]byte, error) {
	b, err := e.schemaRefOrNone(b, s)
	if err != nil {
		return b, err
	}
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	e.elems = 0
	if b, err = e.value(b, s, v); err != nil {
		return b, err
	}
	n := len(b) - at - 4
	if uint64(e.elems) > uint64(n)+valueSlack {
		copy(b[at:], b[at+4:])
		b[flagsAt] &^= flagValueLength
		return b[:len(b)-4], nil
	}
	if uint64(n) > math.MaxUint32 {
		return b, fmt.Errorf("value of %d bytes", n)
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(n))
	return b, nil
}

func (e *Encoder) schemaRefOrNone(b []byte, s *schema.Schema) ([]byte, error) {
	if s == nil {
		return append(b, refNone), nil
	}
	return e.schemaRef(b, s, 0)
}

// value appends v of schema s (nil: schemaless), after its schema
// reference.
func (e *Encoder) value(b []byte, s *schema.Schema, v any) ([]byte, error) {
	if raw, ok := v.(*Raw); ok {
		// Already encoded (by a ValueWriter or a Decoder): copied as is,
		// once checked if nobody has yet.
		if raw.schema != s {
			return b, fmt.Errorf("encoded value of schema %v given for schema %v", raw.schema, s)
		}
		if !raw.Checked() {
			if err := raw.check(); err != nil {
				return b, err
			}
		}
		return append(b, raw.data...), nil
	}
	if s == nil {
		return e.schemaless(b, v, 0)
	}
	return e.typed(b, s, v, 0)
}

func (e *Encoder) schemaRef(b []byte, s *schema.Schema, depth int) ([]byte, error) {
	var err error
	if depth > maxDepth {
		return b, errors.New("schema nested too deeply")
	}
	if i, ok := e.schemas[s]; ok {
		b = binary.AppendUvarint(b, i+refBase)
		return b, nil
	}
	if !s.Type.Valid() {
		return b, fmt.Errorf("invalid schema type %d", s.Type)
	}
	if e.schemas == nil {
		e.schemas = make(map[*schema.Schema]uint64)
	}
	e.schemas[s] = uint64(len(e.schemas))
	b = append(b, refInline, byte(s.Type))
	var flags byte
	if s.Optional {
		flags |= sflagOptional
	}
	if s.Default != nil {
		flags |= sflagDefault
	}
	if s.Name != "" {
		flags |= sflagName
	}
	if s.Version != 0 {
		flags |= sflagVersion
	}
	if s.Doc != "" {
		flags |= sflagDoc
	}
	if len(s.Parameters) > 0 {
		flags |= sflagParams
	}
	b = append(b, flags)
	if s.Name != "" {
		b = appendStr(b, s.Name)
	}
	if s.Version != 0 {
		b = binary.AppendVarint(b, int64(s.Version))
	}
	if s.Doc != "" {
		b = appendStr(b, s.Doc)
	}
	if len(s.Parameters) > 0 {
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = appendStr(b, k)
			b = appendStr(b, s.Parameters[k])
		}
	}
	switch s.Type {
	case schema.TypeStruct:
		b = binary.AppendUvarint(b, uint64(len(s.Fields)))
		for _, f := range s.Fields {
			if f.Schema == nil {
				return b, fmt.Errorf("field %q has no schema", f.Name)
			}
			b = appendStr(b, f.Name)
			if b, err = e.schemaRef(b, f.Schema, depth+1); err != nil {
				return b, err
			}
		}
	case schema.TypeArray:
		if s.ValueSchema == nil {
			return b, errors.New("array schema without element schema")
		}
		if b, err = e.schemaRef(b, s.ValueSchema, depth+1); err != nil {
			return b, err
		}
	case schema.TypeMap:
		if s.KeySchema == nil || s.ValueSchema == nil {
			return b, errors.New("map schema without key or value schema")
		}
		if b, err = e.schemaRef(b, s.KeySchema, depth+1); err != nil {
			return b, err
		}
		if b, err = e.schemaRef(b, s.ValueSchema, depth+1); err != nil {
			return b, err
		}
	}
	if s.Default != nil {
		if b, err = e.typed(b, s, s.Default, depth+1); err != nil {
			return b, fmt.Errorf("default of %v: %w", s, err)
		}
	}
	return b, nil
}

func (e *Encoder) typed(b []byte, s *schema.Schema, v any, depth int) ([]byte, error) {
	var err error
	if depth > maxDepth {
		return b, errors.New("value nested too deeply")
	}
	if v == nil && !s.Optional {
		if s.Default == nil {
			return b, fmt.Errorf("null used for required %v", s)
		}
		v = s.Default
	}
	if s.Optional {
		if v == nil {
			b = append(b, 0)
			return b, nil
		}
		b = append(b, 1)
	}
	switch s.Name {
	case schema.DecimalName:
		d, ok := v.(*big.Int)
		if !ok || d == nil {
			return b, mismatch(s, v)
		}
		b = binary.AppendUvarint(b, uint64(schema.DecimalLen(d)))
		b = schema.AppendDecimal(b, d)
		return b, nil
	case schema.DateName, schema.TimeName, schema.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return b, mismatch(s, v)
		}
		ms := t.UnixMilli()
		switch s.Name {
		case schema.DateName:
			ms = floorDiv(ms, 86400000)
		case schema.TimeName:
			ms -= floorDiv(ms, 86400000) * 86400000
		}
		b = binary.AppendVarint(b, ms)
		return b, nil
	}
	switch s.Type {
	case schema.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return b, mismatch(s, v)
		}
		b = append(b, byte(x))
	case schema.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return b, mismatch(s, v)
		}
		b = binary.AppendVarint(b, int64(x))
	case schema.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return b, mismatch(s, v)
		}
		b = binary.AppendVarint(b, int64(x))
	case schema.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return b, mismatch(s, v)
		}
		b = binary.AppendVarint(b, x)
	case schema.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return b, mismatch(s, v)
		}
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	case schema.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return b, mismatch(s, v)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return b, mismatch(s, v)
		}
		if x {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return b, mismatch(s, v)
		}
		b = appendStr(b, x)
	case schema.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return b, mismatch(s, v)
		}
		b = appendBytes(b, x)
	case schema.TypeArray:
		x, ok := v.([]any)
		if !ok {
			return b, mismatch(s, v)
		}
		e.elems += len(x)
		b = binary.AppendUvarint(b, uint64(len(x)))
		for i, el := range x {
			if b, err = e.typed(b, s.ValueSchema, el, depth+1); err != nil {
				return b, fmt.Errorf("element %d: %w", i, err)
			}
		}
	case schema.TypeMap:
		switch x := v.(type) {
		case map[string]any:
			if s.KeySchema.Type != schema.TypeString {
				return b, mismatch(s, v)
			}
			e.elems += len(x)
			b = binary.AppendUvarint(b, uint64(len(x)))
			for k, el := range x {
				if b, err = e.typed(b, s.KeySchema, k, depth+1); err != nil {
					return b, err
				}
				if b, err = e.typed(b, s.ValueSchema, el, depth+1); err != nil {
					return b, fmt.Errorf("key %q: %w", k, err)
				}
			}
		case map[any]any:
			e.elems += len(x)
			b = binary.AppendUvarint(b, uint64(len(x)))
			for k, el := range x {
				if b, err = e.typed(b, s.KeySchema, k, depth+1); err != nil {
					return b, fmt.Errorf("map key: %w", err)
				}
				if b, err = e.typed(b, s.ValueSchema, el, depth+1); err != nil {
					return b, fmt.Errorf("key %v: %w", k, err)
				}
			}
		default:
			return b, mismatch(s, v)
		}
	case schema.TypeStruct:
		st, ok := v.(*schema.Struct)
		if !ok || st == nil {
			return b, mismatch(s, v)
		}
		if err := st.Err(); err != nil {
			return b, err
		}
		if ss := st.Schema(); ss != s && !schema.Equal(ss, s) {
			return b, fmt.Errorf("struct value has schema %v, want %v", ss, s)
		}
		for i, f := range s.Fields {
			fv := st.GetIndex(i)
			if b, err = e.typed(b, f.Schema, fv, depth+1); err != nil {
				return b, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
	default:
		return b, fmt.Errorf("invalid schema type %d", s.Type)
	}
	return b, nil
}

func appendBytes(b, x []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(x)))
	return append(b, x...)
}

func (e *Encoder) schemaless(b []byte, v any, depth int) ([]byte, error) {
	var err error
	if depth > maxDepth {
		return b, errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		b = append(b, tagNull)
	case bool:
		if x {
			b = append(b, tagTrue)
		} else {
			b = append(b, tagFalse)
		}
	case int8:
		b = append(b, tagInt8, byte(x))
	case int16:
		b = binary.AppendVarint(append(b, tagInt16), int64(x))
	case int32:
		b = binary.AppendVarint(append(b, tagInt32), int64(x))
	case int64:
		b = binary.AppendVarint(append(b, tagInt64), x)
	case int:
		b = binary.AppendVarint(append(b, tagInt64), int64(x))
	case float32:
		b = binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(x))
	case float64:
		b = binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x))
	case string:
		b = append(b, tagString)
		b = appendStr(b, x)
	case []byte:
		b = append(b, tagBytes)
		b = appendBytes(b, x)
	case []any:
		b = binary.AppendUvarint(append(b, tagArray), uint64(len(x)))
		for _, el := range x {
			if b, err = e.schemaless(b, el, depth+1); err != nil {
				return b, err
			}
		}
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagStringMap), uint64(len(x)))
		if len(x) == 1 && e.canonical && depth == 0 { // a source offset or partition
			if el, ok := x[e.soleKey]; ok {
				b = appendStr(b, e.soleKey)
				return e.schemaless(b, el, depth+1)
			}
			for k, el := range x {
				e.soleKey = k
				b = appendStr(b, k)
				return e.schemaless(b, el, depth+1)
			}
		}
		if !e.canonical {
			for k, el := range x {
				b = appendStr(b, k)
				if b, err = e.schemaless(b, el, depth+1); err != nil {
					return b, err
				}
			}
			return b, nil
		}
		for _, k := range sortedKeys(x) {
			b = appendStr(b, k)
			if b, err = e.schemaless(b, x[k], depth+1); err != nil {
				return b, err
			}
		}
	case map[any]any:
		b = binary.AppendUvarint(append(b, tagAnyMap), uint64(len(x)))
		for k, el := range x {
			if b, err = e.schemaless(b, k, depth+1); err != nil {
				return b, err
			}
			if b, err = e.schemaless(b, el, depth+1); err != nil {
				return b, err
			}
		}
	default:
		return b, fmt.Errorf("value of Go type %T is not a valid schemaless value", v)
	}
	return b, nil
}

// partition encodes a source partition map, reusing the previous one's
// encoding when ReusePartitions allows it.
func (e *Encoder) partition(b []byte, m map[string]any) ([]byte, error) {
	var err error
	if !e.ReusePartitions || m == nil {
		return e.schemaless(b, mapValue(m), 0)
	}
	p := reflect.ValueOf(m).UnsafePointer() // held, so no other map can take its address
	if p == e.part {
		b = append(b, e.partEnc...)
		return b, nil
	}
	start := len(b)
	if b, err = e.schemaless(b, m, 0); err != nil {
		return b, err
	}
	e.part, e.partEnc = p, append(e.partEnc[:0], b[start:]...)
	return b, nil
}

// offset appends a source offset, copying the previous record's
// encoding when ReusePartitions allows it and the map is the same.
func (e *Encoder) offset(b []byte, m map[string]any) ([]byte, error) {
	var err error
	if !e.ReusePartitions || m == nil {
		return e.schemaless(b, mapValue(m), 0)
	}
	p := reflect.ValueOf(m).UnsafePointer()
	if p == e.off {
		return append(b, e.offEnc...), nil
	}
	start := len(b)
	if b, err = e.schemaless(b, m, 0); err != nil {
		return b, err
	}
	e.off, e.offEnc = p, append(e.offEnc[:0], b[start:]...)
	return b, nil
}

// sortedKeys returns the keys of small maps in order so that equal maps
// encode to equal bytes (offset maps are compared and used as keys).
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) > 1 {
		sort.Strings(keys)
	}
	return keys
}

func mismatch(s *schema.Schema, v any) error {
	return fmt.Errorf("value of Go type %T does not match schema %v", v, s)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// AppendOffsets encodes a list of (partition, offset) pairs.
func AppendOffsets(dst []byte, offs []PartitionOffset) ([]byte, error) {
	e := Encoder{canonical: true}
	b := binary.AppendUvarint(dst, uint64(len(offs)))
	var err error
	for _, po := range offs {
		if b, err = e.schemaless(b, mapValue(po.Partition), 0); err != nil {
			return dst, fmt.Errorf("wire: partition: %w", err)
		}
		if b, err = e.schemaless(b, mapValue(po.Offset), 0); err != nil {
			return dst, fmt.Errorf("wire: offset: %w", err)
		}
	}
	return b, nil
}

// AppendPartitions encodes a list of source partitions.
func AppendPartitions(dst []byte, parts []map[string]any) ([]byte, error) {
	e := Encoder{canonical: true}
	b := binary.AppendUvarint(dst, uint64(len(parts)))
	var err error
	for _, p := range parts {
		if b, err = e.schemaless(b, mapValue(p), 0); err != nil {
			return dst, fmt.Errorf("wire: partition: %w", err)
		}
	}
	return b, nil
}

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
	// sixth of encoding a 1 KiB record). Set it only for records handed
	// over together, whose maps nobody modifies meanwhile, and call
	// ForgetPartition before the next such group.
	ReusePartitions bool
	part            unsafe.Pointer // the map partEnc encodes; nil: none
	partEnc         []byte

	// soleKey is the key of the last map of one entry encoded: a map of
	// one entry holding it is read with a lookup instead of an iteration,
	// which costs several times more (the records of a source task
	// usually have offsets such as {"seq": n}, each a new map).
	soleKey string
}

// ForgetPartition drops the partition encoding ReusePartitions keeps.
func (e *Encoder) ForgetPartition() { e.part = nil }

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
func (e *Encoder) Append(r *Record) (err error) {
	mark := len(e.buf)
	nSchemas := len(e.schemas)
	defer func() {
		if err != nil {
			e.buf = e.buf[:mark]
			if len(e.schemas) != nSchemas {
				for s, i := range e.schemas {
					if i >= uint64(nSchemas) {
						delete(e.schemas, s)
					}
				}
			}
		}
	}()
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
	e.buf = append(e.buf, flags)
	e.canonical = true
	if err := e.partition(r.Partition); err != nil {
		e.canonical = false
		return fmt.Errorf("wire: source partition: %w", err)
	}
	if err := e.schemaless(mapValue(r.Offset), 0); err != nil {
		e.canonical = false
		return fmt.Errorf("wire: source offset: %w", err)
	}
	e.canonical = false
	e.str(r.Topic)
	if flags&flagKafkaPartition != 0 {
		e.buf = binary.AppendVarint(e.buf, int64(r.KafkaPartition))
	}
	e.buf = binary.AppendVarint(e.buf, r.KafkaOffset)
	if flags&flagTimestamp != 0 {
		e.buf = binary.AppendVarint(e.buf, r.Timestamp)
	}
	if err := e.schemaAndValue(r.KeySchema, r.Key); err != nil {
		return fmt.Errorf("wire: key: %w", err)
	}
	if err := e.schemaAndValue(r.ValueSchema, r.Value); err != nil {
		return fmt.Errorf("wire: value: %w", err)
	}
	if flags&flagHeaders != 0 {
		e.buf = binary.AppendUvarint(e.buf, uint64(len(r.Headers)))
		for _, h := range r.Headers {
			e.str(h.Key)
			if err := e.schemaAndValue(h.Schema, h.Value); err != nil {
				return fmt.Errorf("wire: header %q: %w", h.Key, err)
			}
		}
	}
	e.count++
	return nil
}

// mapValue turns a nil map into an untyped nil so it encodes as null.
func mapValue(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func (e *Encoder) str(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *Encoder) schemaAndValue(s *schema.Schema, v any) error {
	if raw, ok := v.(*Raw); ok {
		// Already encoded (by a ValueWriter or a Decoder): copied as is.
		if raw.schema != s {
			return fmt.Errorf("encoded value of schema %v given for schema %v", raw.schema, s)
		}
		if s == nil {
			e.buf = append(e.buf, refNone)
		} else if err := e.schemaRef(s, 0); err != nil {
			return err
		}
		e.buf = append(e.buf, raw.data...)
		return nil
	}
	if s == nil {
		e.buf = append(e.buf, refNone)
		return e.schemaless(v, 0)
	}
	if err := e.schemaRef(s, 0); err != nil {
		return err
	}
	return e.typed(s, v, 0)
}

func (e *Encoder) schemaRef(s *schema.Schema, depth int) error {
	if depth > maxDepth {
		return errors.New("schema nested too deeply")
	}
	if i, ok := e.schemas[s]; ok {
		e.buf = binary.AppendUvarint(e.buf, i+refBase)
		return nil
	}
	if !s.Type.Valid() {
		return fmt.Errorf("invalid schema type %d", s.Type)
	}
	if e.schemas == nil {
		e.schemas = make(map[*schema.Schema]uint64)
	}
	e.schemas[s] = uint64(len(e.schemas))
	e.buf = append(e.buf, refInline, byte(s.Type))
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
	e.buf = append(e.buf, flags)
	if s.Name != "" {
		e.str(s.Name)
	}
	if s.Version != 0 {
		e.buf = binary.AppendVarint(e.buf, int64(s.Version))
	}
	if s.Doc != "" {
		e.str(s.Doc)
	}
	if len(s.Parameters) > 0 {
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e.buf = binary.AppendUvarint(e.buf, uint64(len(keys)))
		for _, k := range keys {
			e.str(k)
			e.str(s.Parameters[k])
		}
	}
	switch s.Type {
	case schema.TypeStruct:
		e.buf = binary.AppendUvarint(e.buf, uint64(len(s.Fields)))
		for _, f := range s.Fields {
			if f.Schema == nil {
				return fmt.Errorf("field %q has no schema", f.Name)
			}
			e.str(f.Name)
			if err := e.schemaRef(f.Schema, depth+1); err != nil {
				return err
			}
		}
	case schema.TypeArray:
		if s.ValueSchema == nil {
			return errors.New("array schema without element schema")
		}
		if err := e.schemaRef(s.ValueSchema, depth+1); err != nil {
			return err
		}
	case schema.TypeMap:
		if s.KeySchema == nil || s.ValueSchema == nil {
			return errors.New("map schema without key or value schema")
		}
		if err := e.schemaRef(s.KeySchema, depth+1); err != nil {
			return err
		}
		if err := e.schemaRef(s.ValueSchema, depth+1); err != nil {
			return err
		}
	}
	if s.Default != nil {
		if err := e.typed(s, s.Default, depth+1); err != nil {
			return fmt.Errorf("default of %v: %w", s, err)
		}
	}
	return nil
}

func (e *Encoder) typed(s *schema.Schema, v any, depth int) error {
	if depth > maxDepth {
		return errors.New("value nested too deeply")
	}
	if v == nil && !s.Optional {
		if s.Default == nil {
			return fmt.Errorf("null used for required %v", s)
		}
		v = s.Default
	}
	if s.Optional {
		if v == nil {
			e.buf = append(e.buf, 0)
			return nil
		}
		e.buf = append(e.buf, 1)
	}
	switch s.Name {
	case schema.DecimalName:
		d, ok := v.(*big.Int)
		if !ok || d == nil {
			return mismatch(s, v)
		}
		e.buf = binary.AppendUvarint(e.buf, uint64(schema.DecimalLen(d)))
		e.buf = schema.AppendDecimal(e.buf, d)
		return nil
	case schema.DateName, schema.TimeName, schema.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return mismatch(s, v)
		}
		ms := t.UnixMilli()
		switch s.Name {
		case schema.DateName:
			ms = floorDiv(ms, 86400000)
		case schema.TimeName:
			ms -= floorDiv(ms, 86400000) * 86400000
		}
		e.buf = binary.AppendVarint(e.buf, ms)
		return nil
	}
	switch s.Type {
	case schema.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = append(e.buf, byte(x))
	case schema.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.AppendVarint(e.buf, int64(x))
	case schema.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.AppendVarint(e.buf, int64(x))
	case schema.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.AppendVarint(e.buf, x)
	case schema.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(x))
	case schema.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(x))
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return mismatch(s, v)
		}
		if x {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return mismatch(s, v)
		}
		e.str(x)
	case schema.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return mismatch(s, v)
		}
		e.bytes(x)
	case schema.TypeArray:
		x, ok := v.([]any)
		if !ok {
			return mismatch(s, v)
		}
		e.buf = binary.AppendUvarint(e.buf, uint64(len(x)))
		for i, el := range x {
			if err := e.typed(s.ValueSchema, el, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case schema.TypeMap:
		switch x := v.(type) {
		case map[string]any:
			if s.KeySchema.Type != schema.TypeString {
				return mismatch(s, v)
			}
			e.buf = binary.AppendUvarint(e.buf, uint64(len(x)))
			for k, el := range x {
				if err := e.typed(s.KeySchema, k, depth+1); err != nil {
					return err
				}
				if err := e.typed(s.ValueSchema, el, depth+1); err != nil {
					return fmt.Errorf("key %q: %w", k, err)
				}
			}
		case map[any]any:
			e.buf = binary.AppendUvarint(e.buf, uint64(len(x)))
			for k, el := range x {
				if err := e.typed(s.KeySchema, k, depth+1); err != nil {
					return fmt.Errorf("map key: %w", err)
				}
				if err := e.typed(s.ValueSchema, el, depth+1); err != nil {
					return fmt.Errorf("key %v: %w", k, err)
				}
			}
		default:
			return mismatch(s, v)
		}
	case schema.TypeStruct:
		st, ok := v.(*schema.Struct)
		if !ok || st == nil {
			return mismatch(s, v)
		}
		if err := st.Err(); err != nil {
			return err
		}
		if ss := st.Schema(); ss != s && !schema.Equal(ss, s) {
			return fmt.Errorf("struct value has schema %v, want %v", ss, s)
		}
		for i, f := range s.Fields {
			fv := st.GetIndex(i)
			if err := e.typed(f.Schema, fv, depth+1); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
	default:
		return fmt.Errorf("invalid schema type %d", s.Type)
	}
	return nil
}

func (e *Encoder) bytes(b []byte) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *Encoder) schemaless(v any, depth int) error {
	if depth > maxDepth {
		return errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, tagNull)
	case bool:
		if x {
			e.buf = append(e.buf, tagTrue)
		} else {
			e.buf = append(e.buf, tagFalse)
		}
	case int8:
		e.buf = append(e.buf, tagInt8, byte(x))
	case int16:
		e.buf = binary.AppendVarint(append(e.buf, tagInt16), int64(x))
	case int32:
		e.buf = binary.AppendVarint(append(e.buf, tagInt32), int64(x))
	case int64:
		e.buf = binary.AppendVarint(append(e.buf, tagInt64), x)
	case int:
		e.buf = binary.AppendVarint(append(e.buf, tagInt64), int64(x))
	case float32:
		e.buf = binary.LittleEndian.AppendUint32(append(e.buf, tagFloat32), math.Float32bits(x))
	case float64:
		e.buf = binary.LittleEndian.AppendUint64(append(e.buf, tagFloat64), math.Float64bits(x))
	case string:
		e.buf = append(e.buf, tagString)
		e.str(x)
	case []byte:
		e.buf = append(e.buf, tagBytes)
		e.bytes(x)
	case []any:
		e.buf = binary.AppendUvarint(append(e.buf, tagArray), uint64(len(x)))
		for _, el := range x {
			if err := e.schemaless(el, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		e.buf = binary.AppendUvarint(append(e.buf, tagStringMap), uint64(len(x)))
		if len(x) == 1 {
			if el, ok := x[e.soleKey]; ok {
				e.str(e.soleKey)
				return e.schemaless(el, depth+1)
			}
			for k, el := range x {
				e.soleKey = k
				e.str(k)
				return e.schemaless(el, depth+1)
			}
		}
		if !e.canonical {
			for k, el := range x {
				e.str(k)
				if err := e.schemaless(el, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		for _, k := range sortedKeys(x) {
			e.str(k)
			if err := e.schemaless(x[k], depth+1); err != nil {
				return err
			}
		}
	case map[any]any:
		e.buf = binary.AppendUvarint(append(e.buf, tagAnyMap), uint64(len(x)))
		for k, el := range x {
			if err := e.schemaless(k, depth+1); err != nil {
				return err
			}
			if err := e.schemaless(el, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("value of Go type %T is not a valid schemaless value", v)
	}
	return nil
}

// partition encodes a source partition map, reusing the previous one's
// encoding when ReusePartitions allows it.
func (e *Encoder) partition(m map[string]any) error {
	if !e.ReusePartitions || m == nil {
		return e.schemaless(mapValue(m), 0)
	}
	p := reflect.ValueOf(m).UnsafePointer() // held, so no other map can take its address
	if p == e.part {
		e.buf = append(e.buf, e.partEnc...)
		return nil
	}
	start := len(e.buf)
	if err := e.schemaless(m, 0); err != nil {
		return err
	}
	e.part, e.partEnc = p, append(e.partEnc[:0], e.buf[start:]...)
	return nil
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
	e := Encoder{buf: dst, canonical: true}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(offs)))
	for _, po := range offs {
		if err := e.schemaless(mapValue(po.Partition), 0); err != nil {
			return dst, fmt.Errorf("wire: partition: %w", err)
		}
		if err := e.schemaless(mapValue(po.Offset), 0); err != nil {
			return dst, fmt.Errorf("wire: offset: %w", err)
		}
	}
	return e.buf, nil
}

// AppendPartitions encodes a list of source partitions.
func AppendPartitions(dst []byte, parts []map[string]any) ([]byte, error) {
	e := Encoder{buf: dst, canonical: true}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(parts)))
	for _, p := range parts {
		if err := e.schemaless(mapValue(p), 0); err != nil {
			return dst, fmt.Errorf("wire: partition: %w", err)
		}
	}
	return e.buf, nil
}

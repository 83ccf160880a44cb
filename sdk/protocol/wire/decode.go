package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("wire: corrupt batch")

type decoder struct {
	data []byte
	pos  int
	// prevPart is the encoding and value of the last source partition:
	// records of a batch usually share it, and then share one map.
	prevPart    []byte
	prevPartMap map[string]any
	schemas     []*schema.Schema
	done        []bool
	budget      int // elements that may still be decoded
	// aliasOK makes string and bytes values of keys, values and headers
	// share data instead of copying it (see Decoder.AliasInput); aliasing
	// is set while such a value (not its schema) is decoded.
	aliasOK, aliasing bool
	// structs holds blocks of unused struct values (see newStruct).
	structs map[*schema.Schema]*structBlock
	// intern holds short strings seen as map keys and topics: they repeat
	// from record to record and are shared instead of allocated each time.
	intern map[string]string
	// noIntern leaves strings uninterned (for one short input).
	noIntern bool
	// prevTopic is the last record's topic (shorter than 128 bytes, so
	// that its length is one byte of varint).
	prevTopic string
	// rawValues leaves record values encoded (see Decoder.RawValues);
	// raws is a block of unused Raws, rawBlock the size of the last one.
	rawValues bool
	raws      []Raw
	rawBlock  int
	// rawOffsets leaves source offsets encoded (see Decoder.RawOffsets).
	rawOffsets bool
	// shared, unless nil, holds the record schemas of earlier batches
	// (see sharedDefinition); defining is set while one is read, which
	// starts at index defStart and refers to the schemas defRefs before
	// it.
	shared   *sharedSchemas
	defining bool
	defStart int
	defRefs  []*schema.Schema
}

func newDecoder(data []byte) *decoder {
	return &decoder{data: data, budget: len(data) + 1024}
}

func (d *decoder) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, d.pos, fmt.Sprintf(format, args...))
}

func (d *decoder) byte() (byte, error) {
	if d.pos >= len(d.data) {
		return 0, d.fail("unexpected end")
	}
	b := d.data[d.pos]
	d.pos++
	return b, nil
}

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.data[d.pos:])
	if n <= 0 {
		return 0, d.fail("bad uvarint")
	}
	d.pos += n
	return v, nil
}

func (d *decoder) varint() (int64, error) {
	v, n := binary.Varint(d.data[d.pos:])
	if n <= 0 {
		return 0, d.fail("bad varint")
	}
	d.pos += n
	return v, nil
}

func (d *decoder) count() (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(d.budget) {
		return 0, d.fail("count %d exceeds what the batch can hold", n)
	}
	d.budget -= int(n)
	return int(n), nil
}

func (d *decoder) raw() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.data)-d.pos) {
		return nil, d.fail("length %d past end", n)
	}
	b := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

func (d *decoder) str() (string, error) {
	b, err := d.raw()
	return string(b), err
}

// Interning limits: strings up to maxInternLen bytes, at most maxInterned
// of them per decoder.
const (
	maxInternLen = 64
	maxInterned  = 256
)

// topic is internedStr for a record's topic, which is usually the previous
// record's: comparing with that is cheaper than the map lookup.
func (d *decoder) topic() (string, error) {
	if p := d.pos; p < len(d.data) && int(d.data[p]) == len(d.prevTopic) && p+1+len(d.prevTopic) <= len(d.data) &&
		string(d.data[p+1:p+1+len(d.prevTopic)]) == d.prevTopic {
		d.pos = p + 1 + len(d.prevTopic)
		return d.prevTopic, nil
	}
	t, err := d.internedStr()
	if err == nil && len(t) < 0x80 {
		d.prevTopic = t
	}
	return t, err
}

// internedStr is str for strings that usually repeat (map keys, topics).
func (d *decoder) internedStr() (string, error) {
	b, err := d.raw()
	if err != nil || len(b) > maxInternLen || d.noIntern {
		return string(b), err
	}
	if s, ok := d.intern[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if d.intern == nil {
		d.intern = make(map[string]string)
	}
	if len(d.intern) < maxInterned {
		d.intern[s] = s
	}
	return s, nil
}

// valueStr is str for string values of keys, values and headers.
func (d *decoder) valueStr() (string, error) {
	b, err := d.raw()
	if err != nil || !d.aliasing || len(b) == 0 {
		return string(b), err
	}
	return unsafe.String(&b[0], len(b)), nil
}

func (d *decoder) bytes() ([]byte, error) {
	b, err := d.raw()
	if err != nil {
		return nil, err
	}
	if d.aliasing {
		return b[:len(b):len(b)], nil
	}
	return append([]byte(nil), b...), nil
}

func (d *decoder) fixed(n int) ([]byte, error) {
	if n > len(d.data)-d.pos {
		return nil, d.fail("unexpected end")
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

// Decode decodes a batch. countHint presizes the result and is capped by
// the input size, so a wrong hint cannot cause a large allocation.
func Decode(data []byte, countHint int) ([]Record, error) {
	if countHint < 0 || countHint > len(data) {
		countHint = len(data)
	}
	d := newDecoder(data)
	return d.records(make([]Record, 0, countHint))
}

func (d *decoder) records(recs []Record) ([]Record, error) {
	for d.pos < len(d.data) {
		recs = append(recs, Record{})
		if err := d.record(&recs[len(recs)-1]); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// A Decoder decodes batches one after the other, reusing its memory: the
// slice of records, and the short strings (map keys, topics) that repeat
// between records. The zero value is ready to use; a Decoder must not be
// used concurrently.
type Decoder struct {
	// AliasInput makes the string and []byte values of decoded keys,
	// values and headers share the memory of the batch passed to Decode
	// instead of copying it. The caller must then never modify that
	// memory, and accepts that a retained value keeps the whole batch
	// alive. Source partitions and offsets are always copied.
	AliasInput bool
	// RawValues leaves each record's value, unless null, in the wire
	// encoding: Value is then a *Raw (its schema is still ValueSchema).
	// A value written with its length (Encoder.ValueLengths) is cut by
	// it without being read: it is checked, as strictly as a decoded
	// value, by whoever reads it (a ValueReader, Raw.Decode, an Encoder
	// copying it), so that a value converted for Kafka is walked once, not
	// twice; it may hold at most 16 more array elements and map entries
	// than it has bytes. Other values are checked here. Keys and headers
	// are decoded.
	RawValues bool
	// RawOffsets leaves each record's source offset in the wire encoding:
	// RawOffset is set instead of Offset, checked as strictly as a decoded
	// offset, and copied out of the batch (all of a batch's into one
	// allocation). A source runner needs a record's offset only if it
	// becomes the one committed, so most are never decoded (DecodeOffset).
	RawOffsets bool

	intern map[string]string
	recs   []Record
	// shared keeps the schemas of the batches decoded: a record schema
	// defined in a batch as in an earlier one is the same *schema.Schema.
	shared *sharedSchemas
}

// Decode decodes a batch like the function Decode. The returned slice is
// valid until the next call; the records' contents (maps, values, schemas)
// are not reused and may be kept. A record schema defined as in an earlier
// batch (the same encoding, referring to the same schemas) is the schema
// decoded then: a source's batches share their schemas, and so do the
// caches that converters keep by schema. Decoded schemas must therefore
// never be modified.
func (dec *Decoder) Decode(data []byte, countHint int) ([]Record, error) {
	if countHint < 0 || countHint > len(data) {
		countHint = len(data)
	}
	clear(dec.recs) // drop references to the previous batch
	if cap(dec.recs) < countHint {
		dec.recs = make([]Record, 0, countHint)
	}
	if dec.shared == nil {
		dec.shared = &sharedSchemas{}
	}
	d := decoder{data: data, budget: len(data) + 1024, aliasOK: dec.AliasInput, intern: dec.intern,
		rawValues: dec.RawValues, rawOffsets: dec.RawOffsets, shared: dec.shared}
	recs, err := d.records(dec.recs[:0])
	dec.intern = d.intern
	if recs != nil {
		dec.recs = recs
	}
	if err == nil && dec.RawOffsets {
		copyRawOffsets(recs)
	}
	return recs, err
}

// copyRawOffsets moves the records' raw offsets, which alias the batch,
// into one allocation of their own.
func copyRawOffsets(recs []Record) {
	n := 0
	for i := range recs {
		n += len(recs[i].RawOffset)
	}
	slab := make([]byte, 0, n)
	for i := range recs {
		if r := recs[i].RawOffset; r != nil {
			start := len(slab)
			slab = append(slab, r...)
			recs[i].RawOffset = slab[start:len(slab):len(slab)]
		}
	}
}

// DecodeOffset decodes a RawOffset.
func DecodeOffset(raw []byte) (map[string]any, error) {
	d := newDecoder(raw)
	d.noIntern = true // one small map: an intern map would cost more than it saves
	return d.offset()
}

// DecodeOffset decodes a RawOffset like the function DecodeOffset, but
// shares the map keys with the offsets it decoded before (as Decode does
// within and across batches) instead of allocating them for each.
func (dec *Decoder) DecodeOffset(raw []byte) (map[string]any, error) {
	d := decoder{data: raw, budget: len(raw) + 1024, intern: dec.intern}
	m, err := d.offset()
	dec.intern = d.intern
	return m, err
}

func (d *decoder) offset() (map[string]any, error) {
	m, err := d.stringMap()
	if err != nil {
		return nil, err
	}
	if d.pos != len(d.data) {
		return nil, d.fail("trailing bytes")
	}
	return m, nil
}

// skipStringMap advances past a source offset (a map with string keys, or
// null) with the checks of stringMap, decoding none of it but values that
// are not scalars.
func (d *decoder) skipStringMap() error {
	tag, err := d.byte()
	if err != nil {
		return err
	}
	switch tag {
	case tagNull:
		return nil
	case tagStringMap:
	default:
		return d.fail("expected a map with string keys, got value tag %d", tag)
	}
	n, err := d.count()
	if err != nil {
		return err
	}
	for range n {
		if _, err := d.raw(); err != nil {
			return err
		}
		if err := d.skipSchemalessChecked(1); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) record(r *Record) error {
	flags, err := d.byte()
	if err != nil {
		return err
	}
	if flags&^(flagTimestamp|flagKafkaPartition|flagHeaders|flagValueLength) != 0 {
		return d.fail("unknown record flags %#x", flags)
	}
	// A source partition is usually the previous record's: when its
	// encoding starts here, it is the value here (an encoding ends where
	// its reader stops), so it need not be read again.
	if p, rest := d.prevPart, d.data[d.pos:]; p != nil && len(rest) >= len(p) && string(rest[:len(p)]) == string(p) {
		d.pos += len(p)
		r.Partition = d.prevPartMap
	} else {
		start := d.pos
		if r.Partition, err = d.stringMap(); err != nil {
			return err
		}
		d.prevPart, d.prevPartMap = d.data[start:d.pos], r.Partition
	}
	if d.rawOffsets {
		start := d.pos
		if err := d.skipStringMap(); err != nil {
			return err
		}
		if d.data[start] != tagNull {
			r.RawOffset = d.data[start:d.pos:d.pos]
		}
	} else if r.Offset, err = d.stringMap(); err != nil {
		return err
	}
	if r.Topic, err = d.topic(); err != nil {
		return err
	}
	r.KafkaPartition = NoPartition
	if flags&flagKafkaPartition != 0 {
		p, err := d.varint()
		if err != nil {
			return err
		}
		if p < 0 || p > math.MaxInt32 {
			return d.fail("kafka partition %d out of range", p)
		}
		r.KafkaPartition = int32(p)
	}
	if r.KafkaOffset, err = d.varint(); err != nil {
		return err
	}
	r.Timestamp = NoTimestamp
	if flags&flagTimestamp != 0 {
		if r.Timestamp, err = d.varint(); err != nil {
			return err
		}
	}
	if r.KeySchema, r.Key, err = d.schemaAndValue(); err != nil {
		return err
	}
	switch {
	case flags&flagValueLength != 0:
		if r.ValueSchema, r.Value, err = d.valueWithLength(); err != nil {
			return err
		}
	case d.rawValues:
		if r.ValueSchema, err = d.schemaRef(0); err != nil {
			return err
		}
		if r.Value, err = d.rawValue(r.ValueSchema); err != nil {
			return err
		}
	default:
		if r.ValueSchema, r.Value, err = d.schemaAndValue(); err != nil {
			return err
		}
	}
	if flags&flagHeaders != 0 {
		n, err := d.count()
		if err != nil {
			return err
		}
		r.Headers = make([]Header, n)
		for i := range r.Headers {
			h := &r.Headers[i]
			if h.Key, err = d.internedStr(); err != nil {
				return err
			}
			if h.Schema, h.Value, err = d.schemaAndValue(); err != nil {
				return err
			}
		}
	}
	return nil
}

// valueWithLength reads a record's value under flagValueLength: its schema
// reference, its length, then the value, which may hold at most valueSlack
// more array elements and map entries than its length in bytes. With
// rawValues the value is cut by its length and left for whoever reads it
// to check (a ValueReader, Decode, an Encoder copying it); otherwise it is
// decoded and must take exactly that length.
func (d *decoder) valueWithLength() (*schema.Schema, any, error) {
	s, err := d.schemaRef(0)
	if err != nil {
		return nil, nil, err
	}
	lb, err := d.fixed(4)
	if err != nil {
		return nil, nil, err
	}
	n := binary.LittleEndian.Uint32(lb)
	if uint64(n) > uint64(len(d.data)-d.pos) {
		return nil, nil, d.fail("value length %d past end", n)
	}
	start, end := d.pos, d.pos+int(n)
	if !d.rawValues {
		// The value can read neither past its length nor more elements
		// than its length allows.
		all, budget := d.data, d.budget
		allowed := min(budget, int(n)+valueSlack)
		d.data, d.budget = all[:end], allowed
		d.aliasing = d.aliasOK
		v, err := d.value(s)
		d.aliasing, d.data, d.budget = false, all, budget-(allowed-d.budget)
		if err == nil && d.pos != end {
			err = d.fail("value takes %d bytes, not the %d of its length", d.pos-start, n)
		}
		return s, v, err
	}
	d.pos = end
	if isNull(s, d.data[start:end]) {
		if n != 1 {
			return nil, nil, d.fail("null value followed by %d bytes", n-1)
		}
		return s, nil, nil
	}
	r := d.newRaw(s, d.data[start:end:end])
	r.budget = int(n) + valueSlack
	return s, r, nil
}

func (d *decoder) stringMap() (map[string]any, error) {
	v, err := d.schemaless(0)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, d.fail("expected a map with string keys, got %T", v)
	}
	return m, nil
}

func (d *decoder) schemaAndValue() (*schema.Schema, any, error) {
	s, err := d.schemaRef(0)
	if err != nil {
		return nil, nil, err
	}
	d.aliasing = d.aliasOK
	defer func() { d.aliasing = false }()
	v, err := d.value(s)
	return s, v, err
}

// value decodes a value of schema s (nil: schemaless).
func (d *decoder) value(s *schema.Schema) (any, error) {
	if s == nil {
		return d.schemaless(0)
	}
	return d.typed(s, 0)
}

// schemaRef decodes a schema reference; nil means schemaless.
func (d *decoder) schemaRef(depth int) (*schema.Schema, error) {
	if depth > maxDepth {
		return nil, d.fail("schema nested too deeply")
	}
	ref, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	switch {
	case ref == refNone:
		return nil, nil
	case ref >= refBase:
		i := ref - refBase
		if i >= uint64(len(d.schemas)) || !d.done[i] {
			return nil, d.fail("reference to unknown schema %d", i)
		}
		if d.defining && int(i) < d.defStart {
			d.defRefs = append(d.defRefs, d.schemas[i])
		}
		return d.schemas[i], nil
	}
	if depth == 0 && d.shared != nil {
		return d.sharedDefinition()
	}
	return d.definition(depth)
}

// sharedDefinition reads a record's schema definition and returns the
// schema an earlier batch defined the same way (the same encoding, and the
// same schemas referenced), if any, so that batch after batch the records of
// a source share one schema (and the caches keyed by it hit); its parts take
// the indexes of the parts just read.
func (d *decoder) sharedDefinition() (*schema.Schema, error) {
	start, idx := d.pos, len(d.schemas)
	d.defining, d.defStart, d.defRefs = true, idx, d.defRefs[:0]
	s, err := d.definition(0)
	d.defining = false
	if err != nil {
		return nil, err
	}
	key := append(d.shared.key[:0], d.data[start:d.pos]...)
	for _, r := range d.defRefs {
		key = binary.LittleEndian.AppendUint64(key, uint64(uintptr(unsafe.Pointer(r))))
	}
	d.shared.key = key
	defs := d.schemas[idx:]
	if e, ok := d.shared.m[string(key)]; ok && len(e.defs) == len(defs) {
		copy(defs, e.defs)
		return e.defs[0], nil
	}
	if len(d.shared.m) >= maxSharedSchemas || d.shared.m == nil {
		d.shared.m = make(map[string]sharedSchema)
	}
	// The entry keeps the schemas whose addresses are in its key.
	d.shared.m[string(key)] = sharedSchema{defs: append([]*schema.Schema(nil), defs...),
		refs: append([]*schema.Schema(nil), d.defRefs...)}
	return s, nil
}

// sharedSchemas are the record schemas a Decoder has read, by their
// encoding and the addresses of the schemas their encoding refers to.
type sharedSchemas struct {
	m   map[string]sharedSchema
	key []byte // the last key, for its memory
}

// sharedSchema is a schema definition read before: defs are the schemas it
// defined in the order of their indexes (the record's schema first), refs
// the schemas defined before it that it refers to.
type sharedSchema struct {
	defs, refs []*schema.Schema
}

// maxSharedSchemas bounds the schemas a Decoder keeps from batch to batch;
// when it has that many it forgets them all.
const maxSharedSchemas = 256

// definition reads a schema definition (its reference read).
func (d *decoder) definition(depth int) (*schema.Schema, error) {
	if d.budget <= 0 {
		return nil, d.fail("too many schemas")
	}
	d.budget--
	t, err := d.byte()
	if err != nil {
		return nil, err
	}
	s := &schema.Schema{Type: schema.Type(t)}
	if !s.Type.Valid() {
		return nil, d.fail("invalid schema type %d", t)
	}
	idx := len(d.schemas)
	d.schemas = append(d.schemas, s)
	d.done = append(d.done, false)
	flags, err := d.byte()
	if err != nil {
		return nil, err
	}
	s.Optional = flags&sflagOptional != 0
	if flags&sflagName != 0 {
		if s.Name, err = d.str(); err != nil {
			return nil, err
		}
	}
	if flags&sflagVersion != 0 {
		v, err := d.varint()
		if err != nil {
			return nil, err
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, d.fail("schema version out of range")
		}
		s.Version = int32(v)
	}
	if flags&sflagDoc != 0 {
		if s.Doc, err = d.str(); err != nil {
			return nil, err
		}
	}
	if flags&sflagParams != 0 {
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		s.Parameters = make(map[string]string, n)
		for range n {
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if s.Parameters[k], err = d.str(); err != nil {
				return nil, err
			}
		}
	}
	switch s.Type {
	case schema.TypeStruct:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		s.Fields = make([]schema.Field, n)
		for i := range s.Fields {
			f := &s.Fields[i]
			f.Index = i
			if f.Name, err = d.str(); err != nil {
				return nil, err
			}
			for j := range i {
				if s.Fields[j].Name == f.Name {
					return nil, d.fail("duplicate field %q", f.Name)
				}
			}
			if f.Schema, err = d.schemaRef(depth + 1); err != nil {
				return nil, err
			}
			if f.Schema == nil {
				return nil, d.fail("field %q without schema", f.Name)
			}
		}
	case schema.TypeArray:
		if s.ValueSchema, err = d.schemaRef(depth + 1); err != nil {
			return nil, err
		}
		if s.ValueSchema == nil {
			return nil, d.fail("array without element schema")
		}
	case schema.TypeMap:
		if s.KeySchema, err = d.schemaRef(depth + 1); err != nil {
			return nil, err
		}
		if s.ValueSchema, err = d.schemaRef(depth + 1); err != nil {
			return nil, err
		}
		if s.KeySchema == nil || s.ValueSchema == nil {
			return nil, d.fail("map without key or value schema")
		}
		if !s.KeySchema.Type.Primitive() && s.KeySchema.Type != schema.TypeStruct {
			// Keys of a map[any]any must be comparable Go values.
			return nil, d.fail("map keys of type %v are not supported", s.KeySchema.Type)
		}
	}
	switch s.Name {
	case schema.DecimalName:
		if s.Type != schema.TypeBytes {
			return nil, d.fail("decimal schema of type %v", s.Type)
		}
	case schema.DateName, schema.TimeName:
		if s.Type != schema.TypeInt32 {
			return nil, d.fail("%s schema of type %v", s.Name, s.Type)
		}
	case schema.TimestampName:
		if s.Type != schema.TypeInt64 {
			return nil, d.fail("timestamp schema of type %v", s.Type)
		}
	}
	if flags&sflagDefault != 0 {
		def, err := d.typed(s, depth+1)
		if err != nil {
			return nil, err
		}
		if def == nil {
			return nil, d.fail("null default")
		}
		s.Default = def
	}
	d.done[idx] = true
	return s, nil
}

func (d *decoder) typed(s *schema.Schema, depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("value nested too deeply")
	}
	if s.Optional {
		if present, err := d.present(); !present || err != nil {
			return nil, err
		}
	}
	return d.typedPresent(s, depth)
}

// present reads the presence byte of an optional value.
func (d *decoder) present() (bool, error) {
	p, err := d.byte()
	if err == nil && p > 1 {
		err = d.fail("bad presence byte %d", p)
	}
	return p == 1, err
}

// typedPresent reads a value of s after its presence byte, if any.
func (d *decoder) typedPresent(s *schema.Schema, depth int) (any, error) {
	switch s.Name {
	case schema.DecimalName:
		b, err := d.raw()
		if err != nil {
			return nil, err
		}
		return schema.DecimalFromBytes(b), nil
	case schema.DateName, schema.TimeName, schema.TimestampName:
		v, err := d.integer(s)
		if err != nil {
			return nil, err
		}
		if s.Name == schema.DateName {
			v *= 86400000
		}
		return time.UnixMilli(v).UTC(), nil
	}
	switch s.Type {
	case schema.TypeInt8:
		v, err := d.integer(s)
		return int8(v), err
	case schema.TypeInt16:
		v, err := d.integer(s)
		return int16(v), err
	case schema.TypeInt32:
		v, err := d.integer(s)
		return int32(v), err
	case schema.TypeInt64:
		return d.varint()
	case schema.TypeFloat32:
		return d.float32()
	case schema.TypeFloat64:
		return d.float64()
	case schema.TypeBoolean:
		return d.boolean()
	case schema.TypeString:
		return d.valueStr()
	case schema.TypeBytes:
		return d.bytes()
	case schema.TypeArray:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = d.typed(s.ValueSchema, depth+1); err != nil {
				return nil, err
			}
		}
		return a, nil
	case schema.TypeMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		if s.KeySchema.Type == schema.TypeString && !s.KeySchema.Optional {
			m := make(map[string]any, n)
			for range n {
				k, err := d.typed(s.KeySchema, depth+1)
				if err != nil {
					return nil, err
				}
				if m[k.(string)], err = d.typed(s.ValueSchema, depth+1); err != nil {
					return nil, err
				}
			}
			return m, nil
		}
		m := make(map[any]any, n)
		for range n {
			k, err := d.typed(s.KeySchema, depth+1)
			if err != nil {
				return nil, err
			}
			if !comparableKey(k) {
				return nil, d.fail("map key of Go type %T", k)
			}
			if m[k], err = d.typed(s.ValueSchema, depth+1); err != nil {
				return nil, err
			}
		}
		return m, nil
	case schema.TypeStruct:
		st := d.newStruct(s)
		for i, f := range s.Fields {
			v, err := d.typed(f.Schema, depth+1)
			if err != nil {
				return nil, err
			}
			st.SetIndex(i, v)
		}
		return st, nil
	}
	return nil, d.fail("invalid schema type %d", s.Type)
}

// maxStructBlock bounds how many struct values newStruct allocates at a
// time.
const maxStructBlock = 128

// structBlock is a block of unused values of one struct schema.
type structBlock struct {
	free []schema.Struct
	next int // size of the next block
}

// newStruct returns an empty value of s from a block of them allocated
// together: one allocation per block instead of two per value is a good
// part of the cost of decoding records with a struct value. Blocks double
// from 1 to maxStructBlock values per schema, so at most half of what is
// allocated goes unused, whatever the input. A block outlives the batch
// while one of its values is referenced, as the batch's bytes do when
// values alias them.
func (d *decoder) newStruct(s *schema.Schema) *schema.Struct {
	b := d.structs[s]
	if b == nil {
		if d.structs == nil {
			d.structs = make(map[*schema.Schema]*structBlock)
		}
		b = &structBlock{next: 1}
		d.structs[s] = b
	}
	if len(b.free) == 0 {
		b.free = schema.NewStructs(s, b.next)
		b.next = min(2*b.next, maxStructBlock)
	}
	st := &b.free[0]
	b.free = b.free[1:]
	return st
}

func comparableKey(k any) bool {
	switch k.(type) {
	case []byte, []any, map[string]any, map[any]any:
		return false
	}
	return true
}

func (d *decoder) schemaless(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("value nested too deeply")
	}
	tag, err := d.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagNull:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagInt8:
		b, err := d.byte()
		return int8(b), err
	case tagInt16:
		v, err := d.integer(schema.Int16)
		return int16(v), err
	case tagInt32:
		v, err := d.integer(schema.Int32)
		return int32(v), err
	case tagInt64:
		return d.varint()
	case tagFloat32:
		return d.float32()
	case tagFloat64:
		return d.float64()
	case tagString:
		return d.valueStr()
	case tagBytes:
		return d.bytes()
	case tagArray:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = d.schemaless(depth + 1); err != nil {
				return nil, err
			}
		}
		return a, nil
	case tagStringMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := d.internedStr()
			if err != nil {
				return nil, err
			}
			if m[k], err = d.schemaless(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	case tagAnyMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[any]any, n)
		for range n {
			k, err := d.schemaless(depth + 1)
			if err != nil {
				return nil, err
			}
			if !comparableKey(k) {
				return nil, d.fail("map key of Go type %T", k)
			}
			if m[k], err = d.schemaless(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, d.fail("unknown value tag %d", tag)
}

// skipSchemaless advances past a schemaless value without allocating.
func (d *decoder) skipSchemaless(depth int) error {
	if depth > maxDepth {
		return d.fail("value nested too deeply")
	}
	tag, err := d.byte()
	if err != nil {
		return err
	}
	switch tag {
	case tagNull, tagFalse, tagTrue:
		return nil
	case tagInt8:
		_, err = d.byte()
	case tagInt16, tagInt32, tagInt64:
		_, err = d.varint()
	case tagFloat32:
		_, err = d.fixed(4)
	case tagFloat64:
		_, err = d.fixed(8)
	case tagString, tagBytes:
		_, err = d.raw()
	case tagArray, tagStringMap, tagAnyMap:
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		if n > uint64(len(d.data)-d.pos) {
			return d.fail("count %d past end", n)
		}
		for range n {
			if tag == tagStringMap {
				if _, err := d.raw(); err != nil {
					return err
				}
			} else if tag == tagAnyMap {
				if err := d.skipSchemaless(depth + 1); err != nil {
					return err
				}
			}
			if err := d.skipSchemaless(depth + 1); err != nil {
				return err
			}
		}
		return nil
	default:
		return d.fail("unknown value tag %d", tag)
	}
	return err
}

// DecodeOffsets decodes a list written by AppendOffsets.
func DecodeOffsets(data []byte) ([]PartitionOffset, error) {
	d := newDecoder(data)
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	out := make([]PartitionOffset, n)
	for i := range out {
		if out[i].Partition, err = d.stringMap(); err != nil {
			return nil, err
		}
		if out[i].Offset, err = d.stringMap(); err != nil {
			return nil, err
		}
	}
	if d.pos != len(data) {
		return nil, d.fail("trailing bytes")
	}
	return out, nil
}

// DecodePartitions decodes a list written by AppendPartitions.
func DecodePartitions(data []byte) ([]map[string]any, error) {
	d := newDecoder(data)
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, n)
	for i := range out {
		if out[i], err = d.stringMap(); err != nil {
			return nil, err
		}
	}
	if d.pos != len(data) {
		return nil, d.fail("trailing bytes")
	}
	return out, nil
}

package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file is the Avro binary encoding of Connect values: the writer
// follows the Avro schema avroSchemaOf derives from the Connect schema
// (AvroData.fromConnectData then Avro's GenericDatumWriter), the reader
// walks the writer's Avro schema as the registry holds it
// (GenericDatumReader then AvroData.toConnectData).

// appendAvro appends v, described by s, in Avro's binary encoding of the
// Avro schema that avroSchemaOf(s) gives.
func appendAvro(b []byte, s *schema.Schema, v any, opts *avroOptions, top bool) ([]byte, error) {
	if v == nil && s.Default != nil {
		v = s.Default
	}
	if s.Optional && !(isAvroUnion(s)) {
		// ["null", T], or [T, "null"] when the schema has a default.
		switch {
		case v == nil && s.Default != nil:
			return append(b, 2), nil // index 1
		case v == nil:
			return append(b, 0), nil
		case s.Default != nil:
			b = append(b, 0)
		default:
			b = append(b, 2)
		}
	} else if v == nil {
		if top {
			return b, nil
		}
		return nil, fmt.Errorf("convert: found null value for non-optional schema %v", s)
	}
	switch s.Name {
	case schema.DecimalName:
		x, ok := v.(*big.Int)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if size, ok := s.Parameters[connectFixedSize]; ok {
			raw := schema.AppendDecimal(nil, x)
			n, _ := strconv.Atoi(size)
			if len(raw) > n {
				return nil, fmt.Errorf("convert: decimal needs %d bytes, fixed size is %d", len(raw), n)
			}
			pad := byte(0)
			if x.Sign() < 0 {
				pad = 0xFF
			}
			for i := len(raw); i < n; i++ {
				b = append(b, pad)
			}
			return append(b, raw...), nil
		}
		b = binary.AppendVarint(b, int64(schema.DecimalLen(x)))
		return schema.AppendDecimal(b, x), nil
	case schema.DateName, schema.TimeName, schema.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		ms := t.UnixMilli()
		switch s.Name {
		case schema.DateName:
			ms = floorDiv(ms, 86400000)
		case schema.TimeName:
			ms = floorMod(ms, 86400000)
		}
		return binary.AppendVarint(b, ms), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		n, ok := intOf(v)
		if !ok || !intTypeMatches(s.Type, v) {
			return nil, avroTypeErr(s, v)
		}
		return binary.AppendVarint(b, n), nil
	case schema.TypeFloat32:
		f, ok := v.(float32)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(f)), nil
	case schema.TypeFloat64:
		f, ok := v.(float64)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(f)), nil
	case schema.TypeBoolean:
		t, ok := v.(bool)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if t {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case schema.TypeString:
		str, ok := v.(string)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if _, isEnum := s.Parameters[avroEnumParam]; isEnum && opts.enhanced {
			idx := -1
			i := 0
			for _, k := range sortedParams(s.Parameters) {
				if sym, ok := strings.CutPrefix(k, avroEnumParam+"."); ok {
					if sym == str {
						idx = i
					}
					i++
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("convert: %q is not a symbol of enum %s", str, s.Parameters[avroEnumParam])
			}
			return binary.AppendVarint(b, int64(idx)), nil
		}
		b = binary.AppendVarint(b, int64(len(str)))
		return append(b, str...), nil
	case schema.TypeBytes:
		raw, ok := v.([]byte)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if size, ok := s.Parameters[connectFixedSize]; ok {
			if n, _ := strconv.Atoi(size); n != len(raw) {
				return nil, fmt.Errorf("convert: %d bytes for a fixed of size %s", len(raw), size)
			}
			return append(b, raw...), nil
		}
		b = binary.AppendVarint(b, int64(len(raw)))
		return append(b, raw...), nil
	case schema.TypeArray:
		list, ok := v.([]any)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if len(list) > 0 {
			b = binary.AppendVarint(b, int64(len(list)))
			for _, e := range list {
				var err error
				if b, err = appendAvro(b, s.ValueSchema, e, opts, false); err != nil {
					return nil, err
				}
			}
		}
		return append(b, 0), nil
	case schema.TypeMap:
		return appendAvroMap(b, s, v, opts)
	case schema.TypeStruct:
		st, ok := v.(*schema.Struct)
		if !ok {
			return nil, avroTypeErr(s, v)
		}
		if isAvroUnion(s) {
			base := 0
			if s.Optional {
				base = 1
			}
			for i, f := range s.Fields {
				if e := st.GetIndex(i); e != nil {
					b = binary.AppendVarint(b, int64(base+i))
					return appendAvro(b, nonOptional(f.Schema), e, opts, false)
				}
			}
			if s.Optional {
				return append(b, 0), nil
			}
			return nil, fmt.Errorf("convert: union struct has no field set")
		}
		for i, f := range s.Fields {
			var err error
			if b, err = appendAvro(b, f.Schema, st.GetIndex(i), opts, false); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return b, nil
	}
	return nil, avroTypeErr(s, v)
}

// appendAvroMap is appendAvro of a map (its own function: the iterator's
// closure would otherwise move appendAvro's arguments to the heap).
func appendAvroMap(b []byte, s *schema.Schema, v any, opts *avroOptions) ([]byte, error) {
	var n int
	switch m := v.(type) {
	case map[string]any:
		n = len(m)
	case map[any]any:
		n = len(m)
	default:
		return nil, avroTypeErr(s, v)
	}
	stringKeys := s.KeySchema.Type == schema.TypeString && (!s.KeySchema.Optional || opts.allowOptionalKeys)
	if n > 0 {
		b = binary.AppendVarint(b, int64(n))
		var err error
		for k, e := range mapEntries(v) {
			if stringKeys {
				ks, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("convert: map key %T is not a string", k)
				}
				b = binary.AppendVarint(b, int64(len(ks)))
				b = append(b, ks...)
			} else if b, err = appendAvro(b, s.KeySchema, k, opts, false); err != nil {
				return nil, err
			}
			if b, err = appendAvro(b, s.ValueSchema, e, opts, false); err != nil {
				return nil, err
			}
		}
	}
	return append(b, 0), nil
}

func avroTypeErr(s *schema.Schema, v any) error {
	return fmt.Errorf("convert: invalid Java type for %v: %T", s.Type, v)
}

func intTypeMatches(t schema.Type, v any) bool {
	switch v.(type) {
	case int8:
		return t == schema.TypeInt8
	case int16:
		return t == schema.TypeInt16
	case int32:
		return t == schema.TypeInt32
	case int64:
		return t == schema.TypeInt64
	}
	return false
}

// errAvroShort is returned for truncated Avro data.
var errAvroShort = errors.New("convert: Avro data ends early")

type avroReader struct {
	b     []byte
	depth int
}

func (r *avroReader) long() (int64, error) {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		if n == 0 {
			return 0, errAvroShort
		}
		return 0, errors.New("convert: Avro varint overflows 64 bits")
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *avroReader) int() (int32, error) {
	v, err := r.long()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("convert: Avro int %d out of range", v)
	}
	return int32(v), nil
}

func (r *avroReader) take(n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("convert: negative Avro length %d", n)
	}
	if n > int64(len(r.b)) {
		return nil, errAvroShort
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out, nil
}

func (r *avroReader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	return r.take(n)
}

// blockCount reads an array or map block header; a negative count is
// followed by the block's size in bytes.
func (r *avroReader) blockCount() (int64, error) {
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, errors.New("convert: bad Avro block count")
		}
		n = -n
		if _, err := r.long(); err != nil {
			return 0, err
		}
	}
	if n > int64(len(r.b))+1 {
		// Every item takes at least... nothing (null) in theory; bound
		// the allocation by what a sane writer can have produced.
		if n > 1<<24 {
			return 0, fmt.Errorf("convert: Avro block of %d items is too large", n)
		}
	}
	return n, nil
}

const maxAvroDepth = 512

// read decodes one value of the Avro schema a into a Connect value of c
// (the schema toConnectSchema derived from a).
func (r *avroReader) read(a avro.Schema, c *schema.Schema, opts *avroOptions) (any, error) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxAvroDepth {
		return nil, errors.New("convert: Avro value nested too deeply")
	}
	a = derefSchema(a)
	switch a.Type() {
	case avro.Null:
		return nil, nil
	case avro.Boolean:
		v, err := r.take(1)
		if err != nil {
			return nil, err
		}
		if v[0] > 1 {
			return nil, fmt.Errorf("convert: invalid Avro boolean %d", v[0])
		}
		return v[0] == 1, nil
	case avro.Int:
		n, err := r.int()
		if err != nil {
			return nil, err
		}
		switch c.Name {
		case schema.DateName:
			return time.UnixMilli(int64(n) * 86400000).UTC(), nil
		case schema.TimeName:
			return time.UnixMilli(int64(n)).UTC(), nil
		}
		switch c.Type {
		case schema.TypeInt8:
			if n < math.MinInt8 || n > math.MaxInt8 {
				return nil, fmt.Errorf("convert: %d out of range for int8", n)
			}
			return int8(n), nil
		case schema.TypeInt16:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return nil, fmt.Errorf("convert: %d out of range for int16", n)
			}
			return int16(n), nil
		}
		return n, nil
	case avro.Long:
		n, err := r.long()
		if err != nil {
			return nil, err
		}
		if c.Name == schema.TimestampName {
			return time.UnixMilli(n).UTC(), nil
		}
		return n, nil
	case avro.Float:
		v, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(v)), nil
	case avro.Double:
		v, err := r.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(v)), nil
	case avro.String:
		v, err := r.bytes()
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(v) {
			return nil, errors.New("convert: Avro string is not valid UTF-8")
		}
		return string(v), nil
	case avro.Bytes, avro.Fixed:
		var v []byte
		var err error
		if f, ok := a.(*avro.FixedSchema); ok {
			v, err = r.take(int64(f.Size()))
		} else {
			v, err = r.bytes()
		}
		if err != nil {
			return nil, err
		}
		if c.Name == schema.DecimalName {
			return schema.DecimalFromBytes(v), nil
		}
		return append([]byte(nil), v...), nil
	case avro.Enum:
		i, err := r.int()
		if err != nil {
			return nil, err
		}
		sym, ok := a.(*avro.EnumSchema).Symbol(int(i))
		if !ok {
			return nil, fmt.Errorf("convert: enum index %d out of range", i)
		}
		return sym, nil
	case avro.Array:
		items := a.(*avro.ArraySchema).Items()
		if c.Type == schema.TypeMap {
			return r.readEntries(items, c, opts)
		}
		list := []any{}
		for {
			n, err := r.blockCount()
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return list, nil
			}
			for ; n > 0; n-- {
				v, err := r.read(items, c.ValueSchema, opts)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
		}
	case avro.Map:
		values := a.(*avro.MapSchema).Values()
		m := map[string]any{}
		for {
			n, err := r.blockCount()
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return m, nil
			}
			for ; n > 0; n-- {
				k, err := r.bytes()
				if err != nil {
					return nil, err
				}
				v, err := r.read(values, c.ValueSchema, opts)
				if err != nil {
					return nil, err
				}
				m[string(k)] = v
			}
		}
	case avro.Record:
		rec := a.(*avro.RecordSchema)
		if c.Type != schema.TypeStruct || len(c.Fields) != len(rec.Fields()) {
			return nil, fmt.Errorf("convert: record %s does not match its Connect schema", rec.FullName())
		}
		st := schema.NewStruct(c)
		for i, f := range rec.Fields() {
			v, err := r.read(f.Type(), c.Fields[i].Schema, opts)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name(), err)
			}
			st.SetIndex(i, v)
		}
		return st, nil
	case avro.Union:
		types := a.(*avro.UnionSchema).Types()
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(types)) {
			return nil, fmt.Errorf("convert: union index %d out of range", i)
		}
		m := types[i]
		if m.Type() == avro.Null {
			return nil, nil
		}
		if !isAvroUnion(c) {
			// A flattened union: an optional T, or a singleton.
			return r.read(m, c, opts)
		}
		name := (&toConnectCtx{opts: opts}).unionMemberName(m)
		for j, f := range c.Fields {
			if f.Name == name {
				v, err := r.read(m, f.Schema, opts)
				if err != nil {
					return nil, err
				}
				st := schema.NewStruct(c)
				st.SetIndex(j, v)
				return st, nil
			}
		}
		return nil, fmt.Errorf("convert: union member %s has no Connect field", name)
	}
	return nil, fmt.Errorf("convert: unsupported Avro type %s", a.Type())
}

func (r *avroReader) readEntries(items avro.Schema, c *schema.Schema, opts *avroOptions) (any, error) {
	rec, ok := derefSchema(items).(*avro.RecordSchema)
	if !ok {
		return nil, errors.New("convert: map entries are not records")
	}
	var keyF, valF *avro.Field
	for _, f := range rec.Fields() {
		switch f.Name() {
		case "key":
			keyF = f
		case "value":
			valF = f
		}
	}
	if keyF == nil || valF == nil {
		return nil, errors.New("convert: map entry without key or value")
	}
	m := map[any]any{}
	for {
		n, err := r.blockCount()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return m, nil
		}
		for ; n > 0; n-- {
			var k, v any
			for _, f := range rec.Fields() {
				if f == keyF {
					k, err = r.read(f.Type(), c.KeySchema, opts)
				} else {
					v, err = r.read(f.Type(), c.ValueSchema, opts)
				}
				if err != nil {
					return nil, err
				}
			}
			switch k.(type) {
			case []any, map[string]any, map[any]any, []byte, *schema.Struct:
				return nil, fmt.Errorf("convert: map key of type %T is not supported", k)
			}
			m[k] = v
		}
	}
}

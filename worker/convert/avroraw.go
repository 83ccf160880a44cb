package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

func (c *AvroConverter) takesRaw() {}

// appendAvroRaw is appendAvro of a value still in the plugin wire
// encoding: it writes the same bytes as appendAvro of the decoded value,
// reading each value as vr gives it instead of building Go values (a
// snapshot's structs, big.Ints and time.Times were most of the Avro
// path's allocations). Maps, enums written as Avro enums and structs
// standing for Avro unions, rare in change events, are decoded and handed
// to appendAvro.
func appendAvroRaw(b []byte, s *schema.Schema, vr *wire.ValueReader, opts *avroOptions, depth int) ([]byte, error) {
	if depth > maxAvroDepth {
		return nil, fmt.Errorf("convert: value nested deeper than %d", maxAvroDepth)
	}
	if s.Type == schema.TypeMap || isAvroUnion(s) || (opts.enhanced && s.Type == schema.TypeString && isAvroEnum(s)) {
		v, err := vr.Value(s)
		if err != nil {
			return nil, err
		}
		return appendAvro(b, s, v, opts, false)
	}
	if s.Optional {
		present, err := vr.Present()
		if err != nil {
			return nil, err
		}
		if !present {
			return appendAvro(b, s, nil, opts, false)
		}
		// ["null", T], or [T, "null"] when the schema has a default.
		if s.Default != nil {
			b = append(b, 0)
		} else {
			b = append(b, 2)
		}
	}
	if s.Name == schema.DecimalName {
		unscaled, err := vr.Bytes()
		if err != nil {
			return nil, err
		}
		if _, fixed := s.Parameters[connectFixedSize]; fixed || !minimalDecimal(unscaled) {
			// appendAvro's padding, or its minimal encoding of the value.
			return appendAvro(b, nonOptional(s), schema.DecimalFromBytes(unscaled), opts, false)
		}
		b = binary.AppendVarint(b, int64(len(unscaled)))
		return append(b, unscaled...), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		// Date comes in days, Time and Timestamp in milliseconds: what
		// appendAvro writes for them (Time as the millisecond of its day).
		n, err := vr.Int(s)
		if err != nil {
			return nil, err
		}
		if s.Name == schema.TimeName {
			n = floorMod(n, msPerDay)
		}
		return binary.AppendVarint(b, n), nil
	case schema.TypeFloat32:
		x, err := vr.Float32()
		if err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(x)), nil
	case schema.TypeFloat64:
		x, err := vr.Float64()
		if err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), nil
	case schema.TypeBoolean:
		x, err := vr.Bool()
		if err != nil {
			return nil, err
		}
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case schema.TypeString, schema.TypeBytes:
		x, err := vr.Bytes()
		if err != nil {
			return nil, err
		}
		if s.Type == schema.TypeBytes {
			if size, fixed := s.Parameters[connectFixedSize]; fixed {
				if n, _ := strconv.Atoi(size); n != len(x) {
					return nil, fmt.Errorf("convert: %d bytes for a fixed of size %s", len(x), size)
				}
				return append(b, x...), nil
			}
		}
		b = binary.AppendVarint(b, int64(len(x)))
		return append(b, x...), nil
	case schema.TypeArray:
		n, err := vr.Count()
		if err != nil {
			return nil, err
		}
		if n > 0 {
			b = binary.AppendVarint(b, int64(n))
			for range n {
				if b, err = appendAvroRaw(b, s.ValueSchema, vr, opts, depth+1); err != nil {
					return nil, err
				}
			}
		}
		return append(b, 0), nil
	case schema.TypeStruct:
		var err error
		for _, f := range s.Fields {
			if b, err = appendAvroRaw(b, f.Schema, vr, opts, depth+1); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("convert: invalid schema type %v", s.Type)
}

// isAvroEnum reports whether s, a string, stands for an Avro enum.
func isAvroEnum(s *schema.Schema) bool {
	_, ok := s.Parameters[avroEnumParam]
	return ok
}

// appendRaw is AppendFromConnect's body for a value left encoded.
func (c *AvroConverter) appendRaw(b []byte, s *schema.Schema, raw *wire.Raw) ([]byte, error) {
	if raw.Schema() != s {
		return nil, fmt.Errorf("convert: encoded value of schema %v given for schema %v", raw.Schema(), s)
	}
	var vr wire.ValueReader
	vr.Reset(raw)
	b, err := appendAvroRaw(b, s, &vr, &c.opts, 0)
	if err != nil {
		return nil, err
	}
	if err := vr.Done(); err != nil {
		return nil, err
	}
	return b, nil
}

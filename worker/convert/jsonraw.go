package convert

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// RawTaker is implemented by converters whose AppendFromConnect also takes
// a value still in the plugin wire encoding (a *wire.Raw) and writes what
// it would write for the decoded value, without building it.
type RawTaker interface {
	Appender
	takesRaw()
}

func (c *JSONConverter) takesRaw() {}

// appendRaw is AppendFromConnect for a value left encoded.
func (c *JSONConverter) appendRaw(b []byte, s *schema.Schema, raw *wire.Raw) (out []byte, err error) {
	if raw.Schema() != s {
		return nil, fmt.Errorf("convert: encoded value of schema %v given for schema %v", raw.Schema(), s)
	}
	var vr wire.ValueReader
	vr.Reset(raw)
	if c.schemas {
		b = append(b, `{"schema":`...)
		if b, err = c.appendSchemaCached(b, s); err != nil {
			return nil, err
		}
		b = append(b, `,"payload":`...)
	}
	if b, err = c.appendWire(b, c.wirePlanFor(s), &vr, 0); err != nil {
		return nil, err
	}
	if err := vr.Done(); err != nil {
		return nil, err
	}
	if c.schemas {
		b = append(b, '}')
	}
	return b, nil
}

// A wirePlan is a schema with what appendWire writes for it prepared: a
// struct's field names, already quoted and escaped, which would otherwise
// be written again for every record (a Debezium event has about 40).
type wirePlan struct {
	s *schema.Schema // nil: schemaless
	// keys[i] is `"name":` of the struct's field i, with a comma before
	// it unless i is 0; fields[i] its plan.
	keys   []string
	fields []*wirePlan
	elem   *wirePlan // an array's elements
	// cut marks a plan left unprepared, built deeper than appendWire
	// writes; it may be reached at a lesser depth through a schema shared
	// elsewhere, and is then prepared as it is written.
	cut bool
}

// maxWirePlans bounds the plans a converter keeps. Values decoded from a
// plugin's batches have the batch's schemas, new with every batch, so
// plans come and go.
const maxWirePlans = 256

// wirePlanFor returns the plan of s, cached by schema.
func (c *JSONConverter) wirePlanFor(s *schema.Schema) *wirePlan {
	c.mu.Lock()
	p, ok := c.plans[s]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = newWirePlan(s, map[*schema.Schema]*wirePlan{}, 0)
	c.mu.Lock()
	if len(c.plans) >= maxWirePlans || c.plans == nil {
		c.plans = make(map[*schema.Schema]*wirePlan, 8)
	}
	c.plans[s] = p
	c.mu.Unlock()
	return p
}

// newWirePlan builds the plan of s at depth, sharing one plan per schema
// (memo) as the schema shares its parts.
func newWirePlan(s *schema.Schema, memo map[*schema.Schema]*wirePlan, depth int) *wirePlan {
	if p, ok := memo[s]; ok {
		return p
	}
	p := &wirePlan{s: s}
	if depth > maxDepth {
		p.cut = true
		return p
	}
	memo[s] = p
	if s == nil {
		return p
	}
	switch s.Type {
	case schema.TypeArray:
		p.elem = newWirePlan(s.ValueSchema, memo, depth+1)
	case schema.TypeStruct:
		p.keys = make([]string, len(s.Fields))
		p.fields = make([]*wirePlan, len(s.Fields))
		var buf []byte
		for i, f := range s.Fields {
			buf = buf[:0]
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jackson.AppendString(buf, f.Name), ':')
			p.keys[i] = string(buf)
			p.fields[i] = newWirePlan(f.Schema, memo, depth+1)
		}
	}
	return p
}

// appendWire writes the value vr reads next, of p's schema, exactly as
// schema.AppendJSON writes its decoded form. Schemaless values and maps, rare in
// bulk data (and map keys must be sorted), are decoded and handed to
// schema.AppendJSON.
func (c *JSONConverter) appendWire(b []byte, p *wirePlan, vr *wire.ValueReader, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("convert: value nested deeper than %d", maxDepth)
	}
	if p.cut {
		p = newWirePlan(p.s, map[*schema.Schema]*wirePlan{}, depth)
	}
	s := p.s
	if s == nil || s.Type == schema.TypeMap {
		v, err := vr.Value(s)
		if err != nil {
			return nil, err
		}
		return c.appendJSON(b, s, v)
	}
	if s.Optional {
		present, err := vr.Present()
		if err != nil {
			return nil, err
		}
		if !present {
			return c.appendJSON(b, s, nil)
		}
	}
	if s.Name == schema.DecimalName {
		unscaled, err := vr.Bytes()
		if err != nil {
			return nil, err
		}
		if c.numericDecimal || !minimalDecimal(unscaled) {
			return c.appendJSON(b, s, schema.DecimalFromBytes(unscaled))
		}
		return jackson.AppendBase64(b, unscaled), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		// Date (INT32) comes in days, Time (INT32) and Timestamp (INT64)
		// in milliseconds: what schema.AppendJSON writes for them.
		v, err := vr.Int(s)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(b, v, 10), nil
	case schema.TypeFloat32:
		x, err := vr.Float32()
		if err != nil {
			return nil, err
		}
		return jackson.AppendJavaFloat(b, float64(x), 32), nil
	case schema.TypeFloat64:
		x, err := vr.Float64()
		if err != nil {
			return nil, err
		}
		return jackson.AppendJavaFloat(b, x, 64), nil
	case schema.TypeBoolean:
		x, err := vr.Bool()
		if err != nil {
			return nil, err
		}
		return strconv.AppendBool(b, x), nil
	case schema.TypeString:
		x, err := vr.Bytes()
		if err != nil {
			return nil, err
		}
		return jackson.AppendString(b, unsafe.String(unsafe.SliceData(x), len(x))), nil
	case schema.TypeBytes:
		x, err := vr.Bytes()
		if err != nil {
			return nil, err
		}
		return jackson.AppendBase64(b, x), nil
	case schema.TypeArray:
		n, err := vr.Count()
		if err != nil {
			return nil, err
		}
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = c.appendWire(b, p.elem, vr, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case schema.TypeStruct:
		b = append(b, '{')
		var err error
		for i, f := range p.fields {
			b = append(b, p.keys[i]...)
			if b, err = c.appendWire(b, f, vr, depth+1); err != nil {
				return nil, fmt.Errorf("field %q: %w", s.Fields[i].Name, err)
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("convert: invalid schema type %v", s.Type)
}

// minimalDecimal reports whether b is the shortest big-endian two's
// complement encoding of its value, the one schema.AppendDecimal writes
// (and so the bytes schema.AppendJSON would encode in base64).
func minimalDecimal(b []byte) bool {
	switch {
	case len(b) == 0:
		return false
	case len(b) == 1:
		return true
	case b[0] == 0x00:
		return b[1]&0x80 != 0
	case b[0] == 0xff:
		return b[1]&0x80 == 0
	}
	return true
}

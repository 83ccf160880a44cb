package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file maps Avro schemas (parsed by hamba/avro) to Connect schemas as
// Confluent's AvroData.toConnectSchema does.

type toConnectCtx struct {
	opts   *avroOptions
	cycles map[string]*schema.Schema
}

func propString(s avro.Schema, key string) (string, bool) {
	ps, ok := s.(avro.PropertySchema)
	if !ok {
		return "", false
	}
	v, ok := ps.Prop(key).(string)
	return v, ok
}

func propAny(s avro.Schema, key string) any {
	if ps, ok := s.(avro.PropertySchema); ok {
		return ps.Prop(key)
	}
	return nil
}

// logicalOf returns an Avro schema's logical type, and a decimal's
// precision (-1 when absent) and scale.
func logicalOf(s avro.Schema) (lt string, prec, scale int) {
	prec = -1
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		l := ls.Logical()
		if d, ok := l.(*avro.DecimalLogicalSchema); ok {
			return "decimal", d.Precision(), d.Scale()
		}
		return string(l.Type()), prec, 0
	}
	lt, _ = propString(s, "logicalType")
	if p, ok := propAny(s, "precision").(float64); ok {
		prec = int(p)
	}
	if sc, ok := propAny(s, "scale").(float64); ok {
		scale = int(sc)
	}
	return lt, prec, scale
}

// toConnect is AvroData.toConnectSchema for a top-level schema with the
// registry's version (0: none).
func toConnectSchema(s avro.Schema, version int, opts *avroOptions) (*schema.Schema, error) {
	c := &toConnectCtx{opts: opts, cycles: map[string]*schema.Schema{}}
	return c.convert(s, false, nil, false, version)
}

func (c *toConnectCtx) convert(s avro.Schema, forceOptional bool, fieldDefault any, hasFieldDefault bool, version int) (*schema.Schema, error) {
	if ref, ok := s.(*avro.RefSchema); ok {
		if cs, ok := c.cycles[ref.Schema().FullName()]; ok && cs != nil {
			if forceOptional {
				return cs.AsOptional(), nil
			}
			return nonOptional(cs), nil
		}
		s = ref.Schema()
	}
	out := &schema.Schema{}
	param := func(k, v string) {
		if out.Parameters == nil {
			out.Parameters = map[string]string{}
		}
		out.Parameters[k] = v
	}
	connectType, _ := propString(s, connectTypeProp)
	lt, prec, scale := logicalOf(s)
	switch s.Type() {
	case avro.Boolean:
		out.Type = schema.TypeBoolean
	case avro.Bytes, avro.Fixed:
		out.Type = schema.TypeBytes
		if strings.EqualFold(lt, "decimal") {
			out.Name, out.Version = schema.DecimalName, 1
			param(schema.ScaleParameter, strconv.Itoa(scale))
			if prec >= 0 && prec != avroDecimalPrecision {
				param(connectDecPrecision, strconv.Itoa(prec))
			}
		}
		if f, ok := s.(*avro.FixedSchema); ok {
			param(connectFixedSize, strconv.Itoa(f.Size()))
		}
	case avro.Double:
		out.Type = schema.TypeFloat64
	case avro.Float:
		out.Type = schema.TypeFloat32
	case avro.Int:
		out.Type = schema.TypeInt32
		switch {
		case connectType == "" && lt == "":
		case lt != "":
			if strings.EqualFold(lt, "date") {
				out.Name, out.Version = schema.DateName, 1
			} else if strings.EqualFold(lt, "time-millis") {
				out.Name, out.Version = schema.TimeName, 1
			}
		case connectType == "int8":
			out.Type = schema.TypeInt8
		case connectType == "int16":
			out.Type = schema.TypeInt16
		default:
			return nil, fmt.Errorf("convert: unknown Connect type annotation %q on an Avro int", connectType)
		}
	case avro.Long:
		out.Type = schema.TypeInt64
		if strings.EqualFold(lt, "timestamp-millis") {
			out.Name, out.Version = schema.TimestampName, 1
		}
	case avro.String:
		out.Type = schema.TypeString
	case avro.Array:
		items := s.(*avro.ArraySchema).Items()
		if rec, ok := derefSchema(items).(*avro.RecordSchema); ok && isMapEntryRecord(rec) {
			fields := rec.Fields()
			if len(fields) != 2 || fields[0].Name() != "key" && fields[1].Name() != "key" {
				return nil, fmt.Errorf("convert: found map encoded as array of key-value pairs, but array elements do not match the expected format")
			}
			var k, v *schema.Schema
			for _, f := range fields {
				fs, err := toConnectSchema(f.Type(), 0, c.opts)
				if err != nil {
					return nil, err
				}
				switch f.Name() {
				case "key":
					k = fs
				case "value":
					v = fs
				}
			}
			if k == nil || v == nil {
				return nil, fmt.Errorf("convert: found map encoded as array of key-value pairs, but array elements do not match the expected format")
			}
			out.Type, out.KeySchema, out.ValueSchema = schema.TypeMap, k, v
		} else {
			e, err := c.convert(items, false, nil, false, 0)
			if err != nil {
				return nil, err
			}
			out.Type, out.ValueSchema = schema.TypeArray, e
		}
	case avro.Map:
		v, err := c.convert(s.(*avro.MapSchema).Values(), false, nil, false, 0)
		if err != nil {
			return nil, err
		}
		out.Type, out.KeySchema, out.ValueSchema = schema.TypeMap, schema.String, v
	case avro.Record:
		rec := s.(*avro.RecordSchema)
		out.Type = schema.TypeStruct
		c.cycles[rec.FullName()] = out
		if !c.opts.discardTypeDoc && c.opts.connectMetaData && rec.Doc() != "" {
			param(avroRecordDocParam, rec.Doc())
		}
		for i, f := range rec.Fields() {
			if !c.opts.discardTypeDoc && c.opts.connectMetaData && f.Doc() != "" {
				param(avroFieldDocPrefix+f.Name(), f.Doc())
			}
			fs, err := c.convert(f.Type(), false, f.Default(), f.HasDefault(), 0)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name(), err)
			}
			if c.opts.connectMetaData {
				if p, ok := f.Prop(connectParamsProp).(map[string]any); ok {
					fs = withFieldParams(fs, p)
				}
			}
			out.Fields = append(out.Fields, schema.Field{Name: f.Name(), Index: i, Schema: fs})
		}
	case avro.Enum:
		e := s.(*avro.EnumSchema)
		out.Type = schema.TypeString
		if c.opts.connectMetaData {
			if e.Doc() != "" {
				if c.opts.discardTypeDoc {
					param("connect.enum.doc", e.Doc())
				} else {
					param(avroEnumDocPrefix+e.Name(), e.Doc())
				}
			}
			if !c.opts.discardTypeDoc && e.HasDefault() {
				param(avroEnumDefPrefix+e.Name(), e.Default())
			}
		}
		param(avroEnumParam, e.FullName())
		for _, sym := range e.Symbols() {
			param(avroEnumParam+"."+sym, sym)
		}
	case avro.Union:
		types := s.(*avro.UnionSchema).Types()
		if len(types) == 1 && c.opts.flattenSingleton {
			return c.convert(types[0], false, nil, false, 0)
		}
		if len(types) == 2 && (types[0].Type() == avro.Null) != (types[1].Type() == avro.Null) {
			member := types[0]
			if member.Type() == avro.Null {
				member = types[1]
			}
			return c.convert(member, true, nil, false, 0)
		}
		out.Type, out.Name = schema.TypeStruct, avroUnionName
		seen := map[string]bool{}
		for _, m := range types {
			if m.Type() == avro.Null {
				out.Optional = true
				continue
			}
			name := c.unionMemberName(m)
			if seen[name] {
				return nil, fmt.Errorf("convert: multiple union schemas map to the Connect union field name %q", name)
			}
			seen[name] = true
			fs, err := c.convert(m, true, nil, false, 0)
			if err != nil {
				return nil, err
			}
			out.Fields = append(out.Fields, schema.Field{Name: name, Index: len(out.Fields), Schema: fs})
		}
	case avro.Null:
		return nil, fmt.Errorf("convert: standalone null schemas are not supported by this converter")
	default:
		return nil, fmt.Errorf("convert: couldn't translate unsupported schema type %s", s.Type())
	}

	if c.opts.discardTypeDoc {
		if d, ok := propString(s, connectDocProp); ok {
			out.Doc = d
		}
	} else if d, ok := propString(s, connectDocProp); ok && c.opts.connectMetaData {
		out.Doc = d
	}
	if v := propAny(s, connectVersionProp); v != nil {
		n, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("convert: invalid Connect version found: %v", v)
		}
		if out.Version != 0 && out.Version != int32(n) {
			return nil, fmt.Errorf("convert: mismatched versions: %d and %v", out.Version, n)
		}
		out.Version = int32(n)
	} else if version > 0 && out.Version == 0 {
		out.Version = int32(version)
	}
	if p := propAny(s, connectParamsProp); p != nil && c.opts.connectMetaData {
		m, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("convert: expected JSON object for schema parameters but found: %v", p)
		}
		for k, v := range m {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("convert: expected schema parameter values to be strings but found: %v", v)
			}
			param(k, str)
		}
	}
	if ps, ok := s.(interface{ Props() map[string]any }); ok {
		for k, v := range ps.Props() {
			if strings.HasPrefix(k, "avro") {
				param(k, fmt.Sprint(v))
			}
		}
	}
	connectDefault := propAny(s, connectDefaultProp)
	var def any
	hasDef := false
	if hasFieldDefault {
		def, hasDef = fieldDefault, true
		if !c.opts.discardTypeDoc && c.opts.connectMetaData && connectDefault == nil {
			param(avroFieldDefaultFlag, "true")
		}
	} else if connectDefault != nil {
		def, hasDef = connectDefault, true
	}
	if name, ok := propString(s, connectNameProp); ok {
		out.Name = name
	} else if n, ok := s.(avro.NamedSchema); ok && (s.Type() == avro.Record || s.Type() == avro.Enum || s.Type() == avro.Fixed && out.Name != schema.DecimalName) {
		if !strings.HasPrefix(n.FullName(), avroNamespace+"."+avroDefaultName) && !(s.Type() == avro.Record && isMapEntryName(n)) {
			out.Name = n.FullName()
		}
	}
	if strings.HasPrefix(out.Name, avroNamespace+"."+avroDefaultName) {
		out.Name = ""
	}
	if forceOptional {
		out.Optional = true
	}
	if hasDef && def != nil {
		// An invalid default is ignored, as AvroData does (with a warning).
		if v, err := defaultFromAvro(out, def); err == nil {
			out.Default = v
		}
	}
	return out, nil
}

func isMapEntryName(n avro.NamedSchema) bool {
	return n.FullName() == avroNamespace+"."+avroMapEntry
}

func derefSchema(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

func isMapEntryRecord(r *avro.RecordSchema) bool {
	if r.Namespace() == avroNamespace && r.Name() == avroMapEntry {
		return true
	}
	v, _ := r.Prop(connectInternalType).(string)
	return v == avroMapEntry
}

// withFieldParams is AvroData's applyFieldLevelParams: a field's own
// connect.parameters on a shared named type.
func withFieldParams(s *schema.Schema, p map[string]any) *schema.Schema {
	c := *s
	c.Parameters = map[string]string{}
	for k, v := range s.Parameters {
		c.Parameters[k] = v
	}
	for k, v := range p {
		if str, ok := v.(string); ok {
			c.Parameters[k] = str
		}
	}
	return &c
}

func (c *toConnectCtx) unionMemberName(m avro.Schema) string {
	m = derefSchema(m)
	switch m.Type() {
	case avro.Record, avro.Enum, avro.Fixed:
		n := m.(avro.NamedSchema)
		if c.opts.enhanced {
			return n.FullName()
		}
		return n.Name()
	}
	return string(m.Type())
}

// defaultFromAvro turns an Avro default (as hamba parses it: JSON numbers
// as float64 or json.Number, bytes as a string of ISO-8859-1 characters)
// into a Connect value of s.
func defaultFromAvro(s *schema.Schema, d any) (any, error) {
	if d == nil {
		return nil, nil
	}
	num := func() (float64, error) {
		switch n := d.(type) {
		case float64:
			return n, nil
		case float32:
			return float64(n), nil
		case int:
			return float64(n), nil
		case int32:
			return float64(n), nil
		case int64:
			return float64(n), nil
		case json.Number:
			return n.Float64()
		}
		return 0, fmt.Errorf("convert: default %v is not a number", d)
	}
	bytesOf := func() ([]byte, error) {
		switch v := d.(type) {
		case string:
			b := make([]byte, 0, len(v))
			for _, r := range v {
				if r > 0xFF {
					return nil, fmt.Errorf("convert: bytes default has a character above U+00FF")
				}
				b = append(b, byte(r))
			}
			return b, nil
		case []byte:
			return v, nil
		}
		return nil, fmt.Errorf("convert: default %v is not bytes", d)
	}
	switch s.Name {
	case schema.DecimalName:
		b, err := bytesOf()
		if err != nil {
			return nil, err
		}
		return schema.DecimalFromBytes(b), nil
	case schema.DateName, schema.TimeName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		if s.Name == schema.DateName {
			n *= 86400000
		}
		return time.UnixMilli(int64(n)).UTC(), nil
	case schema.TimestampName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		return time.UnixMilli(int64(n)).UTC(), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		if n != math.Trunc(n) {
			return nil, fmt.Errorf("convert: default %v is not an integer", d)
		}
		return NarrowInt(s.Type, int64(n)), nil
	case schema.TypeFloat32:
		n, err := num()
		return float32(n), err
	case schema.TypeFloat64:
		return num()
	case schema.TypeBoolean:
		b, ok := d.(bool)
		if !ok {
			return nil, fmt.Errorf("convert: default %v is not a boolean", d)
		}
		return b, nil
	case schema.TypeString:
		str, ok := d.(string)
		if !ok {
			return nil, fmt.Errorf("convert: default %v is not a string", d)
		}
		return str, nil
	case schema.TypeBytes:
		return bytesOf()
	case schema.TypeArray:
		list, ok := d.([]any)
		if !ok {
			return nil, fmt.Errorf("convert: default %v is not an array", d)
		}
		out := make([]any, len(list))
		for i, e := range list {
			v, err := defaultFromAvro(s.ValueSchema, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case schema.TypeMap:
		if m, ok := d.(map[string]any); ok && s.KeySchema.Type == schema.TypeString {
			out := make(map[string]any, len(m))
			for k, e := range m {
				v, err := defaultFromAvro(s.ValueSchema, e)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}
		return nil, fmt.Errorf("convert: unsupported map default %v", d)
	case schema.TypeStruct:
		m, ok := d.(map[string]any)
		if !ok || isAvroUnion(s) {
			return nil, fmt.Errorf("convert: unsupported struct default %v", d)
		}
		st := schema.NewStruct(s)
		for i, f := range s.Fields {
			e, ok := m[f.Name]
			if !ok {
				continue
			}
			v, err := defaultFromAvro(f.Schema, e)
			if err != nil {
				return nil, err
			}
			st.SetIndex(i, v)
		}
		return st, nil
	}
	return nil, fmt.Errorf("convert: unsupported default for %v", s.Type)
}

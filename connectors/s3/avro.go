package s3

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// avroFormat is Confluent's AvroFormat: Avro object container files whose
// schema is derived from the Connect schema as Confluent's AvroData does
// (connect.name, connect.version, connect.type for int8/int16, optional
// fields as ["null", T] unions defaulting to null, logical types).
type avroFormat struct{ codec string }

func (avroFormat) ext() string { return ".avro" }

type avroWriter struct {
	enc  *ocf.Encoder
	conv *avroConverter
	n    int
}

func (f avroFormat) newWriter(w io.Writer, s *schema.Schema) (recordWriter, error) {
	conv := &avroConverter{}
	js, err := conv.schemaJSON(s)
	if err != nil {
		return nil, err
	}
	codec := ocf.Null
	switch f.codec {
	case "deflate":
		codec = ocf.Deflate
	case "snappy":
		codec = ocf.Snappy
	case "zstandard":
		codec = ocf.ZStandard
	}
	enc, err := ocf.NewEncoder(string(js), w, ocf.WithCodec(codec), ocf.WithEncoderSchemaCache(&avro.SchemaCache{}), ocf.WithSchemaMarshaler(ocf.FullSchemaMarshaler))
	if err != nil {
		return nil, fmt.Errorf("s3: avro schema %s: %w", js, err)
	}
	return &avroWriter{enc: enc, conv: conv}, nil
}

func (w *avroWriter) write(v any) error {
	av, err := w.conv.value(w.conv.root, v, false)
	if err != nil {
		return err
	}
	if err := w.enc.Encode(av); err != nil {
		return fmt.Errorf("s3: avro encode: %w", err)
	}
	w.n++
	return nil
}

// The OCF encoder holds up to a block (100 records by default) of encoded
// records; count them as a kilobyte each.
func (w *avroWriter) buffered() int { return w.n % 100 * 1024 }

func (w *avroWriter) flushBuffered() error { return w.enc.Flush() }

func (w *avroWriter) close() error { return w.enc.Close() }

// avroConverter derives the Avro schema of a Connect schema and converts
// values to what hamba/avro encodes.
type avroConverter struct {
	root    *schema.Schema
	unnamed int
	// unionName is the Avro name of the non-null branch of an optional
	// schema (a union in Avro), by Connect schema.
	unionName map[*schema.Schema]string
}

func (c *avroConverter) schemaJSON(s *schema.Schema) ([]byte, error) {
	c.root = s
	c.unionName = map[*schema.Schema]string{}
	if s == nil {
		return nil, fmt.Errorf("s3: AvroFormat and ParquetFormat need records with a value schema (use a schemaful converter, e.g. JsonConverter with schemas.enable=true)")
	}
	m, err := c.schema(s, true)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func connectProps(m map[string]any, s *schema.Schema) {
	if s.Name != "" {
		m["connect.name"] = s.Name
	}
	if s.Version != 0 {
		m["connect.version"] = s.Version
	}
	if s.Doc != "" {
		m["connect.doc"] = s.Doc
	}
	if len(s.Parameters) > 0 {
		m["connect.parameters"] = s.Parameters
	}
}

// schema returns the Avro schema of s (a union with null when s is
// optional and wrap is true).
func (c *avroConverter) schema(s *schema.Schema, top bool) (any, error) {
	var t any
	var name string
	switch s.Name {
	case schema.DecimalName:
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		prec := 64
		if p, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil {
			prec = p
		}
		m := map[string]any{"type": "bytes", "logicalType": "decimal", "precision": prec, "scale": scale}
		connectProps(m, s)
		t, name = m, "bytes.decimal"
	case schema.DateName:
		m := map[string]any{"type": "int", "logicalType": "date"}
		connectProps(m, s)
		t, name = m, "int.date"
	case schema.TimeName:
		m := map[string]any{"type": "int", "logicalType": "time-millis"}
		connectProps(m, s)
		t, name = m, "int.time-millis"
	case schema.TimestampName:
		m := map[string]any{"type": "long", "logicalType": "timestamp-millis"}
		connectProps(m, s)
		t, name = m, "long.timestamp-millis"
	}
	if t == nil {
		switch s.Type {
		case schema.TypeInt8, schema.TypeInt16:
			m := map[string]any{"type": "int", "connect.type": s.Type.String()}
			connectProps(m, s)
			t, name = m, "int"
		case schema.TypeInt32:
			t, name = "int", "int"
		case schema.TypeInt64:
			t, name = "long", "long"
		case schema.TypeFloat32:
			t, name = "float", "float"
		case schema.TypeFloat64:
			t, name = "double", "double"
		case schema.TypeBoolean:
			t, name = "boolean", "boolean"
		case schema.TypeString:
			t, name = "string", "string"
		case schema.TypeBytes:
			t, name = "bytes", "bytes"
		case schema.TypeArray:
			items, err := c.schema(s.ValueSchema, false)
			if err != nil {
				return nil, err
			}
			t, name = map[string]any{"type": "array", "items": items}, "array"
		case schema.TypeMap:
			vals, err := c.schema(s.ValueSchema, false)
			if err != nil {
				return nil, err
			}
			if s.KeySchema.Type == schema.TypeString && !s.KeySchema.Optional {
				t, name = map[string]any{"type": "map", "values": vals}, "map"
			} else {
				keys, err := c.schema(s.KeySchema, false)
				if err != nil {
					return nil, err
				}
				c.unnamed++
				entry := map[string]any{"type": "record", "name": fmt.Sprintf("MapEntry%s", suffix(c.unnamed)), "namespace": "io.confluent.connect.avro",
					"fields": []any{map[string]any{"name": "key", "type": keys}, map[string]any{"name": "value", "type": vals}}}
				t, name = map[string]any{"type": "array", "items": entry}, "array"
			}
		case schema.TypeStruct:
			full := s.Name
			if full == "" {
				c.unnamed++
				full = "io.confluent.connect.avro.ConnectDefault" + suffix(c.unnamed)
			}
			ns, simple := "", full
			if i := strings.LastIndexByte(full, '.'); i >= 0 {
				ns, simple = full[:i], full[i+1:]
			}
			fields := make([]any, len(s.Fields))
			for i, f := range s.Fields {
				ft, err := c.schema(f.Schema, false)
				if err != nil {
					return nil, err
				}
				fm := map[string]any{"name": f.Name, "type": ft}
				if f.Schema.Optional {
					fm["default"] = nil
				}
				fields[i] = fm
			}
			m := map[string]any{"type": "record", "name": simple, "fields": fields}
			if ns != "" {
				m["namespace"] = ns
			}
			if s.Version != 0 {
				m["connect.version"] = s.Version
			}
			if s.Doc != "" {
				m["connect.doc"] = s.Doc
			}
			if s.Name != "" {
				m["connect.name"] = s.Name
			}
			t, name = m, full
		default:
			return nil, fmt.Errorf("s3: avro: unsupported schema type %s", s.Type)
		}
	}
	if s.Optional && !top {
		c.unionName[s] = name
		return []any{"null", t}, nil
	}
	return t, nil
}

func suffix(n int) string {
	if n <= 1 {
		return ""
	}
	return strconv.Itoa(n)
}

// value converts a Connect value to hamba/avro's generic form.
func (c *avroConverter) value(s *schema.Schema, v any, top bool) (any, error) {
	if v == nil && s.Default != nil {
		v = s.Default
	}
	if v == nil {
		if s.Optional || top {
			return nil, nil
		}
		return nil, fmt.Errorf("s3: avro: null for required %s", s)
	}
	var out any
	switch s.Name {
	case schema.DecimalName:
		scale, _ := s.Scale()
		out = new(big.Rat).SetFrac(v.(*big.Int), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	case schema.DateName, schema.TimestampName:
		out = v.(time.Time).UTC()
	case schema.TimeName:
		t := v.(time.Time).UTC()
		out = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()/1e6)*time.Millisecond
	}
	if out == nil {
		switch x := v.(type) {
		case int8:
			out = int(x)
		case int16:
			out = int(x)
		case int32:
			out = int(x)
		case []any:
			arr := make([]any, len(x))
			for i, e := range x {
				ev, err := c.value(s.ValueSchema, e, false)
				if err != nil {
					return nil, err
				}
				arr[i] = ev
			}
			out = arr
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				ev, err := c.value(s.ValueSchema, e, false)
				if err != nil {
					return nil, err
				}
				m[k] = ev
			}
			if s.KeySchema.Type == schema.TypeString && !s.KeySchema.Optional {
				out = m
			} else {
				arr := make([]any, 0, len(m))
				for k, e := range m {
					arr = append(arr, map[string]any{"key": k, "value": e})
				}
				out = arr
			}
		case map[any]any:
			arr := make([]any, 0, len(x))
			for k, e := range x {
				kv, err := c.value(s.KeySchema, k, false)
				if err != nil {
					return nil, err
				}
				ev, err := c.value(s.ValueSchema, e, false)
				if err != nil {
					return nil, err
				}
				arr = append(arr, map[string]any{"key": kv, "value": ev})
			}
			out = arr
		case *schema.Struct:
			m := make(map[string]any, len(s.Fields))
			for i, f := range s.Fields {
				fv, err := c.value(f.Schema, x.GetIndex(i), false)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", f.Name, err)
				}
				m[f.Name] = fv
			}
			out = m
		default:
			out = v
		}
	}
	if s.Optional && !top {
		return map[string]any{c.unionName[s]: out}, nil
	}
	return out, nil
}

package s3

import (
	"fmt"
	"strings"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// compatibility is schema.compatibility: when a record's value schema
// differs from the open file's, NONE rotates the file; BACKWARD and FULL
// rotate only for a newer schema version and project records of older
// versions onto the file's; FORWARD the reverse. (Confluent's
// StorageSchemaCompatibility.)
type compatibility string

// shouldChange reports whether a record of schema s must start new files
// while files of schema cur are open.
func (c compatibility) shouldChange(s, cur *schema.Schema) (bool, error) {
	if (s == nil) != (cur == nil) {
		return true, nil // tombstone <-> value, or schemaless <-> schemaful
	}
	if s == nil || s == cur {
		return false, nil
	}
	if c == "NONE" {
		return !schema.Equal(s, cur), nil
	}
	if s.Version == 0 || cur.Version == 0 {
		if schema.Equal(s, cur) {
			return false, nil
		}
		return false, fmt.Errorf("s3: schema.compatibility=%s needs schema versions: a schema without a version (%s) cannot be compared", c, s)
	}
	if s.Name != cur.Name {
		return true, nil
	}
	if c == "FORWARD" {
		return s.Version < cur.Version, nil
	}
	return s.Version > cur.Version, nil
}

// project converts v, of schema from, to schema to (Kafka's SchemaProjector):
// fields are matched by name, missing ones take the target's default or
// null, numbers widen.
func project(v any, from, to *schema.Schema) (any, error) {
	if from == to || from == nil || to == nil {
		return v, nil
	}
	if v == nil {
		if to.Default != nil {
			return to.Default, nil
		}
		if to.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("s3: projection: null for required %s", to)
	}
	if from.Name != to.Name && (strings.HasPrefix(to.Name, "org.apache.kafka.connect.data.") || strings.HasPrefix(from.Name, "org.apache.kafka.connect.data.")) {
		return nil, fmt.Errorf("s3: projection: %s cannot become %s", from, to)
	}
	switch to.Type {
	case schema.TypeStruct:
		st, ok := v.(*schema.Struct)
		if !ok || from.Type != schema.TypeStruct {
			return nil, fmt.Errorf("s3: projection: %s cannot become %s", from, to)
		}
		out := schema.NewStruct(to)
		for _, f := range to.Fields {
			src := from.Field(f.Name)
			if src == nil {
				switch {
				case f.Schema.Default != nil:
					out.SetIndex(f.Index, f.Schema.Default)
				case f.Schema.Optional:
				default:
					return nil, fmt.Errorf("s3: projection: required field %s of %s is missing in %s and has no default", f.Name, to, from)
				}
				continue
			}
			pv, err := project(st.GetIndex(src.Index), src.Schema, f.Schema)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out.SetIndex(f.Index, pv)
		}
		return out, nil
	case schema.TypeArray:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("s3: projection: %s cannot become %s", from, to)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			pv, err := project(e, from.ValueSchema, to.ValueSchema)
			if err != nil {
				return nil, err
			}
			out[i] = pv
		}
		return out, nil
	case schema.TypeMap:
		return v, nil
	}
	if from.Type == to.Type {
		return v, nil
	}
	return widen(v, to.Type)
}

// widen promotes a number to a wider type, as Kafka's SchemaProjector does.
func widen(v any, t schema.Type) (any, error) {
	var i int64
	var f float64
	isInt := true
	switch x := v.(type) {
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case float32:
		f, isInt = float64(x), false
	default:
		return nil, fmt.Errorf("s3: projection: %T cannot become %s", v, t)
	}
	if isInt {
		f = float64(i)
	}
	switch t {
	case schema.TypeInt16:
		if isInt {
			return int16(i), nil
		}
	case schema.TypeInt32:
		if isInt {
			return int32(i), nil
		}
	case schema.TypeInt64:
		if isInt {
			return i, nil
		}
	case schema.TypeFloat32:
		return float32(f), nil
	case schema.TypeFloat64:
		return f, nil
	}
	return nil, fmt.Errorf("s3: projection: %T cannot become %s", v, t)
}

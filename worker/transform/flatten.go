package transform

import (
	"github.com/tributary-dev/tributary/sdk/schema"
)

var flattenKeys = []Key{
	{Name: "delimiter", Type: TypeString, Default: ".", Importance: "MEDIUM",
		Doc: "Delimiter to insert between field names from the input record when generating field names for the output record"},
}

// flatten is Flatten$Key/$Value: nested structs (or maps) become top-level
// fields named by their path joined with the delimiter; arrays are kept.
type flatten struct {
	side      side
	delimiter string
	cache     schemaCache
}

func newFlatten(c Config, s side) (Transformation, error) {
	return &flatten{side: s, delimiter: c.String("delimiter")}, nil
}

const flattenPurpose = "flattening"

func (t *flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

func (t *flatten) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if v == nil {
		return true, nil
	}
	if s == nil {
		m, err := requireMap(v, flattenPurpose)
		if err != nil {
			return false, err
		}
		out := map[string]any{}
		if err := t.flattenMap(m, "", out); err != nil {
			return false, err
		}
		t.side.setOwned(r, out)
		return true, nil
	}
	st, err := requireStructOrNull(v, flattenPurpose)
	if err != nil {
		return false, err
	}
	ns := t.cache.get(s)
	if ns == nil {
		ns = copyBasics(s, schema.TypeStruct)
		def, _ := s.Default.(*schema.Struct)
		if err := t.buildSchema(s, "", ns, s.Optional, def); err != nil {
			return false, err
		}
		t.cache.put(s, ns)
	}
	out := schema.NewStruct(ns)
	if err := t.buildValue(st, "", out); err != nil {
		return false, err
	}
	t.side.set(r, ns, out)
	return true, nil
}

func (t *flatten) flattenMap(m map[string]any, prefix string, out map[string]any) error {
	for k, v := range m {
		name := t.name(prefix, k)
		if v == nil {
			out[name] = nil
			continue
		}
		typ, ok := schemaType(v)
		if !ok {
			return dataErr("Flatten transformation was passed a value of type %s which is not supported by Connect's data API", classOf(v))
		}
		switch typ {
		case schema.TypeMap:
			nested, err := requireMap(v, flattenPurpose)
			if err != nil {
				return err
			}
			if err := t.flattenMap(nested, name, out); err != nil {
				return err
			}
		case schema.TypeStruct:
			return dataErr("Flatten transformation does not support %s for record without schemas (for field %s).", classOf(v), name)
		default:
			out[name] = v
		}
	}
	return nil
}

// buildSchema adds the flattened fields of s: a field is optional when it
// or any struct above it is, and takes its default from its own schema or
// the default of a struct above it.
func (t *flatten) buildSchema(s *schema.Schema, prefix string, out *schema.Schema, optional bool, parentDefault *schema.Struct) error {
	for _, f := range s.Fields {
		name := t.name(prefix, f.Name)
		fieldOptional := optional || f.Schema.Optional
		var def any
		if f.Schema.Default != nil {
			def = f.Schema.Default
		} else if parentDefault != nil {
			def = parentDefault.GetIndex(f.Index)
		}
		switch f.Schema.Type {
		case schema.TypeStruct:
			d, _ := def.(*schema.Struct)
			if err := t.buildSchema(f.Schema, name, out, fieldOptional, d); err != nil {
				return err
			}
		case schema.TypeMap:
			return dataErr("Flatten transformation does not support MAP for record with schemas (for field %s).", name)
		default:
			fs := copyBasics(f.Schema, f.Schema.Type)
			fs.Optional = fieldOptional
			if def != nil {
				fs.Default = def
			}
			if err := withField(out, name, fs); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *flatten) buildValue(st *schema.Struct, prefix string, out *schema.Struct) error {
	if st == nil {
		return nil
	}
	for i, f := range st.Schema().Fields {
		name := t.name(prefix, f.Name)
		switch f.Schema.Type {
		case schema.TypeStruct:
			v := st.GetIndexWithoutDefault(i)
			nested, ok := v.(*schema.Struct)
			if v != nil && !ok {
				return failure(ClassCastException, "class %s cannot be cast to class org.apache.kafka.connect.data.Struct", javaClass(v))
			}
			if err := t.buildValue(nested, name, out); err != nil {
				return err
			}
		case schema.TypeMap:
			return dataErr("Flatten transformation does not support MAP for record with schemas (for field %s).", name)
		default:
			if err := putName(out, name, st.GetIndex(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

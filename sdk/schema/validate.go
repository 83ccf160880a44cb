package schema

import (
	"fmt"
	"math/big"
	"time"
)

// Validate checks that v is a valid value of s. A nil value is valid for an
// optional schema or one with a default. With a nil schema, v must be a
// valid schemaless value.
func Validate(s *Schema, v any) error {
	if s == nil {
		return validateSchemaless(v, 0)
	}
	return validate(s, v, 0)
}

const maxDepth = 100

func validate(s *Schema, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema: value nested deeper than %d", maxDepth)
	}
	if v == nil {
		if s.Optional || s.Default != nil {
			return nil
		}
		return fmt.Errorf("schema: null used for required %v", s)
	}
	switch s.Name {
	case DecimalName:
		if _, ok := v.(*big.Int); !ok {
			return mismatch(s, v)
		}
		return nil
	case DateName, TimeName, TimestampName:
		if _, ok := v.(time.Time); !ok {
			return mismatch(s, v)
		}
		return nil
	}
	ok := false
	switch s.Type {
	case TypeInt8:
		_, ok = v.(int8)
	case TypeInt16:
		_, ok = v.(int16)
	case TypeInt32:
		_, ok = v.(int32)
	case TypeInt64:
		_, ok = v.(int64)
	case TypeFloat32:
		_, ok = v.(float32)
	case TypeFloat64:
		_, ok = v.(float64)
	case TypeBoolean:
		_, ok = v.(bool)
	case TypeString:
		_, ok = v.(string)
	case TypeBytes:
		_, ok = v.([]byte)
	case TypeArray:
		a, isArr := v.([]any)
		if !isArr {
			return mismatch(s, v)
		}
		for i, e := range a {
			if err := validate(s.ValueSchema, e, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	case TypeMap:
		switch m := v.(type) {
		case map[string]any:
			if s.KeySchema.Type != TypeString {
				return mismatch(s, v)
			}
			for k, e := range m {
				if err := validate(s.ValueSchema, e, depth+1); err != nil {
					return fmt.Errorf("key %q: %w", k, err)
				}
			}
			return nil
		case map[any]any:
			for k, e := range m {
				if err := validate(s.KeySchema, k, depth+1); err != nil {
					return fmt.Errorf("map key %v: %w", k, err)
				}
				if err := validate(s.ValueSchema, e, depth+1); err != nil {
					return fmt.Errorf("key %v: %w", k, err)
				}
			}
			return nil
		}
	case TypeStruct:
		st, isStruct := v.(*Struct)
		if !isStruct {
			return mismatch(s, v)
		}
		if st.err != nil {
			return st.err
		}
		if st.schema != s && !Equal(st.schema, s) {
			return fmt.Errorf("schema: struct value has schema %v, want %v", st.schema, s)
		}
		for i, f := range s.Fields {
			if err := validate(f.Schema, st.values[i], depth+1); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		return nil
	}
	if !ok {
		return mismatch(s, v)
	}
	return nil
}

func mismatch(s *Schema, v any) error {
	return fmt.Errorf("schema: value of Go type %T does not match %v", v, s)
}

func validateSchemaless(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema: value nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil, bool, int8, int16, int32, int64, float32, float64, string, []byte:
		return nil
	case []any:
		for _, e := range x {
			if err := validateSchemaless(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, e := range x {
			if err := validateSchemaless(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[any]any:
		for k, e := range x {
			if err := validateSchemaless(k, depth+1); err != nil {
				return err
			}
			if err := validateSchemaless(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("schema: Go type %T is not a valid schemaless value", v)
}

// Equal reports whether two schemas describe the same type, name, version,
// parameters, optionality and (recursively) children. Defaults and docs are
// compared too.
func Equal(a, b *Schema) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	if a.Type != b.Type || a.Optional != b.Optional || a.Name != b.Name ||
		a.Version != b.Version || a.Doc != b.Doc || len(a.Parameters) != len(b.Parameters) ||
		len(a.Fields) != len(b.Fields) || !valueEqual(a.Default, b.Default, false) {
		return false
	}
	for k, v := range a.Parameters {
		if w, ok := b.Parameters[k]; !ok || w != v {
			return false
		}
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || !Equal(a.Fields[i].Schema, b.Fields[i].Schema) {
			return false
		}
	}
	return Equal(a.KeySchema, b.KeySchema) && Equal(a.ValueSchema, b.ValueSchema)
}

package schema

import (
	"bytes"
	"math/big"
	"time"
)

// ValueEqual reports whether two values are deeply equal in the data model:
// structs compare by schema and fields, Decimals by value, times by instant.
func ValueEqual(a, b any) bool { return valueEqual(a, b, true) }

// valueEqual compares struct schemas only when withSchemas is set; schema
// defaults are compared without, since a struct default refers back to the
// schema being compared.
func valueEqual(a, b any, withSchemas bool) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valueEqual(x[i], y[i], withSchemas) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !valueEqual(v, w, withSchemas) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !valueEqual(v, w, withSchemas) {
				return false
			}
		}
		return true
	case *Struct:
		y, ok := b.(*Struct)
		if !ok || (withSchemas && !Equal(x.schema, y.schema)) || len(x.values) != len(y.values) {
			return false
		}
		for i := range x.values {
			if !valueEqual(x.GetIndex(i), y.GetIndex(i), withSchemas) {
				return false
			}
		}
		return true
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || (x != x && y != y))
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (x != x && y != y))
	}
	defer func() { _ = recover() }() // incomparable dynamic types
	return a == b
}

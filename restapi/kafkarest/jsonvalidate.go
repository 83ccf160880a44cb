package kafkarest

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// validateJSON checks v (decoded with UseNumber) against the JSON Schema
// schema (decoded the same way) for the keywords most schemas use: type,
// enum, const, required, properties, additionalProperties: false, items,
// minimum/maximum, minLength/maxLength. Other keywords are not checked.
func validateJSON(schema, v any, path string) error {
	s, ok := schema.(map[string]any)
	if !ok {
		if b, isBool := schema.(bool); isBool && !b {
			return fmt.Errorf("%s: the schema allows no value", path)
		}
		return nil
	}
	if t, ok := s["type"]; ok {
		var types []any
		switch t := t.(type) {
		case string:
			types = []any{t}
		case []any:
			types = t
		}
		if !slices.ContainsFunc(types, func(x any) bool { n, _ := x.(string); return hasJSONType(v, n) }) {
			return fmt.Errorf("%s: want type %v", path, t)
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return jsonEqual(x, v) }) {
		return fmt.Errorf("%s: not one of the enum's values", path)
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, v) {
		return fmt.Errorf("%s: not the const value", path)
	}
	switch v := v.(type) {
	case map[string]any:
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if n, _ := r.(string); n != "" {
					if _, has := v[n]; !has {
						return fmt.Errorf("%s.%s: required", path, n)
					}
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, x := range v {
			ps, has := props[k]
			if !has {
				if ap, isBool := s["additionalProperties"].(bool); isBool && !ap {
					return fmt.Errorf("%s.%s: not an allowed property", path, k)
				}
				continue
			}
			if err := validateJSON(ps, x, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, x := range v {
				if err := validateJSON(items, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		if m, ok := number(s["minimum"]); ok && f < m {
			return fmt.Errorf("%s: %s is below the minimum %v", path, v, m)
		}
		if m, ok := number(s["maximum"]); ok && f > m {
			return fmt.Errorf("%s: %s is above the maximum %v", path, v, m)
		}
	case string:
		n := float64(len([]rune(v)))
		if m, ok := number(s["minLength"]); ok && n < m {
			return fmt.Errorf("%s: shorter than %v", path, m)
		}
		if m, ok := number(s["maxLength"]); ok && n > m {
			return fmt.Errorf("%s: longer than %v", path, m)
		}
	}
	return nil
}

func number(x any) (float64, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

func hasJSONType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		return t == "integer" && err == nil && f == math.Trunc(f)
	}
	return false
}

func jsonEqual(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, _ := strconv.ParseFloat(string(x), 64)
		fy, _ := strconv.ParseFloat(string(y), 64)
		return fx == fy
	}
	return reflect.DeepEqual(a, b)
}

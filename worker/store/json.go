package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// This file writes JSON the way Kafka Connect's internal JsonConverter
// (schemas.enable=false, Jackson underneath) writes it, so that the bytes
// of keys — which decide partition placement and compaction identity — and
// values match a Java worker's. Differences from encoding/json: no HTML
// escaping, U+2028/U+2029 are written raw, control characters use
// uppercase \u00XX, characters outside the BMP are written as escaped
// surrogate pairs, doubles follow Java's Double.toString (1.0, 1.0E10).
// Map keys are written in sorted order (Java's order depends on the Map
// implementation the connector used; sorted is what a LinkedHashMap built
// in key order gives).

// appendJSON appends the Jackson-compatible encoding of v.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return jackson.AppendString(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float32:
		return jackson.AppendJavaFloat(b, float64(x), 32), nil
	case float64:
		return jackson.AppendJavaFloat(b, x, 64), nil
	case json.Number:
		if !json.Valid([]byte(x)) {
			return nil, fmt.Errorf("invalid number %q", string(x))
		}
		return append(b, x...), nil
	case map[string]any:
		return appendObject(b, x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = v
		}
		return appendObject(b, m)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	// Named map types such as sdk.Partition and sdk.Offset.
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String {
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return appendObject(b, m)
	}
	if rv.Kind() == reflect.Slice {
		s := make([]any, rv.Len())
		for i := range s {
			s[i] = rv.Index(i).Interface()
		}
		return appendJSON(b, s)
	}
	return nil, fmt.Errorf("cannot encode %T as JSON", v)
}

func appendObject(b []byte, m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jackson.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// decodeJSON parses a schemaless JSON value: integers become int64 (so an
// LSN stays exact), other numbers float64, objects map[string]any.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
		return x
	}
	return v
}

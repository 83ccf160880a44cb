package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

const hexUpper = "0123456789ABCDEF"

// appendJSON appends the Jackson-compatible encoding of v.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendString(b, x), nil
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
		return appendJavaFloat(b, float64(x), 32)
	case float64:
		return appendJavaFloat(b, x, 64)
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
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendString writes s as Jackson's UTF8JsonGenerator does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, "\uFFFD"...)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(b, r1)
			b = appendU(b, r2)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexUpper[r>>12&0xF], hexUpper[r>>8&0xF], hexUpper[r>>4&0xF], hexUpper[r&0xF])
}

// appendJavaFloat formats f like Java's Double.toString (Float.toString for
// bits=32): plain decimal with at least one fractional digit for
// 1e-3 <= |f| < 1e7, otherwise d.dddE±n.
func appendJavaFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errors.New("cannot encode NaN or infinity as JSON")
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...), nil
		}
		return append(b, "0.0"...), nil
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			b = append(b, digits[:exp+1]...)
			b = append(b, '.')
			if frac := digits[exp+1:]; frac != "" {
				b = append(b, frac...)
			} else {
				b = append(b, '0')
			}
			return b, nil
		}
		b = append(b, "0."...)
		for i := 0; i < -exp-1; i++ {
			b = append(b, '0')
		}
		return append(b, digits...), nil
	}
	b = append(b, digits[0], '.')
	if len(digits) > 1 {
		b = append(b, digits[1:]...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(exp), 10), nil
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

package convert

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// This file writes values as Values.convertToString does. That is Kafka's
// own text format, not JSON (strings are bare at the top level and only
// \ and " are escaped inside); where Values writes JSON (javaString for
// composite values) it goes through schema.AppendJSON.

// appendValuesString appends v as Kafka's Values.convertToString writes it
// (embedded: inside an array, map or struct). s gives the scale of
// decimals and the schemas of nested values; it may be nil.
func appendValuesString(b []byte, s *schema.Schema, v any, embedded bool, depth int) ([]byte, error) {
	if depth > maxValuesDepth {
		return nil, valuesTooDeep{}
	}
	var elem, key *schema.Schema
	if s != nil {
		elem, key = s.ValueSchema, s.KeySchema
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float32:
		return appendJavaFloatString(b, float64(x), 32), nil
	case float64:
		return appendJavaFloatString(b, x, 64), nil
	case *big.Int:
		var scale int32
		if s != nil && s.Name == schema.DecimalName {
			var err error
			if scale, err = s.Scale(); err != nil {
				return nil, err
			}
		}
		return jackson.AppendBigDecimal(b, x, scale), nil
	case string:
		if !embedded {
			return append(b, x...), nil
		}
		b = append(b, '"')
		for i := 0; i < len(x); i++ {
			if x[i] == '\\' || x[i] == '"' {
				b = append(b, '\\')
			}
			b = append(b, x[i])
		}
		return append(b, '"'), nil
	case []byte:
		if embedded {
			b = append(b, '"')
		}
		b = base64.StdEncoding.AppendEncode(b, x)
		if embedded {
			b = append(b, '"')
		}
		return b, nil
	case time.Time:
		return appendJavaDate(b, x.UnixMilli()), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValuesString(b, elem, e, true, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		entries := make([]valuesEntry, 0, len(x))
		for k, e := range x {
			var err error
			if entries, err = appendValuesEntry(entries, key, elem, k, e, depth); err != nil {
				return nil, err
			}
		}
		return appendValuesEntries(b, entries), nil
	case map[any]any:
		entries := make([]valuesEntry, 0, len(x))
		for k, e := range x {
			var err error
			if entries, err = appendValuesEntry(entries, key, elem, k, e, depth); err != nil {
				return nil, err
			}
		}
		return appendValuesEntries(b, entries), nil
	case *schema.Struct:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, f := range x.Schema().Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValuesString(b, nil, f.Name, true, depth+1)
			b = append(b, ':')
			var err error
			// GetIndex falls back on the field's default, as Java's
			// Struct.get(Field) does.
			if b, err = appendValuesString(b, f.Schema, x.GetIndex(i), true, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("convert: failed to serialize unexpected value type %T: %v", v, v)
}

// valuesEntry is one map entry as Values writes it: key:value, the key
// being text[:keyLen].
type valuesEntry struct {
	text   []byte
	keyLen int
}

func appendValuesEntry(entries []valuesEntry, key, elem *schema.Schema, k, v any, depth int) ([]valuesEntry, error) {
	b, err := appendValuesString(nil, key, k, true, depth+1)
	if err != nil {
		return nil, err
	}
	keyLen := len(b)
	b = append(b, ':')
	if b, err = appendValuesString(b, elem, v, true, depth+1); err != nil {
		return nil, err
	}
	return append(entries, valuesEntry{b, keyLen}), nil
}

// appendValuesEntries writes map entries in order of their written keys
// (then values, for keys written alike).
func appendValuesEntries(b []byte, entries []valuesEntry) []byte {
	sort.Slice(entries, func(i, j int) bool {
		x, y := entries[i], entries[j]
		if c := bytes.Compare(x.text[:x.keyLen], y.text[:y.keyLen]); c != 0 {
			return c < 0
		}
		return bytes.Compare(x.text, y.text) < 0
	})
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.text...)
	}
	return append(b, '}')
}

// appendJavaFloatString is Java's Float.toString (bits 32) or
// Double.toString (bits 64), in the shortest form Java 19 and later print.
func appendJavaFloatString(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return jackson.AppendJavaFloat(b, f, bits)
}

// appendJavaDate is Values.dateFormatFor and its SimpleDateFormat in UTC:
// HH:mm:ss.SSS'Z' before 1970-01-02, yyyy-MM-dd at midnight, otherwise
// yyyy-MM-dd'T'HH:mm:ss.SSS'Z'.
func appendJavaDate(b []byte, ms int64) []byte {
	if ms < msPerDay {
		tod := floorMod(ms, msPerDay)
		return appendClock(b, tod)
	}
	t := time.UnixMilli(ms).UTC()
	year, month, day := t.Date()
	b = appendPadded(b, int64(year), 4)
	b = append(b, '-')
	b = appendPadded(b, int64(month), 2)
	b = append(b, '-')
	b = appendPadded(b, int64(day), 2)
	if ms%msPerDay == 0 {
		return b
	}
	return appendClock(append(b, 'T'), ms%msPerDay)
}

// appendClock appends HH:mm:ss.SSSZ for milliseconds into a day.
func appendClock(b []byte, tod int64) []byte {
	b = appendPadded(b, tod/3600000, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/60000%60, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/1000%60, 2)
	b = append(b, '.')
	b = appendPadded(b, tod%1000, 3)
	return append(b, 'Z')
}

func appendPadded(b []byte, n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// javaString renders v the way Kafka's Values.convertToString does for the
// common cases: numbers as Java prints them, bytes as base64, logical types
// in their ISO forms, and composite values as JSON.
func javaString(s *schema.Schema, v any) (string, error) {
	if s != nil {
		switch s.Name {
		case schema.DecimalName:
			if x, ok := v.(*big.Int); ok {
				scale, err := s.Scale()
				if err != nil {
					return "", err
				}
				return string(jackson.AppendBigDecimal(nil, x, scale)), nil
			}
		case schema.DateName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02"), nil
			}
		case schema.TimeName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("15:04:05.000Z"), nil
			}
		case schema.TimestampName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
			}
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float32:
		return string(jackson.AppendJavaFloat(nil, float64(x), 32)), nil
	case float64:
		return string(jackson.AppendJavaFloat(nil, x, 64)), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	}
	b, err := schema.AppendJSON(nil, s, v, schema.JSONOptions{})
	if err != nil {
		return "", fmt.Errorf("convert: %w", err)
	}
	return string(b), nil
}

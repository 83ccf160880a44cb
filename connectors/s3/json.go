package s3

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// renderJSON appends v, of schema s (nil for a schemaless value), as Kafka's
// JsonConverter with schemas.enable=false writes it; decimalFormat is
// BASE64 or NUMERIC (json.decimal.format).
//
// This is the JSON format's one seam: once the SDK's
// schema.AppendJSON(dst, s, v, schema.JSONOptions{DecimalFormat: …}) is
// available, this function becomes a call to it. Until then it is a
// minimal rendering of the Connect data model.
func renderJSON(dst []byte, s *schema.Schema, v any, decimalFormat string) ([]byte, error) {
	return appendJSONValue(dst, s, v, decimalFormat, 0)
}

func appendJSONValue(dst []byte, s *schema.Schema, v any, dec string, depth int) ([]byte, error) {
	if depth > 100 {
		return dst, fmt.Errorf("s3: json: value nested too deep")
	}
	if v == nil {
		if s != nil && s.Default != nil {
			v = s.Default
		} else {
			return append(dst, "null"...), nil
		}
	}
	if s != nil {
		switch s.Name {
		case schema.DecimalName:
			x, ok := v.(*big.Int)
			if !ok {
				return dst, fmt.Errorf("s3: json: decimal value is %T", v)
			}
			if dec == "NUMERIC" {
				scale, err := s.Scale()
				if err != nil {
					return dst, err
				}
				return append(dst, decimalText(x, scale)...), nil
			}
			return appendJSONString(dst, base64.StdEncoding.EncodeToString(schema.AppendDecimal(nil, x))), nil
		case schema.DateName:
			t := v.(time.Time)
			return strconv.AppendInt(dst, t.Unix()/86400, 10), nil
		case schema.TimeName:
			t := v.(time.Time).UTC()
			ms := int64(t.Hour())*3600000 + int64(t.Minute())*60000 + int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)
			return strconv.AppendInt(dst, ms, 10), nil
		case schema.TimestampName:
			return strconv.AppendInt(dst, v.(time.Time).UnixMilli(), 10), nil
		}
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return appendJavaDouble(dst, float64(x), 32), nil
	case float64:
		return appendJavaDouble(dst, x, 64), nil
	case string:
		return appendJSONString(dst, x), nil
	case []byte:
		return appendJSONString(dst, base64.StdEncoding.EncodeToString(x)), nil
	case *big.Int:
		return append(dst, x.String()...), nil
	case time.Time:
		return strconv.AppendInt(dst, x.UnixMilli(), 10), nil
	case []any:
		var elem *schema.Schema
		if s != nil {
			elem = s.ValueSchema
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSONValue(dst, elem, e, dec, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		var vs *schema.Schema
		if s != nil {
			vs = s.ValueSchema
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSONValue(dst, vs, x[k], dec, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case map[any]any:
		// Non-string keys: JsonConverter writes an array of [key, value].
		var ks, vs *schema.Schema
		if s != nil {
			ks, vs = s.KeySchema, s.ValueSchema
		}
		dst = append(dst, '[')
		i := 0
		for k, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			i++
			dst = append(dst, '[')
			var err error
			if dst, err = appendJSONValue(dst, ks, k, dec, depth+1); err != nil {
				return dst, err
			}
			dst = append(dst, ',')
			if dst, err = appendJSONValue(dst, vs, e, dec, depth+1); err != nil {
				return dst, err
			}
			dst = append(dst, ']')
		}
		return append(dst, ']'), nil
	case *schema.Struct:
		st := x.Schema()
		dst = append(dst, '{')
		for i, f := range st.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, f.Name)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSONValue(dst, f.Schema, x.GetIndex(i), dec, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("s3: json: cannot render %T", v)
}

// decimalText renders an unscaled value with scale digits after the point.
func decimalText(x *big.Int, scale int32) string {
	if scale <= 0 {
		return new(big.Int).Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
	}
	s := new(big.Int).Abs(x).String()
	for len(s) <= int(scale) {
		s = "0" + s
	}
	out := s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if x.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// appendJavaDouble writes a float as Jackson does (Java's Double.toString
// for the common cases: 1.0, 0.5, 1.0E10).
func appendJavaDouble(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-3 || abs >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, bits)
		mant, exp, _ := cutE(s)
		if !containsDot(mant) {
			mant += ".0"
		}
		return append(append(append(dst, mant...), 'E'), exp...)
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	dst = append(dst, s...)
	if !containsDot(s) {
		dst = append(dst, ".0"...)
	}
	return dst
}

func cutE(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == 'E' {
			exp := s[i+1:]
			if len(exp) > 0 && exp[0] == '+' {
				exp = exp[1:]
			}
			return s[:i], exp, true
		}
	}
	return s, "", false
}

func containsDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes a JSON string as Jackson does (no HTML escaping).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		// Copy the run of bytes that need no escaping at once.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

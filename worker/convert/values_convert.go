package convert

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
	"unicode/utf8"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file converts what the Values parser read (Java's values) to the
// Go types of Tributary's data model, with Java's numeric conversions.

// convertJava is Values.convertTo(toSchema, null, value) on Java's values,
// as parseArray and parseMap use it to give elements their common schema.
func convertJava(to *schema.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, valuesError("unable to convert a null value to a schema that requires a value")
	}
	switch to.Type {
	case schema.TypeBytes:
		if d, ok := v.(*jdecimal); ok && to.Name == schema.DecimalName {
			return d, nil
		}
	case schema.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		n, err := javaLong(v)
		return n != 0, err
	case schema.TypeInt8:
		if _, ok := v.(int8); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int8(n), err
	case schema.TypeInt16:
		if _, ok := v.(int16); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int16(n), err
	case schema.TypeInt32:
		switch to.Name {
		case schema.DateName:
			if d, ok := v.(jdate); ok {
				return d, nil
			}
			n, err := javaLong(v)
			return jdate(int64(int32(n)) * msPerDay), err
		case schema.TimeName:
			if d, ok := v.(jdate); ok {
				return d, nil
			}
			n, err := javaLong(v)
			if err != nil {
				return nil, err
			}
			if ms := int32(n); ms >= 0 && ms <= msPerDay {
				return jdate(ms), nil
			}
			return nil, valuesError("time values must be between 0 and 86400000 milliseconds")
		}
		if _, ok := v.(int32); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int32(n), err
	case schema.TypeInt64:
		if d, ok := v.(jdate); ok && to.Name == schema.TimestampName {
			return d, nil
		}
		if _, ok := v.(int64); ok && to.Name != schema.TimestampName {
			return v, nil
		}
		n, err := javaLong(v)
		if to.Name == schema.TimestampName {
			return jdate(n), err
		}
		return n, err
	case schema.TypeFloat32:
		if _, ok := v.(float32); ok {
			return v, nil
		}
		f, err := javaDouble(v)
		return float32(f), err
	case schema.TypeFloat64:
		if _, ok := v.(float64); ok {
			return v, nil
		}
		return javaDouble(v)
	case schema.TypeArray:
		if a, ok := v.([]any); ok {
			return a, nil
		}
	case schema.TypeMap:
		if m, ok := v.(*jmap); ok {
			return m, nil
		}
	}
	return nil, valuesError(fmt.Sprintf("unable to convert %T to %v", v, to.Type))
}

// javaLong is Values.asLong without a schema: Number.longValue().
func javaLong(v any) (int64, error) {
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float32:
		return javaF2L(float64(x)), nil
	case float64:
		return javaF2L(x), nil
	case *jdecimal:
		n := x.integer()
		return int64(new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64)).Uint64()), nil
	}
	return 0, valuesError(fmt.Sprintf("unable to convert %T to a number", v))
}

// javaDouble is Values.asDouble without a schema: Number.doubleValue().
func javaDouble(v any) (float64, error) {
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case *jdecimal:
		return x.float(64), nil
	}
	n, err := javaLong(v)
	return float64(n), err
}

// javaF2L is Java's (long) cast of a double: truncating, saturating, NaN 0.
func javaF2L(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaF2I is Java's (int) cast of a double: javaF2L saturated to int32.
func javaF2I(f float64) int32 {
	return int32(min(max(javaF2L(f), math.MinInt32), math.MaxInt32))
}

// javaToGo turns the Java values of a parsed schema and value into
// Tributary's: Byte…Double into int8…float64, BigDecimal into the unscaled
// *big.Int of its Decimal schema, java.util.Date into a UTC time.Time,
// lists into []any and maps into map[string]any (string key schema) or
// map[any]any.
func javaToGo(s *schema.Schema, v any, depth int) (any, error) {
	if depth > maxValuesDepth {
		return nil, valuesTooDeep{}
	}
	var elem, key *schema.Schema
	if s != nil {
		elem, key = s.ValueSchema, s.KeySchema
	}
	switch x := v.(type) {
	case jdate:
		return time.UnixMilli(int64(x)).UTC(), nil
	case *jdecimal:
		if s == nil || s.Name != schema.DecimalName {
			return nil, errors.New("convert: decimal without a Decimal schema")
		}
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		return rescaleDecimal(x, scale)
	case []any:
		if s != nil && s.Type != schema.TypeArray {
			elem = nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := javaToGo(elem, e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *jmap:
		if s != nil && s.Type != schema.TypeMap {
			key, elem = nil, nil
		}
		if stringKeys(key, x.keys) {
			out := make(map[string]any, len(x.keys))
			for i, k := range x.keys {
				c, err := javaToGo(elem, x.vals[i], depth+1)
				if err != nil {
					return nil, err
				}
				out[k.(string)] = c
			}
			return out, nil
		}
		out := make(map[any]any, len(x.keys))
		for i, k := range x.keys {
			switch k.(type) {
			case []any, *jmap:
				return nil, errors.New("convert: map keys cannot be arrays or maps")
			}
			ck, err := javaToGo(key, k, depth+1)
			if err != nil {
				return nil, err
			}
			c, err := javaToGo(elem, x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			out[ck] = c
		}
		if len(out) != len(x.keys) {
			return nil, errors.New("convert: map keys -0.0 and 0.0")
		}
		return out, nil
	}
	return v, nil
}

// stringKeys reports whether a map of key schema key becomes a
// map[string]any: its key schema is a plain STRING and, as Kafka does not
// convert nested maps to their merged schema, its keys are all strings.
func stringKeys(key *schema.Schema, keys []any) bool {
	if key == nil || key.Type != schema.TypeString || key.Name != "" {
		return false
	}
	for _, k := range keys {
		if _, ok := k.(string); !ok {
			return false
		}
	}
	return true
}

// rescaleDecimal gives d the scale of its schema, when it can exactly.
func rescaleDecimal(d *jdecimal, scale int32) (*big.Int, error) {
	diff := int64(scale) - int64(d.scale)
	switch {
	case diff == 0:
		return d.unscaled, nil
	case diff > 0 && diff <= maxDecimalRescale:
		return new(big.Int).Mul(d.unscaled, pow10(diff)), nil
	case diff < 0 && -diff <= maxDecimalRescale:
		q, r := new(big.Int).QuoRem(d.unscaled, pow10(-diff), new(big.Int))
		if r.Sign() == 0 {
			return q, nil
		}
	}
	return nil, fmt.Errorf("convert: decimal of scale %d for a Decimal schema of scale %d", d.scale, scale)
}

// javaUTF8 is new String(b, UTF_8) in Java: valid UTF-8 as it is, each
// malformed sequence replaced by U+FFFD as Java 17's decoder does.
func javaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const repl = utf8.RuneError
	cont := func(c byte) bool { return c&0xc0 == 0x80 }
	out := make([]rune, 0, len(b))
	sp, sl := 0, len(b)
	for sp < sl {
		b1 := b[sp]
		sp++
		switch {
		case b1 < 0x80:
			out = append(out, rune(b1))
		case b1 >= 0xc2 && b1 <= 0xdf:
			if sp < sl {
				b2 := b[sp]
				sp++
				if !cont(b2) {
					out = append(out, repl)
					sp--
				} else {
					out = append(out, rune(b1&0x1f)<<6|rune(b2&0x3f))
				}
				continue
			}
			out = append(out, repl)
			sp = sl
		case b1>>4 == 0xe:
			if sp+1 < sl {
				b2, b3 := b[sp], b[sp+1]
				sp += 2
				if (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) || !cont(b3) {
					out = append(out, repl)
					sp -= 3
					if (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) {
						sp++
					} else {
						sp += 2
					}
				} else if r := rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f); r >= 0xd800 && r <= 0xdfff {
					out = append(out, repl)
				} else {
					out = append(out, r)
				}
				continue
			}
			if sp < sl && ((b1 == 0xe0 && b[sp]&0xe0 == 0x80) || !cont(b[sp])) {
				out = append(out, repl)
				continue
			}
			out = append(out, repl)
			sp = sl
		case b1>>3 == 0x1e:
			if sp+2 < sl {
				b2, b3, b4 := b[sp], b[sp+1], b[sp+2]
				sp += 3
				r := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if !cont(b2) || !cont(b3) || !cont(b4) || r < 0x10000 || r > 0x10ffff {
					out = append(out, repl)
					sp -= 4
					switch {
					case b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
						(b1 == 0xf4 && b2&0xf0 != 0x80) || !cont(b2):
						sp++
					case !cont(b3):
						sp += 2
					default:
						sp += 3
					}
				} else {
					out = append(out, r)
				}
				continue
			}
			if b1 > 0xf4 || sp < sl && ((b1 == 0xf0 && (b[sp] < 0x90 || b[sp] > 0xbf)) ||
				(b1 == 0xf4 && b[sp]&0xf0 != 0x80) || !cont(b[sp])) {
				out = append(out, repl)
				continue
			}
			sp++
			out = append(out, repl)
			if sp < sl && !cont(b[sp]) {
				continue
			}
			sp = sl
		default:
			out = append(out, repl)
		}
	}
	return string(out)
}

// NarrowInt returns n as the Go type of Connect integer type t (int8,
// int16 or int32, truncating as Java's casts do), or as an int64 for any
// other type.
func NarrowInt(t schema.Type, n int64) any {
	switch t {
	case schema.TypeInt8:
		return int8(n)
	case schema.TypeInt16:
		return int16(n)
	case schema.TypeInt32:
		return int32(n)
	}
	return n
}

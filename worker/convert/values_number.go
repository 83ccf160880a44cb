package convert

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file reads numbers as Values does: Java's BigDecimal parsing and its
// conversions to integers and floating point.

// integer is BigDecimal.toBigInteger (the value truncated toward zero), or
// 0 where longValue would keep none of its bits anyway.
func (d *jdecimal) integer() *big.Int {
	switch {
	case d.scale == 0:
		return new(big.Int).Set(d.unscaled)
	case d.scale <= -64:
		// 10^-scale = 2^-scale × 5^-scale: the low 64 bits, all
		// longValue keeps, are zero.
		return new(big.Int)
	case d.scale < 0:
		return new(big.Int).Mul(d.unscaled, pow10(int64(-d.scale)))
	}
	if int64(d.scale) > int64(len(d.unscaled.String())) {
		return new(big.Int)
	}
	return new(big.Int).Quo(d.unscaled, pow10(int64(d.scale)))
}

// maxDecimalRescale bounds the powers of ten Tributary multiplies by when
// it rescales a decimal, against inputs like 1e2000000000.
const maxDecimalRescale = 100000

func pow10(n int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
}

// float is BigDecimal.floatValue (bits 32) or doubleValue (bits 64):
// correctly rounded.
func (d *jdecimal) float(bits int) float64 {
	if d.unscaled.Sign() == 0 {
		return 0
	}
	digits := new(big.Int).Abs(d.unscaled).String()
	sign := ""
	if d.unscaled.Sign() < 0 {
		sign = "-"
	}
	// The value is 0.digits × 10^exp.
	exp := int64(len(digits)) - int64(d.scale)
	switch {
	case exp > 400:
		return math.Inf(d.unscaled.Sign())
	case exp < -400:
		return math.Copysign(0, float64(d.unscaled.Sign()))
	}
	if len(digits) > 800 {
		// 800 digits and a sticky nonzero digit round as all of them do.
		sticky := strings.Trim(digits[800:], "0") != ""
		digits = digits[:800]
		if sticky {
			digits += "1"
		}
	}
	f, _ := strconv.ParseFloat(sign+"0."+digits+"e"+strconv.FormatInt(exp, 10), bits)
	return f
}

// cmpPow10 compares |d| with 10^p.
func (d *jdecimal) cmpPow10(p int) int {
	if d.unscaled.Sign() == 0 {
		return -1
	}
	digits := new(big.Int).Abs(d.unscaled).String()
	k := int64(p) + int64(d.scale) // compare |unscaled| with 10^k
	n := int64(len(digits))
	switch {
	case k < 0 || k < n-1:
		return 1
	case k >= n:
		return -1
	}
	if digits[0] == '1' && strings.Trim(digits[1:], "0") == "" {
		return 0
	}
	return 1
}

// javaDigit is Java's Character.digit(c, 10) for a char: the value of a
// Unicode decimal digit of the Basic Multilingual Plane, or -1.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// parseBigDecimal is new BigDecimal(String).
func parseBigDecimal(s string) (*jdecimal, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	digits := make([]byte, 0, len(s))
	var scale, exp int64
	dot := false
loop:
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if d := javaDigit(r); d >= 0 {
			digits = append(digits, byte('0'+d))
			if dot {
				scale++
			}
			i += size
			continue
		}
		switch r {
		case '.':
			if dot {
				return nil, false
			}
			dot = true
			i++
		case 'e', 'E':
			e, ok := parseBigDecimalExp(s[i+1:])
			if !ok || int64(int32(e)) != e {
				return nil, false
			}
			exp = e
			break loop
		default:
			return nil, false
		}
	}
	if len(digits) == 0 {
		return nil, false
	}
	scale -= exp
	if scale != int64(int32(scale)) {
		return nil, false
	}
	u, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		u.Neg(u)
	}
	return &jdecimal{u, int32(scale)}, true
}

// parseBigDecimalExp is BigDecimal's parseExp, given what follows the 'e'.
func parseBigDecimalExp(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	r := []rune(s)
	for len(r) > 10 && javaDigit(r[0]) == 0 {
		r = r[1:]
	}
	if len(r) == 0 || len(r) > 10 {
		return 0, false
	}
	var e int64
	for _, c := range r {
		d := javaDigit(c)
		if d < 0 {
			return 0, false
		}
		e = e*10 + int64(d)
	}
	if neg {
		e = -e
	}
	return e, true
}

// parseValuesNumber is ValueParser.parseAsNumber: nil when token is not a
// number.
func parseValuesNumber(token string) *schemaAndValue {
	if n, ok := smallInt(token); ok {
		return intValue(n)
	}
	d, ok := parseBigDecimal(token)
	if !ok {
		return nil
	}
	// parseAsExactDecimal: whole numbers from 1 to 1e19 in magnitude (or
	// zero) that fit in a long.
	if d.unscaled.Sign() == 0 {
		return intValue(0)
	}
	if d.cmpPow10(19) <= 0 && d.cmpPow10(0) >= 0 {
		var n *big.Int
		if d.scale <= 0 {
			n = new(big.Int).Mul(d.unscaled, pow10(int64(-d.scale)))
		} else if q, r := new(big.Int).QuoRem(d.unscaled, pow10(int64(d.scale)), new(big.Int)); r.Sign() == 0 {
			n = q
		}
		if n != nil && n.IsInt64() {
			return intValue(n.Int64())
		}
	}
	if d.scale != 0 {
		if f := d.float(32); !math.IsInf(f, 0) {
			return &schemaAndValue{schema.Float32, float32(f)}
		}
		if f := d.float(64); !math.IsInf(f, 0) {
			return &schemaAndValue{schema.Float64, f}
		}
	}
	return &schemaAndValue{schema.Decimal(d.scale), d}
}

// smallInt parses an optional sign and up to 18 ASCII digits.
func smallInt(s string) (int64, bool) {
	digits := s
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	if digits == "" || len(digits) > 18 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func intValue(n int64) *schemaAndValue {
	switch {
	case n == int64(int8(n)):
		return &schemaAndValue{schema.Int8, int8(n)}
	case n == int64(int16(n)):
		return &schemaAndValue{schema.Int16, int16(n)}
	case n == int64(int32(n)):
		return &schemaAndValue{schema.Int32, int32(n)}
	}
	return &schemaAndValue{schema.Int64, n}
}

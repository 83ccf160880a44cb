package convert

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file writes JSON the way Jackson (Kafka's JSON library) does in its
// default configuration: compact, strings escaped only where JSON requires
// it, floating-point numbers as Java's Float/Double.toString, BigDecimal as
// BigDecimal.toString.

const hexUpper = "0123456789ABCDEF"

// appendString appends s as a JSON string, escaping like Jackson: '"', '\\'
// and control characters below 0x20 (\b \t \n \f \r short forms, \u00XX
// otherwise). Invalid UTF-8 becomes U+FFFD, as Java's encoder would.
// load8 reads s[i:i+8] as a little-endian word.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip 8 plain ASCII bytes at a time (most payloads need no
		// escaping).
		for i+8 <= len(s) && !special8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\f':
				b = append(b, '\\', 'f')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJavaFloat appends f formatted as Java's Double.toString (bits 64) or
// Float.toString (bits 32); NaN and infinities are written as strings, as
// Jackson does by default.
func appendJavaFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// Shortest digits: d.ddde±x.
	e := strconv.FormatFloat(f, 'e', -1, bits)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		b = append(b, '-')
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			// Integer part is digits[:exp+1] padded with zeros.
			if len(digits) <= exp+1 {
				b = append(b, digits...)
				for range exp + 1 - len(digits) {
					b = append(b, '0')
				}
				return append(b, '.', '0')
			}
			b = append(b, digits[:exp+1]...)
			b = append(b, '.')
			return append(b, digits[exp+1:]...)
		}
		b = append(b, '0', '.')
		for range -exp - 1 {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[0], '.')
	if len(digits) > 1 {
		b = append(b, digits[1:]...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(exp), 10)
}

// appendBigDecimal appends unscaled×10^-scale as Java's BigDecimal.toString.
func appendBigDecimal(b []byte, unscaled *big.Int, scale int32) []byte {
	coeff := new(big.Int).Abs(unscaled).String()
	if unscaled.Sign() < 0 {
		b = append(b, '-')
	}
	adjusted := -int64(scale) + int64(len(coeff)-1)
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return append(b, coeff...)
		case len(coeff) > int(scale):
			b = append(b, coeff[:len(coeff)-int(scale)]...)
			b = append(b, '.')
			return append(b, coeff[len(coeff)-int(scale):]...)
		default:
			b = append(b, '0', '.')
			for range int(scale) - len(coeff) {
				b = append(b, '0')
			}
			return append(b, coeff...)
		}
	}
	b = append(b, coeff[0])
	if len(coeff) > 1 {
		b = append(b, '.')
		b = append(b, coeff[1:]...)
	}
	b = append(b, 'E')
	if adjusted >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, adjusted, 10)
}

// appendBase64 appends data as a JSON string in standard padded base64, as
// Jackson writes binary values.
func appendBase64(b []byte, data []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}

// twosComplement returns x as Java's BigInteger.toByteArray: big-endian
// two's complement in the fewest bytes.
func twosComplement(x *big.Int) []byte {
	switch x.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := x.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// n bytes hold x when -2^(8n-1) <= x, i.e. bitlen(-x-1) < 8n.
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1))
	n := m.BitLen()/8 + 1
	v := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	v.Add(v, x)
	out := make([]byte, n)
	return v.FillBytes(out)
}

// fromTwosComplement is the inverse of twosComplement.
func fromTwosComplement(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

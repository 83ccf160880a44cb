// Package jackson writes JSON exactly as Jackson, the JSON library of Kafka
// and Kafka Connect, does in its default configuration, so that Tributary's
// JsonConverter output and internal-topic records are byte-identical to
// Kafka's: strings escaped only where JSON requires it plus supplementary
// characters as \uXXXX surrogate pairs, and floating-point numbers as Java's
// Double.toString / Float.toString; binary values in base64 and decimals as
// BigDecimal.toString.
//
// It is the token layer under schema.AppendJSON, which connectors use to
// render whole values; Tributary's converters and internal-topic writers
// use it for the JSON layouts they write themselves.
package jackson

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const hexUpper = "0123456789ABCDEF"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Special8 reports whether any byte of the little-endian word x is '"',
// '\\', below 0x20 or at least 0x80: a byte AppendString cannot copy as is.
//
// It is exact without the usual "&^ x" of the zero-byte test: once no byte
// has its high bit set (else the last term answers), the lowest byte below
// 0x20 (first term) or equal to '"' or '\\' (zero after the xor: second and
// third terms) is the first to borrow, which sets its high bit, and no byte
// below it borrows or has its high bit set.
func Special8(x uint64) bool { return special8(x)&highs != 0 }

// special8 is Special8 before the final mask: words can be tested together
// by or-ing their special8.
func special8(x uint64) uint64 {
	return (x - 0x20*ones) | ((x ^ '"'*ones) - ones) | ((x ^ '\\'*ones) - ones) | x
}

// indexSpecialWords is IndexSpecial in portable Go: a word at a time
// (Special8), 32 bytes per step while none is special, then byte by byte.
func indexSpecialWords[T ~string | ~[]byte](s T) int {
	i := 0
	// The first word alone (text that is not plain ASCII stops here at
	// once), then 32 bytes per step, then word by word.
	if len(s) >= 8 && !Special8(load8(s)) {
		i = 8
		for ; len(s)-i >= 32; i += 32 {
			w := s[i : i+32]
			if (special8(load8(w))|special8(load8(w[8:]))|special8(load8(w[16:]))|special8(load8(w[24:])))&highs != 0 {
				break
			}
		}
		for ; len(s)-i >= 8 && !Special8(load8(s[i:])); i += 8 {
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// load8 reads s[:8] as a little-endian word (one bounds check, one load).
func load8[T ~string | ~[]byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// AppendString appends s as a JSON string the way Jackson's
// UTF8JsonGenerator writes it: '"', '\\' and control characters below 0x20
// escaped (\b \t \n \f \r short forms, \u00XX otherwise), characters outside
// the Basic Multilingual Plane as an escaped surrogate pair, invalid UTF-8
// as U+FFFD, everything else as UTF-8.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII a word at a time: most strings need no escaping.
		i += IndexSpecialString(s[i:])
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
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
		case r > 0xFFFF:
			b = append(b, s[start:i]...)
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(b, r1)
			b = appendU(b, r2)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexUpper[r>>12&0xF], hexUpper[r>>8&0xF], hexUpper[r>>4&0xF], hexUpper[r&0xF])
}

// AppendJavaFloat appends f formatted as Java's Double.toString (bits 64) or
// Float.toString (bits 32): plain decimal with at least one fractional digit
// for 1e-3 <= |f| < 1e7, otherwise d.dddE±n. NaN and the infinities are
// written as strings, as Jackson does by default.
func AppendJavaFloat(b []byte, f float64, bits int) []byte {
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
	if e[0] == '-' {
		e = e[1:]
		b = append(b, '-')
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if abs := math.Abs(f); abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			// The integer part is digits[:exp+1], padded with zeros.
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

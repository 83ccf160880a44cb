package convert

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// appendStringRef is appendString without the 8-byte fast path.
func appendStringRef(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
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

func TestAppendStringFastPath(t *testing.T) {
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "\n", "\x01", "\x7f", "é", "€", "\xff", "😀"}
	rng := rand.New(rand.NewPCG(7, 9))
	for n := 0; n < 3000; n++ {
		var s string
		for range rng.IntN(40) {
			if rng.IntN(3) > 0 {
				s += "abcdefgh"[:rng.IntN(9)]
			} else {
				s += alphabet[rng.IntN(len(alphabet))]
			}
		}
		got, want := string(appendString(nil, s)), string(appendStringRef(nil, s))
		if got != want {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("appendString(%q) is not UTF-8", s)
		}
	}
}

package jackson

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// appendStringRef is AppendString written plainly, one rune at a time.
func appendStringRef(b []byte, s string) []byte {
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

func TestAppendStringMatchesReference(t *testing.T) {
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "\n", "\x01", "\x7f", "é", "€", "\xff", "😀", "\u2028"}
	rng := rand.New(rand.NewPCG(7, 9))
	for n := 0; n < 5000; n++ {
		var s string
		for range rng.IntN(40) {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := string(AppendString(nil, s)), string(appendStringRef(nil, s)); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// What Jackson 2.21 (Kafka 4.4's) writes, checked with the real library.
func TestAppendStringLikeJackson(t *testing.T) {
	if got := string(AppendString(nil, "x\U0001F600y")); got != `"x\uD83D\uDE00y"` {
		t.Fatalf("supplementary character: %s", got)
	}
	if got := string(AppendString(nil, "\u0001\b\f\n\r\t\u001f\u007f/é")); got != `"\u0001\b\f\n\r\t\u001F`+"\u007f/é\"" {
		t.Fatalf("controls: %s", got)
	}
}

func TestAppendJavaFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{1e7, 64, "1.0E7"}, {9999999, 64, "9999999.0"}, {0.001, 64, "0.001"}, {123.456, 64, "123.456"},
		{math.Copysign(0, -1), 64, "-0.0"}, {100, 64, "100.0"}, {1.2345678901234567e-20, 64, "1.2345678901234567E-20"},
		{1.5, 32, "1.5"}, {-2.5e-4, 64, "-2.5E-4"}, {math.NaN(), 64, `"NaN"`}, {math.Inf(-1), 64, `"-Infinity"`},
	} {
		if got := string(AppendJavaFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("AppendJavaFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain ascii text")
	f.Add("q\"\\\n\x00é😀\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), string(appendStringRef(nil, s)); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// special is the byte-wise definition Special8 and IndexSpecial implement.
func special(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80 }

// TestSpecial8 checks the word-at-a-time test against the byte-wise
// definition: every byte value in every position among plain bytes, and
// random words mixing plain and special bytes (the borrow of one special
// byte must not hide or invent another).
func TestSpecial8(t *testing.T) {
	check := func(w [8]byte) {
		x := binary.LittleEndian.Uint64(w[:])
		want := false
		for _, c := range w {
			want = want || special(c)
		}
		if got := Special8(x); got != want {
			t.Fatalf("Special8(% x) = %v, want %v", w, got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			w := [8]byte{'a', 'Z', ' ', '!', '#', '[', ']', 0x7f}
			w[pos] = byte(c)
			check(w)
		}
	}
	edge := []byte{0, 1, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var w [8]byte
		for i := range w {
			w[i] = edge[rng.IntN(len(edge))]
		}
		check(w)
	}
}

// indexSpecialRef is the byte-wise definition of IndexSpecial.
func indexSpecialRef(b []byte) int {
	for i, c := range b {
		if special(c) {
			return i
		}
	}
	return len(b)
}

// checkIndexSpecial compares every implementation of IndexSpecial with the
// byte-wise definition on b.
func checkIndexSpecial(t *testing.T, b []byte) {
	t.Helper()
	want := indexSpecialRef(b)
	if got := IndexSpecial(b); got != want {
		t.Fatalf("IndexSpecial(%q) = %d, want %d", b, got, want)
	}
	if got := IndexSpecialString(string(b)); got != want {
		t.Fatalf("IndexSpecialString(%q) = %d, want %d", b, got, want)
	}
	if got := indexSpecialWords(b); got != want {
		t.Fatalf("indexSpecialWords(%q) = %d, want %d", b, got, want)
	}
}

// TestIndexSpecial puts each class of special byte at every position of
// plain strings of every length up to a few 32-byte steps, alone and
// before a second one, so each step, the 16-byte blocks, the overlapping
// last block and the short-string path all meet it.
func TestIndexSpecial(t *testing.T) {
	base := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 3) // 108 plain bytes
	for n := range len(base) + 1 {
		for _, bad := range []byte{'"', '\\', '\n', 0, 0x1f, 0x7f, 0x80, 0xff} {
			for at := range n + 1 {
				b := []byte(base[:n])
				if at < n {
					b[at] = bad
					if at+5 < n {
						b[at+5] = '"'
					}
				}
				checkIndexSpecial(t, b)
			}
		}
	}
}

// FuzzIndexSpecial checks IndexSpecial on arbitrary bytes, at every offset
// into them (the vector code loads unaligned blocks).
func FuzzIndexSpecial(f *testing.F) {
	f.Add([]byte(strings.Repeat("plain text ", 9) + "\"quoted\""))
	f.Add([]byte("caf\u00e9 \x00 \t"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for off := 0; off < len(b) && off < 16; off++ {
			checkIndexSpecial(t, b[off:])
		}
	})
}

package jackson

import (
	"strings"
	"testing"
)

// BenchmarkAppendString writes a 960-byte ASCII string that needs no
// escaping, the payload of the connect benchmark's records.
func BenchmarkAppendString(b *testing.B) {
	s := strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", 15)
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

// BenchmarkIndexSpecial scans the same 960 plain bytes with the vector
// code and with the portable word-at-a-time code.
func BenchmarkIndexSpecial(b *testing.B) {
	s := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", 15))
	b.Run("impl=IndexSpecial", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if IndexSpecial(s) != len(s) {
				b.Fatal("special byte found")
			}
		}
	})
	b.Run("impl=words", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if indexSpecialWords(s) != len(s) {
				b.Fatal("special byte found")
			}
		}
	})
}

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

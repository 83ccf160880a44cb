//go:build !purego

package jackson

import "unsafe"

// indexSpecialSSE2 is indexSpecialWords 16 bytes at a time (SSE2, which
// every amd64 processor has); n must be at least 16.
//
//go:noescape
func indexSpecialSSE2(p *byte, n int) int

// IndexSpecial returns the index of the first byte of b that AppendString
// cannot copy as is ('"', '\\', below 0x20 or at least 0x80), or len(b):
// the end of the plain ASCII run JSON string content starts with.
func IndexSpecial(b []byte) int {
	if len(b) < 16 {
		return indexSpecialWords(b)
	}
	return indexSpecialSSE2(unsafe.SliceData(b), len(b))
}

// IndexSpecialString is IndexSpecial for a string.
func IndexSpecialString(s string) int {
	if len(s) < 16 {
		return indexSpecialWords(s)
	}
	return indexSpecialSSE2(unsafe.StringData(s), len(s))
}

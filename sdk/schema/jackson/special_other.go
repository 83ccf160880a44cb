//go:build !amd64 || purego

package jackson

// IndexSpecial returns the index of the first byte of b that AppendString
// cannot copy as is ('"', '\\', below 0x20 or at least 0x80), or len(b):
// the end of the plain ASCII run JSON string content starts with.
func IndexSpecial(b []byte) int { return indexSpecialWords(b) }

// IndexSpecialString is IndexSpecial for a string.
func IndexSpecialString(s string) int { return indexSpecialWords(s) }

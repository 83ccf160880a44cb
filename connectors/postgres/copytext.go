package postgres

import (
	"bytes"
	"fmt"
)

// splitCopyRow splits one row of COPY's text format (fields separated by
// tabs, "\N" for NULL, backslash escapes) into its fields, unescaped.
// Fields point into buf, which is reused: the caller decodes them before
// the next row. A nil field is a NULL.
func splitCopyRow(row []byte, fields [][]byte, buf []byte) ([][]byte, []byte, error) {
	row = bytes.TrimSuffix(row, []byte{'\n'})
	fields = fields[:0]
	buf = buf[:0]
	if cap(buf) < len(row) {
		buf = make([]byte, 0, len(row))
	}
	// Rows without a backslash (no NULL, nothing escaped) are only split.
	plain := bytes.IndexByte(row, '\\') < 0
	for more := true; more; {
		f := row
		if i := bytes.IndexByte(row, '\t'); i >= 0 {
			f, row = row[:i], row[i+1:]
		} else {
			more = false
		}
		if plain {
			fields = append(fields, f)
			continue
		}
		if len(f) == 2 && f[0] == '\\' && f[1] == 'N' {
			fields = append(fields, nil)
			continue
		}
		if bytes.IndexByte(f, '\\') < 0 {
			fields = append(fields, f)
			continue
		}
		from := len(buf)
		for j := 0; j < len(f); j++ {
			c := f[j]
			if c != '\\' {
				buf = append(buf, c)
				continue
			}
			j++
			if j >= len(f) {
				return nil, buf, fmt.Errorf("postgres: COPY row ends in a backslash")
			}
			switch c = f[j]; c {
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'v':
				buf = append(buf, '\v')
			case 'x':
				v, n := 0, 0
				for n < 2 && j+1 < len(f) && isHex(f[j+1]) {
					j++
					v = v*16 + hexVal(f[j])
					n++
				}
				buf = append(buf, byte(v))
			default:
				if c >= '0' && c <= '7' {
					v, n := int(c-'0'), 1
					for n < 3 && j+1 < len(f) && f[j+1] >= '0' && f[j+1] <= '7' {
						j++
						v = v*8 + int(f[j]-'0')
						n++
					}
					buf = append(buf, byte(v))
				} else {
					buf = append(buf, c)
				}
			}
		}
		fields = append(fields, buf[from:len(buf):len(buf)])
	}
	return fields, buf, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

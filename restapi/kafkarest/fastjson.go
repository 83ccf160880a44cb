package kafkarest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The v3 streaming produce spends most of its time finding and decoding
// JSON. This file scans the body once, with the standard library's
// encoding/json only for the small fields: valueEnd finds where a JSON
// value ends (validating it as encoding/json does), splitter cuts a stream
// into values, and decodeV3Fast decodes a record with the big data fields
// kept as the raw bytes they are. FuzzDecodeV3Fast checks it agrees with
// encoding/json.

// errIncomplete is valueEnd's answer when the input ends inside the value.
var errIncomplete = errors.New("kafkarest: incomplete JSON value")

const maxDepth = 10000 // encoding/json's

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func syntaxError(b []byte, i int, what string) error {
	if i >= len(b) {
		return errIncomplete
	}
	return fmt.Errorf("invalid character %q %s at offset %d", b[i], what, i)
}

// valueEnd returns the offset just after the JSON value that starts at
// b[i] (no leading white space).
func valueEnd(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errIncomplete
	}
	switch c := b[i]; {
	case c == '"':
		return stringEnd(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, errors.New("exceeded max depth")
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, nil
		}
		for {
			var err error
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, syntaxError(b, i, "looking for beginning of object key string")
				}
				if i, err = stringEnd(b, i); err != nil {
					return 0, err
				}
				i = skipSpace(b, i)
				if i >= len(b) || b[i] != ':' {
					return 0, syntaxError(b, i, "after object key")
				}
				i = skipSpace(b, i+1)
			}
			if i, err = valueEnd(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, errIncomplete
			}
			if b[i] == closing {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, syntaxError(b, i, "after value")
			}
			i = skipSpace(b, i+1)
		}
	case c == 't':
		return literalEnd(b, i, "true")
	case c == 'f':
		return literalEnd(b, i, "false")
	case c == 'n':
		return literalEnd(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return numberEnd(b, i)
	}
	return 0, syntaxError(b, i, "looking for beginning of value")
}

func literalEnd(b []byte, i int, lit string) (int, error) {
	n := min(len(lit), len(b)-i)
	if string(b[i:i+n]) != lit[:n] {
		for k := range n {
			if b[i+k] != lit[k] {
				return 0, syntaxError(b, i+k, "in literal")
			}
		}
	}
	if n < len(lit) {
		return 0, errIncomplete
	}
	return i + len(lit), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numberEnd: a number at the end of b is incomplete (more digits may follow).
func numberEnd(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, errIncomplete
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return 0, syntaxError(b, i, "in numeric literal")
	}
	var err error
	if i < len(b) && b[i] == '.' {
		if i, err = digitsEnd(b, i+1, "after decimal point in numeric literal"); err != nil {
			return 0, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, err = digitsEnd(b, i, "in exponent of numeric literal"); err != nil {
			return 0, err
		}
	}
	if i >= len(b) {
		return 0, errIncomplete
	}
	return i, nil
}

// digitsEnd returns the offset after the digits that start at b[i], of
// which there must be one at least (what says where, in the error), as
// after a number's decimal point and in its exponent.
func digitsEnd(b []byte, i int, what string) (int, error) {
	if i >= len(b) {
		return 0, errIncomplete
	}
	if !isDigit(b[i]) {
		return 0, syntaxError(b, i, what)
	}
	return skipDigits(b, i+1), nil
}

// skipDigits returns the offset of the first byte from b[i] on that is
// not a digit.
func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// stringEnd returns the offset after the string starting at b[i] ('"').
func stringEnd(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		seg := b[j:]
		if k >= 0 {
			seg = b[j : j+k]
		}
		bs := bytes.IndexByte(seg, '\\')
		if bs >= 0 {
			seg = seg[:bs]
		}
		for n, c := range seg {
			if c < 0x20 {
				return 0, syntaxError(b, j+n, "in string literal")
			}
		}
		if bs < 0 {
			if k < 0 {
				return 0, errIncomplete
			}
			return j + k + 1, nil
		}
		// An escape: check it, then go on after it.
		j += bs + 1
		if j >= len(b) {
			return 0, errIncomplete
		}
		switch b[j] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j++
		case 'u':
			for n := 1; n <= 4; n++ {
				if j+n >= len(b) {
					return 0, errIncomplete
				}
				if !isHex(b[j+n]) {
					return 0, syntaxError(b, j+n, "in \\u hexadecimal character escape")
				}
			}
			j += 5
		default:
			return 0, syntaxError(b, j, "in string escape code")
		}
	}
}

// splitter cuts a stream of concatenated JSON values into values.
type splitter struct {
	r   io.Reader
	buf []byte // buf[off:] is not cut yet
	off int
	eof bool
	err error
}

// streamSyntaxError is a value of a stream that is not JSON: what is wrong
// and where, in that value.
type streamSyntaxError struct{ err error }

func (e *streamSyntaxError) Error() string { return e.err.Error() }

func newSplitter(r io.Reader) *splitter {
	return &splitter{r: r, buf: make([]byte, 0, 64<<10)}
}

// next returns the next value (a copy the caller owns), io.EOF after the
// last, or an error: a *streamSyntaxError, io.ErrUnexpectedEOF for a value
// cut short, or the reader's.
func (s *splitter) next() ([]byte, error) {
	for {
		s.off = skipSpace(s.buf, s.off)
		if rest := s.buf[s.off:]; len(rest) > 0 {
			end, err := valueEnd(rest, 0, 0)
			if err == errIncomplete && s.eof && (rest[0] == '-' || isDigit(rest[0])) {
				// A number at the very end is complete.
				end, err = numberEnd(append(rest[:len(rest):len(rest)], ' '), 0)
			}
			if err == nil {
				v := bytes.Clone(rest[:end])
				s.off += end
				return v, nil
			}
			if err != errIncomplete {
				return nil, &streamSyntaxError{err}
			}
		}
		if s.eof {
			if s.err != io.EOF {
				return nil, s.err
			}
			if s.off == len(s.buf) {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		// Read more: move what is left to the front, growing the buffer
		// for a big value.
		n := copy(s.buf[:cap(s.buf)], s.buf[s.off:])
		s.buf, s.off = s.buf[:n], 0
		if cap(s.buf)-n < 16<<10 {
			s.buf = append(make([]byte, 0, 2*cap(s.buf)), s.buf...)
		}
		m, err := s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err != nil {
			s.eof, s.err = true, err
		}
	}
}

// members calls f with each member of the JSON object b (valid, as
// valueEnd checked): the key unquoted and the raw value.
func members(b []byte, f func(key string, v []byte) error) error {
	i := skipSpace(b, 1)
	if b[i] == '}' {
		return nil
	}
	for {
		ke, _ := stringEnd(b, i)
		rawKey := b[i:ke]
		var key string
		if bytes.IndexByte(rawKey, '\\') >= 0 {
			if err := json.Unmarshal(rawKey, &key); err != nil {
				return err
			}
		} else {
			key = string(rawKey[1 : len(rawKey)-1])
		}
		i = skipSpace(b, ke)
		i = skipSpace(b, i+1) // ':'
		ve, err := valueEnd(b, i, 1)
		if err != nil {
			return err
		}
		if err := f(key, b[i:ve]); err != nil {
			return err
		}
		i = skipSpace(b, ve)
		if b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1)
	}
}

func typeError(field string, v []byte) error {
	kind := "string"
	switch v[0] {
	case '[':
		kind = "array"
	case 't', 'f':
		kind = "bool"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		kind = "number"
	}
	return &json.UnmarshalTypeError{Value: kind, Field: field, Type: nil}
}

// decodeV3Fast decodes one record of a stream, b a complete JSON value
// (from splitter.next), as json.Unmarshal into v3Produce would.
func decodeV3Fast(b []byte) (*v3Produce, error) {
	var req v3Produce
	if b[0] != '{' {
		if b[0] == 'n' {
			return &req, nil
		}
		return nil, typeError("", b)
	}
	err := members(b, func(key string, v []byte) error {
		switch {
		case strings.EqualFold(key, "partition_id"):
			return json.Unmarshal(v, &req.PartitionID)
		case strings.EqualFold(key, "headers"):
			return json.Unmarshal(v, &req.Headers)
		case strings.EqualFold(key, "timestamp"):
			return json.Unmarshal(v, &req.Timestamp)
		case strings.EqualFold(key, "key"):
			return decodeV3DataFast(&req.Key, key, v)
		case strings.EqualFold(key, "value"):
			return decodeV3DataFast(&req.Value, key, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &req, nil
}

func decodeV3DataFast(dst **v3Data, field string, v []byte) error {
	if v[0] == 'n' {
		*dst = nil
		return nil
	}
	if v[0] != '{' {
		return typeError(field, v)
	}
	if *dst == nil {
		*dst = &v3Data{}
	}
	d := *dst
	return members(v, func(key string, v []byte) error {
		switch {
		case strings.EqualFold(key, "data"):
			d.Data = json.RawMessage(v)
			return nil
		case strings.EqualFold(key, "type"):
			return json.Unmarshal(v, &d.Type)
		case strings.EqualFold(key, "subject"):
			return json.Unmarshal(v, &d.Subject)
		case strings.EqualFold(key, "subject_name_strategy"):
			return json.Unmarshal(v, &d.SubjectNameStrategy)
		case strings.EqualFold(key, "schema_id"):
			return json.Unmarshal(v, &d.SchemaID)
		case strings.EqualFold(key, "schema_version"):
			return json.Unmarshal(v, &d.SchemaVersion)
		case strings.EqualFold(key, "schema"):
			return json.Unmarshal(v, &d.Schema)
		}
		return nil
	})
}

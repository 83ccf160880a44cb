package convert

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// A single-pass JSON reader for the sink hot path. It builds the same values
// as decodeJSON (encoding/json with UseNumber: map[string]any, []any,
// string, json.Number, bool, nil) in one scan of the input, without
// encoding/json's validation pass, Decoder buffer copy and literal rescans.
// It only ever succeeds on input that decodeJSON accepts with the same
// result; on anything else (malformed input, trailing data, very deep
// nesting) it reports !ok and callers fall back to the encoding/json path,
// which produces the error messages users see. Strings with escapes or
// non-ASCII bytes are handed to encoding/json, so unescaping and the
// replacement of invalid UTF-8 are exactly encoding/json's.

// fastMaxDepth bounds nesting; deeper input takes the slow path.
const fastMaxDepth = 1000

type fastReader struct {
	b     []byte
	i     int
	depth int
	// alias makes string values (not object keys) share b's memory
	// instead of copying it (see Aliaser).
	alias bool
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (r *fastReader) ws() {
	for r.i < len(r.b) && isSpace(r.b[r.i]) {
		r.i++
	}
}

// fastDecode decodes b, which must hold exactly one JSON value (surrounding
// whitespace allowed).
func fastDecode(b []byte, alias bool) (any, bool) {
	r := fastReader{b: b, alias: alias}
	v, ok := r.value()
	if !ok {
		return nil, false
	}
	r.ws()
	return v, r.i == len(b)
}

// value reads the value at r.i (leading whitespace allowed).
func (r *fastReader) value() (any, bool) {
	r.ws()
	if r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		return r.str()
	case c == 't':
		return true, r.lit("true")
	case c == 'f':
		return false, r.lit("false")
	case c == 'n':
		return nil, r.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		s, ok := r.number()
		if !ok {
			return nil, false
		}
		return json.Number(s), true
	}
	return nil, false
}

func (r *fastReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// number scans a JSON number at r.i.
func (r *fastReader) number() (string, bool) {
	start := r.i
	if _, ok := r.numberSpan(); !ok {
		return "", false
	}
	return string(r.b[start:r.i]), true
}

// strEnd returns the index just past the closing quote of the string
// starting at r.b[r.i] (a quote), validating escapes and rejecting control
// characters; plain reports a string without escapes or non-ASCII bytes.
func (r *fastReader) strEnd() (end int, plain, ok bool) {
	b := r.b
	plain = true
	for i := r.i + 1; i < len(b); i++ {
		// A word at a time while no byte is a quote, a backslash, a
		// control character or non-ASCII.
		i += jackson.IndexSpecial(b[i:])
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false, false
					}
				}
				i += 4
			default:
				return 0, false, false
			}
		case c >= 0x80:
			plain = false
		}
	}
	return 0, false, false
}

func (r *fastReader) str() (any, bool) {
	s, ok := r.strValue(r.alias)
	return s, ok
}

// strValue reads a string; alias lets a string without escapes share r.b's
// memory instead of copying it (string values, not object keys).
func (r *fastReader) strValue(alias bool) (string, bool) {
	b, unescaped, ok := r.strBytes()
	switch {
	case !ok:
		return "", false
	case alias && !unescaped && len(b) > 0:
		return unsafe.String(&b[0], len(b)), true
	}
	return string(b), true
}

// strBytes reads a string and returns its content: r.b's own bytes for a
// string without escapes or non-ASCII bytes, else (unescaped true) new
// bytes from encoding/json's unescaping and replacement of invalid UTF-8.
func (r *fastReader) strBytes() (b []byte, unescaped, ok bool) {
	end, plain, ok := r.strEnd()
	if !ok {
		return nil, false, false
	}
	raw := r.b[r.i:end]
	r.i = end
	if plain {
		return raw[1 : len(raw)-1], false, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false, false
	}
	return []byte(s), true, true
}

func (r *fastReader) object() (any, bool) {
	m := map[string]any{}
	more, ok := r.open('}')
	for more && ok {
		var k []byte
		if k, ok = r.key(); !ok {
			break
		}
		var v any
		if v, ok = r.value(); !ok {
			break
		}
		m[string(k)] = v
		more, ok = r.next('}')
	}
	return m, ok
}

func (r *fastReader) array() (any, bool) {
	a := []any{}
	more, ok := r.open(']')
	for more && ok {
		var v any
		if v, ok = r.value(); !ok {
			break
		}
		a = append(a, v)
		more, ok = r.next(']')
	}
	return a, ok
}

// open steps into the object or array at r.i; more reports an item to
// read (an object's key, then its value, or an array's element), after
// which next steps to the following one. ok is false for malformed input
// and for nesting deeper than fastMaxDepth; after that the reader is not
// used again.
func (r *fastReader) open(close byte) (more, ok bool) {
	if r.depth++; r.depth > fastMaxDepth {
		return false, false
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == close {
		r.i++
		r.depth--
		return false, true
	}
	return true, true
}

// key reads an object member's key and the colon after it, returning the
// key's content (strBytes).
func (r *fastReader) key() ([]byte, bool) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	k, _, ok := r.strBytes()
	if !ok {
		return nil, false
	}
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return nil, false
	}
	r.i++
	return k, true
}

// next steps over the separator after an item of the object or array
// opened by open: more reports another item, !more the end (closed).
func (r *fastReader) next(close byte) (more, ok bool) {
	if more, ok = r.sep(close); ok && !more {
		r.depth--
	}
	return more, ok
}

// sep steps over what follows an element of an object or array: a comma
// (more elements follow) or close (the end). ok is false for anything else.
func (r *fastReader) sep(close byte) (more, ok bool) {
	r.ws()
	if r.i >= len(r.b) {
		return false, false
	}
	switch r.b[r.i] {
	case ',':
		r.i++
		return true, true
	case close:
		r.i++
		return false, true
	}
	return false, false
}

// skip validates and steps over the value at r.i without building it.
func (r *fastReader) skip() bool {
	r.ws()
	if r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '{' || c == '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		more, ok := r.open(close)
		for more && ok {
			if c == '{' {
				if _, ok = r.key(); !ok {
					break
				}
			}
			if ok = r.skip(); ok {
				more, ok = r.next(close)
			}
		}
		return ok
	case c == '"':
		end, _, ok := r.strEnd()
		r.i = end
		return ok
	case c == 't':
		return r.lit("true")
	case c == 'f':
		return r.lit("false")
	case c == 'n':
		return r.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := r.numberSpan()
		return ok
	}
	return false
}

// numberSpan steps over a number without allocating.
func (r *fastReader) numberSpan() (int, bool) {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	r.i = i
	return i, true
}

// fastEnvelope reads a {"schema": ..., "payload": ...} envelope in one
// pass: the raw bytes of the schema (for the schema cache) and the decoded
// payload. ok is false when b is anything else (other or missing fields,
// malformed JSON), for the caller's encoding/json path to report.
// known, when set, is a schema seen (and validated) before: a schema with
// the same bytes is not scanned again.
func fastEnvelope(b, known []byte, alias bool) (schemaRaw []byte, payload any, ok bool) {
	r := fastReader{b: b, alias: alias}
	r.ws()
	if r.i >= len(b) || b[r.i] != '{' {
		return nil, nil, false
	}
	havePayload := false
	more, _ := r.open('}') // at depth 1 it cannot fail; !more: {}
	for more {
		k, ok := r.key()
		if !ok {
			return nil, nil, false
		}
		switch string(k) {
		case "schema":
			r.ws()
			start := r.i
			if len(known) > 0 && bytes.HasPrefix(b[start:], known) {
				// A complete value; what follows must still be a
				// separator, checked below.
				r.i += len(known)
			} else if !r.skip() {
				return nil, nil, false
			}
			schemaRaw = b[start:r.i]
		case "payload":
			if payload, ok = r.value(); !ok {
				return nil, nil, false
			}
			havePayload = true
		default:
			return nil, nil, false
		}
		if more, ok = r.next('}'); !ok {
			return nil, nil, false
		}
	}
	r.ws()
	if r.i != len(b) || schemaRaw == nil || !havePayload {
		return nil, nil, false
	}
	return schemaRaw, payload, true
}

package kafkarest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// avroFromJSON encodes v, a JSON value decoded with UseNumber, in Avro's
// binary encoding of schema s. v is in Avro's JSON encoding, as Confluent's
// proxy reads it: a union's non-null branch is {"branch name": value},
// bytes and fixed are strings of code points 0-255, a field absent from a
// record takes its default.
func avroFromJSON(dst []byte, s avro.Schema, v any, path string) ([]byte, error) {
	switch s := s.(type) {
	case *avro.RefSchema:
		return avroFromJSON(dst, s.Schema(), v, path)
	case *avro.PrimitiveSchema:
		return primitiveFromJSON(dst, s.Type(), v, path)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a JSON object for record %s", path, s.FullName())
		}
		for _, f := range s.Fields() {
			fv, ok := m[f.Name()]
			if !ok {
				if !f.HasDefault() {
					return nil, fmt.Errorf("%s.%s: missing, and the field has no default", path, f.Name())
				}
				fv = defaultAsJSON(f.Default(), f.Type())
			}
			var err error
			if dst, err = avroFromJSON(dst, f.Type(), fv, path+"."+f.Name()); err != nil {
				return nil, err
			}
		}
		for k := range m {
			if s.Fields() != nil && !hasField(s, k) {
				return nil, fmt.Errorf("%s.%s: not a field of record %s", path, k, s.FullName())
			}
		}
		return dst, nil
	case *avro.EnumSchema:
		sym, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a symbol of enum %s", path, s.FullName())
		}
		for i, x := range s.Symbols() {
			if x == sym {
				return appendLong(dst, int64(i)), nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not a symbol of enum %s", path, sym, s.FullName())
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a JSON array", path)
		}
		if len(a) > 0 {
			dst = appendLong(dst, int64(len(a)))
			for i, x := range a {
				var err error
				if dst, err = avroFromJSON(dst, s.Items(), x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return nil, err
				}
			}
		}
		return appendLong(dst, 0), nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a JSON object for a map", path)
		}
		if len(m) > 0 {
			dst = appendLong(dst, int64(len(m)))
			for k, x := range m {
				dst = appendBytes(dst, []byte(k))
				var err error
				if dst, err = avroFromJSON(dst, s.Values(), x, path+"."+k); err != nil {
					return nil, err
				}
			}
		}
		return appendLong(dst, 0), nil
	case *avro.UnionSchema:
		if v == nil {
			for i, t := range s.Types() {
				if t.Type() == avro.Null {
					return appendLong(dst, int64(i)), nil
				}
			}
			return nil, fmt.Errorf("%s: null is not a branch of the union", path)
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf(`%s: want null or {"branch": value} for a union`, path)
		}
		for name, x := range m {
			for i, t := range s.Types() {
				if branchName(t) == name {
					dst = appendLong(dst, int64(i))
					return avroFromJSON(dst, t, x, path+"."+name)
				}
			}
			return nil, fmt.Errorf("%s: %q is not a branch of the union", path, name)
		}
	case *avro.FixedSchema:
		b, err := codePoints(v, path)
		if err != nil {
			return nil, err
		}
		if len(b) != s.Size() {
			return nil, fmt.Errorf("%s: want %d bytes for fixed %s, have %d", path, s.Size(), s.FullName(), len(b))
		}
		return append(dst, b...), nil
	}
	return nil, fmt.Errorf("%s: unsupported Avro schema %s", path, s.Type())
}

func hasField(s *avro.RecordSchema, name string) bool {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

// branchName is how Avro's JSON encoding names a union branch: a named
// type's full name, else the type's name.
func branchName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

// defaultAsJSON turns a field default, as hamba parsed it, into the JSON
// value avroFromJSON takes. A union's default is of its first branch.
func defaultAsJSON(d any, s avro.Schema) any {
	if d == nil {
		return nil
	}
	if u, ok := s.(*avro.UnionSchema); ok && len(u.Types()) > 0 {
		return map[string]any{branchName(u.Types()[0]): defaultAsJSON(d, u.Types()[0])}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return d
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return d
	}
	return out
}

func primitiveFromJSON(dst []byte, t avro.Type, v any, path string) ([]byte, error) {
	switch t {
	case avro.Null:
		if v != nil {
			return nil, fmt.Errorf("%s: want null", path)
		}
		return dst, nil
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s: want a boolean", path)
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case avro.Int, avro.Long:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: want an integer", path)
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || (t == avro.Int && (i < math.MinInt32 || i > math.MaxInt32)) {
			return nil, fmt.Errorf("%s: %s is not an Avro %s", path, n, t)
		}
		return appendLong(dst, i), nil
	case avro.Float, avro.Double:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: want a number", path)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not a number", path, n)
		}
		if t == avro.Float {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case avro.String:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string", path)
		}
		return appendBytes(dst, []byte(s)), nil
	case avro.Bytes:
		b, err := codePoints(v, path)
		if err != nil {
			return nil, err
		}
		return appendBytes(dst, b), nil
	}
	return nil, fmt.Errorf("%s: unsupported Avro type %s", path, t)
}

// codePoints reads Avro's JSON encoding of bytes: a string whose code
// points 0-255 are the bytes.
func codePoints(v any, path string) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s: want a string of code points 0-255 for bytes", path)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			return nil, fmt.Errorf("%s: code point %U is not a byte", path, r)
		}
		b = append(b, byte(r))
	}
	return b, nil
}

func appendLong(dst []byte, i int64) []byte { return binary.AppendVarint(dst, i) }

func appendBytes(dst, b []byte) []byte { return append(appendLong(dst, int64(len(b))), b...) }

var errShort = errors.New("the Avro data ends early")

// avroToJSON decodes one value of schema s from b into Avro's JSON
// encoding (the inverse of avroFromJSON) and returns the rest of b.
func avroToJSON(s avro.Schema, b []byte) (any, []byte, error) {
	switch s := s.(type) {
	case *avro.RefSchema:
		return avroToJSON(s.Schema(), b)
	case *avro.PrimitiveSchema:
		return primitiveToJSON(s.Type(), b)
	case *avro.RecordSchema:
		m := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			v, rest, err := avroToJSON(f.Type(), b)
			if err != nil {
				return nil, nil, err
			}
			m[f.Name()], b = v, rest
		}
		return m, b, nil
	case *avro.EnumSchema:
		i, b, err := readLong(b)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= int64(len(s.Symbols())) {
			return nil, nil, fmt.Errorf("enum index %d out of range", i)
		}
		return s.Symbols()[i], b, nil
	case *avro.ArraySchema:
		out := []any{}
		for {
			n, rest, err := readBlockCount(b)
			if err != nil {
				return nil, nil, err
			}
			b = rest
			if n == 0 {
				return out, b, nil
			}
			for range n {
				v, rest, err := avroToJSON(s.Items(), b)
				if err != nil {
					return nil, nil, err
				}
				out, b = append(out, v), rest
			}
		}
	case *avro.MapSchema:
		out := map[string]any{}
		for {
			n, rest, err := readBlockCount(b)
			if err != nil {
				return nil, nil, err
			}
			b = rest
			if n == 0 {
				return out, b, nil
			}
			for range n {
				k, rest, err := readBytes(b)
				if err != nil {
					return nil, nil, err
				}
				v, rest, err := avroToJSON(s.Values(), rest)
				if err != nil {
					return nil, nil, err
				}
				out[string(k)], b = v, rest
			}
		}
	case *avro.UnionSchema:
		i, b, err := readLong(b)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= int64(len(s.Types())) {
			return nil, nil, fmt.Errorf("union index %d out of range", i)
		}
		t := s.Types()[i]
		if t.Type() == avro.Null {
			return nil, b, nil
		}
		v, b, err := avroToJSON(t, b)
		if err != nil {
			return nil, nil, err
		}
		return map[string]any{branchName(t): v}, b, nil
	case *avro.FixedSchema:
		if len(b) < s.Size() {
			return nil, nil, errShort
		}
		return fromCodePoints(b[:s.Size()]), b[s.Size():], nil
	}
	return nil, nil, fmt.Errorf("unsupported Avro schema %s", s.Type())
}

func primitiveToJSON(t avro.Type, b []byte) (any, []byte, error) {
	switch t {
	case avro.Null:
		return nil, b, nil
	case avro.Boolean:
		if len(b) < 1 {
			return nil, nil, errShort
		}
		return b[0] != 0, b[1:], nil
	case avro.Int, avro.Long:
		i, b, err := readLong(b)
		return i, b, err
	case avro.Float:
		if len(b) < 4 {
			return nil, nil, errShort
		}
		return jsonFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))), b[4:], nil
	case avro.Double:
		if len(b) < 8 {
			return nil, nil, errShort
		}
		return jsonFloat(math.Float64frombits(binary.LittleEndian.Uint64(b))), b[8:], nil
	case avro.String:
		s, b, err := readBytes(b)
		if err != nil {
			return nil, nil, err
		}
		if !utf8.Valid(s) {
			return nil, nil, errors.New("an Avro string is not UTF-8")
		}
		return string(s), b, nil
	case avro.Bytes:
		s, b, err := readBytes(b)
		if err != nil {
			return nil, nil, err
		}
		return fromCodePoints(s), b, nil
	}
	return nil, nil, fmt.Errorf("unsupported Avro type %s", t)
}

// jsonFloat is f as JSON can carry it: NaN and infinities as strings, as
// Jackson writes them.
func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}

func fromCodePoints(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func readLong(b []byte) (int64, []byte, error) {
	i, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, errShort
	}
	return i, b[n:], nil
}

// readBlockCount reads an array's or map's block count; a negative count
// is followed by the block's size in bytes.
func readBlockCount(b []byte) (int64, []byte, error) {
	n, b, err := readLong(b)
	if err != nil {
		return 0, nil, err
	}
	if n < 0 {
		if _, b, err = readLong(b); err != nil {
			return 0, nil, err
		}
		n = -n
	}
	if n > 1<<24 {
		return 0, nil, fmt.Errorf("an Avro block of %d items", n)
	}
	return n, b, nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	n, b, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if n < 0 || n > int64(len(b)) {
		return nil, nil, errShort
	}
	return b[:n], b[n:], nil
}

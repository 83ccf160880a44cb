package convert

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// WireMaker is implemented by converters that can turn a Kafka record's
// bytes straight into the wire encoding a plugin receives, without
// building Go values first.
type WireMaker interface {
	Converter
	// ToConnectWire is ToConnect with the value written by w and returned
	// encoded. ok is false when the converter does not do it for these
	// bytes (call ToConnect, which also reports what is wrong with them);
	// when ok, ToConnect would have returned the same schema and a value
	// equal to the decoded one.
	ToConnectWire(topic string, b []byte, w *wire.ValueWriter) (s *schema.Schema, v *wire.Raw, ok bool)
}

// ToConnectWire implements WireMaker for schemaless JSON (schemas.enable
// false): the single-pass reader of the sink path (fastReader) writes each
// value as it reads it, with the conversions of schemalessToConnect.
func (c *JSONConverter) ToConnectWire(_ string, b []byte, w *wire.ValueWriter) (*schema.Schema, *wire.Raw, bool) {
	if c.schemas || b == nil {
		return nil, nil, false
	}
	r := fastReader{b: b}
	if r.ws(); r.i < len(b) && b[r.i] == 'n' {
		return nil, nil, false // a null value stays nil, as ToConnect returns it
	}
	// The encoding is about as long as the JSON, longer for small numbers
	// (a one-digit integer takes two bytes).
	w.Begin(2*len(b) + 16)
	if !r.wireValue(w, 0) {
		w.Discard()
		return nil, nil, false
	}
	if r.ws(); r.i != len(b) {
		w.Discard()
		return nil, nil, false
	}
	raw, err := w.Finish()
	if err != nil {
		w.Discard()
		return nil, nil, false
	}
	return nil, raw, true
}

// wireValue reads the value at r.i and writes it with w as
// schemalessToConnect converts it (depth as there); false for anything
// fastDecode or schemalessToConnect would not accept, and for values
// nested deeper than either allows.
func (r *fastReader) wireValue(w *wire.ValueWriter, depth int) bool {
	if depth > maxDepth { // (maxDepth is below fastMaxDepth)
		return false
	}
	r.ws()
	if r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '{' || c == '[':
		close := byte('}')
		if c == '{' {
			w.BeginMap()
		} else {
			close = ']'
			w.BeginArray()
		}
		more, ok := r.open(close)
		for more && ok {
			if c == '{' {
				var k []byte
				if k, ok = r.key(); !ok {
					break
				}
				w.Key(k)
			}
			if ok = r.wireValue(w, depth+1); ok {
				more, ok = r.next(close)
			}
		}
		w.End()
		return ok
	case c == '"':
		s, _, ok := r.strBytes()
		if ok {
			w.String(s)
		}
		return ok
	case c == 't':
		w.Bool(true)
		return r.lit("true")
	case c == 'f':
		w.Bool(false)
		return r.lit("false")
	case c == 'n':
		w.Null()
		return r.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		start := r.i
		if _, ok := r.numberSpan(); !ok {
			return false
		}
		num := unsafe.String(&r.b[start], r.i-start)
		// As schemalessToConnect converts a json.Number.
		if i, err := strconv.ParseInt(num, 10, 64); err == nil {
			w.Int64(i)
			return true
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil && !math.IsInf(f, 0) {
			return false
		}
		w.Float64(f)
		return true
	}
	return false
}

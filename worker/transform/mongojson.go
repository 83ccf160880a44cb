package transform

import (
	"encoding/base64"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// extReader reads the extended JSON of the MongoDB connector's events into
// documents, fast: the forms the connector writes (plain JSON, $oid, $date
// as a number, {"$numberLong"} or an ISO-8601 string, $numberLong,
// $numberInt, $numberDouble, $numberDecimal, $binary in its legacy and
// canonical forms, $timestamp, $code, $symbol, $undefined, $minKey,
// $maxKey, $regularExpression and the legacy {"$regex", "$options"}) are
// read in one pass, with the same values the Go
// driver's extended JSON reader gives them. Anything else — another $
// wrapper, a malformed or unusual input — is left to the driver's reader
// (parseDocument), so that results and errors stay the driver's.
//
// An extReader reuses its buffers from one record to the next: the
// documents it returns are valid until the next begin.
type extReader struct {
	s    string
	i    int
	buf  []byte // the scalars' encodings
	vals []bval // the values, in chunks
	str  []byte // a string with escapes being decoded
	// the fields and elements of the documents and arrays being read, and
	// the chunks their finished lists are copied to
	fields, fieldChunk []bfield
	elems, elemChunk   []*bval
}

// document is parseDocument(s).
func (p *extReader) document(s string) (bdoc, error) {
	if d, ok := p.topDocument(s); ok {
		return d, nil
	}
	return parseDocument(s)
}

// keyDocument is parseDocument("{ \"id\" : " + key + "}").
func (p *extReader) keyDocument(key string) (bdoc, error) {
	p.reset(key)
	if v, ok := p.value(); ok {
		p.ws()
		if p.i == len(p.s) {
			return bdoc{{"id", v}}, nil
		}
	}
	return parseDocument("{ \"id\" : " + key + "}")
}

// begin starts a record: the documents read before are no longer used.
func (p *extReader) begin() {
	p.buf = p.buf[:0]
	p.vals = p.vals[:0]
	p.fieldChunk = p.fieldChunk[:0]
	p.elemChunk = p.elemChunk[:0]
}

// endDoc is the document of the fields read since base.
func (p *extReader) endDoc(base int) bdoc {
	n := len(p.fields) - base
	if cap(p.fieldChunk)-len(p.fieldChunk) < n {
		p.fieldChunk = make([]bfield, 0, max(64, 2*cap(p.fieldChunk), n))
	}
	start := len(p.fieldChunk)
	p.fieldChunk = append(p.fieldChunk, p.fields[base:]...)
	p.fields = p.fields[:base]
	// A document's capacity is its own: appending to it (put) must not
	// write over the next one's fields.
	return p.fieldChunk[start:len(p.fieldChunk):len(p.fieldChunk)]
}

// endArray is the array of the elements read since base.
func (p *extReader) endArray(base int) []*bval {
	n := len(p.elems) - base
	if cap(p.elemChunk)-len(p.elemChunk) < n {
		p.elemChunk = make([]*bval, 0, max(64, 2*cap(p.elemChunk), n))
	}
	start := len(p.elemChunk)
	p.elemChunk = append(p.elemChunk, p.elems[base:]...)
	p.elems = p.elems[:base]
	return p.elemChunk[start:len(p.elemChunk):len(p.elemChunk)]
}

func (p *extReader) reset(s string) {
	p.s, p.i = s, 0
	p.fields, p.elems = p.fields[:0], p.elems[:0]
}

func (p *extReader) topDocument(s string) (bdoc, bool) {
	p.reset(s)
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, false
	}
	v, ok := p.object()
	if !ok || v.t != bson.TypeEmbeddedDocument {
		return nil, false
	}
	p.ws()
	return v.doc, p.i == len(p.s)
}

// newVal is a value of the reader's arena.
func (p *extReader) newVal(t bson.Type) *bval {
	if len(p.vals) == cap(p.vals) {
		p.vals = make([]bval, 0, max(32, 2*cap(p.vals)))
	}
	p.vals = append(p.vals, bval{t: t})
	return &p.vals[len(p.vals)-1]
}

// scalar is a value whose encoding is buf[start:].
func (p *extReader) scalar(t bson.Type, start int) *bval {
	v := p.newVal(t)
	v.raw = bson.RawValue{Type: t, Value: p.buf[start:len(p.buf):len(p.buf)]}
	return v
}

func (p *extReader) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// consume skips whitespace and c.
func (p *extReader) consume(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *extReader) value() (*bval, bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, ok := p.string()
		if !ok {
			return nil, false
		}
		start := len(p.buf)
		p.buf = bsoncore.AppendString(p.buf, s)
		return p.scalar(bson.TypeString, start), true
	case c == 't' || c == 'f' || c == 'n':
		return p.literal()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

// terminated is whether a literal or number ends at i, as the driver's
// scanner requires.
func (p *extReader) terminated() bool {
	if p.i >= len(p.s) {
		return true
	}
	switch p.s[p.i] {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (p *extReader) literal() (*bval, bool) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit {
			p.i += len(lit)
			if !p.terminated() {
				return nil, false
			}
			start := len(p.buf)
			switch lit {
			case "true":
				p.buf = append(p.buf, 1)
			case "false":
				p.buf = append(p.buf, 0)
			default:
				return p.scalar(bson.TypeNull, start), true
			}
			return p.scalar(bson.TypeBoolean, start), true
		}
	}
	return nil, false
}

// number reads a JSON number (RFC 8259): an integer is an int32 if it
// fits, else an int64, else a double; a fraction or exponent makes a
// double.
func (p *extReader) number() (*bval, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	double := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		double = true
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		double = true
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	if !p.terminated() {
		return nil, false
	}
	text := p.s[start:p.i]
	b := len(p.buf)
	if !double {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			if n < math.MinInt32 || n > math.MaxInt32 {
				p.buf = bsoncore.AppendInt64(p.buf, n)
				return p.scalar(bson.TypeInt64, b), true
			}
			p.buf = bsoncore.AppendInt32(p.buf, int32(n))
			return p.scalar(bson.TypeInt32, b), true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, false
	}
	p.buf = bsoncore.AppendDouble(p.buf, f)
	return p.scalar(bson.TypeDouble, b), true
}

// string reads a string literal (a part of the input when it has no
// escapes).
func (p *extReader) string() (string, bool) {
	p.i++ // "
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			s := p.s[start:p.i]
			p.i++
			return s, isUTF8(s)
		case c == '\\':
			return p.escapedString(start)
		default:
			p.i++
		}
	}
	return "", false
}

func isUTF8(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

func (p *extReader) escapedString(start int) (string, bool) {
	b := append(p.str[:0], p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			p.str = b
			s := string(b)
			return s, isUTF8(s)
		case '\\':
			if p.i >= len(p.s) {
				return "", false
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					// Only a well-formed pair; the driver's handling of a
					// lone surrogate is left to it.
					if p.i+2 > len(p.s) || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
						return "", false
					}
					p.i += 2
					r2, ok := p.hex4()
					if !ok {
						return "", false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", false
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", false
			}
		default:
			b = append(b, c)
		}
	}
	return "", false
}

func (p *extReader) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

func (p *extReader) array() (*bval, bool) {
	p.i++ // [
	v := p.newVal(bson.TypeArray)
	v.raw.Type = bson.TypeArray
	base := len(p.elems)
	if p.consume(']') {
		v.arr = p.endArray(base)
		return v, true
	}
	for {
		e, ok := p.value()
		if !ok {
			p.elems = p.elems[:base]
			return nil, false
		}
		p.elems = append(p.elems, e)
		if p.consume(',') {
			continue
		}
		if p.consume(']') {
			v.arr = p.endArray(base)
			return v, true
		}
		p.elems = p.elems[:base]
		return nil, false
	}
}

// key reads a field name and its colon.
func (p *extReader) key() (string, bool) {
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	k, ok := p.string()
	if !ok || !p.consume(':') {
		return "", false
	}
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return "", false // not a BSON name
		}
	}
	return k, true
}

func (p *extReader) object() (*bval, bool) {
	p.i++ // {
	if p.consume('}') {
		v := p.newVal(bson.TypeEmbeddedDocument)
		v.raw.Type = bson.TypeEmbeddedDocument
		v.doc = p.endDoc(len(p.fields))
		return v, true
	}
	k, ok := p.key()
	if !ok {
		return nil, false
	}
	if len(k) > 0 && k[0] == '$' {
		return p.wrapper(k)
	}
	base := len(p.fields)
	for {
		e, ok := p.value()
		if !ok {
			p.fields = p.fields[:base]
			return nil, false
		}
		// put: a repeated name keeps its place and takes the last value.
		if i := bdoc(p.fields[base:]).index(k); i >= 0 {
			p.fields[base+i].v = e
		} else {
			p.fields = append(p.fields, bfield{k, e})
		}
		if p.consume('}') {
			break
		}
		if !p.consume(',') {
			p.fields = p.fields[:base]
			return nil, false
		}
		if k, ok = p.key(); !ok || len(k) > 0 && k[0] == '$' {
			p.fields = p.fields[:base]
			return nil, false
		}
	}
	v := p.newVal(bson.TypeEmbeddedDocument)
	v.raw.Type = bson.TypeEmbeddedDocument
	v.doc = p.endDoc(base)
	return v, true
}

// stringValue reads a string value.
func (p *extReader) stringValue() (string, bool) {
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	return p.string()
}

// dateTimeFormats are the driver's accepted forms of a $date string.
var dateTimeFormats = [...]string{"2006-01-02T15:04:05.999Z07:00", "2006-01-02T15:04:05.999Z0700"}

// wrapper reads the rest of an extended JSON wrapper object whose first
// name, k, has been read.
func (p *extReader) wrapper(k string) (*bval, bool) {
	start := len(p.buf)
	var t bson.Type
	switch k {
	case "$oid":
		s, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		oid, err := bson.ObjectIDFromHex(s)
		if err != nil {
			return nil, false
		}
		p.buf, t = append(p.buf, oid[:]...), bson.TypeObjectID
	case "$date":
		ms, ok := p.dateTime()
		if !ok {
			return nil, false
		}
		p.buf, t = bsoncore.AppendDateTime(p.buf, ms), bson.TypeDateTime
	case "$numberLong", "$numberInt":
		s, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		if k == "$numberLong" {
			p.buf, t = bsoncore.AppendInt64(p.buf, n), bson.TypeInt64
		} else {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, false
			}
			p.buf, t = bsoncore.AppendInt32(p.buf, int32(n)), bson.TypeInt32
		}
	case "$numberDouble":
		s, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		var f float64
		switch s {
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		case "NaN":
			f = math.NaN()
		default:
			var err error
			if f, err = strconv.ParseFloat(s, 64); err != nil {
				return nil, false
			}
		}
		p.buf, t = bsoncore.AppendDouble(p.buf, f), bson.TypeDouble
	case "$numberDecimal":
		s, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		h, l, ok := plainDecimal128(s)
		if !ok {
			d, err := bson.ParseDecimal128(s)
			if err != nil {
				return nil, false
			}
			h, l = d.GetBytes()
		}
		p.buf, t = bsoncore.AppendDecimal128(p.buf, h, l), bson.TypeDecimal128
	case "$binary":
		data, sub, ok := p.binary()
		if !ok {
			return nil, false
		}
		p.buf, t = bsoncore.AppendBinary(p.buf, sub, data), bson.TypeBinary
		return p.scalar(t, start), true // binary() read the closing brace
	case "$code", "$symbol":
		s, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		p.buf, t = bsoncore.AppendString(p.buf, s), bson.TypeJavaScript
		if k == "$symbol" {
			t = bson.TypeSymbol
		}
	case "$undefined":
		if v, ok := p.value(); !ok || v.t != bson.TypeBoolean || !v.raw.Boolean() {
			return nil, false
		}
		p.buf, t = p.buf[:start], bson.TypeUndefined
	case "$minKey", "$maxKey":
		if v, ok := p.value(); !ok || v.t != bson.TypeInt32 || v.raw.Int32() != 1 {
			return nil, false
		}
		p.buf, t = p.buf[:start], bson.TypeMinKey
		if k == "$maxKey" {
			t = bson.TypeMaxKey
		}
	case "$timestamp":
		ts, inc, ok := p.timestamp()
		if !ok {
			return nil, false
		}
		p.buf, t = bsoncore.AppendTimestamp(p.buf, ts, inc), bson.TypeTimestamp
	case "$regex":
		// The legacy form, {"$regex": "…", "$options": "…"}: a document
		// to the driver, a regular expression to Java (legacyRegex).
		pattern, ok := p.stringValue()
		if !ok {
			return nil, false
		}
		var options string
		if p.consume(',') {
			if k, ok := p.key(); !ok || k != "$options" {
				return nil, false
			}
			if options, ok = p.stringValue(); !ok {
				return nil, false
			}
		}
		if !p.consume('}') {
			return nil, false
		}
		v := p.newVal(bson.TypeRegex)
		v.pattern, v.options = pattern, options
		return v, true
	case "$regularExpression":
		pattern, options, ok := p.regularExpression()
		if !ok || !p.consume('}') {
			return nil, false
		}
		options = sortedOptions(options) // as the driver stores them
		p.buf = bsoncore.AppendRegex(p.buf, pattern, options)
		v := p.scalar(bson.TypeRegex, start)
		v.pattern, v.options = pattern, options
		return v, true
	default:
		return nil, false
	}
	if !p.consume('}') {
		return nil, false
	}
	return p.scalar(t, start), true
}

// uint32Value reads a number that fits a uint32.
func (p *extReader) uint32Value() (uint32, bool) {
	mark := len(p.buf)
	v, ok := p.value()
	p.buf = p.buf[:mark]
	if !ok {
		return 0, false
	}
	var n int64
	switch v.t {
	case bson.TypeInt32:
		n = int64(v.raw.Int32())
	case bson.TypeInt64:
		n = v.raw.Int64()
	default:
		return 0, false
	}
	if n < 0 || n > math.MaxUint32 {
		return 0, false
	}
	return uint32(n), true
}

// twoKeys reads an object of exactly the keys a and b, in either order,
// each once; read reads the value of key k and says whether it is good.
func (p *extReader) twoKeys(a, b string, read func(k string) bool) bool {
	if !p.consume('{') {
		return false
	}
	var aFound, bFound bool
	for n := 0; n < 2; n++ {
		if n > 0 && !p.consume(',') {
			return false
		}
		k, ok := p.key()
		if !ok {
			return false
		}
		switch {
		case k == a && !aFound:
			aFound = true
		case k == b && !bFound:
			bFound = true
		default:
			return false
		}
		if !read(k) {
			return false
		}
	}
	return p.consume('}')
}

// timestamp reads a $timestamp's value, {"t": …, "i": …}.
func (p *extReader) timestamp() (ts, inc uint32, ok bool) {
	ok = p.twoKeys("t", "i", func(k string) bool {
		v, ok := p.uint32Value()
		if k == "t" {
			ts = v
		} else {
			inc = v
		}
		return ok
	})
	if !ok {
		return 0, 0, false
	}
	return ts, inc, true
}

// regularExpression reads a $regularExpression's value,
// {"pattern": …, "options": …}.
func (p *extReader) regularExpression() (pattern, options string, ok bool) {
	ok = p.twoKeys("pattern", "options", func(k string) bool {
		v, ok := p.stringValue()
		if !ok || strings.IndexByte(v, 0) >= 0 {
			return false
		}
		if k == "pattern" {
			pattern = v
		} else {
			options = v
		}
		return true
	})
	if !ok {
		return "", "", false
	}
	return pattern, options, true
}

// dateTime reads a $date's value: epoch milliseconds as a number or
// {"$numberLong": "…"}, or an ISO-8601 string.
func (p *extReader) dateTime() (int64, bool) {
	p.ws()
	if p.i >= len(p.s) {
		return 0, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, ok := p.string()
		if !ok {
			return 0, false
		}
		for _, f := range dateTimeFormats {
			if t, err := time.Parse(f, s); err == nil {
				return t.Unix()*1e3 + int64(t.Nanosecond())/1e6, true
			}
		}
		return 0, false
	case c == '{':
		p.i++
		if k, ok := p.key(); !ok || k != "$numberLong" {
			return 0, false
		}
		s, ok := p.stringValue()
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || !p.consume('}') {
			return 0, false
		}
		return n, true
	case c == '-' || c >= '0' && c <= '9':
		mark := len(p.buf)
		v, ok := p.number()
		p.buf = p.buf[:mark]
		if !ok {
			return 0, false
		}
		switch v.t {
		case bson.TypeInt32:
			return int64(v.raw.Int32()), true
		case bson.TypeInt64:
			return v.raw.Int64(), true
		}
	}
	return 0, false
}

// binary reads a $binary's value and the wrapper's closing brace: legacy
// {"$binary": "<base64>", "$type": "<hex>"} or canonical
// {"$binary": {"base64": "…", "subType": "…"}}. Subtype 2 (old binary,
// encoded with a second length) is left to the driver.
func (p *extReader) binary() (data []byte, sub byte, ok bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, 0, false
	}
	var b64, st string
	if p.s[p.i] == '"' {
		if b64, ok = p.string(); !ok || !p.consume(',') {
			return nil, 0, false
		}
		if k, ok := p.key(); !ok || k != "$type" {
			return nil, 0, false
		}
		if st, ok = p.stringValue(); !ok {
			return nil, 0, false
		}
	} else if !p.twoKeys("base64", "subType", func(k string) bool {
		v, ok := p.stringValue()
		if k == "base64" {
			b64 = v
		} else {
			st = v
		}
		return ok && v != ""
	}) {
		return nil, 0, false
	}
	if !p.consume('}') {
		return nil, 0, false
	}
	n, err := strconv.ParseUint(st, 16, 8)
	if err != nil || n == 2 {
		return nil, 0, false
	}
	data, err = base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, 0, false
	}
	return data, byte(n), true
}

// plainDecimal128 is bson.ParseDecimal128 of a plain decimal, -?d+(.d+)?
// with at most 34 significant digits: the coefficient, its exponent minus
// the number of fraction digits (so 1.50 keeps its trailing zero). ok is
// false for any other form.
func plainDecimal128(s string) (h, l uint64, ok bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, dot := strings.Cut(s, ".")
	if intPart == "" || dot && frac == "" || len(intPart)+len(frac) > 34+len(intPart)-len(strings.TrimLeft(intPart, "0")) {
		return 0, 0, false
	}
	var hi, lo uint64 // the coefficient, 128 bits
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			// coefficient = coefficient*10 + digit
			h1, l1 := bits.Mul64(lo, 10)
			l2, carry := bits.Add64(l1, uint64(c-'0'), 0)
			hi, lo = hi*10+h1+carry, l2
		}
	}
	const bias = 6176
	exp := uint64(bias - len(frac))
	h = exp<<49 | hi
	if neg {
		h |= 1 << 63
	}
	return h, lo, true
}

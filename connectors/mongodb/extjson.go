package mongodb

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// The MongoDB Java driver's JSON writer, which Debezium's MongoDB connector
// uses for the strings in its events, in the three forms Debezium uses:
//
//   - documents (after, before): legacy "strict" extended JSON in compact
//     form: `{"_id": {"$oid": "…"},"n": {"$numberLong": "5"}}` — a space after
//     each colon, none after a comma; int64 as $numberLong, dates as
//     {"$date": <millis>}, binary as {"$binary": "<base64>", "$type": "00"},
//     regular expressions as {"$regex", "$options"}, doubles in Java's
//     Double.toString form (so NaN and Infinity unquoted, as Java writes
//     them).
//   - the key's id: relaxed extended JSON in the same compact form
//     (int64 as a plain number, dates as ISO-8601 strings).
//   - updatedFields: relaxed extended JSON with ", " between elements
//     (BsonDocument.toJson()).
//
// Strings are escaped as Java's writer escapes them: each UTF-16 unit that is
// not a letter, digit, punctuation, symbol or space separator becomes \uXXXX
// (so emoji become surrogate pairs, control characters and combining marks
// are escaped).
type jsonMode uint8

const (
	modeStrict        jsonMode = iota // legacy strict, compact (documents)
	modeRelaxed                       // relaxed, compact (key ids)
	modeRelaxedSpaced                 // relaxed, ", " separators (updatedFields)
)

// jsonWriter appends extended JSON to buf.
type jsonWriter struct {
	buf  []byte
	mode jsonMode
}

func (w *jsonWriter) relaxed() bool { return w.mode != modeStrict }

func (w *jsonWriter) sep() {
	if w.mode == modeRelaxedSpaced {
		w.buf = append(w.buf, ',', ' ')
	} else {
		w.buf = append(w.buf, ',')
	}
}

func (w *jsonWriter) name(n string) {
	w.str(n)
	w.buf = append(w.buf, ':', ' ')
}

// document writes doc, leaving out the excluded field paths.
func (w *jsonWriter) document(doc []byte, excl exclusions) error {
	w.buf = append(w.buf, '{')
	if err := w.elements(doc, excl); err != nil {
		return err
	}
	w.buf = append(w.buf, '}')
	return nil
}

func (w *jsonWriter) elements(doc []byte, excl exclusions) error {
	length, rem, ok := bsoncore.ReadLength(doc)
	if !ok || int(length) > len(doc) || length < 5 {
		return fmt.Errorf("malformed BSON document (length %d of %d bytes)", length, len(doc))
	}
	rem = rem[:length-5]
	first := true
	for len(rem) > 0 {
		var el bsoncore.Element
		el, rem, ok = bsoncore.ReadElement(rem)
		if !ok {
			return fmt.Errorf("malformed BSON element")
		}
		key, err := el.KeyErr()
		if err != nil {
			return fmt.Errorf("malformed BSON element: %w", err)
		}
		sub, skip := excl.enter(key)
		if skip {
			continue
		}
		val, err := el.ValueErr()
		if err != nil {
			return fmt.Errorf("malformed BSON value of %q: %w", key, err)
		}
		if !first {
			w.sep()
		}
		first = false
		w.name(key)
		if err := w.value(val, sub); err != nil {
			return err
		}
	}
	return nil
}

func (w *jsonWriter) array(arr []byte, excl exclusions) error {
	length, rem, ok := bsoncore.ReadLength(arr)
	if !ok || int(length) > len(arr) || length < 5 {
		return fmt.Errorf("malformed BSON array")
	}
	rem = rem[:length-5]
	w.buf = append(w.buf, '[')
	first := true
	for len(rem) > 0 {
		var el bsoncore.Element
		el, rem, ok = bsoncore.ReadElement(rem)
		if !ok {
			return fmt.Errorf("malformed BSON array element")
		}
		val, err := el.ValueErr()
		if err != nil {
			return fmt.Errorf("malformed BSON array value: %w", err)
		}
		if !first {
			w.sep()
		}
		first = false
		// Exclusions apply through an array to the documents it holds
		// (not to arrays within it), as Debezium's field selector does.
		sub := excl
		if val.Type != bsoncore.TypeEmbeddedDocument {
			sub = nil
		}
		if err := w.value(val, sub); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, ']')
	return nil
}

// open and close write a one-field wrapper object such as {"$oid": …}.
func (w *jsonWriter) open(name string) {
	w.buf = append(w.buf, '{')
	w.name(name)
}

func (w *jsonWriter) close() { w.buf = append(w.buf, '}') }

func (w *jsonWriter) value(v bsoncore.Value, excl exclusions) error {
	switch v.Type {
	case bsoncore.TypeDouble:
		f, ok := v.DoubleOK()
		if !ok {
			return errMalformed(v)
		}
		if w.relaxed() && (math.IsNaN(f) || math.IsInf(f, 0)) {
			w.open("$numberDouble")
			w.str(javaDouble(f))
			w.close()
		} else {
			w.buf = append(w.buf, javaDouble(f)...)
		}
	case bsoncore.TypeString:
		s, ok := v.StringValueOK()
		if !ok {
			return errMalformed(v)
		}
		w.str(s)
	case bsoncore.TypeEmbeddedDocument:
		d, ok := v.DocumentOK()
		if !ok {
			return errMalformed(v)
		}
		return w.document(d, excl)
	case bsoncore.TypeArray:
		a, ok := v.ArrayOK()
		if !ok {
			return errMalformed(v)
		}
		return w.array(a, excl)
	case bsoncore.TypeBinary:
		sub, data, ok := v.BinaryOK()
		if !ok {
			return errMalformed(v)
		}
		if w.relaxed() {
			w.open("$binary")
			w.buf = append(w.buf, '{')
			w.name("base64")
			w.b64(data)
			w.sep()
			w.name("subType")
			w.buf = fmt.Appendf(w.buf, `"%02X"`, sub)
			w.close()
			w.close()
		} else {
			w.open("$binary")
			w.b64(data)
			w.sep()
			w.name("$type")
			w.buf = fmt.Appendf(w.buf, `"%02X"`, sub)
			w.close()
		}
	case bsoncore.TypeUndefined:
		w.open("$undefined")
		w.buf = append(w.buf, "true"...)
		w.close()
	case bsoncore.TypeObjectID:
		oid, ok := v.ObjectIDOK()
		if !ok {
			return errMalformed(v)
		}
		w.oid(oid)
	case bsoncore.TypeBoolean:
		b, ok := v.BooleanOK()
		if !ok {
			return errMalformed(v)
		}
		w.buf = strconv.AppendBool(w.buf, b)
	case bsoncore.TypeDateTime:
		ms, ok := v.DateTimeOK()
		if !ok {
			return errMalformed(v)
		}
		w.date(ms)
	case bsoncore.TypeNull:
		w.buf = append(w.buf, "null"...)
	case bsoncore.TypeRegex:
		pattern, options, ok := v.RegexOK()
		if !ok {
			return errMalformed(v)
		}
		if w.relaxed() {
			w.open("$regularExpression")
			w.buf = append(w.buf, '{')
			w.name("pattern")
			w.str(pattern)
			w.sep()
			w.name("options")
			w.str(options)
			w.close()
			w.close()
		} else {
			w.open("$regex")
			w.str(pattern)
			w.sep()
			w.name("$options")
			w.str(options)
			w.close()
		}
	case bsoncore.TypeDBPointer:
		ns, oid, ok := v.DBPointerOK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$ref")
		w.str(ns)
		w.sep()
		w.name("$id")
		w.oid(oid)
		w.close()
	case bsoncore.TypeJavaScript:
		code, ok := v.JavaScriptOK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$code")
		w.str(code)
		w.close()
	case bsoncore.TypeSymbol:
		s, ok := v.SymbolOK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$symbol")
		w.str(s)
		w.close()
	case bsoncore.TypeCodeWithScope:
		code, scope, ok := v.CodeWithScopeOK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$code")
		w.str(code)
		w.sep()
		w.name("$scope")
		if err := w.document(scope, nil); err != nil {
			return err
		}
		w.close()
	case bsoncore.TypeInt32:
		i, ok := v.Int32OK()
		if !ok {
			return errMalformed(v)
		}
		w.buf = strconv.AppendInt(w.buf, int64(i), 10)
	case bsoncore.TypeTimestamp:
		t, i, ok := v.TimestampOK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$timestamp")
		w.buf = append(w.buf, '{')
		w.name("t")
		w.buf = strconv.AppendUint(w.buf, uint64(t), 10)
		w.sep()
		w.name("i")
		w.buf = strconv.AppendUint(w.buf, uint64(i), 10)
		w.close()
		w.close()
	case bsoncore.TypeInt64:
		i, ok := v.Int64OK()
		if !ok {
			return errMalformed(v)
		}
		if w.relaxed() {
			w.buf = strconv.AppendInt(w.buf, i, 10)
		} else {
			w.open("$numberLong")
			w.buf = append(w.buf, '"')
			w.buf = strconv.AppendInt(w.buf, i, 10)
			w.buf = append(w.buf, '"')
			w.close()
		}
	case bsoncore.TypeDecimal128:
		h, l, ok := v.Decimal128OK()
		if !ok {
			return errMalformed(v)
		}
		w.open("$numberDecimal")
		w.str(bson.NewDecimal128(h, l).String())
		w.close()
	case bsoncore.TypeMinKey:
		w.open("$minKey")
		w.buf = append(w.buf, '1')
		w.close()
	case bsoncore.TypeMaxKey:
		w.open("$maxKey")
		w.buf = append(w.buf, '1')
		w.close()
	default:
		return fmt.Errorf("unknown BSON type 0x%02x", byte(v.Type))
	}
	return nil
}

func errMalformed(v bsoncore.Value) error {
	return fmt.Errorf("malformed BSON %s value", v.Type)
}

func (w *jsonWriter) oid(oid bson.ObjectID) {
	w.open("$oid")
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, oid.Hex()...)
	w.buf = append(w.buf, '"')
	w.close()
}

// lastMillisOf9999 bounds the dates relaxed JSON writes as ISO-8601.
const lastMillisOf9999 = 253402300799999

func (w *jsonWriter) date(ms int64) {
	switch {
	case !w.relaxed():
		w.open("$date")
		w.buf = strconv.AppendInt(w.buf, ms, 10)
		w.close()
	case ms < 0 || ms > lastMillisOf9999:
		w.open("$date")
		w.open("$numberLong")
		w.buf = append(w.buf, '"')
		w.buf = strconv.AppendInt(w.buf, ms, 10)
		w.buf = append(w.buf, '"')
		w.close()
		w.close()
	default:
		w.open("$date")
		w.buf = append(w.buf, '"')
		w.buf = appendISODate(w.buf, ms)
		w.buf = append(w.buf, '"')
		w.close()
	}
}

// appendISODate writes Java's ISO_OFFSET_DATE_TIME of a UTC instant:
// seconds always, the fraction only when non-zero and without trailing
// zeros, and "Z".
func appendISODate(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if frac := ms % 1000; frac != 0 {
		s := strings.TrimRight(fmt.Sprintf("%03d", frac), "0")
		b = append(b, '.')
		b = append(b, s...)
	}
	return append(b, 'Z')
}

func (w *jsonWriter) b64(data []byte) {
	w.buf = append(w.buf, '"')
	w.buf = base64.StdEncoding.AppendEncode(w.buf, data)
	w.buf = append(w.buf, '"')
}

// str writes a JSON string as the Java driver's writer escapes it.
func (w *jsonWriter) str(s string) {
	w.buf = append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			// Printable ASCII: every one of these is a letter, digit,
			// punctuation, symbol or the space.
			i++
			continue
		}
		w.buf = append(w.buf, s[start:i]...)
		switch c {
		case '"':
			w.buf = append(w.buf, '\\', '"')
			i++
		case '\\':
			w.buf = append(w.buf, '\\', '\\')
			i++
		case '\b':
			w.buf = append(w.buf, '\\', 'b')
			i++
		case '\f':
			w.buf = append(w.buf, '\\', 'f')
			i++
		case '\n':
			w.buf = append(w.buf, '\\', 'n')
			i++
		case '\r':
			w.buf = append(w.buf, '\\', 'r')
			i++
		case '\t':
			w.buf = append(w.buf, '\\', 't')
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			// Java decodes invalid UTF-8 to U+FFFD, an OTHER_SYMBOL it
			// writes as is.
			switch {
			case r > 0xFFFF:
				r1, r2 := utf16.EncodeRune(r)
				w.buf = appendU(w.buf, r1)
				w.buf = appendU(w.buf, r2)
			case javaLiteral(r):
				w.buf = utf8.AppendRune(w.buf, r)
			default:
				w.buf = appendU(w.buf, r)
			}
			i += size
		}
		start = i
	}
	w.buf = append(w.buf, s[start:]...)
	w.buf = append(w.buf, '"')
}

// javaLiteral reports whether Java's JSON writer writes the BMP character r
// as is: letters other than modifier letters, numbers, punctuation, symbols
// and space separators (Character.getType).
func javaLiteral(r rune) bool {
	if r >= 0xD800 && r <= 0xDFFF {
		return false
	}
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lo,
		unicode.Nd, unicode.Nl, unicode.No, unicode.Zs,
		unicode.Pc, unicode.Pd, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf, unicode.Po,
		unicode.Sm, unicode.Sc, unicode.Sk, unicode.So)
}

func appendU(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// javaDouble formats f as Java's Double.toString: plain decimal notation
// with at least one fractional digit for magnitudes in [1e-3, 1e7),
// computerized scientific notation ("1.0E10", "1.5E-4") otherwise; the
// shortest digits that round-trip.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	case f == math.SmallestNonzeroFloat64:
		return "4.9E-324" // Java's two digits for Double.MIN_VALUE
	case f == -math.SmallestNonzeroFloat64:
		return "-4.9E-324"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// exclusions are the field paths to leave out at one level of a document:
// each path is the remaining names below this level.
type exclusions [][]string

// enter returns the exclusions that apply below field key, and whether key
// itself is excluded.
func (e exclusions) enter(key string) (exclusions, bool) {
	if len(e) == 0 {
		return nil, false
	}
	var sub exclusions
	for _, p := range e {
		if p[0] != key {
			continue
		}
		if len(p) == 1 {
			return nil, true
		}
		sub = append(sub, p[1:])
	}
	return sub, false
}

// dotted reports whether an update's removed field or truncated array
// (a dotted name such as "a.b" or "arr.3.c") is left out: Debezium's field
// selector drops a name that, without its array indexes, is an excluded
// path or a parent of one ("a" when "a.b" is excluded; not "a.b.c").
func (e exclusions) dotted(field string) bool {
	nodes := withoutIndexes(strings.Split(field, "."))
	for _, p := range e {
		if len(nodes) <= len(p) && slices.Equal(p[:len(nodes)], nodes) {
			return true
		}
	}
	return false
}

// withoutIndexes drops the array indexes of a dotted path, unless two
// follow each other (an array of arrays), as Debezium's field selector does.
func withoutIndexes(nodes []string) []string {
	if len(nodes) < 2 {
		return nodes
	}
	out := make([]string, 0, len(nodes))
	prev := false
	for _, n := range nodes {
		if isNumeric(n) {
			if prev {
				return nodes
			}
			prev = true
			continue
		}
		prev = false
		out = append(out, n)
	}
	return out
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// dottedDocument writes an update's updatedFields, whose names are dotted
// paths, as Debezium's field selector filters them. Each excluded path is
// applied in turn: a field named exactly as the path is removed (and
// nothing else for that path); otherwise, in field order, fields below the
// path are removed, and the first field above it has the rest of the path
// removed from its value (and the search for that path stops there).
func (w *jsonWriter) dottedDocument(doc []byte, excl exclusions) error {
	if len(excl) == 0 {
		return w.document(doc, nil)
	}
	elems, err := bsoncore.Document(doc).Elements()
	if err != nil {
		return fmt.Errorf("malformed BSON document: %w", err)
	}
	type field struct {
		key     string
		nodes   []string
		removed bool
		sub     exclusions
	}
	fields := make([]field, len(elems))
	for i, el := range elems {
		fields[i] = field{key: el.Key(), nodes: withoutIndexes(strings.Split(el.Key(), "."))}
	}
	for _, p := range excl {
		joined := strings.Join(p, ".")
		exact := false
		for i := range fields {
			if !fields[i].removed && fields[i].key == joined {
				fields[i].removed, exact = true, true
				break
			}
		}
		if exact {
			continue
		}
		for i := range fields {
			f := &fields[i]
			if f.removed {
				continue
			}
			switch {
			case len(f.nodes) > len(p):
				if slices.Equal(f.nodes[:len(p)], p) {
					f.removed = true
				}
			case len(f.nodes) < len(p):
				if slices.Equal(p[:len(f.nodes)], f.nodes) {
					f.sub = append(f.sub, p[len(f.nodes):])
					goto next
				}
			default:
				if slices.Equal(f.nodes, p) {
					f.removed = true
				}
			}
		}
	next:
	}
	w.buf = append(w.buf, '{')
	first := true
	for i, el := range elems {
		if fields[i].removed {
			continue
		}
		if !first {
			w.sep()
		}
		first = false
		w.name(fields[i].key)
		v := el.Value()
		sub := fields[i].sub
		if v.Type != bsoncore.TypeEmbeddedDocument && v.Type != bsoncore.TypeArray {
			sub = nil
		}
		if err := w.value(v, sub); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, '}')
	return nil
}

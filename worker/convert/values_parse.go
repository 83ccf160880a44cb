package convert

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file is the parser of Kafka's Values
// (org.apache.kafka.connect.data.Values.parseString): tokens, scalars,
// arrays and maps, and the schema they infer.

// ParseString infers a schema and value from a string as Kafka's
// Values.parseString does (see SimpleHeaderConverter). "null" gives a nil
// schema and value; input nested too deeply for Kafka gives BYTES, as
// SimpleHeaderConverter does.
func ParseString(str string) (*schema.Schema, any) {
	s, v, err := parseValues(str)
	if err != nil {
		return schema.Bytes, []byte(str)
	}
	if untypedCollection(s) {
		return schema.String, str
	}
	return s, v
}

// maxValuesDepth bounds the nesting of the arrays and maps ParseString
// reads. Kafka's recursive parser is bounded by the thread's stack alone:
// deeper input ends in a StackOverflowError, which SimpleHeaderConverter
// turns into a BYTES header (between 1,000 and 2,000 levels with Java's
// default 1 MiB stack). Tributary does the same past 1,000 levels.
const maxValuesDepth = 1000

// Kafka's ISO-8601 formats, as their lengths in UTF-16 units.
const (
	isoDateLen      = len("yyyy-MM-dd")
	isoTimeLen      = len("HH:mm:ss.SSSZ")
	isoTimestampLen = len("yyyy-MM-ddTHH:mm:ss.SSSZ")
)

// valuesError is Kafka's DataException inside Values' parser: the parse of
// an array or map fails and the text is read again as a plain token.
type valuesError string

func (e valuesError) Error() string { return "convert: " + string(e) }

// valuesTooDeep stands for Kafka's StackOverflowError: it is not caught by
// the parser and ends the parse.
type valuesTooDeep struct{}

func (valuesTooDeep) Error() string {
	return fmt.Sprintf("convert: header value nested deeper than %d", maxValuesDepth)
}

// parseValues is Values.parseString followed by the conversion of Java's
// values into Tributary's data model. A value Tributary cannot hold (a
// decimal without a Decimal schema or whose scale its array's or map's
// Decimal schema cannot take exactly, a map keyed by arrays or maps, or by
// both -0.0 and 0.0) is kept as the STRING it was, as Kafka does with text
// it cannot parse.
func parseValues(str string) (*schema.Schema, any, error) {
	if str == "" {
		return schema.String, str, nil
	}
	p := valuesParser{tok: valuesTokens{src: str}}
	sv, err := p.parse(false, 0)
	if err != nil {
		if _, ok := err.(valuesError); !ok {
			return nil, nil, err
		}
		return schema.String, str, nil // not reached: Kafka catches these below the top
	}
	if sv == nil {
		return nil, nil, nil
	}
	v, err := javaToGo(sv.s, sv.v, 0)
	if err != nil {
		return schema.String, str, nil
	}
	return sv.s, v, nil
}

// schemaAndValue is Kafka's SchemaAndValue while parsing: v holds Java's
// values (see javaToGo); a nil *schemaAndValue is Java's null.
type schemaAndValue struct {
	s *schema.Schema
	v any
}

// Java's values while parsing, before javaToGo turns them into Tributary's.
type (
	// jdecimal is a java.math.BigDecimal: unscaled × 10^-scale.
	jdecimal struct {
		unscaled *big.Int
		scale    int32
	}
	// jdate is a java.util.Date: milliseconds since the epoch.
	jdate int64
	// jmap is a java.util.LinkedHashMap: keys compare as Java's equals
	// does (index holds javaKey of each key).
	jmap struct {
		keys, vals []any
		index      map[string]int
	}
)

func (m *jmap) put(k, v any) {
	key := string(javaKey(nil, k))
	if i, ok := m.index[key]; ok {
		m.vals[i] = v
		return
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[key] = len(m.keys)
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
}

// javaKey appends an encoding of v that is equal for two values exactly
// when Java's equals says they are.
func javaKey(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		return strconv.AppendBool(append(b, 'z'), x)
	case int8:
		return strconv.AppendInt(append(b, 'b'), int64(x), 10)
	case int16:
		return strconv.AppendInt(append(b, 's'), int64(x), 10)
	case int32:
		return strconv.AppendInt(append(b, 'i'), int64(x), 10)
	case int64:
		return strconv.AppendInt(append(b, 'l'), x, 10)
	case float32:
		return strconv.AppendUint(append(b, 'f'), uint64(math.Float32bits(x)), 16)
	case float64:
		return strconv.AppendUint(append(b, 'd'), math.Float64bits(x), 16)
	case string:
		b = strconv.AppendInt(append(b, 'S'), int64(len(x)), 10)
		return append(append(b, ':'), x...)
	case *jdecimal:
		b = x.unscaled.Append(append(b, 'D'), 10)
		return strconv.AppendInt(append(b, '/'), int64(x.scale), 10)
	case jdate:
		return strconv.AppendInt(append(b, 'T'), int64(x), 10)
	case []any:
		b = strconv.AppendInt(append(b, 'L'), int64(len(x)), 10)
		b = append(b, '[')
		for _, e := range x {
			b = append(javaKey(b, e), ',')
		}
		return append(b, ']')
	case *jmap:
		// Map.equals compares entry sets: order the entries.
		entries := make([]string, len(x.keys))
		for i := range x.keys {
			e := javaKey(nil, x.keys[i])
			entries[i] = string(javaKey(append(e, '='), x.vals[i]))
		}
		sort.Strings(entries)
		b = strconv.AppendInt(append(b, 'M'), int64(len(entries)), 10)
		b = append(b, '{')
		for _, e := range entries {
			b = strconv.AppendInt(b, int64(len(e)), 10)
			b = append(append(b, ':'), e...)
		}
		return append(b, '}')
	}
	return fmt.Appendf(b, "?%T", v)
}

// valuesTokens is Values.Parser: it splits the text at the delimiters
// : , { } [ ] and " unless escaped by a backslash, and keeps each token's
// whitespace and backslashes.
type valuesTokens struct {
	src     string
	pos     int
	pending string // Parser.nextToken, when hasPend
	hasPend bool
}

func (t *valuesTokens) mark() int {
	if t.hasPend {
		return t.pos - len(t.pending)
	}
	return t.pos
}

func (t *valuesTokens) rewindTo(pos int) {
	t.pos = pos
	t.hasPend = false
}

func (t *valuesTokens) hasNext() bool { return t.hasPend || t.pos < len(t.src) }

func (t *valuesTokens) next() string {
	if t.hasPend {
		t.hasPend = false
		return t.pending
	}
	return t.consume()
}

// nextN is Parser.next(int): the text of the next n tokens, or false (and
// no tokens consumed) when there are fewer.
func (t *valuesTokens) nextN(n int) (string, bool) {
	start := t.mark()
	for range n {
		if !t.hasNext() {
			t.rewindTo(start)
			return "", false
		}
		t.next()
	}
	return t.src[start:t.pos], true
}

func (t *valuesTokens) consume() string {
	escaped := false
	start := t.pos
	for ; t.pos < len(t.src); t.pos++ {
		switch t.src[t.pos] {
		case '\\':
			escaped = !escaped
		case ':', ',', '{', '}', '[', ']', '"':
			if !escaped {
				if start < t.pos {
					return t.src[start:t.pos]
				}
				t.pos++
				return t.src[start:t.pos]
			}
			escaped = false
		default:
			escaped = false
		}
	}
	return t.src[start:t.pos]
}

// canConsume reports whether the next non-blank token, trimmed, is want,
// and consumes it if so. Like Kafka's, it drops the blank tokens it skips.
func (t *valuesTokens) canConsume(want string) bool {
	if !t.hasPend {
		if t.pos >= len(t.src) {
			return false
		}
		t.pending, t.hasPend = t.consume(), true
	}
	for javaBlank(t.pending) && t.pos < len(t.src) {
		t.pending = t.consume()
	}
	if javaTrim(t.pending) == want {
		t.hasPend = false
		return true
	}
	return false
}

// javaTrim is Java's String.trim: it removes the characters up to U+0020
// from both ends.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func javaBlank(s string) bool { return javaTrim(s) == "" }

// valuesParser is Values.ValueParser.
type valuesParser struct {
	tok valuesTokens
}

func (p *valuesParser) literal(embedded bool, lit string) bool {
	start := p.tok.mark()
	if p.tok.canConsume(lit) && (embedded || !p.tok.hasNext()) {
		return true
	}
	p.tok.rewindTo(start)
	return false
}

// parse is ValueParser.parse, within depth arrays and maps.
func (p *valuesParser) parse(embedded bool, depth int) (*schemaAndValue, error) {
	switch {
	case !p.tok.hasNext():
		return nil, nil
	case embedded && p.tok.canConsume(`"`):
		return p.quoted(), nil
	case p.literal(embedded, "null"):
		return nil, nil
	case p.literal(embedded, "true"):
		return &schemaAndValue{schema.Boolean, true}, nil
	case p.literal(embedded, "false"):
		return &schemaAndValue{schema.Boolean, false}, nil
	}
	start := p.tok.mark()
	var sv *schemaAndValue
	var err error
	if p.tok.canConsume("[") {
		if depth == maxValuesDepth {
			return nil, valuesTooDeep{}
		}
		sv, err = p.array(depth + 1)
	} else if p.tok.canConsume("{") {
		if depth == maxValuesDepth {
			return nil, valuesTooDeep{}
		}
		sv, err = p.object(depth + 1)
	} else {
		return p.token(embedded)
	}
	if _, isData := err.(valuesError); !isData {
		return sv, err
	}
	p.tok.rewindTo(start)
	return p.token(embedded)
}

// token reads the next token as a scalar.
func (p *valuesParser) token(embedded bool) (*schemaAndValue, error) {
	token := p.tok.next()
	if javaBlank(token) {
		return &schemaAndValue{schema.String, token}, nil
	}
	token = javaTrim(token)
	first, _ := utf8.DecodeRuneInString(token)
	digit := javaDigit(first) >= 0
	if digit {
		if sv := p.temporalTokens(token); sv != nil {
			return sv, nil
		}
	}
	if digit || first == '+' || first == '-' {
		if sv := parseValuesNumber(token); sv != nil {
			return sv, nil
		}
	}
	if embedded {
		return nil, valuesError("failed to parse embedded value")
	}
	return &schemaAndValue{schema.String, p.tok.src}, nil
}

func (p *valuesParser) quoted() *schemaAndValue {
	var sb strings.Builder
	for p.tok.hasNext() {
		if p.tok.canConsume(`"`) {
			break
		}
		sb.WriteString(p.tok.next())
	}
	content := sb.String()
	if sv := parseTemporal(content); sv != nil {
		return sv
	}
	return &schemaAndValue{schema.String, content}
}

// temporalTokens tries token with the next four tokens (a time or a
// timestamp, split at its colons), then token alone.
func (p *valuesParser) temporalTokens(token string) *schemaAndValue {
	pos := p.tok.mark()
	if rest, ok := p.tok.nextN(4); ok {
		if sv := parseTemporal(token + rest); sv != nil {
			return sv
		}
	}
	p.tok.rewindTo(pos)
	return parseTemporal(token)
}

func (p *valuesParser) array(depth int) (*schemaAndValue, error) {
	result := []any{}
	var elem schemaMerger
	for p.tok.hasNext() {
		if p.tok.canConsume("]") {
			if elem.common == nil {
				// Every element is null, or their schemas have nothing in
				// common: Kafka's SchemaBuilder.arrayOfNull().
				return &schemaAndValue{&schema.Schema{Type: schema.TypeArray}, result}, nil
			}
			s := schema.ArrayOf(elem.common)
			for i, e := range result {
				c, err := convertJava(s.ValueSchema, e)
				if err != nil {
					return nil, err
				}
				result[i] = c
			}
			return &schemaAndValue{s, result}, nil
		}
		if p.tok.canConsume(",") {
			return nil, valuesError("unable to parse an empty array element")
		}
		e, err := p.parse(true, depth)
		if err != nil {
			return nil, err
		}
		elem.merge(e)
		if e != nil {
			result = append(result, e.v)
		} else {
			result = append(result, nil)
		}
		pos := p.tok.mark()
		if p.tok.canConsume("]") {
			p.tok.rewindTo(pos)
		} else if !p.tok.canConsume(",") {
			return nil, valuesError("array elements missing ',' delimiter")
		}
	}
	return nil, valuesError("array is missing terminating ']'")
}

func (p *valuesParser) object(depth int) (*schemaAndValue, error) {
	result := &jmap{}
	var keys, vals schemaMerger
	for p.tok.hasNext() {
		if p.tok.canConsume("}") {
			return finishMap(result, keys.common, vals.common)
		}
		if p.tok.canConsume(",") {
			return nil, valuesError("unable to parse a map entry with no key or value")
		}
		k, err := p.parse(true, depth)
		if err != nil {
			return nil, err
		}
		if k == nil || k.v == nil {
			return nil, valuesError("map entry may not have a null key")
		}
		if !p.tok.canConsume(":") {
			return nil, valuesError("map entry is missing ':'")
		}
		v, err := p.parse(true, depth)
		if err != nil {
			return nil, err
		}
		var val any
		if v != nil {
			val = v.v
		}
		result.put(k.v, val)
		p.tok.canConsume(",")
		keys.merge(k)
		vals.merge(v)
	}
	return nil, valuesError("map is missing terminating '}'")
}

// finishMap gives a parsed map its schema, converting its keys (and values)
// to the common schema when there is one, as Kafka's parseMap does.
func finishMap(m *jmap, key, val *schema.Schema) (*schemaAndValue, error) {
	if key == nil {
		// Kafka's SchemaBuilder.mapOfNull().
		return &schemaAndValue{&schema.Schema{Type: schema.TypeMap}, m}, nil
	}
	s := &schema.Schema{Type: schema.TypeMap, KeySchema: key, ValueSchema: val}
	out := &jmap{}
	for i, k := range m.keys {
		ck, err := convertJava(key, k)
		if err != nil {
			return nil, err
		}
		v := m.vals[i]
		if val != nil {
			if v, err = convertJava(val, v); err != nil {
				return nil, err
			}
		}
		out.put(ck, v)
	}
	return &schemaAndValue{s, out}, nil
}

// schemaMerger is Values.SchemaMerger: the schema common to the values seen
// so far, if any.
type schemaMerger struct {
	common       *schema.Schema
	incompatible bool
}

func (m *schemaMerger) merge(sv *schemaAndValue) {
	if sv == nil || sv.s == nil || m.incompatible {
		return
	}
	if m.common == nil {
		m.common = sv.s
		return
	}
	m.common = mergeSchemas(m.common, sv.s)
	m.incompatible = m.common == nil
}

// mergeSchemas is Values.mergeSchemas: numbers widen to the wider type,
// other types only merge with their own type (the later schema winning,
// whatever the element, key or value schemas or logical names).
func mergeSchemas(prev, next *schema.Schema) *schema.Schema {
	if prev.Type != next.Type {
		rank := func(t schema.Type) int {
			switch t {
			case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64,
				schema.TypeFloat32, schema.TypeFloat64:
				return int(t)
			}
			return 0
		}
		p, n := rank(prev.Type), rank(next.Type)
		switch {
		case p == 0 || n == 0:
			return nil
		case n > p:
			return next
		}
		return prev
	}
	if prev.Optional == next.Optional {
		if prev.Optional {
			return prev
		}
		return next
	}
	if !schema.Equal(prev, next) {
		return nil
	}
	return prev
}

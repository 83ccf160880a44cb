package convert

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// StringConverter is Kafka's org.apache.kafka.connect.storage.StringConverter
// (UTF-8): values are written as their string form and read as optional
// strings.
type StringConverter struct{}

// FromConnect implements Converter.
func (StringConverter) FromConnect(_ string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if str, ok := v.(string); ok {
		return []byte(str), nil
	}
	str, err := javaString(s, v)
	if err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// AppendFromConnect implements Appender.
func (StringConverter) AppendFromConnect(dst []byte, _ string, s *schema.Schema, v any) ([]byte, bool, error) {
	if v == nil {
		return dst, true, nil
	}
	if str, ok := v.(string); ok {
		return append(dst, str...), false, nil
	}
	str, err := javaString(s, v)
	if err != nil {
		return nil, false, err
	}
	return append(dst, str...), false, nil
}

// ToConnect implements Converter.
func (StringConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return schema.OptionalString, nil, nil
	}
	return schema.OptionalString, string(b), nil
}

// ToConnectAliased implements Aliaser.
func (StringConverter) ToConnectAliased(_ string, b []byte) (*schema.Schema, any, error) {
	if len(b) == 0 {
		return StringConverter{}.ToConnect("", b)
	}
	return schema.OptionalString, unsafe.String(&b[0], len(b)), nil
}

// FromConnectHeader implements HeaderConverter.
func (c StringConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c StringConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// ByteArrayConverter is Kafka's
// org.apache.kafka.connect.converters.ByteArrayConverter: BYTES pass through.
type ByteArrayConverter struct{}

// FromConnect implements Converter.
func (ByteArrayConverter) FromConnect(_ string, s *schema.Schema, v any) ([]byte, error) {
	if s != nil && s.Type != schema.TypeBytes {
		return nil, fmt.Errorf("convert: invalid schema type for ByteArrayConverter: %v", s.Type)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("convert: ByteArrayConverter is not compatible with objects of type %T", v)
}

// ToConnect implements Converter.
func (ByteArrayConverter) ToConnect(_ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return schema.OptionalBytes, nil, nil
	}
	return schema.OptionalBytes, b, nil
}

// FromConnectHeader implements HeaderConverter.
func (c ByteArrayConverter) FromConnectHeader(topic, _ string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnect(topic, s, v)
}

// ToConnectHeader implements HeaderConverter.
func (c ByteArrayConverter) ToConnectHeader(topic, _ string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnect(topic, b)
}

// SimpleHeaderConverter is Kafka's default header converter,
// org.apache.kafka.connect.storage.SimpleHeaderConverter. It writes values
// as Kafka's Values.convertToString does (see FromConnectHeader) and reads
// them back with ParseString, a port of Values.parseString that infers the
// schema: booleans, the smallest integer type that holds a number, FLOAT32
// (FLOAT64 past FLOAT32's range) for other numbers, Decimal past INT64 and
// FLOAT64, the Date, Time and Timestamp logical types for Kafka's ISO-8601
// forms (2023-11-14, 22:13:20.123Z, 2023-11-14T22:13:20.123Z, all UTC), and
// arrays ([1,2]) and maps ({"a":1}) of those; anything else stays the
// STRING it was.
//
// The port keeps Kafka's rules and quirks, checked against golden files
// generated with Kafka Connect 4.4 (testdata/gen/HeaderGen.java): for
// example "1.0" is INT8 1, "0.1" FLOAT32, "12:30" and "1,2" the INT8 12 and
// 1 (parsing stops at the first delimiter), "[1,2]xyz" the array [1,2],
// "[1,null]" and "{a:1}" strings, " [x" the string " ", [1,"a"] an array
// whose element schema is nil, and dates before 1970 are written back as
// times of day.
// Header values that are not valid UTF-8 are decoded as Java decodes them
// (each malformed sequence becomes U+FFFD).
type SimpleHeaderConverter struct{}

// FromConnectHeader implements HeaderConverter, writing v as Kafka's
// Values.convertToString: numbers as Java prints them, bytes in base64,
// java.util.Date values (Date, Time and Timestamp alike) as a time of day
// before 1970-01-02, as a date at midnight and as a timestamp otherwise,
// arrays as [a,b], maps and structs as {k:v,...} with strings quoted and
// their backslashes and double quotes escaped. Go maps have no order: their
// entries are written sorted by the written key.
func (SimpleHeaderConverter) FromConnectHeader(_, _ string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return appendValuesString([]byte{}, s, v, false, 0)
}

// ToConnectHeader implements HeaderConverter. Like Kafka, it returns a
// BYTES header holding the raw value when the value cannot be read (here:
// arrays or maps nested deeper than Kafka's stack allows), and a nil schema
// and value for the string "null".
func (SimpleHeaderConverter) ToConnectHeader(_, _ string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	str := javaUTF8(b)
	s, v, err := parseValues(str)
	if err != nil {
		return schema.Bytes, b, nil
	}
	if untypedCollection(s) {
		return schema.String, str, nil
	}
	return s, v, nil
}

// untypedCollection reports whether s holds an array without an element
// schema or a map without a key or value schema. Kafka's Values gives them
// to "[]", "{}", "[null]" or "[1,\"a\"]", but Tributary's data model (the
// plugin encoding, schema checks) requires those schemas, so such a header
// stays the STRING it was.
func untypedCollection(s *schema.Schema) bool {
	if s == nil {
		return false
	}
	switch s.Type {
	case schema.TypeArray:
		return s.ValueSchema == nil || untypedCollection(s.ValueSchema)
	case schema.TypeMap:
		return s.KeySchema == nil || s.ValueSchema == nil || untypedCollection(s.KeySchema) || untypedCollection(s.ValueSchema)
	}
	return false
}

// FromConnect implements Converter, so that SimpleHeaderConverter can also
// be a key or value converter, as in Kafka.
func (c SimpleHeaderConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	return c.FromConnectHeader(topic, "", s, v)
}

// ToConnect implements Converter.
func (c SimpleHeaderConverter) ToConnect(topic string, b []byte) (*schema.Schema, any, error) {
	return c.ToConnectHeader(topic, "", b)
}

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

// convertJava is Values.convertTo(toSchema, null, value) on Java's values,
// as parseArray and parseMap use it to give elements their common schema.
func convertJava(to *schema.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, valuesError("unable to convert a null value to a schema that requires a value")
	}
	switch to.Type {
	case schema.TypeBytes:
		if d, ok := v.(*jdecimal); ok && to.Name == schema.DecimalName {
			return d, nil
		}
	case schema.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		n, err := javaLong(v)
		return n != 0, err
	case schema.TypeInt8:
		if _, ok := v.(int8); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int8(n), err
	case schema.TypeInt16:
		if _, ok := v.(int16); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int16(n), err
	case schema.TypeInt32:
		switch to.Name {
		case schema.DateName:
			if d, ok := v.(jdate); ok {
				return d, nil
			}
			n, err := javaLong(v)
			return jdate(int64(int32(n)) * msPerDay), err
		case schema.TimeName:
			if d, ok := v.(jdate); ok {
				return d, nil
			}
			n, err := javaLong(v)
			if err != nil {
				return nil, err
			}
			if ms := int32(n); ms >= 0 && ms <= msPerDay {
				return jdate(ms), nil
			}
			return nil, valuesError("time values must be between 0 and 86400000 milliseconds")
		}
		if _, ok := v.(int32); ok {
			return v, nil
		}
		n, err := javaLong(v)
		return int32(n), err
	case schema.TypeInt64:
		if d, ok := v.(jdate); ok && to.Name == schema.TimestampName {
			return d, nil
		}
		if _, ok := v.(int64); ok && to.Name != schema.TimestampName {
			return v, nil
		}
		n, err := javaLong(v)
		if to.Name == schema.TimestampName {
			return jdate(n), err
		}
		return n, err
	case schema.TypeFloat32:
		if _, ok := v.(float32); ok {
			return v, nil
		}
		f, err := javaDouble(v)
		return float32(f), err
	case schema.TypeFloat64:
		if _, ok := v.(float64); ok {
			return v, nil
		}
		return javaDouble(v)
	case schema.TypeArray:
		if a, ok := v.([]any); ok {
			return a, nil
		}
	case schema.TypeMap:
		if m, ok := v.(*jmap); ok {
			return m, nil
		}
	}
	return nil, valuesError(fmt.Sprintf("unable to convert %T to %v", v, to.Type))
}

// javaLong is Values.asLong without a schema: Number.longValue().
func javaLong(v any) (int64, error) {
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float32:
		return javaF2L(float64(x)), nil
	case float64:
		return javaF2L(x), nil
	case *jdecimal:
		n := x.integer()
		return int64(new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64)).Uint64()), nil
	}
	return 0, valuesError(fmt.Sprintf("unable to convert %T to a number", v))
}

// javaDouble is Values.asDouble without a schema: Number.doubleValue().
func javaDouble(v any) (float64, error) {
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case *jdecimal:
		return x.float(64), nil
	}
	n, err := javaLong(v)
	return float64(n), err
}

// javaF2L is Java's (long) cast of a double: truncating, saturating, NaN 0.
func javaF2L(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaF2I is Java's (int) cast of a double: javaF2L saturated to int32.
func javaF2I(f float64) int32 {
	return int32(min(max(javaF2L(f), math.MinInt32), math.MaxInt32))
}

// integer is BigDecimal.toBigInteger (the value truncated toward zero), or
// 0 where longValue would keep none of its bits anyway.
func (d *jdecimal) integer() *big.Int {
	switch {
	case d.scale == 0:
		return new(big.Int).Set(d.unscaled)
	case d.scale <= -64:
		// 10^-scale = 2^-scale × 5^-scale: the low 64 bits, all
		// longValue keeps, are zero.
		return new(big.Int)
	case d.scale < 0:
		return new(big.Int).Mul(d.unscaled, pow10(int64(-d.scale)))
	}
	if int64(d.scale) > int64(len(d.unscaled.String())) {
		return new(big.Int)
	}
	return new(big.Int).Quo(d.unscaled, pow10(int64(d.scale)))
}

// maxDecimalRescale bounds the powers of ten Tributary multiplies by when
// it rescales a decimal, against inputs like 1e2000000000.
const maxDecimalRescale = 100000

func pow10(n int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
}

// float is BigDecimal.floatValue (bits 32) or doubleValue (bits 64):
// correctly rounded.
func (d *jdecimal) float(bits int) float64 {
	if d.unscaled.Sign() == 0 {
		return 0
	}
	digits := new(big.Int).Abs(d.unscaled).String()
	sign := ""
	if d.unscaled.Sign() < 0 {
		sign = "-"
	}
	// The value is 0.digits × 10^exp.
	exp := int64(len(digits)) - int64(d.scale)
	switch {
	case exp > 400:
		return math.Inf(d.unscaled.Sign())
	case exp < -400:
		return math.Copysign(0, float64(d.unscaled.Sign()))
	}
	if len(digits) > 800 {
		// 800 digits and a sticky nonzero digit round as all of them do.
		sticky := strings.Trim(digits[800:], "0") != ""
		digits = digits[:800]
		if sticky {
			digits += "1"
		}
	}
	f, _ := strconv.ParseFloat(sign+"0."+digits+"e"+strconv.FormatInt(exp, 10), bits)
	return f
}

// cmpPow10 compares |d| with 10^p.
func (d *jdecimal) cmpPow10(p int) int {
	if d.unscaled.Sign() == 0 {
		return -1
	}
	digits := new(big.Int).Abs(d.unscaled).String()
	k := int64(p) + int64(d.scale) // compare |unscaled| with 10^k
	n := int64(len(digits))
	switch {
	case k < 0 || k < n-1:
		return 1
	case k >= n:
		return -1
	}
	if digits[0] == '1' && strings.Trim(digits[1:], "0") == "" {
		return 0
	}
	return 1
}

// javaDigit is Java's Character.digit(c, 10) for a char: the value of a
// Unicode decimal digit of the Basic Multilingual Plane, or -1.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// parseBigDecimal is new BigDecimal(String).
func parseBigDecimal(s string) (*jdecimal, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	digits := make([]byte, 0, len(s))
	var scale, exp int64
	dot := false
loop:
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if d := javaDigit(r); d >= 0 {
			digits = append(digits, byte('0'+d))
			if dot {
				scale++
			}
			i += size
			continue
		}
		switch r {
		case '.':
			if dot {
				return nil, false
			}
			dot = true
			i++
		case 'e', 'E':
			e, ok := parseBigDecimalExp(s[i+1:])
			if !ok || int64(int32(e)) != e {
				return nil, false
			}
			exp = e
			break loop
		default:
			return nil, false
		}
	}
	if len(digits) == 0 {
		return nil, false
	}
	scale -= exp
	if scale != int64(int32(scale)) {
		return nil, false
	}
	u, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		u.Neg(u)
	}
	return &jdecimal{u, int32(scale)}, true
}

// parseBigDecimalExp is BigDecimal's parseExp, given what follows the 'e'.
func parseBigDecimalExp(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	r := []rune(s)
	for len(r) > 10 && javaDigit(r[0]) == 0 {
		r = r[1:]
	}
	if len(r) == 0 || len(r) > 10 {
		return 0, false
	}
	var e int64
	for _, c := range r {
		d := javaDigit(c)
		if d < 0 {
			return 0, false
		}
		e = e*10 + int64(d)
	}
	if neg {
		e = -e
	}
	return e, true
}

// parseValuesNumber is ValueParser.parseAsNumber: nil when token is not a
// number.
func parseValuesNumber(token string) *schemaAndValue {
	if n, ok := smallInt(token); ok {
		return intValue(n)
	}
	d, ok := parseBigDecimal(token)
	if !ok {
		return nil
	}
	// parseAsExactDecimal: whole numbers from 1 to 1e19 in magnitude (or
	// zero) that fit in a long.
	if d.unscaled.Sign() == 0 {
		return intValue(0)
	}
	if d.cmpPow10(19) <= 0 && d.cmpPow10(0) >= 0 {
		var n *big.Int
		if d.scale <= 0 {
			n = new(big.Int).Mul(d.unscaled, pow10(int64(-d.scale)))
		} else if q, r := new(big.Int).QuoRem(d.unscaled, pow10(int64(d.scale)), new(big.Int)); r.Sign() == 0 {
			n = q
		}
		if n != nil && n.IsInt64() {
			return intValue(n.Int64())
		}
	}
	if d.scale != 0 {
		if f := d.float(32); !math.IsInf(f, 0) {
			return &schemaAndValue{schema.Float32, float32(f)}
		}
		if f := d.float(64); !math.IsInf(f, 0) {
			return &schemaAndValue{schema.Float64, f}
		}
	}
	return &schemaAndValue{schema.Decimal(d.scale), d}
}

// smallInt parses an optional sign and up to 18 ASCII digits.
func smallInt(s string) (int64, bool) {
	digits := s
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	if digits == "" || len(digits) > 18 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func intValue(n int64) *schemaAndValue {
	switch {
	case n == int64(int8(n)):
		return &schemaAndValue{schema.Int8, int8(n)}
	case n == int64(int16(n)):
		return &schemaAndValue{schema.Int16, int16(n)}
	case n == int64(int32(n)):
		return &schemaAndValue{schema.Int32, int32(n)}
	}
	return &schemaAndValue{schema.Int64, n}
}

// parseTemporal is ValueParser.parseAsTemporal: a token of the length of
// one of Kafka's ISO-8601 formats, parsed as Java's lenient
// SimpleDateFormat does in UTC, or nil.
func parseTemporal(token string) *schemaAndValue {
	token = strings.ReplaceAll(token, `\:`, ":")
	n := 0
	for _, r := range token {
		n++
		if r > 0xFFFF {
			n++
		}
		if n > isoTimestampLen {
			return nil
		}
	}
	var s *schema.Schema
	var layout string
	switch n {
	case isoTimeLen:
		s, layout = schema.Time, "H:m:s.S'Z"
	case isoTimestampLen:
		s, layout = schema.Timestamp, "y-M-d'TH:m:s.S'Z"
	case isoDateLen:
		s, layout = schema.Date, "y-M-d"
	default:
		return nil
	}
	var buf [isoTimestampLen]uint16
	text := buf[:0]
	for _, r := range token {
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			text = append(text, uint16(r1), uint16(r2))
		} else {
			text = append(text, uint16(r))
		}
	}
	ms, ok := parseJavaDate(text, layout)
	if !ok {
		return nil
	}
	return &schemaAndValue{s, jdate(ms)}
}

// parseJavaDate is Java's lenient SimpleDateFormat.parse(text, pos) in UTC
// for a layout of numeric fields (y, M, d, H, m, s, S) and literal
// characters (each quoted letter prefixed with '). The text need not be
// consumed entirely.
func parseJavaDate(text []uint16, layout string) (int64, bool) {
	var year, month, day, hour, minute, second, milli int32
	year, day = 1970, 1
	dateSet := false
	pos := 0
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c == '\'' || !strings.ContainsRune("yMdHmsS", rune(c)) {
			if c == '\'' {
				i++
				c = layout[i]
			}
			if pos >= len(text) || text[pos] != uint16(c) {
				return 0, false
			}
			pos++
			continue
		}
		// SimpleDateFormat.subParse skips spaces and tabs first.
		for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
			pos++
		}
		if pos >= len(text) {
			return 0, false
		}
		v, next, ok := parseJavaInt(text, pos)
		if !ok {
			return 0, false
		}
		pos = next
		switch c {
		case 'y':
			year, dateSet = v, true
		case 'M':
			month = v - 1
		case 'd':
			day = v
		case 'H':
			hour = v
		case 'm':
			minute = v
		case 's':
			second = v
		case 'S':
			milli = v
		}
	}
	return gregorianMillis(year, month, day, dateSet, hour, minute, second, milli), true
}

// parseJavaInt is the integer DecimalFormat of SimpleDateFormat (US
// locale, grouping off) followed by Number.intValue(): an optional minus,
// digits of any script, an optional exponent (E, optional minus, digits);
// "NaN" reads as 0 and "∞" as Integer.MAX_VALUE.
func parseJavaInt(text []uint16, pos int) (int32, int, bool) {
	if hasUTF16Prefix(text[pos:], "NaN") {
		return 0, pos + 3, true
	}
	neg := text[pos] == '-'
	p := pos
	if neg {
		p++
	}
	if p < len(text) && text[p] == '∞' {
		if neg {
			return math.MinInt32, p + 1, true
		}
		return math.MaxInt32, p + 1, true
	}
	digits, counted, sawDigit, p := javaDigits(text, p)
	decimalAt := int32(counted)
	if p < len(text) && text[p] == 'E' {
		// The exponent: taken only if it has digits and fits in a long.
		q := p + 1
		eneg := q < len(text) && text[q] == '-'
		if eneg {
			q++
		}
		edigits, ecounted, esaw, end := javaDigits(text, q)
		if esaw || ecounted > 0 {
			if n, fits := digitListLong(edigits, ecounted, !eneg); fits {
				e := int32(n)
				if eneg {
					e = -e
				}
				decimalAt += e
				p = end
			}
		}
	}
	if !sawDigit && counted == 0 {
		return 0, 0, false
	}
	if n, fits := digitListLong(digits, int(decimalAt), !neg); fits {
		if neg && n != math.MinInt64 {
			n = -n
		}
		return int32(n), p, true
	}
	trimmed := strings.TrimRight(string(digits), "0")
	f, _ := strconv.ParseFloat("0."+trimmed+"e"+strconv.Itoa(int(decimalAt)), 64)
	if neg {
		f = -f
	}
	return javaF2I(f), p, true
}

// javaDigits reads DecimalFormat's digits from text[p:]: the significant
// digits (leading zeros dropped), how many there were, whether any digit
// was seen and where the digits end.
func javaDigits(text []uint16, p int) ([]byte, int, bool, int) {
	var digits []byte
	saw := false
	for ; p < len(text); p++ {
		d := javaDigit(rune(text[p]))
		if d < 0 {
			break
		}
		saw = true
		if d == 0 && len(digits) == 0 {
			continue
		}
		digits = append(digits, byte('0'+d))
	}
	return digits, len(digits), saw, p
}

// digitListLong is DigitList.fitsIntoLong and getLong for the digits
// 0.digits × 10^decimalAt: the magnitude as a long, or false. The one
// magnitude past Long.MAX_VALUE that fits, when negative, is returned as
// Long.MIN_VALUE.
func digitListLong(digits []byte, decimalAt int, positive bool) (int64, bool) {
	count := len(digits)
	for count > 0 && digits[count-1] == '0' {
		count--
	}
	if count == 0 {
		return 0, true
	}
	if decimalAt < count || decimalAt > 19 {
		return 0, false
	}
	s := string(digits[:count]) + strings.Repeat("0", decimalAt-count)
	if decimalAt == 19 && s >= "9223372036854775808" {
		if s == "9223372036854775808" && !positive {
			return math.MinInt64, true
		}
		return 0, false
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n, true
}

func hasUTF16Prefix(text []uint16, prefix string) bool {
	if len(text) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if text[i] != uint16(prefix[i]) {
			return false
		}
	}
	return true
}

// Fixed dates (days from 0001-01-01 Gregorian, which is day 1) that Java's
// GregorianCalendar uses.
const (
	epochFixedDate   = 719163 // 1970-01-01
	cutoverFixedDate = 577736 // 1582-10-15, the first Gregorian day
)

// gregorianMillis is Java's lenient GregorianCalendar.computeTime in UTC:
// out-of-range fields carry over, and dates before 1582-10-15 are Julian.
// Arithmetic wraps as Java's int and long do.
func gregorianMillis(year, month, day int32, daySet bool, hour, minute, second, milli int32) int64 {
	timeOfDay := int64(hour)
	timeOfDay = timeOfDay*60 + int64(minute)
	timeOfDay = timeOfDay*60 + int64(second)
	timeOfDay = timeOfDay*1000 + int64(milli)
	fixed := timeOfDay / msPerDay
	timeOfDay %= msPerDay
	for timeOfDay < 0 {
		timeOfDay += msPerDay
		fixed--
	}
	if year >= 1582 {
		if g := fixed + calendarFixedDate(false, year, month, day, daySet); g >= cutoverFixedDate {
			fixed = g
		} else {
			fixed += calendarFixedDate(true, year, month, day, daySet)
		}
	} else {
		fixed += calendarFixedDate(true, year, month, day, daySet)
	}
	return (fixed-epochFixedDate)*msPerDay + timeOfDay
}

// calendarFixedDate is GregorianCalendar.getFixedDate for a year, a
// zero-based month and a day of the month, on the Julian or Gregorian
// calendar.
func calendarFixedDate(julian bool, year, month, day int32, daySet bool) int64 {
	if month > 11 {
		year += month / 12
		month %= 12
	} else if month < 0 {
		year += int32(floorDiv(int64(month), 12))
		month = int32(floorMod(int64(month), 12))
	}
	m := int64(month) + 1
	var fixed int64
	if julian {
		y := int64(year)
		fixed = -2 + 365*(y-1) + 1 + floorDiv(y-1, 4) + floorDiv(367*m-362, 12)
		if m > 2 {
			if year%4 == 0 {
				fixed--
			} else {
				fixed -= 2
			}
		}
	} else {
		prev := int64(year) - 1
		fixed = 1 + 365*prev + floorDiv(prev, 4) - floorDiv(prev, 100) + floorDiv(prev, 400) + (367*m-362)/12
		if m > 2 {
			if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
				fixed--
			} else {
				fixed -= 2
			}
		}
	}
	if daySet {
		fixed += int64(day) - 1
	}
	return fixed
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// javaToGo turns the Java values of a parsed schema and value into
// Tributary's: Byte…Double into int8…float64, BigDecimal into the unscaled
// *big.Int of its Decimal schema, java.util.Date into a UTC time.Time,
// lists into []any and maps into map[string]any (string key schema) or
// map[any]any.
func javaToGo(s *schema.Schema, v any, depth int) (any, error) {
	if depth > maxValuesDepth {
		return nil, valuesTooDeep{}
	}
	var elem, key *schema.Schema
	if s != nil {
		elem, key = s.ValueSchema, s.KeySchema
	}
	switch x := v.(type) {
	case jdate:
		return time.UnixMilli(int64(x)).UTC(), nil
	case *jdecimal:
		if s == nil || s.Name != schema.DecimalName {
			return nil, errors.New("convert: decimal without a Decimal schema")
		}
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		return rescaleDecimal(x, scale)
	case []any:
		if s != nil && s.Type != schema.TypeArray {
			elem = nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := javaToGo(elem, e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *jmap:
		if s != nil && s.Type != schema.TypeMap {
			key, elem = nil, nil
		}
		if stringKeys(key, x.keys) {
			out := make(map[string]any, len(x.keys))
			for i, k := range x.keys {
				c, err := javaToGo(elem, x.vals[i], depth+1)
				if err != nil {
					return nil, err
				}
				out[k.(string)] = c
			}
			return out, nil
		}
		out := make(map[any]any, len(x.keys))
		for i, k := range x.keys {
			switch k.(type) {
			case []any, *jmap:
				return nil, errors.New("convert: map keys cannot be arrays or maps")
			}
			ck, err := javaToGo(key, k, depth+1)
			if err != nil {
				return nil, err
			}
			c, err := javaToGo(elem, x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			out[ck] = c
		}
		if len(out) != len(x.keys) {
			return nil, errors.New("convert: map keys -0.0 and 0.0")
		}
		return out, nil
	}
	return v, nil
}

// stringKeys reports whether a map of key schema key becomes a
// map[string]any: its key schema is a plain STRING and, as Kafka does not
// convert nested maps to their merged schema, its keys are all strings.
func stringKeys(key *schema.Schema, keys []any) bool {
	if key == nil || key.Type != schema.TypeString || key.Name != "" {
		return false
	}
	for _, k := range keys {
		if _, ok := k.(string); !ok {
			return false
		}
	}
	return true
}

// rescaleDecimal gives d the scale of its schema, when it can exactly.
func rescaleDecimal(d *jdecimal, scale int32) (*big.Int, error) {
	diff := int64(scale) - int64(d.scale)
	switch {
	case diff == 0:
		return d.unscaled, nil
	case diff > 0 && diff <= maxDecimalRescale:
		return new(big.Int).Mul(d.unscaled, pow10(diff)), nil
	case diff < 0 && -diff <= maxDecimalRescale:
		q, r := new(big.Int).QuoRem(d.unscaled, pow10(-diff), new(big.Int))
		if r.Sign() == 0 {
			return q, nil
		}
	}
	return nil, fmt.Errorf("convert: decimal of scale %d for a Decimal schema of scale %d", d.scale, scale)
}

// javaUTF8 is new String(b, UTF_8) in Java: valid UTF-8 as it is, each
// malformed sequence replaced by U+FFFD as Java 17's decoder does.
func javaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const repl = utf8.RuneError
	cont := func(c byte) bool { return c&0xc0 == 0x80 }
	out := make([]rune, 0, len(b))
	sp, sl := 0, len(b)
	for sp < sl {
		b1 := b[sp]
		sp++
		switch {
		case b1 < 0x80:
			out = append(out, rune(b1))
		case b1 >= 0xc2 && b1 <= 0xdf:
			if sp < sl {
				b2 := b[sp]
				sp++
				if !cont(b2) {
					out = append(out, repl)
					sp--
				} else {
					out = append(out, rune(b1&0x1f)<<6|rune(b2&0x3f))
				}
				continue
			}
			out = append(out, repl)
			sp = sl
		case b1>>4 == 0xe:
			if sp+1 < sl {
				b2, b3 := b[sp], b[sp+1]
				sp += 2
				if (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) || !cont(b3) {
					out = append(out, repl)
					sp -= 3
					if (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) {
						sp++
					} else {
						sp += 2
					}
				} else if r := rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f); r >= 0xd800 && r <= 0xdfff {
					out = append(out, repl)
				} else {
					out = append(out, r)
				}
				continue
			}
			if sp < sl && ((b1 == 0xe0 && b[sp]&0xe0 == 0x80) || !cont(b[sp])) {
				out = append(out, repl)
				continue
			}
			out = append(out, repl)
			sp = sl
		case b1>>3 == 0x1e:
			if sp+2 < sl {
				b2, b3, b4 := b[sp], b[sp+1], b[sp+2]
				sp += 3
				r := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if !cont(b2) || !cont(b3) || !cont(b4) || r < 0x10000 || r > 0x10ffff {
					out = append(out, repl)
					sp -= 4
					switch {
					case b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
						(b1 == 0xf4 && b2&0xf0 != 0x80) || !cont(b2):
						sp++
					case !cont(b3):
						sp += 2
					default:
						sp += 3
					}
				} else {
					out = append(out, r)
				}
				continue
			}
			if b1 > 0xf4 || sp < sl && ((b1 == 0xf0 && (b[sp] < 0x90 || b[sp] > 0xbf)) ||
				(b1 == 0xf4 && b[sp]&0xf0 != 0x80) || !cont(b[sp])) {
				out = append(out, repl)
				continue
			}
			sp++
			out = append(out, repl)
			if sp < sl && !cont(b[sp]) {
				continue
			}
			sp = sl
		default:
			out = append(out, repl)
		}
	}
	return string(out)
}

// appendValuesString appends v as Kafka's Values.convertToString writes it
// (embedded: inside an array, map or struct). s gives the scale of
// decimals and the schemas of nested values; it may be nil.
func appendValuesString(b []byte, s *schema.Schema, v any, embedded bool, depth int) ([]byte, error) {
	if depth > maxValuesDepth {
		return nil, valuesTooDeep{}
	}
	var elem, key *schema.Schema
	if s != nil {
		elem, key = s.ValueSchema, s.KeySchema
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float32:
		return appendJavaFloatString(b, float64(x), 32), nil
	case float64:
		return appendJavaFloatString(b, x, 64), nil
	case *big.Int:
		var scale int32
		if s != nil && s.Name == schema.DecimalName {
			var err error
			if scale, err = s.Scale(); err != nil {
				return nil, err
			}
		}
		return appendBigDecimal(b, x, scale), nil
	case string:
		if !embedded {
			return append(b, x...), nil
		}
		b = append(b, '"')
		for i := 0; i < len(x); i++ {
			if x[i] == '\\' || x[i] == '"' {
				b = append(b, '\\')
			}
			b = append(b, x[i])
		}
		return append(b, '"'), nil
	case []byte:
		if embedded {
			b = append(b, '"')
		}
		b = base64.StdEncoding.AppendEncode(b, x)
		if embedded {
			b = append(b, '"')
		}
		return b, nil
	case time.Time:
		return appendJavaDate(b, x.UnixMilli()), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValuesString(b, elem, e, true, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		entries := make([]valuesEntry, 0, len(x))
		for k, e := range x {
			var err error
			if entries, err = appendValuesEntry(entries, key, elem, k, e, depth); err != nil {
				return nil, err
			}
		}
		return appendValuesEntries(b, entries), nil
	case map[any]any:
		entries := make([]valuesEntry, 0, len(x))
		for k, e := range x {
			var err error
			if entries, err = appendValuesEntry(entries, key, elem, k, e, depth); err != nil {
				return nil, err
			}
		}
		return appendValuesEntries(b, entries), nil
	case *schema.Struct:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, f := range x.Schema().Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValuesString(b, nil, f.Name, true, depth+1)
			b = append(b, ':')
			var err error
			// GetIndex falls back on the field's default, as Java's
			// Struct.get(Field) does.
			if b, err = appendValuesString(b, f.Schema, x.GetIndex(i), true, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("convert: failed to serialize unexpected value type %T: %v", v, v)
}

// valuesEntry is one map entry as Values writes it: key:value, the key
// being text[:keyLen].
type valuesEntry struct {
	text   []byte
	keyLen int
}

func appendValuesEntry(entries []valuesEntry, key, elem *schema.Schema, k, v any, depth int) ([]valuesEntry, error) {
	b, err := appendValuesString(nil, key, k, true, depth+1)
	if err != nil {
		return nil, err
	}
	keyLen := len(b)
	b = append(b, ':')
	if b, err = appendValuesString(b, elem, v, true, depth+1); err != nil {
		return nil, err
	}
	return append(entries, valuesEntry{b, keyLen}), nil
}

// appendValuesEntries writes map entries in order of their written keys
// (then values, for keys written alike).
func appendValuesEntries(b []byte, entries []valuesEntry) []byte {
	sort.Slice(entries, func(i, j int) bool {
		x, y := entries[i], entries[j]
		if c := bytes.Compare(x.text[:x.keyLen], y.text[:y.keyLen]); c != 0 {
			return c < 0
		}
		return bytes.Compare(x.text, y.text) < 0
	})
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.text...)
	}
	return append(b, '}')
}

// appendJavaFloatString is Java's Float.toString (bits 32) or
// Double.toString (bits 64), in the shortest form Java 19 and later print.
func appendJavaFloatString(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return jackson.AppendJavaFloat(b, f, bits)
}

// appendJavaDate is Values.dateFormatFor and its SimpleDateFormat in UTC:
// HH:mm:ss.SSS'Z' before 1970-01-02, yyyy-MM-dd at midnight, otherwise
// yyyy-MM-dd'T'HH:mm:ss.SSS'Z'.
func appendJavaDate(b []byte, ms int64) []byte {
	if ms < msPerDay {
		tod := floorMod(ms, msPerDay)
		return appendClock(b, tod)
	}
	t := time.UnixMilli(ms).UTC()
	year, month, day := t.Date()
	b = appendPadded(b, int64(year), 4)
	b = append(b, '-')
	b = appendPadded(b, int64(month), 2)
	b = append(b, '-')
	b = appendPadded(b, int64(day), 2)
	if ms%msPerDay == 0 {
		return b
	}
	return appendClock(append(b, 'T'), ms%msPerDay)
}

// appendClock appends HH:mm:ss.SSSZ for milliseconds into a day.
func appendClock(b []byte, tod int64) []byte {
	b = appendPadded(b, tod/3600000, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/60000%60, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/1000%60, 2)
	b = append(b, '.')
	b = appendPadded(b, tod%1000, 3)
	return append(b, 'Z')
}

func appendPadded(b []byte, n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

var schemalessJSON = &JSONConverter{schemas: false, replaceNull: true}

// javaString renders v the way Kafka's Values.convertToString does for the
// common cases: numbers as Java prints them, bytes as base64, logical types
// in their ISO forms, and composite values as JSON.
func javaString(s *schema.Schema, v any) (string, error) {
	if s != nil {
		switch s.Name {
		case schema.DecimalName:
			if x, ok := v.(*big.Int); ok {
				scale, err := s.Scale()
				if err != nil {
					return "", err
				}
				return string(appendBigDecimal(nil, x, scale)), nil
			}
		case schema.DateName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02"), nil
			}
		case schema.TimeName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("15:04:05.000Z"), nil
			}
		case schema.TimestampName:
			if t, ok := v.(time.Time); ok {
				return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
			}
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float32:
		return string(jackson.AppendJavaFloat(nil, float64(x), 32)), nil
	case float64:
		return string(jackson.AppendJavaFloat(nil, x, 64)), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	}
	b, err := schemalessJSON.appendValue(nil, s, v, 0)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

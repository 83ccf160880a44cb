package postgres

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Debezium's semantic type names.
const (
	nameDate           = "io.debezium.time.Date"
	nameTime           = "io.debezium.time.Time"
	nameMicroTime      = "io.debezium.time.MicroTime"
	nameTimestamp      = "io.debezium.time.Timestamp"
	nameMicroTimestamp = "io.debezium.time.MicroTimestamp"
	nameZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	nameZonedTime      = "io.debezium.time.ZonedTime"
	nameMicroDuration  = "io.debezium.time.MicroDuration"
	nameInterval       = "io.debezium.time.Interval"
	nameJSON           = "io.debezium.data.Json"
	nameUUID           = "io.debezium.data.Uuid"
	nameXML            = "io.debezium.data.Xml"
	nameEnum           = "io.debezium.data.Enum"
	nameVarDecimal     = "io.debezium.data.VariableScaleDecimal"
	nameLtree          = "io.debezium.data.Ltree"
	nameBits           = "io.debezium.data.Bits"
)

// pgType is a PostgreSQL data type as the catalog describes it.
type pgType struct {
	oid      uint32
	name     string // typname
	typtype  byte   // b base, e enum, d domain, c composite, r range, p pseudo
	category byte   // typcategory; 'A' for arrays
	elem     uint32 // element type of an array
	base     uint32 // base type of a domain
	labels   []string
}

// decodeFunc turns a value's text form (the type's output function, as
// pgoutput and COPY's text format give it) into the Connect value.
type decodeFunc func(s []byte) (any, error)

// converter turns one column's text values into Connect values of schema.
type converter struct {
	schema *schema.Schema // required variant; the column makes it optional
	decode decodeFunc
	// toast is the value standing for an unchanged TOASTed value (nil
	// when the type cannot be TOASTed).
	toast any
	// snapshot, when set, decodes the value in the snapshot instead of
	// decode (where Debezium's snapshot, which reads through JDBC, differs
	// from its stream).
	snapshot decodeFunc
	// null is the value of a NULL (nil, but a masked column's mask).
	null any
	// text says that decode is decodeString and snapshot nil: a value is
	// its text as is (the snapshot then carves the strings of many rows
	// from one block).
	text bool
}

// typeMapper builds converters with the connector's type settings.
type typeMapper struct {
	cfg         *Config
	types       map[uint32]*pgType
	placeholder []byte
}

func newTypeMapper(cfg *Config, types map[uint32]*pgType) *typeMapper {
	m := &typeMapper{cfg: cfg, types: types, placeholder: []byte(cfg.Placeholder)}
	if h, ok := strings.CutPrefix(cfg.Placeholder, "hex:"); ok {
		m.placeholder, _ = hexDecode(h)
	}
	return m
}

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }

// errUnknownType marks a type the connector does not map.
var errUnknownType = errors.New("postgres: unsupported data type")

// converter returns the converter of a column of type oid with modifier
// typmod.
func (m *typeMapper) converter(oid uint32, typmod int32) (*converter, error) {
	t := m.types[oid]
	if t == nil {
		return nil, fmt.Errorf("%w: type oid %d", errUnknownType, oid)
	}
	for depth := 0; t.typtype == 'd' && depth < 16; depth++ { // a domain is its base type
		if b := m.types[t.base]; b != nil {
			t = b
		} else {
			return nil, fmt.Errorf("%w: domain %s over type oid %d", errUnknownType, t.name, t.base)
		}
	}
	if t.category == 'A' && t.elem != 0 {
		return m.array(t, typmod)
	}
	if t.typtype == 'e' {
		s := &schema.Schema{Type: schema.TypeString, Name: nameEnum, Version: 1,
			Parameters: map[string]string{"allowed": strings.Join(t.labels, ",")}}
		return &converter{schema: s, decode: decodeString, text: true, toast: m.cfg.Placeholder}, nil
	}
	if c := m.base(t.name, typmod); c != nil {
		return c, nil
	}
	if m.cfg.IncludeUnknown {
		return &converter{schema: schema.Bytes, decode: decodeRawBytes, toast: m.placeholder}, nil
	}
	return nil, fmt.Errorf("%w: %s", errUnknownType, t.name)
}

func (m *typeMapper) array(t *pgType, typmod int32) (*converter, error) {
	ec, err := m.converter(t.elem, typmod)
	if err != nil {
		return nil, err
	}
	if ec.schema.Type == schema.TypeArray {
		return nil, fmt.Errorf("%w: array of arrays", errUnknownType)
	}
	elem := ec.schema.AsOptional()
	if elem.Name == nameVarDecimal {
		ec = &converter{schema: ec.schema, decode: varDecimalDecoder(elem)}
	}
	delim := byte(',')
	if et := m.types[t.elem]; et != nil && et.name == "box" {
		delim = ';'
	}
	dec := ec.decode
	return &converter{
		schema: schema.ArrayOf(elem),
		decode: func(s []byte) (any, error) { return decodeArray(s, delim, dec) },
		toast:  []any{m.cfg.Placeholder},
	}, nil
}

// base returns the converter of a base type, or nil when unknown.
func (m *typeMapper) base(name string, typmod int32) *converter {
	str := func(s *schema.Schema) *converter {
		return &converter{schema: s, decode: decodeString, text: true, toast: m.cfg.Placeholder}
	}
	named := func(t schema.Type, n string) *schema.Schema { return &schema.Schema{Type: t, Name: n, Version: 1} }
	switch name {
	case "bool":
		return &converter{schema: schema.Boolean, decode: decodeBool}
	case "int2":
		return &converter{schema: schema.Int16, decode: decodeInt16}
	case "int4":
		return &converter{schema: schema.Int32, decode: decodeInt32}
	case "int8", "oid":
		return &converter{schema: schema.Int64, decode: decodeInt64}
	case "float4":
		return &converter{schema: schema.Float32, decode: decodeFloat32}
	case "float8":
		return &converter{schema: schema.Float64, decode: decodeFloat64}
	case "numeric":
		return m.numeric(typmod)
	case "money":
		return m.money()
	case "text", "varchar", "bpchar", "char", "name", "citext", "inet", "cidr", "macaddr", "macaddr8",
		"int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange", "tsvector", "point":
		return str(schema.String)
	case "json", "jsonb":
		return str(named(schema.TypeString, nameJSON))
	case "uuid":
		return str(named(schema.TypeString, nameUUID))
	case "xml":
		return str(named(schema.TypeString, nameXML))
	case "ltree":
		return str(named(schema.TypeString, nameLtree))
	case "bytea":
		return m.bytea()
	case "date":
		if m.cfg.TimePrecisionMode == "connect" {
			return &converter{schema: schema.Date, decode: decodeConnectDate}
		}
		return &converter{schema: named(schema.TypeInt32, nameDate), decode: decodeEpochDays, snapshot: decodeEpochDaysNoEra}
	case "time":
		p := timePrecision(typmod)
		switch {
		case m.cfg.TimePrecisionMode == "connect":
			return &converter{schema: schema.Time, decode: decodeConnectTime}
		case m.cfg.TimePrecisionMode == "adaptive" && p <= 3:
			return &converter{schema: named(schema.TypeInt32, nameTime), decode: decodeTimeMillis}
		}
		return &converter{schema: named(schema.TypeInt64, nameMicroTime), decode: decodeTimeMicros}
	case "timestamp":
		p := timePrecision(typmod)
		switch {
		case m.cfg.TimePrecisionMode == "connect":
			return &converter{schema: schema.Timestamp, decode: decodeConnectTimestamp}
		case p <= 3:
			return &converter{schema: named(schema.TypeInt64, nameTimestamp), decode: decodeTimestampMillis}
		}
		return &converter{schema: named(schema.TypeInt64, nameMicroTimestamp), decode: decodeTimestampMicros}
	case "timestamptz":
		digits := int(timePrecision(typmod))
		return &converter{schema: named(schema.TypeString, nameZonedTimestamp), decode: func(b []byte) (any, error) { return zonedTimestamp(b, digits) }}
	case "timetz":
		return &converter{schema: named(schema.TypeString, nameZonedTime), decode: decodeZonedTime}
	case "interval":
		if m.cfg.IntervalMode == "string" {
			return &converter{schema: named(schema.TypeString, nameInterval), decode: decodeString, text: true}
		}
		return &converter{schema: named(schema.TypeInt64, nameMicroDuration), decode: decodeMicroDuration}
	case "bit":
		if typmod == 1 {
			return &converter{schema: schema.Boolean, decode: decodeBit}
		}
		return m.bits(typmod)
	case "varbit":
		return m.bits(typmod)
	}
	return nil
}

func timePrecision(typmod int32) int32 {
	if typmod < 0 {
		return 6
	}
	return typmod
}

func (m *typeMapper) numeric(typmod int32) *converter {
	switch m.cfg.DecimalMode {
	case "double":
		return &converter{schema: schema.Float64, decode: decodeFloat64}
	case "string":
		return &converter{schema: schema.String, decode: decodeString, text: true}
	}
	if typmod < 4 { // no precision and scale: the scale varies
		return &converter{schema: varDecimalSchema, decode: decodeVarDecimal}
	}
	precision := (typmod - 4) >> 16 & 0xffff
	scale := (typmod - 4) & 0x7ff
	if scale >= 0x400 { // PostgreSQL 15 allows negative scales
		scale -= 0x800
	}
	s := schema.Decimal(scale)
	s.Parameters["connect.decimal.precision"] = strconv.Itoa(int(precision))
	return &converter{schema: s, decode: func(b []byte) (any, error) { return decodeDecimal(b, scale) }}
}

func (m *typeMapper) money() *converter {
	scale := m.cfg.MoneyDigits
	switch m.cfg.DecimalMode {
	case "double":
		return &converter{schema: schema.Float64, decode: func(b []byte) (any, error) {
			d, err := decodeDecimal(moneyText(b), scale)
			if err != nil {
				return nil, err
			}
			f, _ := new(big.Float).SetInt(d.(*big.Int)).Float64()
			return f / math.Pow10(int(scale)), nil
		}}
	case "string":
		return &converter{schema: schema.String, decode: func(b []byte) (any, error) { return string(moneyText(b)), nil }}
	}
	return &converter{schema: schema.Decimal(scale), decode: func(b []byte) (any, error) { return decodeDecimal(moneyText(b), scale) }}
}

// moneyText strips the currency symbol and group separators of lc_monetary
// C ("-$1,234.56").
func moneyText(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == '-' || c == '.' || c >= '0' && c <= '9' {
			out = append(out, c)
		}
	}
	return out
}

func (m *typeMapper) bytea() *converter {
	var enc func([]byte) string
	switch m.cfg.BinaryMode {
	case "base64":
		enc = base64.StdEncoding.EncodeToString
	case "base64-url-safe":
		enc = base64.URLEncoding.EncodeToString
	case "hex":
		enc = hex.EncodeToString
	default:
		return &converter{schema: schema.Bytes, decode: decodeBytea, toast: m.placeholder}
	}
	return &converter{schema: schema.String, toast: m.cfg.Placeholder, decode: func(s []byte) (any, error) {
		b, err := decodeBytea(s)
		if err != nil {
			return nil, err
		}
		return enc(b.([]byte)), nil
	}}
}

func (m *typeMapper) bits(typmod int32) *converter {
	s := &schema.Schema{Type: schema.TypeBytes, Name: nameBits, Version: 1}
	if typmod > 0 {
		s.Parameters = map[string]string{"length": strconv.Itoa(int(typmod))}
	}
	return &converter{schema: s, decode: decodeBits}
}

// varDecimalSchema is Debezium's numeric of varying scale.
var varDecimalSchema = schema.StructOf(nameVarDecimal).Version(1).Doc("Variable scaled decimal").
	Field("scale", schema.Int32).Field("value", schema.Bytes).Build()

var errSyntax = errors.New("invalid value")

func decodeString(s []byte) (any, error) { return string(s), nil }

func decodeRawBytes(s []byte) (any, error) { return bytes.Clone(s), nil }

func decodeBool(s []byte) (any, error) {
	if len(s) == 1 {
		switch s[0] {
		case 't':
			return true, nil
		case 'f':
			return false, nil
		}
	}
	return nil, fmt.Errorf("%w: boolean %q", errSyntax, s)
}

func decodeBit(s []byte) (any, error) {
	if len(s) == 1 && (s[0] == '0' || s[0] == '1') {
		return s[0] == '1', nil
	}
	return nil, fmt.Errorf("%w: bit %q", errSyntax, s)
}

// decodeBits gives the bits of a bit string as Debezium does: the bytes
// of the number they spell, least significant byte first.
func decodeBits(s []byte) (any, error) {
	n := new(big.Int)
	for _, c := range s {
		if c != '0' && c != '1' {
			return nil, fmt.Errorf("%w: bit string %q", errSyntax, s)
		}
		n.Lsh(n, 1)
		if c == '1' {
			n.SetBit(n, 0, 1)
		}
	}
	be := n.Bytes()
	size := (len(s) + 7) / 8
	out := make([]byte, size)
	for i := range be {
		out[i] = be[len(be)-1-i]
	}
	return out, nil
}

func parseInt(s []byte, bits int) (int64, error) {
	// Most values are short decimal numbers: parse without allocating.
	if len(s) > 0 && len(s) < 19 {
		neg, i := false, 0
		if s[0] == '-' {
			neg, i = true, 1
		}
		var n int64
		ok := i < len(s)
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if ok {
			if neg {
				n = -n
			}
			if bits == 64 || n >= -1<<(bits-1) && n < 1<<(bits-1) {
				return n, nil
			}
		}
	}
	n, err := strconv.ParseInt(string(s), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: integer %q", errSyntax, s)
	}
	return n, nil
}

func decodeInt16(s []byte) (any, error) {
	n, err := parseInt(s, 16)
	return int16(n), err
}

func decodeInt32(s []byte) (any, error) {
	n, err := parseInt(s, 32)
	return int32(n), err
}

func decodeInt64(s []byte) (any, error) {
	return parseInt(s, 64)
}

func decodeFloat32(s []byte) (any, error) {
	f, err := strconv.ParseFloat(string(s), 32)
	if err != nil {
		return nil, fmt.Errorf("%w: real %q", errSyntax, s)
	}
	return float32(f), nil
}

func decodeFloat64(s []byte) (any, error) {
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return nil, fmt.Errorf("%w: double %q", errSyntax, s)
	}
	return f, nil
}

// parseDecimal returns the unscaled value and scale of a decimal number
// ("-12.340" is -12340 and 3).
func parseDecimal(s []byte) (*big.Int, int32, error) {
	if bytes.Equal(s, []byte("NaN")) {
		return nil, 0, fmt.Errorf("%w: NaN has no decimal representation (set decimal.handling.mode to double or string)", errSyntax)
	}
	digits := make([]byte, 0, len(s))
	scale := int32(-1)
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if scale >= 0 {
				scale++
			}
		case c == '.' && scale < 0:
			scale = 0
		case (c == '-' || c == '+') && i == 0:
			digits = append(digits, c)
		default:
			return nil, 0, fmt.Errorf("%w: numeric %q", errSyntax, s)
		}
	}
	if scale < 0 {
		scale = 0
	}
	n, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, 0, fmt.Errorf("%w: numeric %q", errSyntax, s)
	}
	return n, scale, nil
}

// decodeDecimal returns the unscaled value of s at scale.
func decodeDecimal(s []byte, scale int32) (any, error) {
	if v, ok := smallDecimal(s, scale); ok {
		return v, nil
	}
	n, sc, err := parseDecimal(s)
	if err != nil {
		return nil, err
	}
	switch {
	case sc < scale:
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-sc)), nil))
	case sc > scale:
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc-scale)), nil))
	}
	return n, nil
}

// varDecimalDecoder decodes numerics of varying scale into structs of
// schema s (the field's: optional or not).
func varDecimalDecoder(s *schema.Schema) decodeFunc {
	return func(b []byte) (any, error) { return decodeVarDecimalAs(b, s) }
}

// smallDecimal is decodeDecimal's fast path: up to 18 digits with exactly
// scale of them after the point (how numeric(p,s) columns print).
func smallDecimal(s []byte, scale int32) (*big.Int, bool) {
	if len(s) == 0 || len(s) > 19 {
		return nil, false
	}
	neg, i := s[0] == '-', 0
	if neg {
		i = 1
	}
	var n int64
	frac := int32(-1)
	digits := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return nil, false
		}
	}
	if frac < 0 {
		frac = 0
	}
	if digits == 0 || digits > 18 || frac != scale {
		return nil, false
	}
	if neg {
		n = -n
	}
	return schema.DecimalFromInt64(n), true
}

func decodeVarDecimal(s []byte) (any, error) { return decodeVarDecimalAs(s, varDecimalSchema) }

func decodeVarDecimalAs(s []byte, sch *schema.Schema) (any, error) {
	n, scale, err := parseDecimal(s)
	if err != nil {
		return nil, err
	}
	v := schema.NewStruct(sch)
	v.SetIndex(0, scale)
	v.SetIndex(1, schema.AppendDecimal(nil, n))
	return v, nil
}

func decodeBytea(s []byte) (any, error) {
	if len(s) >= 2 && s[0] == '\\' && s[1] == 'x' {
		out := make([]byte, (len(s)-2)/2)
		if _, err := hex.Decode(out, s[2:]); err != nil {
			return nil, fmt.Errorf("%w: bytea: %v", errSyntax, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: bytea %.20q is not in hex format", errSyntax, s)
}

// Dates and times. The connections set DateStyle ISO and TimeZone UTC, so
// values read "2024-05-06", "13:14:15.123456", "2024-05-06 13:14:15.5+00"
// with " BC" after years before 1.

var (
	errInfinity = errors.New("infinite")
)

// parseDate parses "YYYY-MM-DD" (the year may have more digits) and returns
// the days since 1970-01-01 and the rest of the input.
func parseDate(s []byte) (int64, []byte, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < 4 || len(s) < i+6 || s[i] != '-' || s[i+3] != '-' {
		if bytes.HasPrefix(s, []byte("infinity")) || bytes.HasPrefix(s, []byte("-infinity")) {
			return 0, nil, errInfinity
		}
		return 0, nil, fmt.Errorf("%w: date %q", errSyntax, s)
	}
	y, _ := strconv.Atoi(string(s[:i]))
	mo := int(s[i+1]-'0')*10 + int(s[i+2]-'0')
	d := int(s[i+4]-'0')*10 + int(s[i+5]-'0')
	rest := s[i+6:]
	if bytes.HasSuffix(rest, []byte(" BC")) {
		y = 1 - y
		rest = rest[:len(rest)-3]
	}
	return daysFromCivil(y, mo, d), rest, nil
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic
// Gregorian date (year 0 is 1 BC).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// parseClock parses "HH:MM:SS[.ffffff]" and returns microseconds since
// midnight and the rest.
func parseClock(s []byte) (int64, []byte, error) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, nil, fmt.Errorf("%w: time %q", errSyntax, s)
	}
	num := func(b []byte) int64 { return int64(b[0]-'0')*10 + int64(b[1]-'0') }
	us := (num(s[0:])*3600 + num(s[3:])*60 + num(s[6:])) * 1_000_000
	s = s[8:]
	if len(s) > 0 && s[0] == '.' {
		i, frac, digits := 1, int64(0), 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if digits < 6 {
				frac = frac*10 + int64(s[i]-'0')
				digits++
			}
		}
		for ; digits < 6; digits++ {
			frac *= 10
		}
		us += frac
		s = s[i:]
	}
	return us, s, nil
}

// parseOffset parses "+HH[:MM[:SS]]" and returns seconds east of UTC.
func parseOffset(s []byte) (int64, error) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, fmt.Errorf("%w: zone offset %q", errSyntax, s)
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	parts := bytes.Split(s[1:], []byte(":"))
	var secs int64
	for i, p := range parts {
		n, err := strconv.Atoi(string(p))
		if err != nil || i > 2 {
			return 0, fmt.Errorf("%w: zone offset %q", errSyntax, s)
		}
		secs += int64(n) * []int64{3600, 60, 1}[i]
	}
	return sign * secs, nil
}

// parseTimestamp returns the microseconds since the epoch of a timestamp
// (with or without an offset).
func parseTimestamp(s []byte) (int64, error) {
	days, rest, err := parseDate(s)
	if err != nil {
		return 0, err
	}
	if len(rest) < 1 || rest[0] != ' ' {
		return 0, fmt.Errorf("%w: timestamp %q", errSyntax, s)
	}
	us, rest, err := parseClock(rest[1:])
	if err != nil {
		return 0, err
	}
	t := days*86_400_000_000 + us
	if len(rest) > 0 {
		off, err := parseOffset(rest)
		if err != nil {
			return 0, err
		}
		t -= off * 1_000_000
	}
	return t, nil
}

// The sentinels Debezium gives infinite timestamps and dates.
const (
	infinityMicros = math.MaxInt64
)

func timestampMicros(s []byte) (int64, error) {
	t, err := parseTimestamp(s)
	if errors.Is(err, errInfinity) {
		if s[0] == '-' {
			return math.MinInt64, nil
		}
		return infinityMicros, nil
	}
	return t, err
}

func decodeTimestampMicros(s []byte) (any, error) { return timestampMicros(s) }

func decodeTimestampMillis(s []byte) (any, error) {
	t, err := timestampMicros(s)
	if err != nil || t == math.MaxInt64 || t == math.MinInt64 {
		return t, err
	}
	return floorDiv(t, 1000), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func decodeConnectTimestamp(s []byte) (any, error) {
	t, err := timestampMicros(s)
	if err != nil {
		return nil, err
	}
	return time.UnixMilli(floorDiv(t, 1000)).UTC(), nil
}

func decodeEpochDays(s []byte) (any, error) {
	d, rest, err := parseDate(s)
	if errors.Is(err, errInfinity) {
		if s[0] == '-' {
			return int32(math.MinInt32), nil
		}
		return int32(math.MaxInt32), nil
	}
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: date %q", errSyntax, s)
	}
	return int32(d), nil
}

// decodeEpochDaysNoEra reads a BC date as the same date AD, as Debezium
// 3.6's snapshot does (its stream reads the era).
func decodeEpochDaysNoEra(s []byte) (any, error) {
	return decodeEpochDays(bytes.TrimSuffix(s, []byte(" BC")))
}

func decodeConnectDate(s []byte) (any, error) {
	d, _, err := parseDate(s)
	if err != nil {
		return nil, err
	}
	return time.UnixMilli(d * 86_400_000).UTC(), nil
}

func timeMicros(s []byte) (int64, error) {
	us, rest, err := parseClock(s)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%w: time %q", errSyntax, s)
	}
	return us, err
}

func decodeTimeMicros(s []byte) (any, error) { return timeMicros(s) }

func decodeTimeMillis(s []byte) (any, error) {
	us, err := timeMicros(s)
	return int32(us / 1000), err
}

func decodeConnectTime(s []byte) (any, error) {
	us, err := timeMicros(s)
	if err != nil {
		return nil, err
	}
	return time.UnixMilli(us / 1000).UTC(), nil
}

// decodeZonedTimestamp renders a timestamptz of precision 6.
func decodeZonedTimestamp(s []byte) (any, error) { return zonedTimestamp(s, 6) }

// zonedTimestamp renders a timestamptz as Debezium does: UTC, ISO 8601
// with as many fraction digits as the column's precision, and a Z.
func zonedTimestamp(s []byte, digits int) (any, error) {
	us, err := parseTimestamp(s)
	if errors.Is(err, errInfinity) {
		return string(s), nil
	}
	if err != nil {
		return nil, err
	}
	days, rem := floorDiv(us, 86_400_000_000), us-floorDiv(us, 86_400_000_000)*86_400_000_000
	y, m, d := civilFromDays(days)
	b := make([]byte, 0, 32)
	b = appendYear(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = appendClockDigits(b, rem, digits)
	b = append(b, 'Z')
	return string(b), nil
}

// decodeZonedTime renders a timetz in UTC ("HH:MM:SS[.f]Z").
func decodeZonedTime(s []byte) (any, error) {
	us, rest, err := parseClock(s)
	if err != nil {
		return nil, err
	}
	off, err := parseOffset(rest)
	if err != nil {
		return nil, err
	}
	us -= off * 1_000_000
	const day = 86_400_000_000
	us = ((us % day) + day) % day
	return string(append(appendClock(nil, us), 'Z')), nil
}

func appendYear(b []byte, y int) []byte {
	switch {
	case y > 9999:
		return strconv.AppendInt(append(b, '+'), int64(y), 10)
	case y < 0:
		return append(b, fmt.Sprintf("-%04d", -y)...)
	}
	return append(b, fmt.Sprintf("%04d", y)...)
}

func append2(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }

// appendClock appends HH:MM:SS and, when not zero, the fraction without
// trailing zeros (Java's ISO_LOCAL_TIME).
func appendClock(b []byte, us int64) []byte {
	secs := us / 1_000_000
	b = append2(b, int(secs/3600))
	b = append(b, ':')
	b = append2(b, int(secs/60%60))
	b = append(b, ':')
	b = append2(b, int(secs%60))
	if frac := us % 1_000_000; frac != 0 {
		f := fmt.Sprintf(".%06d", frac)
		b = append(b, strings.TrimRight(f, "0")...)
	}
	return b
}

// appendClockDigits appends HH:MM:SS and a fraction of exactly digits
// digits (none for 0).
func appendClockDigits(b []byte, us int64, digits int) []byte {
	b = appendClock(b, us-us%1_000_000)
	if digits > 0 {
		f := fmt.Sprintf(".%06d", us%1_000_000)
		b = append(b, f[:1+min(digits, 6)]...)
	}
	return b
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (int, int, int) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

// decodeMicroDuration converts an ISO 8601 interval (IntervalStyle
// iso_8601, "P1Y2M3DT4H5M6.5S", each part possibly negative) into
// Debezium's approximate microseconds: a month is 365.25/12 days, computed
// in floating point as Debezium does.
func decodeMicroDuration(s []byte) (any, error) {
	if len(s) < 2 || s[0] != 'P' {
		return nil, fmt.Errorf("%w: interval %q", errSyntax, s)
	}
	var years, months, days, hours, minutes int64
	var seconds float64
	inTime := false
	rest := s[1:]
	for len(rest) > 0 {
		if rest[0] == 'T' {
			inTime = true
			rest = rest[1:]
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] == '-' || rest[i] == '+' || rest[i] == '.' || rest[i] >= '0' && rest[i] <= '9') {
			i++
		}
		if i == 0 || i == len(rest) {
			return nil, fmt.Errorf("%w: interval %q", errSyntax, s)
		}
		num, unit := rest[:i], rest[i]
		rest = rest[i+1:]
		if inTime && unit == 'S' {
			f, err := strconv.ParseFloat(string(num), 64)
			if err != nil {
				return nil, fmt.Errorf("%w: interval %q", errSyntax, s)
			}
			seconds = f
			continue
		}
		n, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: interval %q", errSyntax, s)
		}
		switch {
		case !inTime && unit == 'Y':
			years = n
		case !inTime && unit == 'M':
			months = n
		case !inTime && unit == 'W':
			days += 7 * n
		case !inTime && unit == 'D':
			days += n
		case inTime && unit == 'H':
			hours = n
		case inTime && unit == 'M':
			minutes = n
		default:
			return nil, fmt.Errorf("%w: interval %q", errSyntax, s)
		}
	}
	const daysPerMonth = 365.25 / 12.0
	numberOfDays := float64(years*12+months)*daysPerMonth + float64(days)
	numberOfSeconds := ((numberOfDays*24.0+float64(hours))*60.0+float64(minutes))*60.0 + seconds
	return int64(numberOfSeconds * 1e6), nil
}

// decodeArray parses a one-dimensional array literal ("{1,2,NULL}",
// `{"a b","c\"d"}`) decoding each element with dec.
func decodeArray(s []byte, delim byte, dec decodeFunc) (any, error) {
	if len(s) > 0 && s[0] == '[' { // explicit bounds: "[0:1]={a,b}"
		if i := bytes.IndexByte(s, '='); i > 0 {
			s = s[i+1:]
		}
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("%w: array %.40q", errSyntax, s)
	}
	body := s[1 : len(s)-1]
	out := []any{}
	if len(body) == 0 {
		return out, nil
	}
	if body[0] == '{' {
		return nil, fmt.Errorf("%w: multi-dimensional arrays are not supported", errUnknownType)
	}
	var elem []byte
	for i := 0; i <= len(body); {
		quoted := false
		elem = elem[:0]
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for ; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				elem = append(elem, body[i])
			}
			if i >= len(body) {
				return nil, fmt.Errorf("%w: array %.40q: unterminated quote", errSyntax, s)
			}
			i++ // closing quote
		} else {
			for ; i < len(body) && body[i] != delim; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				elem = append(elem, body[i])
			}
		}
		if !quoted && string(elem) == "NULL" {
			out = append(out, nil)
		} else {
			v, err := dec(elem)
			if err != nil {
				return nil, fmt.Errorf("array element %d: %w", len(out), err)
			}
			if b, ok := v.([]byte); ok { // elem is reused
				v = bytes.Clone(b)
			}
			out = append(out, v)
		}
		if i < len(body) && body[i] != delim {
			return nil, fmt.Errorf("%w: array %.40q", errSyntax, s)
		}
		i++
	}
	return out, nil
}

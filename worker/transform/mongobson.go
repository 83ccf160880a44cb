package transform

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// This file is the BSON side of Debezium's MongoDB unwrap: documents parsed
// from the envelope's extended JSON as org.bson's BsonDocument.parse reads
// them, and the names and printed forms Java gives BSON values and types
// (which appear in Debezium's error messages).

// bval is one BSON value of a parsed document (org.bson.BsonValue).
type bval struct {
	t   bson.Type
	raw bson.RawValue // a scalar's encoding
	doc bdoc          // a document
	arr []*bval       // an array
	// a regular expression (also the legacy {"$regex", "$options"} form,
	// which the Go driver reads as a document)
	pattern, options string
}

// bdoc is a document: its fields in order, each name once
// (BsonDocument, a LinkedHashMap: a repeated name keeps its first place and
// takes its last value).
type bdoc []bfield

type bfield struct {
	name string
	v    *bval
}

func (d bdoc) index(name string) int {
	for i := range d {
		if d[i].name == name {
			return i
		}
	}
	return -1
}

// put is BsonDocument.put/append: replaces the value of an existing name in
// place, else appends.
func (d bdoc) put(name string, v *bval) bdoc {
	if i := d.index(name); i >= 0 {
		d[i].v = v
		return d
	}
	return append(d, bfield{name, v})
}

// remove is keySet().remove(name).
func (d bdoc) remove(name string) bdoc {
	if i := d.index(name); i >= 0 {
		return append(d[:i:i], d[i+1:]...)
	}
	return d
}

// parseDocument is BsonDocument.parse: extended JSON (canonical, relaxed or
// legacy) into a document.
func parseDocument(s string) (bdoc, error) {
	var raw bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &raw); err != nil {
		return nil, failure("org.bson.json.JsonParseException", "%v", err)
	}
	return fromRaw(raw)
}

func fromRaw(raw bson.Raw) (bdoc, error) {
	els, err := raw.Elements()
	if err != nil {
		return nil, failure("org.bson.json.JsonParseException", "%v", err)
	}
	d := make(bdoc, 0, len(els))
	for _, e := range els {
		v, err := fromRawValue(e.Value())
		if err != nil {
			return nil, err
		}
		d = d.put(e.Key(), v)
	}
	return d, nil
}

func fromRawValue(rv bson.RawValue) (*bval, error) {
	v := &bval{t: rv.Type, raw: rv}
	switch rv.Type {
	case bson.TypeEmbeddedDocument:
		d, err := fromRaw(rv.Document())
		if err != nil {
			return nil, err
		}
		if p, o, ok := legacyRegex(d); ok {
			return &bval{t: bson.TypeRegex, pattern: p, options: o}, nil
		}
		v.doc = d
	case bson.TypeArray:
		vals, err := rv.Array().Values()
		if err != nil {
			return nil, failure("org.bson.json.JsonParseException", "%v", err)
		}
		v.arr = make([]*bval, len(vals))
		for i, e := range vals {
			if v.arr[i], err = fromRawValue(e); err != nil {
				return nil, err
			}
		}
	case bson.TypeRegex:
		v.pattern, v.options = rv.Regex()
	}
	return v, nil
}

// legacyRegex recognizes {"$regex": "…", "$options": "…"}, which Java's
// JsonReader reads as a regular expression.
func legacyRegex(d bdoc) (pattern, options string, ok bool) {
	if len(d) == 0 || len(d) > 2 || d[0].name != "$regex" || d[0].v.t != bson.TypeString {
		return "", "", false
	}
	if len(d) == 2 {
		if d[1].name != "$options" || d[1].v.t != bson.TypeString {
			return "", "", false
		}
		options = d[1].v.raw.StringValue()
	}
	return d[0].v.raw.StringValue(), options, true
}

// bsonTypeNames are org.bson.BsonType's constant names.
var bsonTypeNames = map[bson.Type]string{
	bson.TypeDouble: "DOUBLE", bson.TypeString: "STRING", bson.TypeEmbeddedDocument: "DOCUMENT",
	bson.TypeArray: "ARRAY", bson.TypeBinary: "BINARY", bson.TypeUndefined: "UNDEFINED",
	bson.TypeObjectID: "OBJECT_ID", bson.TypeBoolean: "BOOLEAN", bson.TypeDateTime: "DATE_TIME",
	bson.TypeNull: "NULL", bson.TypeRegex: "REGULAR_EXPRESSION", bson.TypeDBPointer: "DB_POINTER",
	bson.TypeJavaScript: "JAVASCRIPT", bson.TypeSymbol: "SYMBOL", bson.TypeCodeWithScope: "JAVASCRIPT_WITH_SCOPE",
	bson.TypeInt32: "INT32", bson.TypeTimestamp: "TIMESTAMP", bson.TypeInt64: "INT64",
	bson.TypeDecimal128: "DECIMAL128", bson.TypeMinKey: "MIN_KEY", bson.TypeMaxKey: "MAX_KEY",
}

func bsonTypeName(t bson.Type) string {
	if n, ok := bsonTypeNames[t]; ok {
		return n
	}
	return "END_OF_DOCUMENT"
}

// String is BsonValue.toString, as Debezium's messages print array
// elements.
func (v *bval) String() string {
	switch v.t {
	case bson.TypeInt32:
		return fmt.Sprintf("BsonInt32{value=%d}", v.raw.Int32())
	case bson.TypeInt64:
		return fmt.Sprintf("BsonInt64{value=%d}", v.raw.Int64())
	case bson.TypeDouble:
		return "BsonDouble{value=" + javaDoubleString(v.raw.Double()) + "}"
	case bson.TypeString:
		return "BsonString{value='" + v.raw.StringValue() + "'}"
	case bson.TypeBoolean:
		return "BsonBoolean{value=" + strconv.FormatBool(v.raw.Boolean()) + "}"
	case bson.TypeNull:
		return "BsonNull"
	case bson.TypeUndefined:
		return "BsonUndefined"
	case bson.TypeMinKey:
		return "BsonMinKey"
	case bson.TypeMaxKey:
		return "BsonMaxKey"
	case bson.TypeObjectID:
		return "BsonObjectId{value=" + v.raw.ObjectID().Hex() + "}"
	case bson.TypeDateTime:
		return fmt.Sprintf("BsonDateTime{value=%d}", v.raw.DateTime())
	case bson.TypeDecimal128:
		return "BsonDecimal128{value=" + decimal128String(v) + "}"
	case bson.TypeBinary:
		st, data := v.raw.Binary()
		parts := make([]string, len(data))
		for i, b := range data {
			parts[i] = strconv.Itoa(int(int8(b)))
		}
		return fmt.Sprintf("BsonBinary{type=%d, data=[%s]}", int8(st), strings.Join(parts, ", "))
	case bson.TypeTimestamp:
		t, i := v.raw.Timestamp()
		return fmt.Sprintf("Timestamp{value=%d, seconds=%d, inc=%d}", int64(t)<<32|int64(i), t, i)
	case bson.TypeRegex:
		return "BsonRegularExpression{pattern='" + v.pattern + "', options='" + sortedOptions(v.options) + "'}"
	case bson.TypeJavaScript:
		return "BsonJavaScript{code='" + v.raw.JavaScript() + "'}"
	case bson.TypeSymbol:
		return "BsonSymbol{symbol='" + v.raw.Symbol() + "'}"
	case bson.TypeEmbeddedDocument:
		parts := make([]string, len(v.doc))
		for i, f := range v.doc {
			parts[i] = `"` + f.name + `": ` + f.v.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case bson.TypeArray:
		parts := make([]string, len(v.arr))
		for i, e := range v.arr {
			parts[i] = e.String()
		}
		return "BsonArray{values=[" + strings.Join(parts, ", ") + "]}"
	}
	return v.raw.String()
}

// sortedOptions is BsonRegularExpression's options: sorted.
func sortedOptions(o string) string {
	b := []byte(o)
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j] < b[j-1]; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
	return string(b)
}

// decimal128String is Decimal128.toString.
func decimal128String(v *bval) string {
	return v.raw.Decimal128().String()
}

// javaObject is MongoDataConverter.getObject: a scalar as Connect holds it
// (nil for the types it has no value for).
func (v *bval) javaObject() any {
	switch v.t {
	case bson.TypeString:
		return v.raw.StringValue()
	case bson.TypeObjectID:
		return v.raw.ObjectID().Hex()
	case bson.TypeDecimal128:
		return decimal128String(v)
	case bson.TypeDouble:
		return v.raw.Double()
	case bson.TypeBinary:
		_, data := v.raw.Binary()
		return append([]byte{}, data...)
	case bson.TypeInt32:
		return v.raw.Int32()
	case bson.TypeInt64:
		return v.raw.Int64()
	case bson.TypeBoolean:
		return v.raw.Boolean()
	case bson.TypeDateTime:
		return javaDate(v.raw.DateTime())
	case bson.TypeTimestamp:
		t, _ := v.raw.Timestamp()
		return javaDate(1000 * int64(t))
	case bson.TypeJavaScript:
		return v.raw.JavaScript()
	}
	return nil
}

// nameAdjuster is Debezium's SchemaNameAdjuster: none, or Avro's rules with
// invalid characters replaced by _ or by _uXXXX. field is the field namer
// variant (a dot is invalid too). A replacement that collides with another
// name's fails, as Debezium's adjuster does (per transformation here; the
// JVM-wide record in Debezium).
type nameAdjuster struct {
	mode    string // "none", "avro", "avro_unicode"
	field   bool
	seen    map[string]bool
	byRepl  map[string]string
	results map[string]string
}

func newNameAdjuster(mode string, field bool) *nameAdjuster {
	return &nameAdjuster{mode: mode, field: field, seen: map[string]bool{}, byRepl: map[string]string{}, results: map[string]string{}}
}

func (a *nameAdjuster) firstValid(c uint16) bool {
	letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	if a.mode == "avro_unicode" {
		return letter
	}
	return letter || c == '_'
}

func (a *nameAdjuster) laterValid(c uint16) bool {
	return a.firstValid(c) || c >= '0' && c <= '9' || !a.field && c == '.'
}

func (a *nameAdjuster) replace(c uint16) string {
	if a.mode != "avro_unicode" {
		return "_"
	}
	h := strconv.FormatUint(uint64(c), 16)
	if len(h) <= 2 {
		h = "00" + h
	}
	return "_u" + h
}

// adjust is SchemaNameAdjuster.adjust.
func (a *nameAdjuster) adjust(name string) (string, error) {
	if a == nil || a.mode == "none" || name == "" {
		return name, nil
	}
	if r, ok := a.results[name]; ok {
		return r, nil
	}
	units := utf16.Encode([]rune(name))
	var b strings.Builder
	changed := false
	for i, c := range units {
		valid := a.laterValid(c)
		if i == 0 {
			valid = a.firstValid(c)
		}
		if valid {
			b.WriteByte(byte(c)) // valid characters are ASCII
			continue
		}
		b.WriteString(a.replace(c))
		if i == 0 && c >= '0' && c <= '9' && a.mode == "avro" {
			b.WriteByte(byte(c))
		}
		changed = true
	}
	out := name
	if changed {
		out = b.String()
		if !a.seen[name] {
			a.seen[name] = true
			if prev, ok := a.byRepl[out]; ok && prev != name {
				return "", failure(ConnectException, "The Kafka Connect schema name '%s' is not a valid Avro schema name and its replacement '%s' conflicts with another different schema '%s'", name, out, prev)
			}
			a.byRepl[out] = name
		}
	}
	if len(a.results) >= 10000 {
		clear(a.results)
	}
	a.results[name] = out
	return out, nil
}

// javaDate is a java.util.Date of epoch milliseconds.
func javaDate(ms int64) any {
	return time.UnixMilli(ms).UTC()
}

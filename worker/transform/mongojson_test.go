package transform

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// dumpDoc prints a document with every value's type and encoding (a
// regular expression by its pattern and sorted options), to compare the
// fast reader's documents with the driver's.
func dumpDoc(b *strings.Builder, d bdoc) {
	b.WriteByte('{')
	for _, f := range d {
		fmt.Fprintf(b, "%q:", f.name)
		dumpVal(b, f.v)
		b.WriteByte(',')
	}
	b.WriteByte('}')
}

func dumpVal(b *strings.Builder, v *bval) {
	fmt.Fprintf(b, "%v=", v.t)
	switch v.t {
	case bson.TypeEmbeddedDocument:
		dumpDoc(b, v.doc)
	case bson.TypeArray:
		b.WriteByte('[')
		for _, e := range v.arr {
			dumpVal(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case bson.TypeRegex:
		fmt.Fprintf(b, "/%q/%q", v.pattern, sortedOptions(v.options))
	default:
		fmt.Fprintf(b, "%x", v.raw.Value)
	}
}

// checkFastRead fails when the fast reader accepts s but reads it other
// than the driver (parseDocument) does.
func checkFastRead(t *testing.T, s string) (fast bool) {
	var p extReader
	p.begin()
	d, ok := p.topDocument(s)
	if !ok {
		return false
	}
	want, err := parseDocument(s)
	if err != nil {
		t.Fatalf("fast reader accepts %q, the driver refuses it: %v", s, err)
	}
	var got, exp strings.Builder
	dumpDoc(&got, d)
	dumpDoc(&exp, want)
	if got.String() != exp.String() {
		t.Fatalf("%q read as\n%s\nthe driver reads\n%s", s, got.String(), exp.String())
	}
	// As a key: the same value under "id".
	p.begin()
	kd, err := p.keyDocument(s)
	if err != nil {
		t.Fatalf("key %q: %v", s, err)
	}
	got.Reset()
	dumpDoc(&got, kd)
	wk, err := parseDocument("{ \"id\" : " + s + "}")
	if err != nil {
		t.Fatalf("key %q: the driver refuses it: %v", s, err)
	}
	exp.Reset()
	dumpDoc(&exp, wk)
	if got.String() != exp.String() {
		t.Fatalf("key %q read as\n%s\nthe driver reads\n%s", s, got.String(), exp.String())
	}
	return true
}

// fastReadInputs are documents in the forms the MongoDB connector writes
// (and in some it does not), each read by the fast reader or left to the
// driver.
var fastReadInputs = []struct {
	doc  string
	fast bool // the fast reader reads it (else the driver does)
}{
	{`{}`, true},
	{` { "a" : 1 , "b":[ ] ,"c" :{ } } `, true},
	{`{"_id": {"$oid": "65a1b2c3d4e5f60718293a4d"},"name": "Ann","tags": ["a","b"],"at": {"$date": 1705000000000},"n": {"$numberLong": "-1"},"dec": {"$numberDecimal": "3.14"},"raw": {"$binary": "","$type": "80"}}`, true},
	{`{"i": 2147483647, "j": 2147483648, "k": -2147483649, "l": 9223372036854775807, "m": 9223372036854775808, "z": -0, "f": 1.5, "e": 1e3, "E": -2.5E-3, "g": 0.0}`, true},
	{`{"s": "a\"b\\c\/d\b\f\n\r\t\u00e9\u20ac\ud83d\ude00", "u": "Zürich ☃", "ctl": "a` + "\x01" + `b"}`, true},
	{`{"t": true, "f": false, "n": null}`, true},
	{`{"d1": {"$date": {"$numberLong": "-5"}}, "d2": {"$date": "2024-01-02T03:04:05.678Z"}, "d3": {"$date": "2024-01-02T03:04:05Z"}, "d4": {"$date": "2024-01-02T03:04:05.6+01:00"}, "d5": {"$date": 5}}`, true},
	{`{"i": {"$numberInt": "-7"}, "dd": {"$numberDouble": "Infinity"}, "dn": {"$numberDouble": "-1.25"}, "nan": {"$numberDouble": "NaN"}}`, true},
	{`{"b1": {"$binary": {"base64": "AAEC/w==", "subType": "04"}}, "b2": {"$binary": {"subType": "80", "base64": "AA=="}}, "b3": {"$binary": "q6vNze/wEjRWeJq83v8AEQ==", "$type": "4"}}`, true},
	{`{"ts": {"$timestamp": {"t": 1705000000, "i": 3}}, "ts2": {"$timestamp": {"i": 0, "t": 4294967295}}, "js": {"$code": "f()"}, "sym": {"$symbol": "s"}, "u": {"$undefined": true}, "mi": {"$minKey": 1}, "ma": {"$maxKey": 1}}`, true},
	{`{"re": {"$regex": "^a", "$options": "mi"}, "re2": {"$regex": "b"}, "re3": {"$regularExpression": {"pattern": "c", "options": "xi"}}}`, true},
	{`{"nested": {"a": {"b": [1, {"c": {"$date": 0}}, [2, "x"]]}}, "dup": 1, "x": 2, "dup": "last"}`, true},
	// Left to the driver: other wrappers, unusual forms, errors.
	{`{"b": {"$binary": "AAE=", "$type": "02"}}`, false},
	{`{"u": {"$uuid": "01234567-89ab-cdef-0123-456789abcdef"}}`, false},
	{`{"c": {"$code": "f()", "$scope": {"x": 1}}}`, false},
	{`{"p": {"$dbPointer": {"$ref": "c", "$id": {"$oid": "65a1b2c3d4e5f60718293a4d"}}}}`, false},
	{`{"r": {"$regex": "a", "$options": "i", "more": 1}}`, false},
	{`{"o": {"$oid": "xyz"}}`, false},
	{`{"a": 1, "$b": 2}`, false},
	{`{"x": NaN}`, false},
	{`{"x": 01}`, false},
	{`{"x": 1.}`, false},
	{`{"s": "lone \ud83d surrogate"}`, false},
	{`{"s": "bad \x escape"}`, false},
	{`{"a": 1,}`, false},
	{`{"a": 1} trailing`, false},
	{`[1]`, false},
	{`{"a": {"$date": 1.5}}`, false},
	{`{"a": {"$numberInt": "2147483648"}}`, false},
	{`{"a": {"$timestamp": {"t": -1, "i": 0}}}`, false},
}

func TestExtReaderMatchesDriver(t *testing.T) {
	for _, in := range fastReadInputs {
		if got := checkFastRead(t, in.doc); got != in.fast {
			t.Errorf("%q: read fast %v, want %v", in.doc, got, in.fast)
		}
	}
	// The documents of the golden cases.
	f := loadCases(t)
	n := 0
	for _, rec := range f.Records {
		r, err := decodeRecord(rec, true)
		if err != nil {
			continue
		}
		env, ok := r.Value.(interface{ Get(string) any })
		if !ok || r.ValueSchema == nil {
			continue
		}
		for _, name := range []string{fieldAfter, fieldBefore} {
			if r.ValueSchema.Field(name) == nil {
				continue
			}
			if s, ok := env.Get(name).(string); ok {
				checkFastRead(t, s)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no documents in the golden cases")
	}
}

// FuzzExtReader checks that whatever the fast extended JSON reader
// accepts, the driver reads to the same document.
func FuzzExtReader(f *testing.F) {
	for _, in := range fastReadInputs {
		f.Add(in.doc)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFastRead(t, s)
	})
}

// One transformation, with its schemas cached by the documents' shapes,
// gives every record the outcome a new transformation gives it (Debezium
// infers each record's schema afresh), whatever the order of the shapes.
func TestExtractNewDocumentStateShapeCache(t *testing.T) {
	docs := []string{
		`{"_id": 1, "a": "x", "n": {"b": 1}}`,
		`{"_id": 2, "a": null, "n": {"b": 1}}`,
		`{"_id": 3, "a": "y", "n": {"b": {"$numberLong": "1"}}}`,
		`{"_id": 4, "a": "x", "n": {}}`,
		`{"_id": 5, "n": {"b": 1}, "a": "x"}`,
		`{"_id": 6, "l": [1, 2, 3]}`,
		`{"_id": 7, "l": [1, 2, {"$numberLong": "3"}]}`,
		`{"_id": 8, "l": [null, "a"]}`,
		`{"_id": 9, "l": ["a", null]}`,
		`{"_id": 10, "l": []}`,
		`{"_id": 11, "l": [{"p": 1}, {"q": "s"}, {"p": 1}]}`,
		`{"_id": 12, "l": [{"p": 1}, {"q": "s"}, {"p": 1}, {"p": 1}]}`,
		`{"_id": 13, "l": [{"p": {"x": 1}}, {"p": {"y": "s"}}]}`,
		`{"_id": 14, "l": [{"p": {"y": "s"}}, {"p": {"x": 1}}]}`,
		`{"_id": 15, "l": [[1, 2], [1, 2]]}`,
		`{"_id": 16, "l": [[1, 2], [3, 4]]}`,
		`{"_id": 17, "l": [[1, 2], ["a"]]}`,
		`{"_id": 18, "l": [{"p": 1}, {"p": "s"}]}`,
		`{"_id": 19, "l": [1, "a"]}`,
		`{"_id": {"$oid": "65a1b2c3d4e5f60718293a4d"}, "a": "x", "n": {"b": 1}}`,
		`{"_id": "k", "d": {"$date": 5}, "re": {"$regex": "a", "$options": "i"}, "b": {"$binary": "AA==", "$type": "00"}}`,
		`{"_id": 20, "x.y": 1, "x_y": 2}`,
		`{"_id": 21, "l": [1, {"p": 1}, 2]}`,
	}
	f := loadCases(t)
	failures, rows := 0, 0
	for _, props := range []map[string]string{
		{"add.fields": "op,source.ts_ms"},
		{"array.encoding": "document"},
		{"flatten.struct": "true", "delete.tombstone.handling.mode": "rewrite"},
		{"field.name.adjustment.mode": "avro"},
	} {
		cfg := map[string]string{"transforms": "u", "transforms.u.type": mongoUnwrapClass}
		for k, v := range props {
			cfg["transforms.u."+k] = v
		}
		shared, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		outcome := func(c *Chain, doc string) string {
			r, err := decodeRecord(f.Records["mongo_read1"], true)
			if err != nil {
				t.Fatal(err)
			}
			r.Value.(*schema.Struct).Set(fieldAfter, doc)
			if _, err := c.Apply(&r); err != nil {
				return "error: " + err.Error()
			}
			return jsonString(encodeRecord(&r))
		}
		// Each document three times, in three orders.
		order := append(append(append([]string{}, docs...), docs...), docs...)
		for i, j := len(docs), 2*len(docs)-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
		for i, doc := range order {
			fresh, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, want := outcome(shared, doc), outcome(fresh, doc)
			if got != want {
				t.Fatalf("%v, record %d %s:\n got %s\nwant %s", props, i, doc, got, want)
			}
			if strings.HasPrefix(got, "error: ") {
				failures++
			} else {
				rows++
			}
		}
	}
	// Both kinds of outcome are compared: rows and Debezium's failures.
	if failures == 0 || rows == 0 {
		t.Fatalf("%d rows, %d failures", rows, failures)
	}
	t.Logf("%d rows, %d failures compared", rows, failures)
}

// plainDecimal128 encodes the decimals it reads as the driver does.
func TestPlainDecimal128(t *testing.T) {
	for _, s := range []string{"0", "-0", "3.14", "1234.5600", "0.00", "007", "-00.10",
		"9999999999999999999999999999999999", "-1234567890123456789012345678.901234", "0000000000000000000000000000000000000001.5"} {
		checkPlainDecimal(t, s, true)
	}
	for _, s := range []string{"", "-", ".5", "5.", "1e3", "+1", "NaN", "Infinity", "1.2.3", "99999999999999999999999999999999999", "1_0"} {
		checkPlainDecimal(t, s, false)
	}
}

func checkPlainDecimal(t *testing.T, s string, plain bool) {
	h, l, ok := plainDecimal128(s)
	if ok != plain {
		t.Fatalf("%q: plain %v, want %v", s, ok, plain)
	}
	if !ok {
		return
	}
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatalf("%q: the driver refuses it: %v", s, err)
	}
	if wh, wl := d.GetBytes(); wh != h || wl != l {
		t.Fatalf("%q: %x %x, the driver %x %x", s, h, l, wh, wl)
	}
}

func FuzzPlainDecimal128(f *testing.F) {
	for _, s := range []string{"3.14", "-0.00", "12345678901234567890123456789012.34"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, _, ok := plainDecimal128(s); ok {
			checkPlainDecimal(t, s, true)
		}
	})
}

package transform

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// The golden test covers the transformations record for record against
// Kafka's classes; these tests cover what it cannot: the parsers with
// inputs of their own, Debezium 2's settings (not in Debezium 3.6.1), the
// conversions to and from the runners' records, and that inputs are never
// modified.

func TestDateFormat(t *testing.T) {
	ms := time.Date(2024, 3, 5, 7, 8, 9, 12e6, time.UTC).UnixMilli()
	for _, tc := range []struct{ pattern, want string }{
		{"yyyyMMdd", "20240305"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-03-05T07:08:09.012Z"},
		{"yy-M-d h:m:s a", "24-3-5 7:8:9 AM"},
		{"EEE, d MMM yyyy HH:mm:ss Z", "Tue, 5 Mar 2024 07:08:09 +0000"},
		{"EEEE MMMM D k K z", "Tuesday March 65 7 7 UTC"},
		{"'week' w 'of' YYYY, '''quoted''' u ''", "week 10 of 2024, 'quoted' 2 '"},
		{"S SS SSSS", "12 12 0012"},
	} {
		f, err := newDateFormat(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := f.format(ms); got != tc.want {
			t.Errorf("format(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if _, err := newDateFormat("yyyy-bb"); err == nil || err.Error() != "Illegal pattern character 'b'" {
		t.Errorf("illegal letter: %v", err)
	}
	if _, err := newDateFormat("yyyy 'open"); err == nil || err.Error() != "Unterminated quote" {
		t.Errorf("open quote: %v", err)
	}
	for _, tc := range []struct {
		pattern, in string
		want        int64
		ok          bool
	}{
		{"yyyy-MM-dd HH:mm:ss", "2024-03-05 07:08:09", time.Date(2024, 3, 5, 7, 8, 9, 0, time.UTC).UnixMilli(), true},
		{"yyyy-MM-dd HH:mm:ss", "2024-03-05 07:08:09 and more", time.Date(2024, 3, 5, 7, 8, 9, 0, time.UTC).UnixMilli(), true},
		{"yyyy-MM-dd", "2024-13-01", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), true}, // lenient
		{"yyyyMMddHHmm", "202403050708", time.Date(2024, 3, 5, 7, 8, 0, 0, time.UTC).UnixMilli(), true},
		{"dd MMM yyyy hh:mm a", "05 Mar 2024 07:08 PM", time.Date(2024, 3, 5, 19, 8, 0, 0, time.UTC).UnixMilli(), true},
		{"yyyy-MM-dd'T'HH:mm:ssXXX", "2024-03-05T07:08:09+02:00", time.Date(2024, 3, 5, 5, 8, 9, 0, time.UTC).UnixMilli(), true},
		{"yyyy-MM-dd", "March 5", 0, false},
		{"yyyy-MM-dd", "", 0, false},
	} {
		f, err := newDateFormat(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := f.parse(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parse(%q, %q) = %d %v, want %d %v", tc.pattern, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestJavaReplacement(t *testing.T) {
	for _, tc := range []struct{ re, in, repl, want, err string }{
		{`(.*)\.public\.(.*)`, "db.public.users", "$1_$2", "db_users", ""},
		{`(?<db>[a-z]+)\.(.*)`, "db.x", "${db}-$2", "db-x", ""},
		{`a(b)?c`, "ac", "[$1]", "[]", ""},
		{`(a)`, "a", `\$1`, "$1", ""},
		{`(a)`, "a", "$12", "a2", ""}, // $1 then a literal 2: there is no group 12
		{`(a)`, "a", "$2", "", "No group 2"},
		{`(a)`, "a", "${x}", "", "No group with name {x}"},
		{`(a)`, "a", "$", "", "Illegal group reference: group index is missing"},
		{`(a)`, "a", `\`, "", "character to be escaped is missing"},
		{`\Q.*\E`, ".*", "lit", "lit", ""},
	} {
		re, err := compileJava(tc.re)
		if err != nil {
			t.Fatalf("%s: %v", tc.re, err)
		}
		got, err := re.replaceFirst(tc.in, tc.repl)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("replace %q with %q: %v, want error %q", tc.in, tc.repl, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("replace %q with %q = %q %v, want %q", tc.in, tc.repl, got, err, tc.want)
		}
	}
	// Matcher.matches needs the whole topic.
	re, _ := compileJava(`db\.(.*)`)
	if re.matches("xdb.users") || !re.matches("db.users") {
		t.Error("matches must cover the whole input")
	}
	if _, err := compileJava(`(a)\1`); err == nil {
		t.Error("a backreference must be refused (RE2 has none)")
	}
}

func TestFieldPathV2(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a.b.c", []string{"a", "b", "c"}},
		{"`a.b`.c", []string{"a.b", "c"}},
		{"a.", []string{"a", ""}},
		{"`a\\`.b`", []string{"a`.b"}},
	} {
		p, err := newFieldPath(tc.in, true)
		if err != nil || strings.Join(p, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: %q %v, want %q", tc.in, p, err, tc.want)
		}
	}
	if _, err := newFieldPath("`a.b", true); err == nil || !strings.Contains(err.Error(), "Incomplete backtick pair in path: [`a.b]") {
		t.Errorf("open backtick: %v", err)
	}
}

func TestConfigParsing(t *testing.T) {
	for _, tc := range []struct {
		typ  Type
		in   string
		want any
		err  string
	}{
		{TypeBoolean, " TRUE ", true, ""},
		{TypeBoolean, "yes", nil, "Invalid value yes for configuration k: Expected value to be either true or false"},
		{TypeInt, "+42", int32(42), ""},
		{TypeInt, "4294967296", nil, "Invalid value 4294967296 for configuration k: Not a number of type INT"},
		{TypeList, " a , b,,c ", []string{"a", "b", "", "c"}, ""},
		{TypeList, "  ", []string{}, ""},
		{TypeDouble, "1.5f", 1.5, ""},
		{TypeString, "  x ", "x", ""},
	} {
		v, err := parseType("k", tc.in, tc.typ)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %q: %v, want %q", tc.typ, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || renderValue(tc.typ, v) != renderValue(tc.typ, tc.want) {
			t.Errorf("%s %q = %#v %v, want %#v", tc.typ, tc.in, v, err, tc.want)
		}
	}
}

// Debezium 2's delete.handling.mode and drop.tombstones, which Debezium
// 3.6.1 no longer reads, apply when delete.tombstone.handling.mode is not
// set, as in Debezium 2.7: a Debezium 2 connector config runs unchanged.
func TestExtractNewRecordStateLegacySettings(t *testing.T) {
	f := loadCases(t)
	rec := func(name string) Record {
		r, err := decodeRecord(f.Records[name], false)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	unwrap := func(props map[string]string) *Chain {
		cfg := map[string]string{"transforms": "u", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState"}
		for k, v := range props {
			cfg["transforms.u."+k] = v
		}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	deleted := func(r Record) string {
		st, _ := r.Value.(*schema.Struct)
		if st == nil || st.Schema().Field(deletedField) == nil {
			return "-"
		}
		return st.Get(deletedField).(string)
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		// outcome for delete, tombstone, create: "drop", "null" (value
		// null), or the __deleted value ("-" when absent)
		del, tomb, create string
	}{
		{"default (Debezium 2 too)", nil, "null", "drop", "-"},
		{"rewrite", map[string]string{"delete.handling.mode": "rewrite"}, "true", "drop", "false"},
		{"rewrite keeping tombstones", map[string]string{"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, "true", "keep", "false"},
		{"drop deletes", map[string]string{"delete.handling.mode": "drop"}, "drop", "drop", "-"},
		{"none keeping tombstones", map[string]string{"drop.tombstones": "false"}, "null", "keep", "-"},
		{"the newer setting wins", map[string]string{"delete.handling.mode": "rewrite", "delete.tombstone.handling.mode": "drop"}, "drop", "drop", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := unwrap(tc.props)
			for _, step := range []struct{ record, want string }{{"dbz_delete", tc.del}, {"dbz_tombstone", tc.tomb}, {"dbz_create", tc.create}} {
				r := rec(step.record)
				keep, err := c.Apply(&r)
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				switch {
				case !keep:
					got = "drop"
				case r.Value == nil && step.record == "dbz_tombstone":
					got = "keep"
				case r.Value == nil:
					got = "null"
				default:
					got = deleted(r)
				}
				if got != step.want {
					t.Errorf("%s: %s, want %s", step.record, got, step.want)
				}
			}
		})
	}
}

// Transformations build new values: the record the connector handed over
// (and its headers) stays as it was, whatever the chain does.
func TestInputsUnchanged(t *testing.T) {
	f := loadCases(t)
	for _, c := range f.Cases {
		chain, err := New(c.Config)
		if err != nil {
			continue
		}
		for _, name := range c.Records {
			r, err := decodeRecord(f.Records[name], c.Mode != "source")
			if err != nil {
				t.Fatal(err)
			}
			before := jsonString(canonical(roundTrip(encodeRecord(&r))))
			orig := r
			work := r
			_, _ = chain.Apply(&work)
			if after := jsonString(canonical(roundTrip(encodeRecord(&orig)))); after != before {
				t.Errorf("%s/%s changed its input:\nbefore %s\nafter  %s", c.Name, name, before, after)
			}
		}
	}
}

// The chain works on the runners' records: a source record keeps its
// source partition and offset, a sink record its Kafka offset, and a
// dropped or failed record is left as it was.
func TestSourceAndSinkRecords(t *testing.T) {
	c, err := New(map[string]string{"transforms": "ins,route",
		"transforms.ins.type": "org.apache.kafka.connect.transforms.InsertHeader", "transforms.ins.header": "h",
		"transforms.ins.value.literal": "true",
		"transforms.route.type":        "org.apache.kafka.connect.transforms.RegexRouter", "transforms.route.regex": "a",
		"transforms.route.replacement": "b"})
	if err != nil {
		t.Fatal(err)
	}
	p := int32(2)
	src := sdk.SourceRecord{Partition: sdk.Partition{"f": "x"}, Offset: sdk.Offset{"pos": int64(9)}, Topic: "a", KafkaPartition: &p, Value: "v"}
	if keep, err := c.Source(&src); !keep || err != nil {
		t.Fatal(keep, err)
	}
	if src.Topic != "b" || *src.KafkaPartition != 2 || src.Offset["pos"] != int64(9) || len(src.Headers) != 1 || src.Headers[0].Value != true {
		t.Errorf("source record %+v", src)
	}
	snk := sdk.SinkRecord{Topic: "a", Partition: 1, Offset: 77, Value: "v"}
	if keep, err := c.Sink(&snk); !keep || err != nil {
		t.Fatal(keep, err)
	}
	if snk.Topic != "b" || snk.Partition != 1 || snk.Offset != 77 || len(snk.Headers) != 1 {
		t.Errorf("sink record %+v", snk)
	}
	failing, _ := New(map[string]string{"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
		"transforms.x.field": "f"})
	bad := sdk.SinkRecord{Topic: "t", Value: "not a map"}
	_, err = failing.Sink(&bad)
	var se *StageError
	if !errors.As(err, &se) || se.Alias != "x" || se.ClassName() != "org.apache.kafka.connect.transforms.ExtractField$Value" ||
		se.ExceptionClass() != DataException || bad.Value != "not a map" {
		t.Errorf("failed record: %v %+v", err, bad)
	}
}

// New refuses what Validate refuses, naming the setting.
func TestNewRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"transforms": "a"}, "transforms.a.type"},
		{map[string]string{"transforms": "a", "transforms.a.type": "Nope"}, "Class Nope could not be found"},
		{map[string]string{"transforms": "a", "transforms.a.type": "RegexRouter"}, `Missing required configuration "regex"`},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"}, "predicates.p.type"},
	} {
		if _, err := New(tc.props); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
}

func FuzzChainConfig(f *testing.F) {
	f.Add("a", "RegexRouter", "regex", "(.*)", "$1-x")
	f.Add("a,b", "org.apache.kafka.connect.transforms.Cast$Value", "spec", "a:int8,b", "")
	f.Add("x", "TimestampRouter", "timestamp.format", "yyyy-'MM", "")
	f.Add("u", "ExtractNewRecordState", "add.fields", "op,source.ts_ms:x:y", "")
	f.Fuzz(func(t *testing.T, aliases, class, key, value, extra string) {
		props := map[string]string{"transforms": aliases, "predicates": "p", "predicates.p.type": "TopicNameMatches",
			"predicates.p.pattern": extra}
		list := strings.Split(aliases, ",")
		if len(list) > 4 || len(value) > 64 || len(extra) > 64 {
			return // a few short aliases say as much
		}
		for _, a := range list {
			props["transforms."+a+".type"] = class
			props["transforms."+a+"."+key] = value
			props["transforms."+a+".replacement"] = extra
		}
		v := Validate(props, "4.4.0")
		c, err := New(props)
		if err == nil {
			r := Record{Topic: value, Value: map[string]any{key: extra}, Timestamp: time.UnixMilli(1)}
			_, _ = c.Apply(&r)
		}
		_ = v
	})
}

func FuzzDateFormat(f *testing.F) {
	f.Add("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-03-05T07:08:09.012Z", int64(0))
	f.Add("EEE, d MMM yy h a", "Tue, 5 Mar 24 7 PM", int64(-1))
	f.Fuzz(func(t *testing.T, pattern, in string, ms int64) {
		df, err := newDateFormat(pattern)
		if err != nil {
			return
		}
		_ = df.format(ms % (1 << 50))
		_, _ = df.parse(in)
	})
}

// ExtractNewDocumentState reads Debezium 2's delete.handling.mode and
// drop.tombstones as ExtractNewRecordState does (Debezium 3.6.1 ignores
// them, so the goldens cannot show it): __deleted is a boolean here.
func TestExtractNewDocumentStateLegacySettings(t *testing.T) {
	f := loadCases(t)
	for _, tc := range []struct {
		name  string
		props map[string]string
		// outcome for a delete with a pre-image, a tombstone, a create:
		// "drop", "null" (value null), or __deleted ("-" when absent)
		del, tomb, create string
	}{
		{"default", nil, "null", "drop", "-"},
		{"rewrite", map[string]string{"delete.handling.mode": "rewrite"}, "true", "drop", "false"},
		{"rewrite keeping tombstones", map[string]string{"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, "true", "null", "false"},
		{"drop deletes", map[string]string{"delete.handling.mode": "drop"}, "drop", "drop", "-"},
		{"the newer setting wins", map[string]string{"delete.handling.mode": "rewrite", "delete.tombstone.handling.mode": "drop"}, "drop", "drop", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]string{"transforms": "u", "transforms.u.type": "ExtractNewDocumentState"}
			for k, v := range tc.props {
				cfg["transforms.u."+k] = v
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []struct{ record, want string }{{"mongo_delete_before", tc.del}, {"mongo_tombstone", tc.tomb}, {"mongo_read1", tc.create}} {
				r, err := decodeRecord(f.Records[step.record], true)
				if err != nil {
					t.Fatal(err)
				}
				keep, err := c.Apply(&r)
				if err != nil {
					t.Fatal(err)
				}
				got := "-"
				switch st, _ := r.Value.(*schema.Struct); {
				case !keep:
					got = "drop"
				case r.Value == nil:
					got = "null"
				case st.Schema().Field(deletedField) != nil:
					got = fmt.Sprint(st.Get(deletedField))
				}
				if got != step.want {
					t.Errorf("%s: got %s, want %s", step.record, got, step.want)
				}
				if keep && (r.KeySchema == nil || r.KeySchema.Field("id") == nil) {
					t.Errorf("%s: key not unwrapped: %v", step.record, r.KeySchema)
				}
			}
		})
	}
}

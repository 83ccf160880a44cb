package schemaregistry

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, typ, text string) Parsed {
	t.Helper()
	p, err := Parse(typ, text, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return p
}

// TestAvroCanRead pins Avro's resolution rules: each case says whether a
// reader can read a writer's data and which error type it reports.
func TestAvroCanRead(t *testing.T) {
	rec := func(fields string) string {
		return `{"type":"record","name":"R","namespace":"n","fields":[` + fields + `]}`
	}
	cases := []struct {
		name, reader, writer, want string // want: "" compatible, else an errorType
	}{
		{"same", `"int"`, `"int"`, ""},
		{"int to long", `"long"`, `"int"`, ""},
		{"int to double", `"double"`, `"int"`, ""},
		{"long to int", `"int"`, `"long"`, "TYPE_MISMATCH"},
		{"float to double", `"double"`, `"float"`, ""},
		{"string to bytes", `"bytes"`, `"string"`, ""},
		{"bytes to string", `"string"`, `"bytes"`, ""},
		{"string to int", `"int"`, `"string"`, "TYPE_MISMATCH"},
		{"field added with default", rec(`{"name":"a","type":"int"},{"name":"b","type":"int","default":1}`), rec(`{"name":"a","type":"int"}`), ""},
		{"field added without default", rec(`{"name":"a","type":"int"},{"name":"b","type":"int"}`), rec(`{"name":"a","type":"int"}`), "READER_FIELD_MISSING_DEFAULT_VALUE"},
		{"field removed", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"int"},{"name":"b","type":"int"}`), ""},
		{"field type promoted", rec(`{"name":"a","type":"long"}`), rec(`{"name":"a","type":"int"}`), ""},
		{"field type narrowed", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"long"}`), "TYPE_MISMATCH"},
		{"field renamed with alias", rec(`{"name":"b","aliases":["a"],"type":"int"}`), rec(`{"name":"a","type":"int"}`), ""},
		{"record renamed", `{"type":"record","name":"S","namespace":"n","fields":[]}`, rec(``), "NAME_MISMATCH"},
		{"record renamed with alias", `{"type":"record","name":"S","namespace":"n","aliases":["n.R"],"fields":[]}`, rec(``), ""},
		{"enum symbol added", `{"type":"enum","name":"E","symbols":["A","B","C"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, ""},
		{"enum symbol removed", `{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, "MISSING_ENUM_SYMBOLS"},
		{"enum symbol removed, reader default", `{"type":"enum","name":"E","symbols":["A"],"default":"A"}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, ""},
		{"fixed size changed", `{"type":"fixed","name":"F","size":4}`, `{"type":"fixed","name":"F","size":8}`, "FIXED_SIZE_MISMATCH"},
		{"to optional", `["null","int"]`, `"int"`, ""},
		{"from optional", `"int"`, `["null","int"]`, "TYPE_MISMATCH"},
		{"union widened", `["null","int","string"]`, `["null","int"]`, ""},
		{"union narrowed", `["null","int"]`, `["null","int","string"]`, "MISSING_UNION_BRANCH"},
		{"union branch promoted", `["null","long"]`, `["null","int"]`, ""},
		{"array items promoted", `{"type":"array","items":"long"}`, `{"type":"array","items":"int"}`, ""},
		{"array items narrowed", `{"type":"array","items":"int"}`, `{"type":"array","items":"long"}`, "TYPE_MISMATCH"},
		{"map values", `{"type":"map","values":"string"}`, `{"type":"map","values":"int"}`, "TYPE_MISMATCH"},
		{"nested record field", rec(`{"name":"in","type":` + rec2(`{"name":"x","type":"int"},{"name":"y","type":"int"}`) + `}`), rec(`{"name":"in","type":` + rec2(`{"name":"x","type":"int"}`) + `}`), "READER_FIELD_MISSING_DEFAULT_VALUE"},
		{"recursive", `{"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"],"default":null}]}`,
			`{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"],"default":null}]}`, ""},
		{"logical type ignored", `{"type":"long","logicalType":"timestamp-millis"}`, `"long"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := CanRead(mustParse(t, TypeAvro, c.reader), mustParse(t, TypeAvro, c.writer))
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("want compatible, got %v", got)
			case c.want != "" && (len(got) == 0 || !strings.Contains(got[0], "'"+c.want+"'")):
				t.Fatalf("want %s, got %v", c.want, got)
			}
		})
	}
}

func rec2(fields string) string {
	return `{"type":"record","name":"Inner","fields":[` + fields + `]}`
}

// TestLevels checks each compatibility level's direction and reach
// (latest only or every version) on a history whose versions differ.
func TestLevels(t *testing.T) {
	rec := func(fields string) Parsed {
		return mustParse(t, TypeAvro, `{"type":"record","name":"R","fields":[`+fields+`]}`)
	}
	v1 := rec(`{"name":"a","type":"int"}`)
	v2 := rec(`{"name":"a","type":"int"},{"name":"b","type":"int","default":0}`)
	// Drops b (fine against v2 backward) and adds c without a default
	// (not readable from v1 or v2 backward; forward fine).
	addNoDefault := rec(`{"name":"a","type":"int"},{"name":"c","type":"int"}`)
	// Keeps a and b: backward with v2; with v1 too (b has a default).
	same := rec(`{"name":"a","type":"int"},{"name":"b","type":"int","default":0}`)
	// Drops a: the old schemas have no default for a, so forward breaks.
	dropA := rec(`{"name":"b","type":"int","default":0}`)
	// Changes a's type from int to long: backward fine, forward not.
	widened := rec(`{"name":"a","type":"long"},{"name":"b","type":"int","default":0}`)
	hist := []Parsed{v1, v2}
	cases := []struct {
		level string
		new   Parsed
		ok    bool
	}{
		{LevelNone, addNoDefault, true},
		{LevelBackward, addNoDefault, false},
		{LevelBackward, same, true},
		{LevelBackward, dropA, true},
		{LevelForward, addNoDefault, true},
		{LevelForward, dropA, false},
		{LevelForward, widened, false},
		{LevelBackward, widened, true},
		{LevelFull, widened, false},
		{LevelFull, same, true},
		{LevelBackwardTransitive, widened, true},
		{LevelFullTransitive, same, true},
	}
	for _, c := range cases {
		got := Incompatibilities(c.level, c.new, hist)
		if (len(got) == 0) != c.ok {
			t.Errorf("%s: compatible %v, want %v (%v)", c.level, len(got) == 0, c.ok, got)
		}
	}
	// Transitive reach: v1 has a without default b; a new version that
	// requires b without a default is readable-from v2 data only.
	v2b := rec(`{"name":"a","type":"int"},{"name":"b","type":"int"}`)
	newer := rec(`{"name":"a","type":"int"},{"name":"b","type":"int"}`)
	if got := Incompatibilities(LevelBackward, newer, []Parsed{v1, v2b}); len(got) != 0 {
		t.Errorf("BACKWARD checks only the latest: %v", got)
	}
	if got := Incompatibilities(LevelBackwardTransitive, newer, []Parsed{v1, v2b}); len(got) == 0 {
		t.Error("BACKWARD_TRANSITIVE must check v1 too")
	}
	if got := Incompatibilities(LevelForwardTransitive, v1, []Parsed{rec(`{"name":"z","type":"int"}`), v2b}); len(got) == 0 {
		t.Error("FORWARD_TRANSITIVE must check the first version too")
	}
}

// TestJSONCanRead pins the JSON Schema rules: the reader must accept every
// document the writer accepts.
func TestJSONCanRead(t *testing.T) {
	obj := func(props, extra string) string {
		return `{"type":"object","properties":{` + props + `}` + extra + `}`
	}
	cases := []struct {
		name, reader, writer, want string
	}{
		{"same", obj(`"a":{"type":"string"}`, ``), obj(`"a":{"type":"string"}`, ``), ""},
		{"type changed", obj(`"a":{"type":"integer"}`, ``), obj(`"a":{"type":"string"}`, ``), "TYPE_CHANGED"},
		{"integer to number", obj(`"a":{"type":"number"}`, ``), obj(`"a":{"type":"integer"}`, ``), ""},
		{"number to integer", obj(`"a":{"type":"integer"}`, ``), obj(`"a":{"type":"number"}`, ``), "TYPE_NARROWED"},
		{"type widened", `{"type":["string","null"]}`, `{"type":"string"}`, ""},
		{"type narrowed", `{"type":"string"}`, `{"type":["string","null"]}`, "TYPE_NARROWED"},
		{"property added to open model", obj(`"a":{"type":"string"},"b":{"type":"string"}`, ``), obj(`"a":{"type":"string"}`, ``), "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"},
		{"property added to closed model", obj(`"a":{"type":"string"},"b":{"type":"string"}`, `,"additionalProperties":false`), obj(`"a":{"type":"string"}`, `,"additionalProperties":false`), ""},
		{"property removed from open reader", obj(``, ``), obj(`"a":{"type":"string"}`, ``), ""},
		{"property removed from closed reader", obj(``, `,"additionalProperties":false`), obj(`"a":{"type":"string"}`, `,"additionalProperties":false`), "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"},
		{"required added", obj(`"a":{"type":"string"}`, `,"required":["a"]`), obj(`"a":{"type":"string"}`, ``), "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"},
		{"required added with default", obj(`"a":{"type":"string","default":"x"}`, `,"required":["a"]`), obj(`"a":{"type":"string"}`, ``), ""},
		{"required removed", obj(`"a":{"type":"string"}`, ``), obj(`"a":{"type":"string"}`, `,"required":["a"]`), ""},
		{"additional properties closed", obj(``, `,"additionalProperties":false`), obj(``, ``), "ADDITIONAL_PROPERTIES_REMOVED"},
		{"additional properties opened", obj(``, ``), obj(``, `,"additionalProperties":false`), ""},
		{"enum widened", `{"enum":["a","b","c"]}`, `{"enum":["a","b"]}`, ""},
		{"enum narrowed", `{"enum":["a"]}`, `{"enum":["a","b"]}`, "ENUM_ARRAY_NARROWED"},
		{"maxLength decreased", `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":10}`, "MAX_LENGTH_DECREASED"},
		{"maxLength increased", `{"type":"string","maxLength":20}`, `{"type":"string","maxLength":10}`, ""},
		{"minimum added", `{"type":"number","minimum":0}`, `{"type":"number"}`, "MINIMUM_ADDED"},
		{"minimum decreased", `{"type":"number","minimum":-5}`, `{"type":"number","minimum":0}`, ""},
		{"items changed", `{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":{"type":"integer"}}`, "TYPE_CHANGED"},
		{"nested", obj(`"o":`+obj(`"x":{"type":"integer"}`, ``), ``), obj(`"o":`+obj(`"x":{"type":"string"}`, ``), ``), "TYPE_CHANGED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := CanRead(mustParse(t, TypeJSON, c.reader), mustParse(t, TypeJSON, c.writer))
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("want compatible, got %v", got)
			case c.want != "" && (len(got) == 0 || !strings.Contains(got[0], `"`+c.want+`"`)):
				t.Fatalf("want %s, got %v", c.want, got)
			}
		})
	}
}

// TestProtoDiff pins Confluent's Protobuf rules: protoDiff(original,
// update) reports only the changes Confluent counts as incompatible.
func TestProtoDiff(t *testing.T) {
	const head = "syntax = \"proto3\";\npackage p;\n"
	cases := []struct {
		name, original, update, want string
	}{
		{"same", `message M { string a = 1; }`, `message M { string a = 1; }`, ""},
		{"field added", `message M { string a = 1; }`, `message M { string a = 1; int32 b = 2; }`, ""},
		{"field removed", `message M { string a = 1; int32 b = 2; }`, `message M { string a = 1; }`, ""},
		{"field renamed", `message M { string a = 1; }`, `message M { string z = 1; }`, ""},
		{"string to bytes", `message M { string a = 1; }`, `message M { bytes a = 1; }`, ""},
		{"int32 to int64", `message M { int32 a = 1; }`, `message M { int64 a = 1; }`, ""},
		{"int32 to sint32", `message M { int32 a = 1; }`, `message M { sint32 a = 1; }`, protoFieldScalarKind},
		{"int32 to string", `message M { int32 a = 1; }`, `message M { string a = 1; }`, protoFieldScalarKind},
		{"scalar to message", `message M { int32 a = 1; } message N {}`, `message M { N a = 1; } message N {}`, protoFieldKindChanged},
		{"message type changed", `message M { N a = 1; } message N {} message O {}`, `message M { O a = 1; } message N {} message O {}`, protoFieldNamedType},
		{"message removed", `message M { string a = 1; } message N {}`, `message M { string a = 1; }`, protoMessageRemoved},
		{"message added", `message M { string a = 1; }`, `message M { string a = 1; } message N {}`, ""},
		{"package changed", `message M {}`, "", protoPackageChanged},
		{"repeated numeric", `message M { int32 a = 1; }`, `message M { repeated int32 a = 1; }`, protoFieldNumericLabel},
		{"oneof field removed", `message M { oneof o { string a = 1; int32 b = 2; } }`, `message M { oneof o { string a = 1; } }`, protoOneofFieldRemoved},
		{"fields moved to new oneof", `message M { string a = 1; int32 b = 2; }`, `message M { oneof o { string a = 1; int32 b = 2; } }`, protoMultipleMovedToOneof},
		{"one field moved to new oneof", `message M { string a = 1; }`, `message M { oneof o { string a = 1; } }`, ""},
		{"enum value added", `message M { E e = 1; } enum E { A = 0; }`, `message M { E e = 1; } enum E { A = 0; B = 1; }`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := mustParse(t, TypeProtobuf, head+c.original).(*protoSchema)
			upd := head + c.update
			if c.want == protoPackageChanged {
				upd = "syntax = \"proto3\";\npackage q;\n" + c.original
			}
			u := mustParse(t, TypeProtobuf, upd).(*protoSchema)
			got := protoDiff(o, u)
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("want compatible, got %v", got)
			case c.want != "" && (len(got) == 0 || !strings.Contains(got[0], `"`+c.want+`"`)):
				t.Fatalf("want %s, got %v", c.want, got)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	bad := []struct{ typ, text string }{
		{TypeAvro, `{"type":"recrd","name":"x"}`},
		{TypeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":"nosuch"}]}`},
		{TypeAvro, `not json`},
		{TypeJSON, `{"type":"strng"}`},
		{TypeJSON, `[1,2]`},
		{TypeJSON, `{"properties":[]}`},
		{TypeJSON, `{} {}`},
		{TypeProtobuf, `message M { strin a = 1; }`},
		{TypeProtobuf, `syntax = "proto3"; message M { string a = 1; string b = 1; }`},
		{"XML", `<a/>`},
	}
	for _, b := range bad {
		_, err := Parse(b.typ, b.text, nil)
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalidSchema {
			t.Errorf("Parse(%s, %q) = %v, want a 42201 error", b.typ, b.text, err)
		}
	}
}

// TestAvroReferences parses a schema that uses a named type from a
// referenced schema.
func TestAvroReferences(t *testing.T) {
	dep := Dep{Name: "ex.Address", Schema: `{"type":"record","name":"Address","namespace":"ex","fields":[{"name":"city","type":"string"}]}`}
	_, err := Parse(TypeAvro, `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"home","type":"ex.Address"}]}`, []Dep{dep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(TypeAvro, `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"home","type":"ex.Address"}]}`, nil); err == nil {
		t.Fatal("an unresolved named type must not parse")
	}
	// Protobuf imports resolve through references too.
	pdep := Dep{Name: "addr.proto", Schema: "syntax = \"proto3\";\npackage ex;\nmessage Address { string city = 1; }"}
	if _, err := Parse(TypeProtobuf, "syntax = \"proto3\";\npackage ex;\nimport \"addr.proto\";\nimport \"google/protobuf/timestamp.proto\";\nmessage User { Address home = 1; google.protobuf.Timestamp at = 2; }", []Dep{pdep}); err != nil {
		t.Fatal(err)
	}
}

// TestProtoIdentity: the same .proto formatted otherwise, with comments,
// is the same schema; a changed name or string is not.
func TestProtoIdentity(t *testing.T) {
	a := "syntax = \"proto3\";\npackage ex;\n\nmessage Event {\n  string id = 1; // the key\n  int64 at = 2;\n}\n"
	b := "syntax=\"proto3\"; package ex; /* events */ message Event{string id=1;int64 at=2;}"
	if protoIdentity(a) != protoIdentity(b) {
		t.Fatalf("%q != %q", protoIdentity(a), protoIdentity(b))
	}
	for _, c := range []string{
		strings.Replace(a, "Event", "Evnt", 1),
		strings.Replace(a, "int64 at", "int64 att", 1),
		strings.Replace(a, `"proto3"`, `"proto2"`, 1),
	} {
		if protoIdentity(c) == protoIdentity(a) {
			t.Errorf("%q is the same as %q", c, a)
		}
	}
	reg, _ := newMemRegistry()
	id1, err := reg.Register(t.Context(), "p", SchemaRequest{Schema: a, SchemaType: TypeProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := reg.Register(t.Context(), "q", SchemaRequest{Schema: b, SchemaType: TypeProtobuf})
	if err != nil || id2 != id1 {
		t.Fatalf("reformatted proto: id %d, %v; want %d", id2, err, id1)
	}
	if vs, _ := reg.Versions("p", false); len(vs) != 1 {
		t.Fatalf("versions %v", vs)
	}
	if v, err := reg.Lookup("p", SchemaRequest{Schema: b, SchemaType: TypeProtobuf}, false); err != nil || v.ID != id1 {
		t.Fatalf("lookup of the reformatted proto: %v, %v", v, err)
	}
}

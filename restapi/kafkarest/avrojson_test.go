package kafkarest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

const testAvroSchema = `{"type":"record","name":"User","namespace":"t","fields":[
 {"name":"name","type":"string"},
 {"name":"age","type":["null","int"],"default":null},
 {"name":"score","type":"double"},
 {"name":"ok","type":"boolean"},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"raw","type":"bytes"},
 {"name":"id","type":{"type":"fixed","name":"Id","size":2}},
 {"name":"note","type":"string","default":"none"}
]}`

type testUser struct {
	Name  string           `avro:"name"`
	Age   *int32           `avro:"age"`
	Score float64          `avro:"score"`
	OK    bool             `avro:"ok"`
	Tags  []string         `avro:"tags"`
	Attrs map[string]int64 `avro:"attrs"`
	Color string           `avro:"color"`
	Raw   []byte           `avro:"raw"`
	ID    [2]byte          `avro:"id"`
	Note  string           `avro:"note"`
}

func decodeJSONNumber(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAvroFromJSONMatchesHamba checks the JSON encoding's bytes against
// hamba/avro's own encoder of the same data, and the way back.
func TestAvroFromJSONMatchesHamba(t *testing.T) {
	s := avro.MustParse(testAvroSchema)
	in := `{"name":"ann","age":{"int":41},"score":1.5,"ok":true,"tags":["a","b"],"attrs":{"k":-7},
	 "color":"GREEN","raw":"\u0000\u00ff","id":"\u0001\u0002"}`
	got, err := avroFromJSON(nil, s, decodeJSONNumber(t, in), "value")
	if err != nil {
		t.Fatal(err)
	}
	age := int32(41)
	want := testUser{Name: "ann", Age: &age, Score: 1.5, OK: true, Tags: []string{"a", "b"},
		Attrs: map[string]int64{"k": -7}, Color: "GREEN", Raw: []byte{0, 255}, ID: [2]byte{1, 2}, Note: "none"}
	var u testUser
	if err := avro.Unmarshal(s, got, &u); err != nil || !reflect.DeepEqual(u, want) {
		t.Fatalf("hamba decodes %x to %+v, %v; want %+v", got, u, err, want)
	}
	// hamba writes arrays and maps in sized blocks: the way back reads them.
	hb, err := avro.Marshal(s, want)
	if err != nil {
		t.Fatal(err)
	}
	fromHamba, rest, err := avroToJSON(s, hb)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode hamba's bytes: %v, %d bytes left", err, len(rest))
	}
	hj, _ := json.Marshal(fromHamba)
	back, rest, err := avroToJSON(s, got)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v, %d bytes left", err, len(rest))
	}
	b, _ := json.Marshal(back)
	wantBack := `{"age":{"int":41},"attrs":{"k":-7},"color":"GREEN","id":"\u0001\u0002","name":"ann","note":"none","ok":true,"raw":"\u0000ÿ","score":1.5,"tags":["a","b"]}`
	if string(b) != wantBack || string(hj) != wantBack {
		t.Fatalf("decoded %s\nand     %s\nwant    %s", b, hj, wantBack)
	}
	// A null union branch.
	got, err = avroFromJSON(nil, s, decodeJSONNumber(t, strings.Replace(in, `{"int":41}`, "null", 1)), "value")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err = avroToJSON(s, got)
	if err != nil || back.(map[string]any)["age"] != nil {
		t.Fatalf("null age decodes to %v, %v", back, err)
	}
}

func TestAvroFromJSONRefuses(t *testing.T) {
	s := avro.MustParse(testAvroSchema)
	base := `{"name":"ann","score":1,"ok":true,"tags":[],"attrs":{},"color":"RED","raw":"","id":"ab"}`
	if _, err := avroFromJSON(nil, s, decodeJSONNumber(t, base), "value"); err != nil {
		t.Fatalf("base record refused: %v", err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"name":"ann"`, `"name":1`, "value.name: want a string"},
		{`"name":"ann",`, ``, "value.name: missing"},
		{`"score":1`, `"score":"x"`, "value.score: want a number"},
		{`"color":"RED"`, `"color":"BLUE"`, "not a symbol"},
		{`"id":"ab"`, `"id":"abc"`, "want 2 bytes"},
		{`"raw":""`, `"raw":"€"`, "not a byte"},
		{`"ok":true`, `"ok":true,"extra":1`, "not a field"},
		{`"name":"ann"`, `"name":"ann","age":41`, "for a union"},
		{`"name":"ann"`, `"name":"ann","age":{"long":41}`, "not a branch"},
		{`"tags":[]`, `"tags":[1]`, "value.tags[0]: want a string"},
	} {
		in := strings.Replace(base, tc.from, tc.to, 1)
		_, err := avroFromJSON(nil, s, decodeJSONNumber(t, in), "value")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", in, err, tc.want)
		}
	}
	if _, err := avroFromJSON(nil, avro.MustParse(`"int"`), decodeJSONNumber(t, "4294967296"), "v"); err == nil {
		t.Error("an int out of range is accepted")
	}
}

func TestAvroToJSONTruncated(t *testing.T) {
	s := avro.MustParse(testAvroSchema)
	in := `{"name":"ann","score":1,"ok":true,"tags":["x"],"attrs":{"a":1},"color":"RED","raw":"z","id":"ab"}`
	b, err := avroFromJSON(nil, s, decodeJSONNumber(t, in), "value")
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(b) {
		if v, _, err := avroToJSON(s, b[:i]); err == nil {
			t.Fatalf("%d of %d bytes decode to %v", i, len(b), v)
		}
	}
	if v, _, _ := avroToJSON(s, b); !reflect.DeepEqual(v.(map[string]any)["tags"], []any{"x"}) {
		t.Fatalf("tags %v", v)
	}
}

// FuzzAvroToJSON decodes arbitrary bytes without panicking.
func FuzzAvroToJSON(f *testing.F) {
	s := avro.MustParse(testAvroSchema)
	f.Add([]byte{6, 'a', 'n', 'n', 0})
	f.Fuzz(func(_ *testing.T, b []byte) {
		_, _, _ = avroToJSON(s, b)
	})
}

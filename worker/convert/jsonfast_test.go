package convert

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var fastSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e10`, `-12.34E-5`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`"plain"`, `"esc\"aped\n\u00e9\ud83d\ude00"`, "\"caf\xc3\xa9\"", "\"bad\xffutf8\"", "\"ctl\x01\"", `"\x"`, `"\u12"`,
	`{"a":1,"a":2}`, `{"a" : [1, {"b": null}] , "c":"d"}`, ` [1,2,3] `, `[1,]`, `{"a":1,}`, `{"a"}`, `[1 2]`,
	`1 2`, `1 ]`, `{} {}`, `tru`, `nul`, `"unterminated`, `{"k\u0041":true}`, "\t{\n\"x\"\r: [ ] }\n",
	`{"schema":{"type":"string","optional":false},"payload":"k"}`,
	`{"payload":{"a":1},"schema":null}`, `{"schema":null,"payload":null}`, `{"schema":{"type":"int32"},"payload":5,"x":1}`,
	`{"schema":{"type":"int32"}}`, `{"payload":1}`, `{"schema":{"type":"int32"},"payload":5} x`, `{"sch\u0065ma":null,"payload":1}`,
	`{"schema":{"type":"int32"},"payload":5,"schema":null}`, `{"schema":[1,{"a":[]}],"payload":[1,2]}`, `{"schema":{"a":1,},"payload":1}`,
}

// TestFastDecodeMatchesEncodingJSON: whenever the single-pass reader
// accepts input, encoding/json accepts it too with the same value.
func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range fastSeeds {
		checkFast(t, []byte(s))
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFast(t, b) })
}

func checkFast(t *testing.T, b []byte) {
	t.Helper()
	if v, ok := fastDecode(b, false); ok {
		want, err := decodeJSON(b)
		if err != nil {
			t.Fatalf("%q: fast path accepted, encoding/json: %v", b, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", b, v, want)
		}
	} else if json.Valid(b) {
		// Valid JSON the fast path refuses must be rare: only strings it
		// hands over or extreme nesting; none in the seeds.
		t.Logf("%q: valid JSON refused by the fast path", b)
	}
	// Aliasing the input changes where strings live, never what they say.
	va, oka := fastDecode(bytes.Clone(b), true)
	if v, ok := fastDecode(b, false); ok != oka || !reflect.DeepEqual(v, va) {
		t.Fatalf("%q: aliased %#v (%v), copied %#v (%v)", b, va, oka, v, ok)
	}
	for _, known := range [][]byte{nil, []byte(`{"type":"int32"}`), []byte(`null`), []byte(`1`)} {
		checkEnvelope(t, b, known)
		_, pa, oka := fastEnvelope(bytes.Clone(b), known, true)
		if _, p, ok := fastEnvelope(b, known, false); ok != oka || !reflect.DeepEqual(p, pa) {
			t.Fatalf("%q: aliased envelope payload %#v (%v), copied %#v (%v)", b, pa, oka, p, ok)
		}
	}
}

func checkEnvelope(t *testing.T, b, known []byte) {
	t.Helper()
	if raw, payload, ok := fastEnvelope(b, known, false); ok {
		var env map[string]json.RawMessage
		if err := json.Unmarshal(b, &env); err != nil || len(env) != 2 || env["schema"] == nil || env["payload"] == nil {
			t.Fatalf("%q: fast envelope accepted, encoding/json: %v %v", b, err, env)
		}
		if string(raw) != string(env["schema"]) {
			t.Fatalf("%q: schema %q, encoding/json %q", b, raw, env["schema"])
		}
		want, err := decodeJSON(env["payload"])
		if err != nil || !reflect.DeepEqual(payload, want) {
			t.Fatalf("%q: payload %#v, encoding/json %#v (%v)", b, payload, want, err)
		}
	}
}

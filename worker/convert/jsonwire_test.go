package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// checkToWire converts b both ways with a schemaless JsonConverter: when
// ToConnectWire takes the bytes, ToConnect must succeed with a value equal
// to the encoded one.
func checkToWire(t *testing.T, c *JSONConverter, w *wire.ValueWriter, b []byte) (took bool) {
	t.Helper()
	s, raw, ok := c.ToConnectWire("t", b, w)
	ws, wv, werr := c.ToConnect("t", b)
	if !ok {
		return false
	}
	if werr != nil {
		t.Fatalf("%q: ToConnectWire took bytes ToConnect refuses: %v", b, werr)
	}
	if s != nil || ws != nil || raw.Schema() != nil {
		t.Fatalf("%q: schemas %v, %v", b, s, ws)
	}
	got, err := raw.Decode()
	if err != nil {
		t.Fatalf("%q: decode: %v", b, err)
	}
	if !schema.ValueEqual(got, wv) {
		t.Fatalf("%q: ToConnectWire %#v, ToConnect %#v", b, got, wv)
	}
	return true
}

func TestJSONToWire(t *testing.T) {
	c, err := NewJSON(map[string]string{"schemas.enable": "false"})
	if err != nil {
		t.Fatal(err)
	}
	var w wire.ValueWriter
	took := []string{
		`{"id":1,"key":"key-1","amount":"AQ==","created":1700000000000,"payload":"abc"}`,
		` [1, -2, 3.5, 1e3, -0, 0.0, 12345678901234567890, 1e999, true, false, null, "x"] `,
		`{"a":{"b":[{"c":"\u00e9\n\"q\""}]},"a":2,"":""}`, // duplicate key: the last wins, as in ToConnect
		`"h\u00e9llo \ud83d\ude00"`, `"caf` + "\xc3\xa9" + `"`, `"bad ` + "\xff" + ` utf8"`,
		`0`, `-1.5e-7`, `[]`, `{}`, `[[[[]]]]`, strings.Repeat(`[`, 64) + strings.Repeat(`]`, 64),
		`[` + strings.Repeat(`1,`, 300) + `1]`,
	}
	for _, in := range took {
		if !checkToWire(t, c, &w, []byte(in)) {
			t.Errorf("ToConnectWire did not take %q", in)
		}
	}
	// Refused: malformed, trailing data, deeper than the wire encoding or
	// the converter allow, and null (which ToConnect returns as nil);
	// ToConnect reports or handles these. A refused value leaves nothing
	// behind: the next one converts whole.
	for _, in := range []string{`{`, `[1,]`, `{"a"}`, `1 2`, `nul`, `01`, `"\x01"`, `[1e]`, `null`, ` null `,
		`[[[1,2,{"a":[3`, strings.Repeat(`[`, 66) + strings.Repeat(`]`, 66), strings.Repeat(`[`, 101) + strings.Repeat(`]`, 101)} {
		if checkToWire(t, c, &w, []byte(in)) {
			t.Errorf("ToConnectWire took %q", in)
		}
		if !checkToWire(t, c, &w, []byte(`{"after":[1,"two"]}`)) {
			t.Errorf("ToConnectWire did not take a value after refusing %q", in)
		}
	}
	if _, _, ok := c.ToConnectWire("t", nil, &w); ok {
		t.Error("ToConnectWire took a null record value")
	}
	withSchemas, _ := NewJSON(nil)
	if _, _, ok := withSchemas.ToConnectWire("t", []byte(`{"schema":null,"payload":1}`), &w); ok {
		t.Error("ToConnectWire took an envelope")
	}
}

func FuzzJSONToWire(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "sl_*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"id":1,"key":"key-1","amount":"AQ==","payload":"abc","x":[1.5,null,{"y":"\u00e9"}]}`))
	c, err := NewJSON(map[string]string{"schemas.enable": "false"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w wire.ValueWriter
		checkToWire(t, c, &w, b)
	})
}

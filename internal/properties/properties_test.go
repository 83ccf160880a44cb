package properties

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	in := `# comment
! also a comment
listeners=PLAINTEXT://127.0.0.1:9092
log.dirs : /tmp/a
num.partitions 3
  spaced.key   =   value with spaces  
continued = one,\
            two
escaped\=key = x\ty
unicode = caf\u00e9
empty=
`
	p, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"listeners":      "PLAINTEXT://127.0.0.1:9092",
		"log.dirs":       "/tmp/a",
		"num.partitions": "3",
		"spaced.key":     "value with spaces  ",
		"continued":      "one,two",
		"escaped=key":    "x\ty",
		"unicode":        "café",
		"empty":          "",
	}
	if len(p) != len(want) {
		t.Errorf("got %d keys %v, want %d", len(p), p, len(want))
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%q = %q, want %q", k, p[k], v)
		}
	}
}

func TestParseBadEscape(t *testing.T) {
	if _, err := Parse(strings.NewReader("a=\\u12")); err == nil {
		t.Fatal("want error for a truncated \\u escape")
	}
}

func TestParseOverride(t *testing.T) {
	k, v, err := ParseOverride("log.dirs=/x=y")
	if err != nil || k != "log.dirs" || v != "/x=y" {
		t.Fatalf("got %q %q %v", k, v, err)
	}
	if _, _, err := ParseOverride("novalue"); err == nil {
		t.Fatal("want error")
	}
}

// FuzzParse checks that Parse never panics and that Format writes what it
// read so that Parse reads it back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a=b\n", "# c\n! d\nk : v\n", "k v\\\n  w\n", "es\\=c\\:k = \\u00e9\\t\n", "x=\\", "=\n", " \\ lead=  \\ v\n",
		"a=b\nc:d\\\n e\n#x\n", "\\u00e9=\\t",
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		p, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		out := Format(p)
		again, err := Parse(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%q read as %q, written as %q, which does not parse: %v", s, p, out, err)
		}
		if !maps.Equal(p, again) {
			t.Fatalf("%q read as %q, written as %q, read back as %q", s, p, out, again)
		}
	})
}

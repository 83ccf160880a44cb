package properties

import (
	"strings"
	"testing"
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

func FuzzParse(f *testing.F) {
	f.Add("a=b\nc:d\\\n e\n#x\n")
	f.Add("\\u00e9=\\t")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(strings.NewReader(s))
		if err == nil && p == nil {
			t.Fatal("nil properties without error")
		}
	})
}

package postgres

import (
	"bytes"
	"strings"
	"testing"
)

// A string as java.io.ObjectOutputStream writes it: what Debezium's v1
// hashing digests (modified UTF-8: NUL on two bytes, a supplementary
// character as two three-byte surrogates).
func TestJavaSerializedString(t *testing.T) {
	for in, want := range map[string][]byte{
		"hello": {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'},
		"":      {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x00},
		"\x00é": {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x04, 0xc0, 0x80, 0xc3, 0xa9},
		"𝄞":     {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x06, 0xed, 0xa0, 0xb4, 0xed, 0xb4, 0x9e},
	} {
		if got := javaSerializedString(in); !bytes.Equal(got, want) {
			t.Errorf("%q: got % x, want % x", in, got, want)
		}
	}
	long := javaSerializedString(strings.Repeat("x", 70000))
	if long[4] != 0x7c || len(long) != 4+1+8+70000 {
		t.Errorf("long string: tag %x, %d bytes", long[4], len(long))
	}
}

// The dynamic keys are parsed in Debezium's order of precedence; bad ones
// are refused with the reason.
func TestParseColumnRules(t *testing.T) {
	cr, errs := parseColumnRules(map[string]string{
		"column.mask.hash.v2.SHA-256.with.salt.s.a.l.t": "public.t.b",
		"column.mask.with.3.chars":                      "public.t.a",
		"column.truncate.to.2.chars":                    "public.t.a, public.t.c",
		"column.propagate.source.type":                  "public.t.d",
		"message.key.columns":                           "public.t:c,d;other.x:y",
		"topic.prefix":                                  "ignored",
	})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var kinds []columnRuleKind
	for _, r := range cr.rules {
		kinds = append(kinds, r.kind)
	}
	if len(kinds) != 4 || kinds[0] != ruleTruncate || kinds[1] != ruleMask || kinds[2] != rulePropagate || kinds[3] != ruleHashV2 {
		t.Fatalf("rules in order %v", kinds)
	}
	if string(cr.rules[3].salt) != "s.a.l.t" || cr.rules[3].alg != "SHA-256" {
		t.Errorf("hash rule %+v", cr.rules[3])
	}
	id := tableID{"public", "t"}
	if r := cr.rule(id, &column{name: "A"}, "text"); r == nil || r.kind != ruleTruncate {
		t.Errorf("column a: %+v (the first rule wins, case-insensitively)", r)
	}
	if got := cr.keyFor(id); len(got) != 2 || got[0] != "c" {
		t.Errorf("key columns %v", got)
	}
	_, errs = parseColumnRules(map[string]string{
		"column.mask.hash.WHIRLPOOL.with.salt.x": "public.t.a",
		"column.mask.with.3.chars":               "public.(t",
		"message.key.columns":                    "public.t",
	})
	for _, k := range []string{"column.mask.hash.WHIRLPOOL.with.salt.x", "column.mask.with.3.chars", "message.key.columns"} {
		if errs[k] == "" {
			t.Errorf("%s: no error", k)
		}
	}
}

package jaas

import (
	"maps"
	"strings"
	"testing"
)

func TestParseClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		class    string
		flag     string
		opts     map[string]string
		err      string
	}{
		{name: "plain", in: `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr=t;";`,
			class: "org.apache.kafka.common.security.plain.PlainLoginModule", flag: "required", opts: map[string]string{"username": "alice", "password": "s3cr=t;"}},
		{name: "single quotes, escapes, comments", in: "// a comment\nx.Mod /* inline */ REQUIRED a='it\\'s' b=\"q\\\"uote\\n\" c=word-with_$;",
			class: "x.Mod", flag: "required", opts: map[string]string{"a": "it's", "b": "q\"uote\n", "c": "word-with_$"}},
		{name: "unquoted word values", in: "x.Mod optional username=alice tokenauth=true;",
			class: "x.Mod", flag: "optional", opts: map[string]string{"username": "alice", "tokenauth": "true"}},
		{name: "no options", in: "x.Mod sufficient ;", class: "x.Mod", flag: "sufficient", opts: map[string]string{}},
		{name: "unterminated quote ends at the line", in: "x.Mod required a=\"open\n;", class: "x.Mod", flag: "required", opts: map[string]string{"a": "open"}},
		{name: "octal escapes", in: `x.Mod required a="\101\1012\477";`, class: "x.Mod", flag: "required", opts: map[string]string{"a": "AA2'7"}},
		{name: "numeric value", in: "x.Mod required awsMaxRetries=3;", err: "value not specified for key 'awsMaxRetries' in JAAS config"},
		{name: "dash value", in: "x.Mod required a=-x;", err: "value not specified for key 'a' in JAAS config"},
		{name: "no semicolon", in: `x.Mod required a="b"`, err: "JAAS config entry not terminated by semi-colon"},
		{name: "empty", in: "  // nothing\n", err: "login module not specified in JAAS config"},
		{name: "no flag", in: "x.Mod", err: "login module control flag not specified in JAAS config"},
		{name: "bad flag", in: "x.Mod mandatory;", err: "invalid login module control flag 'mandatory' in JAAS config"},
		{name: "missing equals", in: "x.Mod required a b;", err: "value not specified for key 'a' in JAAS config"},
		{name: "two modules", in: "a.B required; c.D required;", err: "JAAS config property contains 2 login modules, should be 1 module"},
		{name: "jndi", in: "com.sun.security.auth.module.JndiLoginModule required;", err: "com.sun.security.auth.module.JndiLoginModule is not allowed"},
		{name: "class is a number", in: "1 required;", err: "expected a login module class name, found a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseClient(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Class != tc.class || m.Flag != tc.flag || !maps.Equal(m.Options, tc.opts) {
				t.Fatalf("got %+v", m)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	t.Parallel()
	f, err := ParseFile(`
/* Kafka Connect's basic auth */
KafkaConnect {
   org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
   file="/etc/connect/creds.properties";
};
KafkaClient {
  org.apache.kafka.common.security.scram.ScramLoginModule required username=u password="p";
};
`)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := f.Section("KafkaConnect")
	if err != nil || len(mods) != 1 || mods[0].Options["file"] != "/etc/connect/creds.properties" {
		t.Fatalf("KafkaConnect: %+v %v", mods, err)
	}
	if _, err := f.Section("Other"); err == nil || !strings.Contains(err.Error(), "it has KafkaClient, KafkaConnect") {
		t.Fatalf("missing section: %v", err)
	}
	for in, want := range map[string]string{
		"KafkaConnect { a.B required; }":   "expected ';' after the '}'",
		"KafkaConnect { a.B required; ":    "not closed",
		"KafkaConnect a.B required; };":    "expected '{'",
		"KafkaConnect { };":                "has no login module",
		"KafkaConnect { a.B required x };": "value not specified for key 'x'",
	} {
		if _, err := ParseFile(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile(%q) = %v, want %q", in, err, want)
		}
	}
}

// FuzzParse checks that the parser never panics, and that what it accepts
// it gives back: each module's options, written out quoted, parse again to
// the same modules.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p";`,
		"x.Mod required a='b' /* c */ d=e; // f\n",
		`x.Mod required a="\101\n\\";`, "KafkaConnect { a.B required file=\"/x\"; };", "x required a=1;", "-", "/*", `"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseFile(s)
		mods, err := Parse(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, m := range mods {
			b.WriteString(m.Class + " " + m.Flag)
			for k, v := range m.Options {
				b.WriteString(" " + k + "=\"" + quote(v) + "\"")
			}
			b.WriteString(";\n")
		}
		again, err := Parse(b.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose rendering %q does not parse: %v", s, mods, b.String(), err)
		}
		if len(again) != len(mods) {
			t.Fatalf("%q: %d modules, then %d", s, len(mods), len(again))
		}
		for i := range mods {
			if again[i].Class != mods[i].Class || again[i].Flag != mods[i].Flag || !maps.Equal(again[i].Options, mods[i].Options) {
				t.Fatalf("%q: module %d was %+v, then %+v", s, i, mods[i], again[i])
			}
		}
	})
}

// quote escapes v for a double-quoted JAAS value.
func quote(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch r {
		case '\\', '"':
			b.WriteRune('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

package integration

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/internal/jaas"
)

// TestJAASParserMatchesKafka parses sasl.jaas.config values with Kafka
// 4.4's own client code (JaasContext.loadClientContext) and with
// Tributary's parser: both accept the same values, with the same class,
// flag and options, and refuse the same ones.
func TestJAASParserMatchesKafka(t *testing.T) {
	t.Parallel()
	cases := []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
		`org.apache.kafka.common.security.scram.ScramLoginModule required username='bob' password="p;w=\"q\"" tokenauth=true;`,
		"// comment\norg.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule /* x */ REQUIRED clientId=my-client clientSecret=\"s\\\\e\\tc\" scope=\"a b\";",
		`software.amazon.msk.auth.iam.IAMLoginModule required;`,
		`software.amazon.msk.auth.iam.IAMLoginModule required awsMaxRetries=3;`,
		`software.amazon.msk.auth.iam.IAMLoginModule required awsMaxRetries="3";`,
		`x.Mod optional a=-b;`,
		`x.Mod sufficient a=$b_c-d.e;`,
		`x.Mod required a="unterminated` + "\n;",
		`x.Mod required a="\101\1012\477";`,
		`x.Mod required a="b"`,
		`x.Mod mandatory;`,
		`x.Mod`,
		``,
		`a.B required; c.D required;`,
		`x.Mod required a b;`,
		`x.Mod required =b;`,
		`com.sun.security.auth.module.JndiLoginModule required;`,
		`x.Mod required a='é ü' b=ü;`,
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "cases.txt")
	var lines []string
	for _, c := range cases {
		lines = append(lines, base64.StdEncoding.EncodeToString([]byte(c)))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := harness.RunJavaProgram(t, filepath.Join("testdata", "jaas", "JaasParse.java"), in)
	kafka := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(kafka) != len(cases) {
		t.Fatalf("Kafka answered %d lines for %d cases:\n%s", len(kafka), len(cases), out)
	}
	for i, c := range cases {
		m, err := jaas.ParseClient(c)
		got := "ERR"
		if err == nil {
			var opts []string
			for k, v := range m.Options {
				opts = append(opts, k+"="+base64.StdEncoding.EncodeToString([]byte(v)))
			}
			slices.Sort(opts)
			got = strings.TrimSpace("OK " + m.Class + " " + m.Flag + " " + strings.Join(opts, " "))
		}
		want := kafka[i]
		if strings.HasPrefix(want, "ERR") {
			if err == nil {
				t.Errorf("%q: Kafka refuses it (%s), Tributary accepts %s", c, want, got)
			} else {
				t.Logf("%q: both refuse it: Kafka %s; Tributary: %v", c, strings.TrimPrefix(want, "ERR "), err)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: Kafka %s, Tributary %s (%v)", c, want, got, err)
		}
	}
}

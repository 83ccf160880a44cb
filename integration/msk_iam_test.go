package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/internal/kafkaauth"
)

// TestMSKIAMMatchesAWSLibrary checks what a worker sends to Amazon MSK
// with IAM authentication against Amazon's aws-msk-iam-auth library (no
// MSK cluster is reachable from the tests: AWS itself never checks these
// signatures here). The worker's client settings are built as a worker
// builds them (credentials from the environment, as the AWS default chain
// reads them):
//   - AWS_MSK_IAM: its payload has the library's keys and fixed values, and
//     the AWS SDK's signer, the one the library uses, computes the same
//     signature for it;
//   - OAUTHBEARER with IAMOAuthBearerLoginCallbackHandler: the library's
//     IAMOAuthBearerToken reads its token (a 15 minute lifetime) and the
//     SDK's signer computes the same signature for it.
func TestMSKIAMMatchesAWSLibrary(t *testing.T) {
	t.Parallel()
	cp := harness.MSKJars(t)
	const ak, sk, st = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "FwoGZXIvYXdzEBYaDH+session/token=="
	environ := []string{"AWS_ACCESS_KEY_ID=" + ak, "AWS_SECRET_ACCESS_KEY=" + sk, "AWS_SESSION_TOKEN=" + st, "AWS_REGION=eu-west-1", "AWS_EC2_METADATA_DISABLED=true"}
	host := "b-1.mycluster.abc123.c2.kafka.eu-west-1.amazonaws.com"
	ctx := context.Background()

	iam, err := kafkaauth.New(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
		"sasl.jaas.config":                   "software.amazon.msk.auth.iam.IAMLoginModule required;",
		"sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"}, kafkaauth.Options{Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	_, payload, err := iam.Mechanism.Authenticate(ctx, host+":9098")
	if err != nil {
		t.Fatal(err)
	}
	ob, err := kafkaauth.New(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
		"sasl.login.callback.handler.class": "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler",
		"sasl.jaas.config":                  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"}, kafkaauth.Options{Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := ob.Mechanism.Authenticate(ctx, host+":9098")
	if err != nil {
		t.Fatal(err)
	}
	// RFC 7628: n,,\x01auth=Bearer TOKEN\x01\x01
	_, token, _ := strings.Cut(string(first), "auth=Bearer ")
	token, _, _ = strings.Cut(token, "\x01")

	dir := t.TempDir()
	payloadFile, tokenFile := filepath.Join(dir, "payload.json"), filepath.Join(dir, "token.txt")
	os.WriteFile(payloadFile, payload, 0o600)
	os.WriteFile(tokenFile, []byte(token), 0o600)
	out := harness.RunJavaProgramWith(t, filepath.Join("testdata", "msk", "MskCheck.java"), cp, ak, sk, st, host, payloadFile, tokenFile)
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = v
	}
	t.Logf("aws-msk-iam-auth: %s", out)

	var ours, lib map[string]string
	if err := json.Unmarshal(payload, &ours); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	if err := json.Unmarshal([]byte(lines["LIBPAYLOAD"]), &lib); err != nil {
		t.Fatalf("the library's payload %q: %v", lines["LIBPAYLOAD"], err)
	}
	for k, v := range lib {
		switch k {
		case "x-amz-date", "x-amz-signature", "x-amz-credential", "user-agent":
			if ours[k] == "" {
				t.Errorf("our payload has no %s", k)
			}
		default:
			if ours[k] != v {
				t.Errorf("%s: ours %q, the library's %q", k, ours[k], v)
			}
		}
	}
	for k := range ours {
		if _, ok := lib[k]; !ok {
			t.Errorf("our payload has %s, the library's does not", k)
		}
	}
	if !strings.HasPrefix(ours["x-amz-credential"], ak+"/") || !strings.HasSuffix(ours["x-amz-credential"], "/eu-west-1/kafka-cluster/aws4_request") {
		t.Errorf("credential scope %q", ours["x-amz-credential"])
	}
	if lines["PAYLOADSIG"] != ours["x-amz-signature"] {
		t.Errorf("AWS_MSK_IAM signature: ours %s, the AWS SDK's %s", ours["x-amz-signature"], lines["PAYLOADSIG"])
	}
	sig := strings.Fields(lines["TOKENSIG"])
	if len(sig) != 2 || sig[0] != sig[1] {
		t.Errorf("OAUTHBEARER token signature (the AWS SDK's, ours): %q", lines["TOKENSIG"])
	}
	// (The library's principalName is the credential scope's service,
	// kafka-cluster, for its own tokens as for these.)
	if !strings.Contains(lines["TOKEN"], "principal=kafka-cluster") || !strings.Contains(lines["TOKEN"], "lifetimeMs=") {
		t.Errorf("IAMOAuthBearerToken read %q", lines["TOKEN"])
	}
	var life, start int64
	for _, f := range strings.Fields(lines["TOKEN"]) {
		if v, ok := strings.CutPrefix(f, "lifetimeMs="); ok {
			life = atoi(v)
		}
		if v, ok := strings.CutPrefix(f, "startTimeMs="); ok {
			start = atoi(v)
		}
	}
	if d := time.Duration(life-start) * time.Millisecond; d != 15*time.Minute {
		t.Errorf("token lifetime %v, want 15m", d)
	}
	if bytes.Contains(out, []byte(sk)) {
		t.Error("the secret key is in what was sent")
	}
}

func atoi(s string) int64 {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return n
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

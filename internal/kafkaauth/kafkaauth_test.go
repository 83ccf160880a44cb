package kafkaauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/aws"

	"github.com/tributary-dev/tributary/internal/jaas"
)

func TestNewErrors(t *testing.T) {
	t.Parallel()
	plainJAAS := PlainModule + ` required username="alice" password="alice-secret";`
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"bad protocol":     {map[string]string{"security.protocol": "TLS"}, "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"},
		"no mechanism":     {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": plainJAAS}, "GSSAPI (Kerberos), is not supported"},
		"kerberos":         {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}, "Kerberos is not supported"},
		"no jaas":          {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config is not set"},
		"typo in module":   {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLogin required username="a" password="b";`}, "does not go with sasl.mechanism=PLAIN"},
		"malformed jaas":   {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PlainModule + ` required username="a" password="secret-value"`}, "not terminated by semi-colon"},
		"unknown mech":     {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "DIGEST-MD5", "sasl.jaas.config": plainJAAS}, "not supported"},
		"oauth no url":     {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": OAuthHandler, "sasl.jaas.config": OAuthModule + ` required clientId="c" clientSecret="s";`}, "sasl.oauthbearer.token.endpoint.url is not set"},
		"oauth unsecured":  {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": OAuthModule + " required;"}, "unsecuredLoginStringClaim_sub"},
		"bad handler":      {map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": "com.example.Handler", "sasl.jaas.config": OAuthModule + " required;"}, "not a handler Tributary has"},
		"iam wrong module": {map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": plainJAAS}, "use software.amazon.msk.auth.iam.IAMLoginModule"},
		"pem and password": {map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/x.pem", "ssl.keystore.password": "pw"}, "SSL key store password cannot be specified with PEM format"},
	} {
		_, err := New(tc.props, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes a secret: %v", name, err)
		}
	}
	s, err := New(map[string]string{"sasl.jaas.config": plainJAAS}, Options{})
	if err != nil || s.Secured() || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "security.protocol is PLAINTEXT") {
		t.Fatalf("PLAINTEXT with a JAAS config: %+v %v", s, err)
	}
}

// TestSASLAgainstKFake authenticates with PLAIN and SCRAM against franz-go's
// kfake, an independent broker implementation, and fails with a wrong
// password.
func TestSASLAgainstKFake(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "admin", "admin-secret"),
		kfake.Superuser("SCRAM-SHA-256", "admin", "admin-secret"),
		kfake.Superuser("SCRAM-SHA-512", "admin", "admin-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		for _, pass := range []string{"admin-secret", "wrong"} {
			module := ScramModule
			if mech == "PLAIN" {
				module = PlainModule
			}
			s, err := New(map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech,
				"sasl.jaas.config": module + ` required username="admin" password="` + pass + `";`}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(s.Mechanism), kgo.RequestRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = cl.Ping(ctx)
			cancel()
			cl.Close()
			if pass == "admin-secret" && err != nil {
				t.Errorf("%s: %v", mech, err)
			}
			// (kfake closes the connection; Apache Kafka answers
			// SASL_AUTHENTICATION_FAILED first: see integration/.)
			if pass == "wrong" && err == nil {
				t.Errorf("%s with a wrong password: %v", mech, err)
			}
		}
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		id, secret, ok := r.BasicAuth()
		if r.Method != http.MethodPost || !ok || id != "tributary" || secret != "client secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "kafka" {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + string(rune('0'+calls.Load())), "expires_in": 100, "token_type": "bearer"})
	}))
	defer srv.Close()
	props := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
		"sasl.login.callback.handler.class":   OAuthHandler,
		"sasl.oauthbearer.token.endpoint.url": srv.URL,
		"sasl.jaas.config":                    OAuthModule + ` required clientId="tributary" clientSecret="client secret" scope="kafka" extension_traceId="x";`}
	src, principal, err := newOAuthSource(props, mustJAAS(t, props["sasl.jaas.config"]), true, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if principal != "OAuth client tributary" {
		t.Errorf("principal %q", principal)
	}
	now := time.Unix(1_700_000_000, 0)
	src.now = func() time.Time { return now }
	ctx := context.Background()
	a, err := src.auth(ctx)
	if err != nil || a.Token != "tok-1" || a.Extensions["traceId"] != "x" {
		t.Fatalf("first token: %+v %v", a, err)
	}
	now = now.Add(79 * time.Second) // within 80% of 100 s: cached
	if a, _ := src.auth(ctx); a.Token != "tok-1" || calls.Load() != 1 {
		t.Fatalf("cached token: %q after %d calls", a.Token, calls.Load())
	}
	now = now.Add(2 * time.Second) // past the refresh window
	if a, _ := src.auth(ctx); a.Token != "tok-2" {
		t.Fatalf("refreshed token: %q", a.Token)
	}
	// A refused client is not retried, and its secret is not in the error.
	bad := mustJAAS(t, OAuthModule+` required clientId="tributary" clientSecret="wrong-secret";`)
	src, _, err = newOAuthSource(props, bad, true, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	if _, err := src.auth(ctx); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong-secret") || calls.Load() != before+1 {
		t.Fatalf("refused client: %v (%d calls)", err, calls.Load()-before)
	}
}

func mustJAAS(t *testing.T, s string) map[string]string {
	t.Helper()
	m, err := jaas.ParseClient(s)
	if err != nil {
		t.Fatal(err)
	}
	return m.Options
}

func TestUnsecuredJWT(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	tok, exp, err := unsecuredJWT(map[string]string{"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginListClaim_scope": ",a,b", "unsecuredLoginLifetimeSeconds": "60"}, now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[2] != "" || !exp.Equal(now.Add(time.Minute)) {
		t.Fatalf("token %q, exp %v", tok, exp)
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if string(h) != `{"alg":"none"}` || json.Unmarshal(p, &claims) != nil || claims["sub"] != "alice" || claims["exp"] != float64(1_700_000_060) ||
		len(claims["scope"].([]any)) != 2 {
		t.Fatalf("header %s, claims %s", h, p)
	}
}

// TestSigV4Vector signs AWS's get-vanilla example of the Signature Version
// 4 test suite.
func TestSigV4Vector(t *testing.T) {
	t.Parallel()
	canonical := "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256
	got := signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1", "service", "20150830T123600Z", canonical)
	if want := "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestMSKIAMPayload checks franz-go's AWS_MSK_IAM payload, which the worker
// sends, against the format of aws-msk-iam-auth (AWS4SignedPayloadGenerator:
// lower-case keys, version 2020_10_22, the kafka-cluster:Connect action, a
// 900 s presigned SigV4 signature over the host) and verifies its signature
// with this package's own signer: two implementations that agree. No MSK
// cluster is reachable from the tests; the signature is not checked by AWS.
func TestMSKIAMPayload(t *testing.T) {
	t.Parallel()
	creds := awsCreds{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: "session/token+="}
	mech := aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) {
		return aws.Auth{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey, SessionToken: creds.SessionToken, UserAgent: "tributary"}, nil
	})
	host := "b-1.mycluster.abc123.c2.kafka.eu-west-1.amazonaws.com"
	_, payload, err := mech.Authenticate(context.Background(), host+":9098")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]string
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	for k, want := range map[string]string{"version": "2020_10_22", "host": host, "user-agent": "tributary", "action": "kafka-cluster:Connect",
		"x-amz-algorithm": "AWS4-HMAC-SHA256", "x-amz-expires": "900", "x-amz-signedheaders": "host", "x-amz-security-token": creds.SessionToken} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	if !strings.HasPrefix(p["x-amz-credential"], "AKIDEXAMPLE/") || !strings.HasSuffix(p["x-amz-credential"], "/eu-west-1/kafka-cluster/aws4_request") {
		t.Errorf("credential %q", p["x-amz-credential"])
	}
	at, err := time.Parse("20060102T150405Z", p["x-amz-date"])
	if err != nil {
		t.Fatal(err)
	}
	q := presign(host, url.Values{"Action": {"kafka-cluster:Connect"}}, creds, "eu-west-1", "kafka-cluster", at, 15*time.Minute)
	if q.Get("X-Amz-Signature") != p["x-amz-signature"] {
		t.Errorf("franz-go's signature %s, this package's %s", p["x-amz-signature"], q.Get("X-Amz-Signature"))
	}

	// The OAUTHBEARER token (IAMOAuthBearerLoginCallbackHandler): the same
	// presigned request as a base64url URL to kafka.REGION.amazonaws.com.
	tok := mskToken(creds, "eu-west-1", at)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(string(raw))
	if err != nil || u.Host != "kafka.eu-west-1.amazonaws.com" || u.Query().Get("Action") != "kafka-cluster:Connect" || u.Query().Get("User-Agent") != "tributary" {
		t.Fatalf("token URL %s: %v", raw, err)
	}
	uq := u.Query()
	uq.Del("X-Amz-Signature")
	uq.Del("User-Agent")
	canonical := "GET\n/\n" + canonicalQuery(uq) + "\nhost:" + u.Host + "\n\nhost\n" + emptySHA256
	if sig := signature(creds.SecretAccessKey, "eu-west-1", "kafka-cluster", p["x-amz-date"], canonical); sig != u.Query().Get("X-Amz-Signature") {
		t.Errorf("token signature %s, recomputed %s", u.Query().Get("X-Amz-Signature"), sig)
	}
}

func TestAWSCredentialChain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "credentials")
	if err := os.WriteFile(credsFile, []byte("[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n[team]\naws_access_key_id=AKIDTEAM\naws_secret_access_key=s2\naws_session_token=t2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	noIMDS := "AWS_EC2_METADATA_DISABLED=true"
	for name, tc := range map[string]struct {
		opts    map[string]string
		environ []string
		want    string
		err     string
	}{
		"environment":    {nil, []string{"AWS_ACCESS_KEY_ID=AKIDENV", "AWS_SECRET_ACCESS_KEY=s", noIMDS}, "AKIDENV", ""},
		"shared default": {nil, []string{"AWS_SHARED_CREDENTIALS_FILE=" + credsFile, noIMDS}, "AKIDDEFAULT", ""},
		"AWS_PROFILE":    {nil, []string{"AWS_SHARED_CREDENTIALS_FILE=" + credsFile, "AWS_PROFILE=team", noIMDS}, "AKIDTEAM", ""},
		"awsProfileName": {map[string]string{"awsProfileName": "team"}, []string{"AWS_SHARED_CREDENTIALS_FILE=" + credsFile, noIMDS}, "AKIDTEAM", ""},
		"none":           {nil, []string{"HOME=" + dir, noIMDS}, "", "no AWS credentials"},
	} {
		c, err := newAWSCredentials(tc.opts, tc.environ, http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.retrieve(ctx)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil || got.AccessKeyID != tc.want {
			t.Errorf("%s: %+v %v", name, got.AccessKeyID, err)
		}
	}
	// The container endpoint (ECS, EKS Pod Identity) with its token.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "pod-token" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"AccessKeyId": "AKIDPOD", "SecretAccessKey": "s", "Token": "t", "Expiration": time.Now().Add(time.Hour)})
	}))
	defer srv.Close()
	c, _ := newAWSCredentials(nil, []string{"HOME=" + dir, "AWS_CONTAINER_CREDENTIALS_FULL_URI=" + srv.URL, "AWS_CONTAINER_AUTHORIZATION_TOKEN=pod-token"}, srv.Client())
	if got, err := c.retrieve(ctx); err != nil || got.AccessKeyID != "AKIDPOD" || got.SessionToken != "t" {
		t.Fatalf("container credentials: %+v %v", got, err)
	}
}

func TestJAASFileFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "jaas.conf")
	os.WriteFile(file, []byte("KafkaClient {\n  "+ScramModule+" required username=\"carol\" password=\"c\";\n};\nKafkaConnect { x.Y required; };\n"), 0o600)
	props := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256"}
	s, err := New(props, Options{JAASFile: file})
	if err != nil || s.Principal != "carol" {
		t.Fatalf("%+v %v", s, err)
	}
	os.WriteFile(file, []byte("KafkaConnect { x.Y required; };\n"), 0o600)
	if _, err := New(props, Options{JAASFile: file}); err == nil || !strings.Contains(err.Error(), "no KafkaClient section (it has KafkaConnect)") {
		t.Fatalf("no KafkaClient section: %v", err)
	}
}

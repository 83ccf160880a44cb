package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// securedKafka starts Apache Kafka 4.4 with the harness's secured
// listeners: SASL_SSL (PLAIN user alice, SCRAM-SHA-512 user bob), SSL
// requiring a client certificate, SASL_PLAINTEXT OAUTHBEARER.
func securedKafka(t *testing.T) (*harness.Kafka, *harness.PKI) {
	t.Helper()
	pki := harness.NewPKI(t)
	k := harness.ApacheKafka(t, harness.WithSecurity(harness.KafkaSecurity{PKI: pki,
		PlainUsers: map[string]string{"alice": "alice-secret"}, ScramUsers: map[string]string{"bob": "bob-secret"}}))
	return k, pki
}

// clientSecurity returns the client settings for one of the secured
// listeners, at the top level and under producer. and consumer. (Kafka
// Connect's rule: connectors' clients do not inherit the worker's).
func clientSecurity(sec map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range sec {
		out[k] = v
		out["producer."+k] = v
		out["consumer."+k] = v
	}
	return out
}

// TestSecuredApacheKafka runs a cluster of two Tributary workers with a
// FileStream pipeline and a Postgres source on each secured listener of a
// real Apache Kafka 4.4 (SASL_SSL with SCRAM-SHA-512 and with PLAIN, SSL
// with client certificates), then checks that a wrong password, a wrong
// CA, an expired client certificate and a missing client certificate each
// stop a worker at once with an error naming the cause.
func TestSecuredApacheKafka(t *testing.T) {
	t.Parallel()
	k, pki := securedKafka(t)
	bin := harness.BuildTributary(t)
	pg := harness.StartPostgresT(t)
	saslSSL := k.Listener(harness.ListenerSASLSSL)
	mtls := k.Listener(harness.ListenerMTLS)
	trust := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": pki.CA}
	with := func(m map[string]string, more map[string]string) map[string]string {
		out := maps.Clone(m)
		maps.Copy(out, more)
		return out
	}
	scram := with(trust, map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="bob-secret";`})
	plain := with(trust, map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`})
	cert := with(trust, map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.location": pki.Client})

	for _, tc := range []struct {
		name, bootstrap string
		sec             map[string]string
	}{
		{"SASL_SSL SCRAM-SHA-512", saslSSL, scram},
		{"SASL_SSL PLAIN", saslSSL, plain},
		{"SSL client certificate", mtls, cert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := pgID("sec")
			dir := t.TempDir()
			props := harness.WorkerProps(t, tc.bootstrap, id, clientSecurity(tc.sec))
			w1 := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w1"), props)
			props2 := harness.WorkerProps(t, tc.bootstrap, id, clientSecurity(tc.sec))
			harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w2"), props2)
			r := rest{t, w1.URL()}

			in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
			var lines []string
			for i := range 20 {
				lines = append(lines, fmt.Sprintf("line %d over %s", i, tc.name))
			}
			if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.must("POST", "/connectors", map[string]any{"name": "file-src", "config": map[string]string{
				"connector.class": "FileStreamSource", "file": in, "topic": id + "-lines"}}, 201)
			r.must("POST", "/connectors", map[string]any{"name": "file-sink", "config": map[string]string{
				"connector.class": "FileStreamSink", "file": out, "topics": id + "-lines"}}, 201)
			if got := waitLines(t, out, len(lines), time.Minute); len(got) != len(lines) {
				t.Errorf("sink wrote %d lines, want %d", len(got), len(lines))
			}

			pg.Exec(t, fmt.Sprintf(`CREATE TABLE %s (id int PRIMARY KEY, name text); INSERT INTO %s SELECT i, 'n' || i FROM generate_series(1, 25) i`, id, id))
			r.must("POST", "/connectors", map[string]any{"name": "pg", "config": pgConnectorConfig(pg, id, "public."+id)}, 201)
			cdc := filepath.Join(dir, "cdc.txt")
			r.must("POST", "/connectors", map[string]any{"name": "cdc-sink", "config": map[string]string{
				"connector.class": "FileStreamSink", "file": cdc, "topics": id + ".public." + id}}, 201)
			waitLines(t, cdc, 25, 2*time.Minute)
			pg.Exec(t, fmt.Sprintf(`INSERT INTO %s VALUES (100, 'streamed')`, id))
			if got := waitLines(t, cdc, 26, time.Minute); !strings.Contains(got[len(got)-1], "streamed") {
				t.Errorf("last change event: %s", got[len(got)-1])
			}
		})
	}

	// OAUTHBEARER with Kafka's OAuthBearerLoginCallbackHandler: the worker
	// gets tokens from a token endpoint served here (client credentials,
	// checked), and the broker validates them (Kafka's default validator
	// of unsecured JWTs).
	t.Run("OAUTHBEARER", func(t *testing.T) {
		var issued atomic.Int32
		idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, secret, ok := r.BasicAuth()
			if !ok || id != "tributary-worker" || secret != "idp-secret" || r.FormValue("grant_type") != "client_credentials" {
				http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
				return
			}
			issued.Add(1)
			now := time.Now()
			claims, _ := json.Marshal(map[string]any{"sub": "tributary-worker", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": r.FormValue("scope")})
			jwt := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString(claims) + "."
			json.NewEncoder(w).Encode(map[string]any{"access_token": jwt, "token_type": "bearer", "expires_in": 3600})
		}))
		defer idp.Close()
		sec := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
			"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
			"sasl.oauthbearer.token.endpoint.url": idp.URL + "/oauth2/token",
			"sasl.jaas.config":                    `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="tributary-worker" clientSecret="idp-secret" scope="kafka";`}
		dir := t.TempDir()
		w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w"), harness.WorkerProps(t, k.Listener(harness.ListenerOAuth), pgID("oauth"), clientSecurity(sec)))
		filePipeline(t, rest{t, w.URL()}, dir, 10)
		if issued.Load() == 0 {
			t.Error("no token was issued")
		}
		bad := maps.Clone(sec)
		bad["sasl.jaas.config"] = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="tributary-worker" clientSecret="not-the-secret";`
		out, _ := harness.RunFailingWorker(t, bin, filepath.Join(dir, "bad"), harness.WorkerProps(t, k.Listener(harness.ListenerOAuth), pgID("oauth"), bad), 30*time.Second)
		if !strings.Contains(out, "401 Unauthorized") || strings.Contains(out, "not-the-secret") {
			t.Errorf("a refused client: %s", out)
		}
	})

	// The same certificates as PKCS12 and JKS stores made by keytool
	// (declared or not with their type: the format is sniffed), against
	// the listener that requires a client certificate.
	t.Run("keystores", func(t *testing.T) {
		st := pki.Stores(t)
		pw := pki.StorePassword
		for name, sec := range map[string]map[string]string{
			"PKCS12": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": st.TrustP12, "ssl.truststore.password": pw,
				"ssl.keystore.type": "PKCS12", "ssl.keystore.location": st.ClientP12, "ssl.keystore.password": pw},
			"JKS": {"ssl.truststore.location": st.TrustJKS, "ssl.truststore.password": pw,
				"ssl.keystore.location": st.ClientJKS, "ssl.keystore.password": pw, "ssl.key.password": pw},
			"PKCS12 declared JKS": {"ssl.truststore.location": st.TrustP12, "ssl.truststore.password": pw,
				"ssl.keystore.location": st.ClientP12, "ssl.keystore.password": pw},
		} {
			sec["security.protocol"] = "SSL"
			dir := t.TempDir()
			w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w"), harness.WorkerProps(t, mtls, pgID("ks"), clientSecurity(sec)))
			t.Logf("%s: worker ready after %v", name, w.ReadyAfter().Round(time.Millisecond))
			filePipeline(t, rest{t, w.URL()}, dir, 5)
			w.Stop()
		}
		// Kafka's rule and message: a PEM key store takes no password.
		pemPW := with(cert, map[string]string{"ssl.keystore.password": pw})
		out, _ := harness.RunFailingWorker(t, bin, filepath.Join(t.TempDir(), "w"), harness.WorkerProps(t, mtls, pgID("ks"), pemPW), 30*time.Second)
		if !strings.Contains(out, "SSL key store password cannot be specified with PEM format, only key password may be specified") || strings.Contains(out, pw) {
			t.Errorf("a PEM key store with a password: %s", out)
		}
	})

	t.Run("fails fast", func(t *testing.T) {
		for _, tc := range []struct {
			name, bootstrap string
			sec             map[string]string
			want            string
		}{
			{"wrong password", saslSSL, with(scram, map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="not-bobs";`}),
				"the broker refused the credentials of bob (SASL SCRAM-SHA-512)"},
			{"wrong CA", saslSSL, with(scram, map[string]string{"ssl.truststore.location": pki.OtherCA}), "the broker's certificate is not signed by a CA this worker trusts"},
			{"expired client certificate", mtls, with(cert, map[string]string{"ssl.keystore.location": pki.ExpiredClient}), "(CN=expired-client,O=Tributary tests) expired on"},
			{"no client certificate", mtls, trust2ssl(trust), "the broker requires a client certificate and this worker sent none"},
		} {
			props := harness.WorkerProps(t, tc.bootstrap, pgID("fail"), tc.sec)
			out, took := harness.RunFailingWorker(t, bin, filepath.Join(t.TempDir(), "w"), props, 30*time.Second)
			t.Logf("%s: exited after %v", tc.name, took.Round(time.Millisecond))
			if !strings.Contains(out, tc.want) {
				t.Errorf("%s: the worker's output does not say %q:\n%s", tc.name, tc.want, out)
			}
			for _, secret := range []string{"not-bobs", "bob-secret"} {
				if strings.Contains(out, secret) {
					t.Errorf("%s: the worker's output shows a password:\n%s", tc.name, out)
				}
			}
		}
	})
}

func trust2ssl(trust map[string]string) map[string]string {
	out := maps.Clone(trust)
	out["security.protocol"] = "SSL"
	return out
}

// filePipeline runs FileStreamSource → topic → FileStreamSink through the
// worker at r with n lines and waits for them in the sink's file.
func filePipeline(t *testing.T, r rest, dir string, n int) {
	t.Helper()
	topic := pgID("lines")
	in, out := filepath.Join(dir, topic+"-in.txt"), filepath.Join(dir, topic+"-out.txt")
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.must("POST", "/connectors", map[string]any{"name": topic + "-src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": topic}}, 201)
	r.must("POST", "/connectors", map[string]any{"name": topic + "-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": topic}}, 201)
	waitLines(t, out, n, time.Minute)
}

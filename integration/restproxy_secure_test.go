package integration

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestRESTProxyHTTPSBasicAuth serves the REST proxy of a `tributary broker`
// process on an HTTPS listener with basic authentication from a JAAS file,
// as the worker's REST API, and talks to it with a real TLS client.
func TestRESTProxyHTTPSBasicAuth(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	pki := harness.NewPKI(t)
	dir := t.TempDir()
	creds, jaasFile := filepath.Join(dir, "creds.properties"), filepath.Join(dir, "jaas.conf")
	if err := os.WriteFile(creds, []byte("alice=alice-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jaasFile, []byte("KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\""+creds+"\";\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := harness.FreePort(t)
	harness.StartBrokerProcess(t, bin, filepath.Join(dir, "data"), harness.FreePort(t),
		fmt.Sprintf("rest.proxy.listeners=https://127.0.0.1:%d", port),
		"rest.proxy.listeners.https.ssl.keystore.type=PEM",
		"rest.proxy.listeners.https.ssl.keystore.location="+pki.Server,
		"rest.proxy.authentication.jaas.file="+jaasFile)
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: pkiTLS(t, pki)}}
	get := func(user, pw string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+"/v3/clusters", nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		var resp *http.Response
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if resp, err = client.Do(req); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("GET over TLS: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, _ := get("alice", "alice-secret"); code != http.StatusOK || !strings.Contains(body, `"kind":"KafkaClusterList"`) {
		t.Fatalf("authenticated: %d %s", code, body)
	}
	for _, c := range [][2]string{{"", ""}, {"alice", "wrong"}, {"bob", "alice-secret"}} {
		// The challenge names the proxy's realm, not the worker's.
		if code, body, h := get(c[0], c[1]); code != http.StatusUnauthorized || h.Get("WWW-Authenticate") != `Basic realm="KafkaRest", charset="UTF-8"` {
			t.Errorf("%q: %d %s (WWW-Authenticate %q)", c[0], code, body, h.Get("WWW-Authenticate"))
		}
	}
	// A client that does not trust the proxy's CA, and plain HTTP, fail.
	if _, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}).Get(base + "/v3/clusters"); err == nil {
		t.Error("a client without the CA reached the proxy")
	}
	if resp, err := http.Get(strings.Replace(base, "https", "http", 1) + "/v3/clusters"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP was served")
		}
	}
}

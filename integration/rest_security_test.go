package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi"
)

// secureRESTProps are worker properties for an HTTPS REST API requiring
// client certificates, admin endpoints on an HTTPS listener of their own
// (the top-level ssl.* settings: no client certificate), and Kafka
// Connect's basic-auth extension with a credentials file holding alice
// (plain text, as Kafka Connect's) and bob (a bcrypt hash, Tributary's).
func secureRESTProps(t *testing.T, pki *harness.PKI, jaasFile string) map[string]string {
	return map[string]string{
		"listeners":                               "https://127.0.0.1:" + strconv.Itoa(harness.FreePort(t)),
		"admin.listeners":                         "https://127.0.0.1:" + strconv.Itoa(harness.FreePort(t)),
		"listeners.https.ssl.keystore.type":       "PEM",
		"listeners.https.ssl.keystore.location":   pki.Server,
		"listeners.https.ssl.truststore.type":     "PEM",
		"listeners.https.ssl.truststore.location": pki.CA,
		"listeners.https.ssl.client.auth":         "required",
		"ssl.keystore.type":                       "PEM",
		"ssl.keystore.location":                   pki.Server,
		"rest.extension.classes":                  restapi.BasicAuthExtension,
		"java.security.auth.login.config":         jaasFile,
	}
}

// basicAuthFiles writes a credentials file and a JAAS file whose
// KafkaConnect section names it, as Kafka Connect's users write them.
func basicAuthFiles(t *testing.T, creds string) string {
	t.Helper()
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "credentials.properties")
	if err := os.WriteFile(credsFile, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	jaasFile := filepath.Join(dir, "connect-jaas.conf")
	if err := os.WriteFile(jaasFile, []byte("KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\""+credsFile+"\";\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return jaasFile
}

// TestRESTSecurity runs two workers with HTTPS listeners requiring client
// certificates, HTTPS admin listeners and basic authentication: requests
// without a certificate, without credentials or with a wrong password are
// refused (Kafka Connect's 401 and its body); connectors created through
// either worker run (a follower forwards with the caller's credentials
// over mutual TLS, and signed task configs pass between the workers);
// /admin answers only on the admin listeners; tributary connectors reaches
// the API with --cacert, --cert and credentials.
func TestRESTSecurity(t *testing.T) {
	t.Parallel()
	pki := harness.NewPKI(t)
	hash, err := restapi.HashPassword("bob-secret")
	if err != nil {
		t.Fatal(err)
	}
	jaasFile := basicAuthFiles(t, "alice=alice-secret\nbob="+hash+"\n")
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	access := harness.WorkerSetup{CA: pki.CA, ClientCert: pki.Client, User: "alice", Password: "alice-secret"}
	dir := t.TempDir()
	var workers []*harness.WorkerProcess
	var admins []string
	for i := range 2 {
		extra := secureRESTProps(t, pki, jaasFile)
		admins = append(admins, extra["admin.listeners"])
		workers = append(workers, harness.StartWorkerProcessWith(t, bin, filepath.Join(dir, fmt.Sprint("w", i)), harness.WorkerProps(t, bootstrap, "restsec", extra), access))
	}
	client := access.Client(t)
	call := func(method, url, user, pass string, body any) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, url, rd)
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	w0 := workers[0].URL()

	// No client certificate: the TLS handshake fails.
	noCert := harness.WorkerSetup{CA: pki.CA}.Client(t)
	if resp, err := noCert.Get(w0 + "/connectors"); err == nil {
		resp.Body.Close()
		t.Errorf("a client without a certificate was served: %s", resp.Status)
	}
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"alice", "wrong", 401}, {"mallory", "alice-secret", 401}, {"alice", "alice-secret", 200}, {"bob", "bob-secret", 200}, {"bob", hash, 401}} {
		code, body := call("GET", w0+"/connectors", tc.user, tc.pass, nil)
		if code != tc.want || (code == 401 && body != restapi.Unauthorized) {
			t.Errorf("user %q: %d %q, want %d", tc.user, code, body, tc.want)
		}
	}

	// Connectors created through each worker: one of them forwards to
	// the leader, with alice's credentials.
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	for i, c := range []struct {
		name   string
		config map[string]string
	}{
		{"src", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "restsec-lines", "tasks.max": "1"}},
		{"sink", map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": "restsec-lines"}},
	} {
		if code, body := call("POST", workers[i].URL()+"/connectors", "alice", "alice-secret", map[string]any{"name": c.name, "config": c.config}); code != 201 {
			t.Fatalf("create %s through worker %d: %d %s", c.name, i, code, body)
		}
		if code, _ := call("POST", workers[1-i].URL()+"/connectors", "", "", map[string]any{"name": c.name + "-x", "config": c.config}); code != 401 {
			t.Errorf("create without credentials: %d", code)
		}
	}
	waitLines(t, out, 3, time.Minute)

	// /admin answers on the admin listeners only (TLS without client
	// certificates there: the top-level ssl.* settings).
	adminClient := harness.WorkerSetup{CA: pki.CA}.Client(t)
	for i, admin := range admins {
		req, _ := http.NewRequest("GET", admin+"/admin/loggers", nil)
		req.SetBasicAuth("alice", "alice-secret")
		resp, err := adminClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("admin listener %d: %v %v", i, resp, err)
		} else {
			resp.Body.Close()
		}
		if code, _ := call("GET", workers[i].URL()+"/admin/loggers", "alice", "alice-secret", nil); code != 404 {
			t.Errorf("/admin on the regular listener %d: %d", i, code)
		}
	}

	// The CLI.
	cli := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"connectors"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if o, err := cli([]string{"TRIBUTARY_PASSWORD=bob-secret"}, "list", "--url", w0, "--cacert", pki.CA, "--cert", pki.Client, "--user", "bob"); err != nil || !strings.Contains(o, `"sink"`) {
		t.Errorf("tributary connectors list with credentials: %v\n%s", err, o)
	}
	if o, err := cli(nil, "list", "--url", w0, "--cacert", pki.CA, "--cert", pki.Client); err == nil || !strings.Contains(o, "User cannot access the resource.") || !strings.Contains(o, "--user") {
		t.Errorf("tributary connectors list without credentials: %v\n%s", err, o)
	}
}

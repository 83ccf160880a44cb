package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestDevSecure: tributary dev says in its banner that its REST API is
// open (to this machine only); dev --secure serves it over HTTPS with a
// self-signed certificate and basic authentication, the generated
// password printed once; a restart keeps both and does not print it again.
func TestDevSecure(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	open := harness.StartDevProcess(t, bin, filepath.Join(dir, "open"), harness.FreePort(t), harness.FreePort(t))
	if out := banner(t, open); !strings.Contains(out, "security:        none: the REST API and the broker are open to anyone on this machine, and only this machine (127.0.0.1; --secure") {
		t.Errorf("the open dev's banner does not say it is open:\n%s", out)
	}
	open.Kill()

	data := filepath.Join(dir, "secure")
	brokerPort, restPort := harness.FreePort(t), harness.FreePort(t)
	p := harness.StartDevProcess(t, bin, data, brokerPort, restPort, "--secure")
	out := banner(t, p)
	m := regexp.MustCompile(`password:\s+(\S+)\s+\(shown this once`).FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(p.URL(), "https://") {
		t.Fatalf("no password in the banner, or not HTTPS (%s):\n%s", p.URL(), out)
	}
	password := m[1]
	access := harness.WorkerSetup{CA: filepath.Join(data, "secure", "rest-cert.pem")}
	client := access.Client(t)
	get := func(user, pass string) int {
		req, _ := http.NewRequest("GET", p.URL()+"/connectors", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET /connectors: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("admin", password); code != 200 {
		t.Errorf("with the printed password: %d", code)
	}
	if code := get("", ""); code != 401 {
		t.Errorf("without credentials: %d", code)
	}
	if code := get("admin", "nope"); code != 401 {
		t.Errorf("with a wrong password: %d", code)
	}
	// The broker is SASL_SSL with SCRAM: the worker's connectors run
	// through it; a client with DIR/secure/broker-password logs in, a
	// PLAINTEXT client does not get an answer.
	if !strings.Contains(out, "the broker:      SASL_SSL, SCRAM-SHA-512 user admin") {
		t.Errorf("the banner does not describe the secured broker:\n%s", out)
	}
	devBrokerChecks(t, p.Bootstrap(), filepath.Join(data, "secure"))
	p.Kill()

	again := harness.StartDevProcess(t, bin, data, brokerPort, restPort, "--secure")
	if out := banner(t, again); strings.Contains(out, password) || !strings.Contains(out, "the one shown at the first --secure start") {
		t.Errorf("the restart's banner:\n%s", out)
	}
	if code := get("admin", password); code != 200 {
		t.Errorf("after a restart, with the first password: %d", code)
	}
	if logs := again.Output(); strings.Contains(logs, password) {
		t.Error("the password is in the output of the second start")
	}
}

// banner waits for the ready banner of p and returns p's output.
func banner(t *testing.T, p *harness.DevProcess) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.Output(), "Tributary dev is ready") {
		if time.Now().After(deadline) {
			t.Fatalf("no banner:\n%s", p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the banner's other lines
	return p.Output()
}

// devBrokerChecks: the dev broker refuses a PLAINTEXT client and accepts a
// SASL_SSL SCRAM-SHA-512 one with the password dev keeps in secureDir.
func devBrokerChecks(t *testing.T, bootstrap, secureDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pw, err := os.ReadFile(filepath.Join(secureDir, "broker-password"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(secureDir, "rest-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	plainCl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RequestRetries(0), kgo.DialTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
	if err := plainCl.Ping(pctx); err == nil {
		t.Error("a PLAINTEXT client reached the --secure broker")
	}
	pcancel()
	plainCl.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DialTLSConfig(&tls.Config{RootCAs: pool}),
		kgo.SASL(scram.Auth{User: "admin", Pass: strings.TrimSpace(string(pw))}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatalf("SASL_SSL SCRAM client: %v", err)
	}
	if !topics.Has("connect-configs") {
		t.Errorf("the worker's topics are not on the broker: %v", topics.Names())
	}
}

package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/broker"
)

func TestHealthURL(t *testing.T) {
	for listeners, want := range map[string]string{
		"":                                  "http://127.0.0.1:8083",
		"http://0.0.0.0:8084":               "http://127.0.0.1:8084",
		"http://:8085, https://0.0.0.0:443": "http://127.0.0.1:8085",
		"https://worker:8443":               "https://127.0.0.1:8443",
		"not a url %%":                      "http://127.0.0.1:8083",
	} {
		if got := healthURL(listeners); got != want {
			t.Errorf("healthURL(%q) = %s, want %s", listeners, got, want)
		}
	}
}

// TestHealthcheck runs the command against a REST server answering 200 and
// 503, a real broker, a port nothing listens on and a listener that is not
// Kafka's.
func TestHealthcheck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	cfg := broker.DefaultConfig()
	cfg.Listener = "127.0.0.1:0"
	cfg.LogDir = filepath.Join(t.TempDir(), "broker")
	b, err := broker.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served; b.Close() })

	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"healthy"}`))
	}))
	defer healthy.Close()
	starting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer starting.Close()
	// A listener of another protocol that speaks first, as SSH does.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			c.Close()
		}
	}()
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()

	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a ready worker", []string{"--url", healthy.URL, "--kafka", closed}, 0, ""},
		{"a starting worker", []string{"--url", starting.URL, "--kafka", b.Addr()}, 1, "503"},
		{"a broker", []string{"--url", "http://" + closed, "--kafka", b.Addr()}, 0, ""},
		{"nothing", []string{"--url", "http://" + closed, "--kafka", closed}, 1, "nothing listens"},
		{"not Kafka", []string{"--url", "http://" + closed, "--kafka", other.Addr().String()}, 1, "not a Kafka listener"},
		{"a bad flag", []string{"--bogus"}, 2, "see --help"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runHealthcheck(context.Background(), c.args, func(string) string { return "" }, &out, &errOut)
			if code != c.code || !strings.Contains(errOut.String(), c.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, errOut.String(), c.code, c.says)
			}
		})
	}
}

// TestHealthcheckSecured: an HTTPS REST API on the loopback behind basic
// authentication is ready with TRIBUTARY_USER and TRIBUTARY_PASSWORD, and
// says what is missing without them.
func TestHealthcheckSecured(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	if err := checkREST(context.Background(), srv.URL, 5e9, "alice", "pw"); err != nil {
		t.Errorf("with credentials: %v", err)
	}
	if err := checkREST(context.Background(), srv.URL, 5e9, "", ""); err == nil || !strings.Contains(err.Error(), "set TRIBUTARY_USER and TRIBUTARY_PASSWORD") {
		t.Errorf("without credentials: %v", err)
	}
}

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

// startRESTProxy serves the Kafka REST proxy over bootstrap on a harness
// port and returns its base URL; it stops in t.Cleanup.
func startRESTProxy(t testing.TB, bootstrap string, cfg kafkarest.Config) string {
	t.Helper()
	cfg.Seeds = []string{bootstrap}
	p, err := kafkarest.New(cfg)
	if err != nil {
		t.Fatalf("kafkarest: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		p.Close()
	})
	return "http://" + addr
}

// exchange is one HTTP request as curl sends it and what came back.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// curl sends method url with the content type (when body is not empty)
// and accept headers, as the docs' curl commands do.
func curl(t testing.TB, method, url, contentType, accept, body string) exchange {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, url, err)
	}
	return exchange{resp.StatusCode, resp.Header, b}
}

// expect checks the status and that the body has the JSON shape of want
// (the same keys, recursively, and the same types of values; an array's
// elements all have the shape of want's first), then that every value
// want gives that is not "*" is equal.
func (e exchange) expect(t testing.TB, what string, status int, want string) {
	t.Helper()
	if e.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, e.status, status, e.body)
	}
	if want == "" {
		if len(bytes.TrimSpace(e.body)) != 0 {
			t.Fatalf("%s: body %s, want none", what, e.body)
		}
		return
	}
	var got, exp any
	if err := json.Unmarshal(e.body, &got); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", what, e.body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if err := sameShape("$", got, exp); err != nil {
		t.Fatalf("%s: %v\n got: %s\nwant: %s", what, err, e.body, want)
	}
}

func sameShape(path string, got, want any) error {
	if s, ok := want.(string); ok && s == "*" {
		return nil
	}
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		return fmt.Errorf("%s: got %T (%v), want %T (%v)", path, got, got, want, want)
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if !reflect.DeepEqual(keys(g), keys(w)) {
			return fmt.Errorf("%s: keys %v, want %v", path, keys(g), keys(w))
		}
		for k := range w {
			if err := sameShape(path+"."+k, g[k], w[k]); err != nil {
				return err
			}
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 && len(g) != len(w) {
			return fmt.Errorf("%s: %d elements, want %d", path, len(g), len(w))
		}
		for i := range g {
			if len(w) == 0 {
				return fmt.Errorf("%s: %d elements, want none", path, len(g))
			}
			if err := sameShape(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	return nil
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonField reads one string field of a JSON object body.
func jsonField(t testing.TB, body []byte, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, _ := strconv.Atoi(p)
			if i >= len(x) {
				t.Fatalf("%s: no %v", body, path)
			}
			v = x[i]
		default:
			t.Fatalf("%s: no %v", body, path)
		}
	}
	return v
}

// proxyRecords GETs records until n arrived (a new consumer instance first
// joins its group, so the first answers may be empty), failing after a
// minute.
func proxyRecords(t testing.TB, url, accept string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var out []map[string]any
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d of %d records after a minute", url, len(out), n)
		}
		e := curl(t, http.MethodGet, url, "", accept, "")
		if e.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", url, e.status, e.body)
		}
		var recs []map[string]any
		if err := json.Unmarshal(e.body, &recs); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		out = append(out, recs...)
	}
	return out
}

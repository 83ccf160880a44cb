package restapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/restapitest"
	"github.com/tributary-dev/tributary/worker"
)

func do(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("body %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("body %s, want %s", gb, wb)
	}
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"healthy", nil, 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`},
		{"starting", worker.Errorf(worker.KindUnavailable, "Worker is still starting up. The worker is currently reading to the end of the config topic."),
			503, `{"status":"starting","message":"Worker is still starting up. The worker is currently reading to the end of the config topic."}`},
		{"starting default message", &worker.Error{Kind: worker.KindUnavailable}, 503, `{"status":"starting","message":"Worker is still starting up."}`},
		{"stuck", worker.Errorf(worker.KindInternal, "Worker was unable to handle this request and may be unable to handle other requests."),
			500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`},
		{"plain error", io.ErrUnexpectedEOF, 500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := restapitest.NewHerder()
			f.SetHealth(tc.err)
			w := do(t, restapi.New(f, restapi.Options{}), "GET", "/health", "")
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			jsonEq(t, w.Body.String(), tc.body)
		})
	}
}

// probeHerder is a Herder with Kubernetes probes.
type probeHerder struct {
	*restapitest.Herder
	alive, ready error
}

func (p probeHerder) Alive(context.Context) error { return p.alive }
func (p probeHerder) Ready(context.Context) error { return p.ready }

func TestProbes(t *testing.T) {
	starting := worker.Errorf(worker.KindUnavailable, "Worker is still starting up. The worker is currently joining the worker group")
	stuck := worker.Errorf(worker.KindInternal, "The worker's herder loop did not answer")
	for _, tc := range []struct {
		name   string
		h      worker.Herder
		path   string
		status int
		body   string
	}{
		{"alive", probeHerder{restapitest.NewHerder(), nil, starting}, "/healthz", 200, `{"status":"ok"}`},
		{"stuck", probeHerder{restapitest.NewHerder(), stuck, stuck}, "/healthz", 503,
			`{"status":"unhealthy","message":"The worker's herder loop did not answer"}`},
		{"ready", probeHerder{restapitest.NewHerder(), nil, nil}, "/readyz", 200, `{"status":"ready"}`},
		{"not ready", probeHerder{restapitest.NewHerder(), nil, starting}, "/readyz", 503,
			`{"status":"not ready","message":"Worker is still starting up. The worker is currently joining the worker group"}`},
		{"no probes: healthy", restapitest.NewHerder(), "/readyz", 200, `{"status":"ready"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, restapi.New(tc.h, restapi.Options{}), "GET", tc.path, "")
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			jsonEq(t, w.Body.String(), tc.body)
		})
	}
	// Without Probes, a worker still starting is alive and not ready.
	f := restapitest.NewHerder()
	f.SetHealth(starting)
	if w := do(t, restapi.New(f, restapi.Options{}), "GET", "/healthz", ""); w.Code != 200 {
		t.Errorf("/healthz of a starting worker: %d", w.Code)
	}
	if w := do(t, restapi.New(f, restapi.Options{}), "GET", "/readyz", ""); w.Code != 503 {
		t.Errorf("/readyz of a starting worker: %d", w.Code)
	}
}

func TestMetricsRoute(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, "up 1\n")
	})})
	w := do(t, h, "GET", "/metrics", "")
	if w.Code != 200 || w.Body.String() != "up 1\n" {
		t.Fatalf("GET /metrics: %d %q", w.Code, w.Body)
	}
	if w := do(t, restapi.New(restapitest.NewHerder(), restapi.Options{}), "GET", "/metrics", ""); w.Code != 404 {
		t.Errorf("GET /metrics without a handler: %d, want 404", w.Code)
	}
}

// errHerder fails every connector lookup with err.
type errHerder struct {
	*restapitest.Herder
	err error
}

func (h errHerder) ConnectorInfo(context.Context, string) (worker.ConnectorInfo, error) {
	return worker.ConnectorInfo{}, h.err
}

func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		msg    string
	}{
		{worker.Errorf(worker.KindConflict, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."), 409,
			"Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."},
		{worker.Errorf(worker.KindForbidden, "Topic tracking is disabled."), 403, "Topic tracking is disabled."},
		{worker.Errorf(worker.KindUnavailable, "x"), 503, "x"},
		{worker.Errorf(worker.Kind(0), "odd"), 500, "odd"},
		{io.ErrClosedPipe, 500, io.ErrClosedPipe.Error()},
		{context.DeadlineExceeded, 500, "Request timed out"},
	} {
		w := do(t, restapi.New(errHerder{restapitest.NewHerder(), tc.err}, restapi.Options{}), "GET", "/connectors/a", "")
		if w.Code != tc.status {
			t.Fatalf("%v: status %d, want %d", tc.err, w.Code, tc.status)
		}
		b, _ := json.Marshal(restapi.ErrorMessage{ErrorCode: tc.status, Message: tc.msg})
		jsonEq(t, w.Body.String(), string(b))
	}
}

func TestLocationEscapesName(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	const name = "a b;c?d#é+&=@✓"
	w := do(t, h, "POST", "http://example.com:8083/connectors", `{"name":"`+name+`","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
	if w.Code != 201 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	loc := w.Header().Get("Location")
	if want := "http://example.com:8083/connectors/a%20b%3Bc%3Fd%23%C3%A9+&=@%E2%9C%93"; loc != want {
		t.Fatalf("Location %q, want %q", loc, want)
	}
	// Every endpoint reaches the connector through its own Location.
	path := strings.TrimPrefix(loc, "http://example.com:8083")
	for _, step := range []struct {
		method, suffix string
		status         int
	}{
		{"GET", "", 200}, {"GET", "/config", 200}, {"GET", "/status", 200}, {"PUT", "/pause", 202},
		{"PUT", "/resume", 202}, {"GET", "/tasks", 200}, {"DELETE", "", 204}, {"GET", "", 404},
	} {
		if w := do(t, h, step.method, path+step.suffix, ""); w.Code != step.status {
			t.Fatalf("%s %s: status %d, want %d: %s", step.method, path+step.suffix, w.Code, step.status, w.Body)
		}
	}
}

// recordingHerder records the connector names the REST layer hands on.
type recordingHerder struct {
	*restapitest.Herder
	names []string
}

func (h *recordingHerder) DeleteConnector(ctx context.Context, name string) error {
	h.names = append(h.names, name)
	return h.Herder.DeleteConnector(ctx, name)
}

func (h *recordingHerder) ConnectorInfo(ctx context.Context, name string) (worker.ConnectorInfo, error) {
	h.names = append(h.names, name)
	return h.Herder.ConnectorInfo(ctx, name)
}

// Issue 23, case 2: paths are decoded exactly once, and what Kafka
// Connect's Jetty calls ambiguous is its 400, so that no request reaches a
// connector other than the one its URL names (DELETE
// /connectors/victim%252Fx used to delete "victim/x"; the Location of
// "pct%41" answered "Connector pctA not found").
func TestPathsDecodedOnce(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		status       int
		message      string // the 400's message, or the name the herder got
	}{
		{"DELETE", "/connectors/victim%252Fx", 400, "Ambiguous URI path encoding"},
		{"DELETE", "/connectors/victim%2Fx", 400, "Ambiguous URI path separator"},
		{"DELETE", "/connectors/victim%2fx", 400, "Ambiguous URI path separator"},
		{"GET", "/connectors/pct%2541", 400, "Ambiguous URI path encoding"},
		{"GET", "/connectors/a%2Fb/status", 400, "Ambiguous URI path separator"},
		{"GET", "/connectors/%2e%2e/x", 400, "Ambiguous URI path segment"},
		{"GET", "/connectors/%2E", 400, "Ambiguous URI path segment"},
		{"GET", "/connectors//x", 400, "Ambiguous URI empty segment"},
		{"GET", "/connectors/a%5Cb", 400, "Suspicious Path Character"},
		{"GET", "/connectors/a%09b", 400, "Suspicious Path Character"},
		{"GET", "/connectors/a%7Fb", 400, "Suspicious Path Character"},
		{"GET", "/connectors/a%00b", 400, "Bad Request"},
		{"GET", "/admin/loggers/a%2Fb", 400, "Ambiguous URI path separator"},
		{"PUT", "/connectors/%FF/config", 400, "Bad UTF-8 encoding"},
		{"PUT", "/connectors/%C3%28/config", 400, "Bad UTF-8 encoding"},
		{"DELETE", "/connectors/a%ED%A0%80", 400, "Bad UTF-8 encoding"}, // a UTF-16 surrogate
		{"GET", "/admin/loggers/%FF", 400, "Bad UTF-8 encoding"},
		{"GET", "/connector-plugins/%C3%28/config", 400, "Bad UTF-8 encoding"},
		{"GET", "/connectors/pct%41", 404, "pctA"},
		{"GET", "/connectors/a%20b", 404, "a b"},
		{"GET", "/connectors/a%3Bb", 404, "a;b"},
		{"GET", "/connectors/a;b", 404, "a"}, // Jetty drops path parameters
		{"GET", "/connectors/x%3Fy", 404, "x?y"},
		{"GET", "/connectors/%E2%9C%93/", 404, "✓"},
	} {
		rh := &recordingHerder{Herder: restapitest.NewHerder()}
		req := httptest.NewRequest(tc.method, "http://h"+tc.path, nil)
		w := httptest.NewRecorder()
		restapi.New(rh, restapi.Options{}).ServeHTTP(w, req)
		if w.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, tc.path, w.Code, tc.status, w.Body)
			continue
		}
		if tc.status == 400 {
			jsonEq(t, w.Body.String(), `{"error_code":400,"message":"`+tc.message+`"}`)
			if len(rh.names) > 0 {
				t.Errorf("%s %s reached the herder with %q", tc.method, tc.path, rh.names)
			}
			continue
		}
		if len(rh.names) != 1 || rh.names[0] != tc.message {
			t.Errorf("%s %s: the herder got %q, want %q", tc.method, tc.path, rh.names, tc.message)
		}
	}
}

// Names that no URL could address unambiguously are refused at creation.
func TestUnaddressableNamesRefused(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	for _, name := range []string{"victim/x", "pct%41", `back\\slash`, ".", ".."} {
		w := do(t, h, "POST", "/connectors", `{"name":"`+name+`","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "no URL could name the connector") {
			t.Errorf("create %q: status %d: %s", name, w.Code, w.Body)
		}
	}
	w := do(t, h, "PUT", "/connectors/pct%2541/config", `{"connector.class":"FileStreamSource","topic":"t"}`)
	if w.Code != 400 {
		t.Errorf("PUT pct%%2541: status %d: %s", w.Code, w.Body)
	}
}

func TestBodyLimit(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{MaxBodyBytes: 64})
	w := do(t, h, "PUT", "/connectors/a/config", `{"connector.class":"FileStreamSource","topic":"`+strings.Repeat("t", 64)+`"}`)
	if w.Code != 400 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	jsonEq(t, w.Body.String(), `{"error_code":400,"message":"Request body is larger than the limit of 64 bytes"}`)
}

func TestHeadAndTrailingSlash(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	if w := do(t, h, "HEAD", "/connectors", ""); w.Code != 200 {
		t.Fatalf("HEAD: %d", w.Code)
	}
	if w := do(t, h, "GET", "/connector-plugins/", ""); w.Code != 200 {
		t.Fatalf("GET with slash: %d", w.Code)
	}
}

func TestServerShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := restapi.NewServer(restapi.New(restapitest.NewHerder(), restapi.Options{}), nil)
	srv.Start(ln)
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Fatal("server still answers after Shutdown")
	}
	if err := restapi.NewServer(http.NotFoundHandler(), nil).Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown without Start: %v", err)
	}
}

// FuzzRequestBodies sends arbitrary bodies to every endpoint that reads
// one: the answer is never a 5xx, and always Kafka Connect's error body or
// a JSON success.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","config":{"connector.class":"FileStreamSource","topic":"t"}}`,
		`{"connector.class":"FileStreamSink","topics":"t","tasks.max":2}`,
		`{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":null}]}`,
		`{"level":"DEBUG"}`, `{bad`, `null`, `[]`, `""`, `{"a":{"b":[1,2]}}`, `{"name":null}`,
		`{"config":{"x":null}}`, "\xff\xfe", `{"offsets":[{"partition":1}]}`, `1e999`, `{"a":1}{"b":2}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		f := restapitest.NewHerder()
		h := restapi.New(&follower{Herder: f}, restapi.Options{MaxBodyBytes: 4096})
		_, _, _ = f.PutConnectorConfig(context.Background(), "s", map[string]string{"connector.class": "FileStreamSink", "topics": "t"}, false, "")
		_ = f.StopConnector(context.Background(), "s")
		for _, ep := range []struct{ method, path string }{
			{"POST", "/connectors"},
			{"PUT", "/connectors/a/config"},
			{"PATCH", "/connectors/s/config"},
			{"PATCH", "/connectors/s/offsets"},
			{"PUT", "/connector-plugins/FileStreamSink/config/validate"},
			{"PUT", "/admin/loggers/root"},
			{"POST", "/connectors/s/tasks"}, // internal, between workers
		} {
			req := httptest.NewRequest(ep.method, ep.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code >= 500 {
				t.Fatalf("%s %s %q: status %d: %s", ep.method, ep.path, body, w.Code, w.Body)
			}
			if w.Code >= 400 {
				var e restapi.ErrorMessage
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.ErrorCode != w.Code || e.Message == "" {
					t.Fatalf("%s %s %q: bad error body %q", ep.method, ep.path, body, w.Body)
				}
			}
		}
	})
}

// TestWrongJSONTypesNamedInJSON: a body of the wrong JSON shape is a 400
// that says what JSON was expected, never a Go type name.
func TestWrongJSONTypesNamedInJSON(t *testing.T) {
	h := restapi.New(restapitest.NewHerder(), restapi.Options{})
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/connectors", `[]`, "Cannot deserialize JSON array: the body must be an object"},
		{"POST", "/connectors", `"x"`, "Cannot deserialize JSON string: the body must be an object"},
		{"POST", "/connectors", `{"name":"x","config":[]}`, `Cannot deserialize field "config": JSON array is not an object`},
		{"POST", "/connectors", `{"name":1}`, `Cannot deserialize field "name": JSON number is not a string`},
		{"PUT", "/connectors/x/config", `[1]`, "Cannot deserialize JSON array: the body must be an object"},
		{"PATCH", "/connectors/x/offsets", `{"offsets":{}}`, `Cannot deserialize field "offsets": JSON object is not an array`},
		{"PATCH", "/connectors/x/offsets", `{"offsets":[{"partition":[1]}]}`, `Cannot deserialize field "offsets.partition": JSON array is not an object`},
		{"PUT", "/admin/loggers/x", `[1]`, "Cannot deserialize JSON array: the body must be an object"},
		{"PUT", "/connector-plugins/FileStreamSource/config/validate", `[1]`, "Cannot deserialize JSON array: the body must be an object"},
	} {
		w := do(t, h, tc.method, tc.path, tc.body)
		var e struct{ Message string }
		json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != 400 || e.Message != tc.want {
			t.Errorf("%s %s %s: %d %q, want 400 %q", tc.method, tc.path, tc.body, w.Code, e.Message, tc.want)
		}
	}
}

// slowHerder answers a config write after a pause, reporting whether the
// request's context was still alive then.
type slowHerder struct {
	*restapitest.Herder
	pause time.Duration
	ctxOK chan bool
}

func (h *slowHerder) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, worker.ConnectorInfo, error) {
	time.Sleep(h.pause)
	h.ctxOK <- ctx.Err() == nil
	return h.Herder.PutConnectorConfig(ctx, name, config, allowReplace, initialState)
}

// Issue 23, case 9: a request body trickled in at one byte every so often
// was held open for ever (only headers had a deadline). The body now has
// BodyTimeout to arrive; a late one is a 408 and the connection closes. A
// body that did arrive in time leaves no deadline behind to end the
// request while the herder works on it.
func TestBodyReadDeadline(t *testing.T) {
	h := &slowHerder{Herder: restapitest.NewHerder(), pause: 600 * time.Millisecond, ctxOK: make(chan bool, 1)}
	srv := httptest.NewServer(restapi.New(h, restapi.Options{BodyTimeout: 300 * time.Millisecond}))
	defer srv.Close()

	body := `{"connector.class":"FileStreamSource","topic":"t"}`
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /connectors/trickle/config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	start := time.Now()
	go func() {
		for i := 0; i < len(body); i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body after %v: %v", time.Since(start), err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || time.Since(start) > 2*time.Second {
		t.Fatalf("trickled body: %d after %v: %s", resp.StatusCode, time.Since(start), b)
	}
	jsonEq(t, string(b), `{"error_code":408,"message":"Request body not received within 300ms"}`)

	// A body sent at once, then a herder slower than BodyTimeout.
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/connectors/fast/config", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !<-h.ctxOK {
		t.Fatalf("fast body, slow herder: status %d; the request's context ended early", resp.StatusCode)
	}
}

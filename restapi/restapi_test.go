package restapi_test

import (
	"context"
	"encoding/json"
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
	w := do(t, h, "POST", "http://example.com:8083/connectors", `{"name":"a b/c","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
	if w.Code != 201 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if got, want := w.Header().Get("Location"), "http://example.com:8083/connectors/a%20b%2Fc"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
	w = do(t, h, "GET", "/connectors/a%20b%2Fc/config", "")
	if w.Code != 200 {
		t.Fatalf("GET escaped name: status %d: %s", w.Code, w.Body)
	}
	jsonEq(t, w.Body.String(), `{"connector.class":"FileStreamSource","topic":"t","name":"a b/c"}`)
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
		h := restapi.New(f, restapi.Options{MaxBodyBytes: 4096})
		_, _, _ = f.PutConnectorConfig(context.Background(), "s", map[string]string{"connector.class": "FileStreamSink", "topics": "t"}, false, "")
		_ = f.StopConnector(context.Background(), "s")
		for _, ep := range []struct{ method, path string }{
			{"POST", "/connectors"},
			{"PUT", "/connectors/a/config"},
			{"PATCH", "/connectors/s/config"},
			{"PATCH", "/connectors/s/offsets"},
			{"PUT", "/connector-plugins/FileStreamSink/config/validate"},
			{"PUT", "/admin/loggers/root"},
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

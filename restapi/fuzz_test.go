package restapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker"
)

// idleConfig is the idle source's configuration.
type idleConfig struct {
	Topic string `key:"topic" default:"idle" doc:"Ignored."`
}

type idleTask struct{}

func (idleTask) Open(context.Context, sdk.SourceTaskContext) error { return nil }
func (idleTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	select {
	case <-ctx.Done():
	case <-time.After(100 * time.Millisecond):
	}
	return nil, nil
}
func (idleTask) Close(context.Context) error { return nil }

// idleSource writes nothing: the fuzzer may create as many as it likes.
func idleSource() sdk.Connector {
	return sdk.SourceConnector[idleConfig]{Class: "dev.tributary.test.IdleSourceConnector", Version: "1",
		NewTask: func(idleConfig) sdk.SourceTask { return idleTask{} }}
}

// liveWorker is a real worker (herder, stores, group membership) on
// franz-go's kfake broker, running harmless connectors in-process, and the
// REST handlers over it.
type liveWorker struct {
	h       worker.Herder
	handler http.Handler
}

func startLiveWorker(tb testing.TB) *liveWorker {
	tb.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(-1, "idle"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cluster.Close)
	quiet := slog.New(slog.DiscardHandler)
	loader, err := plugins.NewInProcess(quiet, idleSource(), discard.Connector())
	if err != nil {
		tb.Fatal(err)
	}
	cfg, _, err := worker.FromProperties(properties.Properties{
		"bootstrap.servers": strings.Join(cluster.ListenAddrs(), ","), "group.id": "fuzz",
		"config.storage.topic": "fuzz-configs", "offset.storage.topic": "fuzz-offsets", "status.storage.topic": "fuzz-status",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.flush.interval.ms": "1000", "group.initial.rebalance.delay.ms": "0",
	})
	if err != nil {
		tb.Fatal(err)
	}
	w, err := worker.New(cfg, worker.Options{Logger: quiet, Loader: loader, RESTAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8083}})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("worker: %v", err)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for w.Herder().Health(ctx) != nil {
		if time.Now().After(deadline) {
			tb.Fatal("the worker did not become healthy within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &liveWorker{h: w.Herder(), handler: restapi.New(w.Herder(), restapi.Options{Logger: quiet, RequestTimeout: 10 * time.Second})}
}

var fuzzMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions, "TRACE", "BREW"}

// serve hands one request to the handlers; it reports false for a path no
// HTTP server would pass on (it does not parse).
func (lw *liveWorker) serve(method, path string, body []byte) (*httptest.ResponseRecorder, bool) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.ParseRequestURI(path)
	if err != nil {
		return nil, false
	}
	req := httptest.NewRequest(http.MethodGet, "http://worker:8083/", bytes.NewReader(body))
	req.Method, req.URL, req.RequestURI = method, u, path
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	lw.handler.ServeHTTP(w, req)
	return w, true
}

func (lw *liveWorker) names(t *testing.T) []string {
	names, err := lw.h.Connectors(context.Background())
	if err != nil {
		t.Fatalf("list connectors: %v", err)
	}
	return names
}

// goTypes are what Go's formatting of types and values looks like: no
// answer may show one.
var goTypes = []string{"interface {}", "map[string]", "[]interface", "*worker.", "*store.", "runtime error", "goroutine "}

// FuzzREST sends arbitrary requests (method, path, body) to the REST
// handlers over a real worker (issue 23). No request may panic a handler
// or be answered 500 for its input (only a worker that cannot do its part
// may answer 500: a timeout, which the message then says); every error
// answer is Kafka Connect's error body, with error_code equal to the status
// and no Go type in the message; a write that answers an error leaves the
// connectors as they were; and the worker stays healthy.
func FuzzREST(f *testing.F) {
	const src = `{"connector.class":"dev.tributary.test.IdleSourceConnector"}`
	for _, s := range []struct {
		method byte
		path   string
		body   string
	}{
		{1, "/connectors", `{"name":"a","config":` + src + `}`},
		{1, "/connectors", `{"name":"b","config":{"connector.class":"dev.tributary.connect.discard.DiscardSinkConnector","topics":"idle"},"initial_state":"PAUSED"}`},
		{2, "/connectors/a/config", src},
		{2, "/connectors/a/config", `{"connector.class":"dev.tributary.connect.discard.DiscardSinkConnector","topics":"idle"}`},
		{2, "/connectors/a/config", `{"connector.class":"dev.tributary.test.IdleSourceConnector","pad":"` + strings.Repeat("x", 20000) + `"}`},
		{3, "/connectors/a/config", `{"tasks.max":null,"x":"1"}`},
		{2, "/connectors/a/stop", ``},
		{3, "/connectors/a/offsets", `{"offsets":[{"partition":{"p":{"x":1}},"offset":{"o":[1]}}]}`},
		{4, "/connectors/a/offsets", ``},
		{2, "/connectors/a/resume", ``},
		{1, "/connectors/a/restart?includeTasks=true&onlyFailed=true", ``},
		{1, "/connectors/a/tasks/0/restart", ``},
		{0, "/connectors?expand=status&expand=info", ``},
		{0, "/connectors/a/status", ``},
		{0, "/connectors/a/tasks/0/status", ``},
		{4, "/connectors/victim%252Fx", ``},
		{2, "/connectors/%FF/config", src},
		{0, "/connectors/a%2Fb/topics", ``},
		{2, "/connectors/a/topics/reset", ``},
		{2, "/connector-plugins/IdleSource/config/validate", `{"connector.class":"IdleSource","name":"x\ty"}`},
		{0, "/connector-plugins?connectorsOnly=false", ``},
		{2, "/admin/loggers/root", `{"level":"DEBUG"}`},
		{1, "/connectors", `{"name":"` + strings.Repeat("n", 1100) + `","config":` + src + `}`},
		{1, "/connectors", `{"name":"a\nb\u0000","config":` + src + `}`},
		{4, "/connectors/a", ``},
		{0, "/health", ``},
	} {
		f.Add(s.method, s.path, []byte(s.body))
	}
	lw := startLiveWorker(f)
	f.Fuzz(func(t *testing.T, m byte, path string, body []byte) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		write := method != http.MethodGet && method != http.MethodHead
		before := lw.names(t)
		if len(before) > 20 {
			for _, n := range before { // keep the worker small
				lw.h.DeleteConnector(context.Background(), n)
			}
			before = lw.names(t)
		}
		w, ok := lw.serve(method, path, body)
		if !ok {
			return
		}
		code := w.Code
		if code >= 300 && method != http.MethodHead {
			var e restapi.ErrorMessage
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.ErrorCode != code || e.Message == "" {
				t.Fatalf("%s %q: %d answered without Kafka Connect's error body: %s", method, path, code, w.Body)
			}
			for _, g := range goTypes {
				if strings.Contains(e.Message, g) {
					t.Fatalf("%s %q: %d %q shows Go's %q", method, path, code, e.Message, g)
				}
			}
			if code >= 500 && !strings.Contains(e.Message, "timed out") && code != http.StatusServiceUnavailable {
				t.Fatalf("%s %q %q: %d %s", method, path, body, code, e.Message)
			}
		}
		if write && code >= 400 {
			if after := lw.names(t); !slices.Equal(before, after) {
				t.Fatalf("%s %q %q answered %d but changed the connectors from %q to %q", method, path, body, code, before, after)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lw.h.Health(ctx); err != nil {
			t.Fatalf("after %s %q %q: the worker is not healthy: %v", method, path, body, err)
		}
	})
}

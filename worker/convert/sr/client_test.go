package sr

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// registry answers like Confluent's: one schema "\"string\"" with id 7
// under subject t-value, basic auth alice:secret when auth is set.
func registry(t *testing.T, auth bool, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if auth {
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "secret" {
				w.WriteHeader(401)
				_, _ = w.Write([]byte(`{"error_code":401,"message":"Unauthorized"}`))
				return
			}
		}
		switch {
		case r.Method == "POST" && r.URL.Path == "/subjects/t-value/versions":
			var s Schema
			_ = json.NewDecoder(r.Body).Decode(&s)
			if s.Schema != `"string"` {
				w.WriteHeader(409)
				_, _ = w.Write([]byte(`{"error_code":409,"message":"Schema being registered is incompatible with an earlier schema for subject \"t-value\""}`))
				return
			}
			_, _ = w.Write([]byte(`{"id":7}`))
		case r.Method == "POST" && r.URL.Path == "/subjects/t-value":
			_, _ = w.Write([]byte(`{"subject":"t-value","id":7,"version":3,"schema":"\"string\""}`))
		case r.Method == "GET" && r.URL.Path == "/schemas/ids/7":
			_, _ = w.Write([]byte(`{"schema":"\"string\""}`))
		case r.Method == "GET" && r.URL.Path == "/subjects/t-value/versions/latest":
			_, _ = w.Write([]byte(`{"subject":"t-value","id":7,"version":3,"schema":"\"string\""}`))
		case r.URL.Path == "/proxy":
			w.WriteHeader(502)
			_, _ = w.Write([]byte(`<html>bad gateway</html>`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error_code":40403,"message":"Schema 8 not found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientCachesAndSurfacesErrors(t *testing.T) {
	var hits atomic.Int64
	srv := registry(t, false, &hits)
	c, err := NewFromConfig(map[string]string{"schema.registry.url": srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		id, err := c.Register(ctx, "t-value", Schema{Schema: `"string"`}, false)
		if err != nil || id != 7 {
			t.Fatalf("Register = %d, %v", id, err)
		}
		s, err := c.SchemaByID(ctx, 7)
		if err != nil || s.Schema != `"string"` {
			t.Fatalf("SchemaByID = %v, %v", s, err)
		}
		got, err := c.Lookup(ctx, "t-value", Schema{Schema: `"string"`}, false)
		if err != nil || got.Version != 3 || got.ID != 7 {
			t.Fatalf("Lookup = %+v, %v", got, err)
		}
	}
	// Register once, Lookup once; SchemaByID comes from Register's answer.
	if n := hits.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	_, err = c.SchemaByID(ctx, 8)
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != 40403 || !HasCode(err, CodeSchemaNotFound) || e.Retriable() {
		t.Fatalf("SchemaByID(8) = %#v", err)
	}
	if !strings.Contains(err.Error(), "40403") || !strings.Contains(err.Error(), "Schema 8 not found") {
		t.Errorf("error %q does not show Confluent's code and message", err)
	}
	_, err = c.Register(ctx, "t-value", Schema{Schema: `"int"`}, false)
	if !HasCode(err, 409) || !strings.Contains(err.Error(), "incompatible") {
		t.Errorf("Register of an incompatible schema = %v", err)
	}
	err = c.do(ctx, "GET", "/proxy", nil, nil)
	if !errors.As(err, &e) || e.Status != 502 || e.Code != 502 || !strings.Contains(e.Message, "bad gateway") || !e.Retriable() {
		t.Errorf("non-Confluent error body = %#v", err)
	}
}

func TestClientAuth(t *testing.T) {
	var hits atomic.Int64
	srv := registry(t, true, &hits)
	ctx := context.Background()
	withUser := strings.Replace(srv.URL, "http://", "http://alice:secret@", 1)
	for name, cfg := range map[string]map[string]string{
		"URL":               {"schema.registry.url": withUser},
		"USER_INFO":         {"schema.registry.url": srv.URL, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:secret"},
		"USER_INFO old key": {"schema.registry.url": srv.URL, "basic.auth.credentials.source": "USER_INFO", "schema.registry.basic.auth.user.info": "alice:secret"},
	} {
		c, err := NewFromConfig(cfg, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		if _, err := c.SchemaByID(ctx, 7); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, err := NewFromConfig(map[string]string{"schema.registry.url": srv.URL, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:wrong"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SchemaByID(ctx, 7)
	if !HasCode(err, 401) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: %v", err)
	}
	for _, bad := range []map[string]string{
		{},
		{"schema.registry.url": "ftp://x"},
		{"schema.registry.url": srv.URL, "basic.auth.credentials.source": "USER_INFO"},
		{"schema.registry.url": srv.URL, "basic.auth.credentials.source": "SASL_INHERIT"},
		{"schema.registry.url": srv.URL, "basic.auth.credentials.source": "NOPE"},
		{"schema.registry.url": srv.URL, "http.read.timeout.ms": "x"},
	} {
		if _, err := NewFromConfig(bad, nil); err == nil {
			t.Errorf("NewFromConfig(%v) accepted", bad)
		}
	}
	// A password in a URL stays out of errors.
	_, err = NewFromConfig(map[string]string{"schema.registry.url": "http://bob:hunter2@[::1"}, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL error %v shows the password", err)
	}
}

func TestClientFailsOver(t *testing.T) {
	var hits atomic.Int64
	srv := registry(t, false, &hits)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := NewFromConfig(map[string]string{"schema.registry.url": dead + "," + srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Latest(context.Background(), "t-value"); err != nil {
		t.Fatalf("with one registry down: %v", err)
	}
	c2, _ := NewFromConfig(map[string]string{"schema.registry.url": dead}, nil)
	if _, err := c2.Latest(context.Background(), "t-value"); err == nil {
		t.Fatal("no registry up, no error")
	}
}

func TestStrategies(t *testing.T) {
	for _, tc := range []struct {
		class, want string
		isKey       bool
	}{
		{"", "orders-value", false},
		{"", "orders-key", true},
		{TopicNameStrategy, "orders-value", false},
		{RecordNameStrategy, "shop.Order", false},
		{"RecordNameStrategy", "shop.Order", true},
		{TopicRecordNameStrategy, "orders-shop.Order", false},
	} {
		s, err := Strategy(tc.class)
		if err != nil {
			t.Fatal(err)
		}
		if got := s("orders", tc.isKey, "shop.Order"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.class, got, tc.want)
		}
	}
	if _, err := Strategy("io.confluent.kafka.serializers.subject.Nope"); err == nil {
		t.Error("unknown strategy accepted")
	}
}

func TestWireFormat(t *testing.T) {
	b := AppendHeader(nil, 258)
	if string(b) != "\x00\x00\x00\x01\x02" {
		t.Fatalf("AppendHeader = %x", b)
	}
	id, rest, err := ParseHeader(append(b, 'x'))
	if err != nil || id != 258 || string(rest) != "x" {
		t.Fatalf("ParseHeader = %d %q %v", id, rest, err)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0}, {1, 0, 0, 0, 1}} {
		if _, _, err := ParseHeader(bad); !errors.Is(err, ErrNotWireFormat) {
			t.Errorf("ParseHeader(%x) = %v", bad, err)
		}
	}
	for _, idx := range [][]int{{0}, {1}, {2, 0, 3}} {
		enc := AppendIndexes(nil, idx)
		got, rest, err := ParseIndexes(append(enc, 9))
		if err != nil || len(rest) != 1 || len(got) != len(idx) {
			t.Fatalf("indexes %v: %v %v %v", idx, got, rest, err)
		}
		for i := range idx {
			if got[i] != idx[i] {
				t.Fatalf("indexes %v read as %v", idx, got)
			}
		}
	}
	if b := AppendIndexes(nil, []int{0}); string(b) != "\x00" {
		t.Errorf("[0] = %x, want the single byte 0", b)
	}
	if b := AppendIndexes(nil, []int{1}); string(b) != "\x02\x02" {
		t.Errorf("[1] = %x, want zigzag count 1 then 1", b)
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3})
	f.Add([]byte{0, 0, 0, 0, 1, 4, 2, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, rest, err := ParseHeader(b)
		if err != nil {
			return
		}
		if got := AppendHeader(nil, id); string(got) != string(b[:5]) || len(rest) != len(b)-5 {
			t.Fatalf("header %x read as id %d", b[:5], id)
		}
		idx, _, err := ParseIndexes(rest)
		if err == nil && len(idx) == 0 {
			t.Fatal("no indexes without an error")
		}
	})
}

func TestReferences(t *testing.T) {
	versions := map[string]string{
		"/subjects/a.proto/versions/1": `{"subject":"a.proto","version":1,"id":1,"schemaType":"PROTOBUF","schema":"A","references":[{"name":"b.proto","subject":"b.proto","version":2}]}`,
		"/subjects/b.proto/versions/2": `{"subject":"b.proto","version":2,"id":2,"schemaType":"PROTOBUF","schema":"B"}`,
	}
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body, ok := versions[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error_code":40402,"message":"Version not found."}`))
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := New(Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	refs := []Reference{{Name: "a.proto", Subject: "a.proto", Version: 1}, {Name: "b.proto", Subject: "b.proto", Version: 2}}
	for range 2 {
		got, err := c.References(context.Background(), refs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["a.proto"] != "A" || got["b.proto"] != "B" {
			t.Fatalf("got %v", got)
		}
	}
	if calls != 2 {
		t.Fatalf("%d requests, want 2 (each version once)", calls)
	}
	if _, err := c.References(context.Background(), []Reference{{Name: "c.proto", Subject: "c.proto", Version: 1}}); !HasCode(err, CodeVersionNotFound) {
		t.Fatalf("missing reference: %v", err)
	}
}

package kafkarest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// countingRegistry puts an HTTP reverse proxy in front of the registry at
// regURL that counts the requests for a subject's latest version; it
// returns its URL.
func countingRegistry(t *testing.T, regURL string, latest *atomic.Int64) string {
	u, err := url.Parse(regURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/versions/latest") {
			latest.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// streamV3 POSTs records, one JSON object each, as one chunked request
// to the proxy served over HTTP at base, and returns the reports.
func streamV3(t *testing.T, base, path string, records []string) []v3Report {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		for _, r := range records {
			if _, err := io.WriteString(pw, r); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, base+path, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // unknown: sent chunked
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: HTTP %d %s", resp.StatusCode, b)
	}
	var out []v3Report
	dec := json.NewDecoder(resp.Body)
	for {
		var r v3Report
		if err := dec.Decode(&r); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("report %d: %v", len(out), err)
		}
		out = append(out, r)
	}
}

// TestV3StreamLatestSchemaAsksOnce: a chunked v3 request of 1,000 records
// that name no schema (their subject's latest) asks the registry for the
// latest version once, not once per record; a schema the proxy registers
// under the subject is the latest for the requests after it.
func TestV3StreamLatestSchemaAsksOnce(t *testing.T) {
	const records = 1000
	direct, _, regURL := registryProxy(t)
	var latestAsked atomic.Int64
	p, err := New(Config{Seeds: direct.cfg.Seeds, SchemaRegistryURL: countingRegistry(t, regURL, &latestAsked)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)

	cl, err := sr.New(sr.Config{URLs: []string{regURL}})
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	id1, err := cl.Register(context.Background(), "fz-value", sr.Schema{Schema: v1}, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.clusterMeta(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	path := "/v3/clusters/" + m.Cluster + "/topics/fz/records"

	body := make([]string, records)
	for i := range body {
		if i%2 == 0 {
			body[i] = fmt.Sprintf(`{"value":{"type":"AVRO","data":{"id":"r%d"}}}`, i)
		} else { // no type: the registry's schema decides
			body[i] = fmt.Sprintf(`{"value":{"data":{"id":"r%d"}}}`, i)
		}
	}
	reports := streamV3(t, srv.URL, path, body)
	if len(reports) != records {
		t.Fatalf("%d reports for %d records", len(reports), records)
	}
	for i, r := range reports {
		if r.ErrorCode != 200 || r.Value == nil || r.Value.SchemaID != id1 || r.Value.SchemaVersion != 1 || r.Value.Subject != "fz-value" {
			t.Fatalf("report %d: %+v value %+v, want 200 with fz-value version 1 (id %d)", i, r, r.Value, id1)
		}
	}
	if n := latestAsked.Load(); n != 1 {
		t.Errorf("%d records naming the latest schema asked the registry for it %d times, want 1", records, n)
	}

	// A record whose inline schema the proxy registers makes a new
	// latest version, which the next request's records use. (Records of
	// one stream are decoded in parallel, so the next request.)
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"n","type":"int","default":0}]}`
	inline, _ := json.Marshal(v2)
	reports = streamV3(t, srv.URL, path, []string{`{"value":{"type":"AVRO","schema":` + string(inline) + `,"data":{"id":"b","n":2}}}`})
	if len(reports) != 1 || reports[0].ErrorCode != 200 || reports[0].Value.SchemaVersion != 2 {
		t.Fatalf("registering version 2: %+v", reports)
	}
	reports = streamV3(t, srv.URL, path, []string{
		`{"value":{"type":"AVRO","data":{"id":"c","n":3}}}`,
		`{"value":{"data":{"id":"d","n":4}}}`,
	})
	for i, r := range reports {
		if r.ErrorCode != 200 || r.Value.SchemaVersion != 2 {
			t.Fatalf("after version 2, report %d: %+v value %+v, want 200 with version 2", i, r, r.Value)
		}
	}
	if len(reports) != 2 {
		t.Fatalf("%d reports for 2 records", len(reports))
	}
	if n := latestAsked.Load(); n != 2 {
		t.Errorf("after the proxy registered version 2: asked for the latest %d times in all, want 2", n)
	}
}

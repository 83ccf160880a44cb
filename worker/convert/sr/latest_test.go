package sr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// versionsRegistry answers register and latest for any subject, counting
// the requests by "METHOD path".
type versionsRegistry struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
	subjects map[string][]string // schema texts by version-1
	// With gate set, a GET signals entered (when it has room), then waits
	// for gate to close.
	gate, entered chan struct{}
}

func newVersionsRegistry(t *testing.T) *versionsRegistry {
	r := &versionsRegistry{requests: map[string]int{}, subjects: map[string][]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *versionsRegistry) serve(w http.ResponseWriter, req *http.Request) {
	if r.gate != nil && req.Method == http.MethodGet {
		select {
		case r.entered <- struct{}{}:
		default:
		}
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[req.Method+" "+req.URL.Path]++
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) != 4 && len(parts) != 3 || parts[0] != "subjects" || parts[2] != "versions" {
		w.WriteHeader(404)
		return
	}
	subject, versions := parts[1], r.subjects[parts[1]]
	switch {
	case req.Method == http.MethodPost && len(parts) == 3:
		var s Schema
		_ = json.NewDecoder(req.Body).Decode(&s)
		if s.Schema == `"bad"` {
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"error_code":40901,"message":"incompatible"}`))
			return
		}
		r.subjects[subject] = append(versions, s.Schema)
		_ = json.NewEncoder(w).Encode(map[string]int{"id": 100 + len(versions)})
	case req.Method == http.MethodGet && parts[3] == "latest" && len(versions) > 0:
		_ = json.NewEncoder(w).Encode(SubjectSchema{Subject: subject, Version: len(versions), ID: 100 + len(versions) - 1,
			Schema: Schema{Schema: versions[len(versions)-1]}})
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error_code":40401,"message":"Subject not found."}`))
	}
}

// latestAsked is how often subject's latest version was asked for.
func (r *versionsRegistry) latestAsked(subject string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests["GET /subjects/"+subject+"/versions/latest"]
}

// clock is a settable time for Config.Now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// latestClient returns a client of reg with the latest cache cfg asks
// for, on clk, and registers "v1" under subjects s and t.
func latestClient(t *testing.T, reg *versionsRegistry, clk *clock, ttl time.Duration, size int) *Client {
	t.Helper()
	c, err := New(Config{URLs: []string{reg.URL}, LatestTTL: ttl, LatestCacheSize: size, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s", "t"} {
		if _, err := c.Register(context.Background(), s, Schema{Schema: `"v1"`}, false); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func mustLatest(t *testing.T, c *Client, subject, want string) {
	t.Helper()
	got, err := c.Latest(context.Background(), subject)
	if err != nil || got.Schema.Schema != want {
		t.Fatalf("Latest(%s) = %+v, %v; want schema %s", subject, got, err, want)
	}
}

func TestLatestCachedForTTL(t *testing.T) {
	reg := newVersionsRegistry(t)
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := latestClient(t, reg, clk, time.Minute, 0)
	for range 1000 {
		mustLatest(t, c, "s", `"v1"`)
	}
	if v, err := c.Version(context.Background(), "s", -1); err != nil || v.Version != 1 {
		t.Fatalf("Version(s, -1) = %+v, %v", v, err)
	}
	if n := reg.latestAsked("s"); n != 1 {
		t.Fatalf("1,001 calls asked the registry %d times, want 1", n)
	}

	// Another registration (not this client's) is seen once the TTL is
	// over, counted from when the entry was written.
	reg.mu.Lock()
	reg.subjects["s"] = append(reg.subjects["s"], `"v2"`)
	reg.mu.Unlock()
	clk.now = clk.now.Add(time.Minute - time.Nanosecond)
	mustLatest(t, c, "s", `"v1"`)
	clk.now = clk.now.Add(time.Nanosecond)
	mustLatest(t, c, "s", `"v2"`)
	mustLatest(t, c, "s", `"v2"`)
	if n := reg.latestAsked("s"); n != 2 {
		t.Fatalf("after the TTL: asked %d times, want 2", n)
	}
}

func TestLatestInvalidatedByRegister(t *testing.T) {
	reg := newVersionsRegistry(t)
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := latestClient(t, reg, clk, -1, 0) // never expires
	mustLatest(t, c, "s", `"v1"`)
	mustLatest(t, c, "t", `"v1"`)
	clk.now = clk.now.Add(1000 * time.Hour)
	mustLatest(t, c, "s", `"v1"`)
	if n := reg.latestAsked("s"); n != 1 {
		t.Fatalf("without a TTL: asked %d times, want 1", n)
	}

	if _, err := c.Register(context.Background(), "s", Schema{Schema: `"v2"`}, false); err != nil {
		t.Fatal(err)
	}
	mustLatest(t, c, "s", `"v2"`)
	mustLatest(t, c, "t", `"v1"`)
	if s, tt := reg.latestAsked("s"), reg.latestAsked("t"); s != 2 || tt != 1 {
		t.Fatalf("after registering under s: s asked %d times (want 2), t %d (want 1)", s, tt)
	}

	// A registration the registry refuses drops nothing.
	if _, err := c.Register(context.Background(), "s", Schema{Schema: `"bad"`}, false); !HasCode(err, CodeIncompatible) {
		t.Fatalf("Register(bad) = %v, want 40901", err)
	}
	mustLatest(t, c, "s", `"v2"`)
	if n := reg.latestAsked("s"); n != 2 {
		t.Fatalf("after a refused registration: asked %d times, want 2", n)
	}
}

func TestLatestNotCachedWithoutTTL(t *testing.T) {
	reg := newVersionsRegistry(t)
	c := latestClient(t, reg, &clock{now: time.Unix(1_700_000_000, 0)}, 0, 0)
	for range 5 {
		mustLatest(t, c, "s", `"v1"`)
		if _, err := c.Version(context.Background(), "s", -1); err != nil {
			t.Fatal(err)
		}
	}
	if n := reg.latestAsked("s"); n != 10 {
		t.Fatalf("LatestTTL 0: asked %d times for 10 calls, want 10", n)
	}
	// Errors are not cached either.
	for range 2 {
		if _, err := c.Latest(context.Background(), "none"); !HasCode(err, CodeSubjectNotFound) {
			t.Fatalf("Latest(none) = %v, want 40401", err)
		}
	}
	if n := reg.latestAsked("none"); n != 2 {
		t.Fatalf("a missing subject asked %d times, want 2", n)
	}
}

func TestLatestCacheSizeEvictsLeastRecentlyUsed(t *testing.T) {
	reg := newVersionsRegistry(t)
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := latestClient(t, reg, clk, time.Hour, 2)
	if _, err := c.Register(context.Background(), "u", Schema{Schema: `"v1"`}, false); err != nil {
		t.Fatal(err)
	}
	mustLatest(t, c, "s", `"v1"`)
	mustLatest(t, c, "t", `"v1"`)
	mustLatest(t, c, "s", `"v1"`) // s used last: t goes for u
	mustLatest(t, c, "u", `"v1"`)
	mustLatest(t, c, "s", `"v1"`)
	mustLatest(t, c, "t", `"v1"`)
	if s, tt, u := reg.latestAsked("s"), reg.latestAsked("t"), reg.latestAsked("u"); s != 1 || tt != 2 || u != 1 {
		t.Fatalf("size 2: asked s %d, t %d, u %d times; want 1, 2, 1", s, tt, u)
	}
}

func TestLatestCacheCore(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	ss := func(v int) SubjectSchema { return SubjectSchema{Version: v} }
	if c := newLatestCache(0, 10); c != nil {
		t.Fatal("ttl 0 made a cache")
	}
	var none *latestCache
	none.put("a", ss(1), t0)
	none.invalidate("a")
	if _, ok := none.get("a", t0); ok {
		t.Fatal("a nil cache answered")
	}

	c := newLatestCache(10*time.Second, 0)
	if c.size != DefaultLatestCacheSize {
		t.Fatalf("default size %d, want %d", c.size, DefaultLatestCacheSize)
	}
	c.put("a", ss(1), t0)
	c.put("a", ss(2), t0.Add(5*time.Second)) // rewritten: the TTL starts again
	if got, ok := c.get("a", t0.Add(14*time.Second)); !ok || got.Version != 2 {
		t.Fatalf("rewritten entry at +14s: %+v %v", got, ok)
	}
	if _, ok := c.get("a", t0.Add(15*time.Second)); ok {
		t.Fatal("entry alive 10s after its write")
	}
	if len(c.items) != 0 || c.order.Len() != 0 {
		t.Fatalf("expired entry kept: %d items, %d in order", len(c.items), c.order.Len())
	}
}

// TestLatestConcurrentCallsShareOneRequest: callers that miss the cache
// while a request for the subject is in flight wait for its answer.
func TestLatestConcurrentCallsShareOneRequest(t *testing.T) {
	reg := newVersionsRegistry(t)
	c := latestClient(t, reg, &clock{now: time.Unix(1_700_000_000, 0)}, time.Minute, 0)
	reg.gate, reg.entered = make(chan struct{}), make(chan struct{}, 1)
	const callers = 20
	errs := make(chan error, callers)
	for range callers {
		go func() {
			got, err := c.Latest(context.Background(), "s")
			if err == nil && got.Schema.Schema != `"v1"` {
				err = fmt.Errorf("got %+v", got)
			}
			errs <- err
		}()
	}
	<-reg.entered // one request is in flight; the others find it or the cache
	close(reg.gate)
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := reg.latestAsked("s"); n != 1 {
		t.Fatalf("%d concurrent calls asked %d times, want 1", callers, n)
	}
}

// TestLatestInFlightDuringRegisterNotCached: an answer asked for before
// the client registered a new version under the subject is returned to
// its caller but not cached.
func TestLatestInFlightDuringRegisterNotCached(t *testing.T) {
	reg := newVersionsRegistry(t)
	c := latestClient(t, reg, &clock{now: time.Unix(1_700_000_000, 0)}, time.Minute, 0)
	reg.gate, reg.entered = make(chan struct{}), make(chan struct{}, 1)
	got := make(chan SubjectSchema, 1)
	go func() {
		ss, err := c.Latest(context.Background(), "s")
		if err != nil {
			t.Error(err)
		}
		got <- ss
	}()
	<-reg.entered // the request is in flight; the client registers "v2"
	if _, err := c.Register(context.Background(), "s", Schema{Schema: `"v2"`}, false); err != nil {
		t.Fatal(err)
	}
	close(reg.gate)
	<-got
	mustLatest(t, c, "s", `"v2"`)
	mustLatest(t, c, "s", `"v2"`)
	// The one in flight, then one after it (its answer was not cached),
	// then the cache.
	if n := reg.latestAsked("s"); n != 2 {
		t.Fatalf("asked %d times, want 2", n)
	}
}

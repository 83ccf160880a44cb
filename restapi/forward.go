package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/tributary-dev/tributary/worker"
)

// Forwarding: a worker that cannot do a write itself (a follower, for what
// only the leader does; the leader, for a restart of work another worker
// owns) passes the request on, as Kafka Connect's
// HerderRequestHandler.completeOrForwardRequest does:
//
//   - the same method, path, query and body go to the other worker, with
//     forward=true when the request came from a client (no forward
//     parameter) and forward=false when it was itself forwarded, and a
//     request that came with forward=false is not forwarded again: at most
//     two hops;
//   - the answer (status, body) is returned as it is, a Location header
//     pointing at this worker; a success only once this worker has read
//     the config topic up to it (readYourWrite), unlike Kafka Connect;
//   - unlike Kafka Connect, a worker that cannot be reached (the leader was
//     just killed) is not a 500: the request waits for the group to know
//     its next leader, up to the hold timeout, and goes there (or is done
//     here, when this worker leads now); after the timeout the answer is
//     Kafka Connect's 409.

// bodyKey is the context key of the request body's holder.
type bodyKey struct{}

// bodyHolder keeps the request body that readBody read, for forwarding.
type bodyHolder struct{ b []byte }

// holdBodies gives every request a place for its body.
func holdBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, &bodyHolder{})))
	})
}

func keepBody(r *http.Request, b []byte) {
	if h, ok := r.Context().Value(bodyKey{}).(*bodyHolder); ok {
		h.b = b
	}
}

func heldBody(r *http.Request) []byte {
	if h, ok := r.Context().Value(bodyKey{}).(*bodyHolder); ok {
		return h.b
	}
	return nil
}

// Messages of Kafka Connect's 409s.
const (
	msgConflict = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	msgNoLeader = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
)

// forwardedHeaders are copied to a forwarded request: the content type,
// credentials (Kafka Connect copies Authorization) and an internal
// request's signature.
var forwardedHeaders = []string{"Content-Type", "Authorization", "X-Connect-Authorization", "X-Connect-Request-Signature-Algorithm"}

// forward passes r on to the worker at target (see above).
func (a *api) forward(w http.ResponseWriter, r *http.Request, target string, we *worker.Error) {
	q := r.URL.Query()
	fwd, present := q["forward"]
	if present && len(fwd) > 0 && !strings.EqualFold(fwd[0], "true") {
		// Already the second hop: the target moved while it came here.
		writeError(w, http.StatusConflict, we.Message)
		return
	}
	q.Set("forward", strconv.FormatBool(!present))
	body := heldBody(r)
	hold := a.holdTimeout()
	deadline := time.Now().Add(hold)
	for {
		resp, err := a.send(r, target, q, body)
		if err == nil {
			if resp.StatusCode/100 == 2 {
				a.readYourWrite(r)
			}
			a.relay(w, r, resp)
			return
		}
		if r.Context().Err() != nil {
			a.fail(w, r, r.Context().Err())
			return
		}
		a.log.Warn("rest: forwarding failed; waiting for the group to settle", "method", r.Method, "path", r.URL.Path, "to", target, "err", err)
		if time.Now().After(deadline) || present {
			// A forwarded request is retried by its first hop, not here.
			writeError(w, http.StatusConflict, msgNoLeader)
			return
		}
		select {
		case <-r.Context().Done():
			a.fail(w, r, r.Context().Err())
			return
		case <-time.After(250 * time.Millisecond):
		}
		cl, ok := a.h.(worker.Cluster)
		if !ok {
			writeError(w, http.StatusConflict, msgNoLeader)
			return
		}
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		leader, err := cl.LeaderURL(ctx)
		cancel()
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if leader == "" {
			// This worker leads now: do it here.
			// A fresh routing context: chi would take the old one for a
			// sub-router's.
			r2 := r.Clone(context.WithValue(r.Context(), chi.RouteCtxKey, (*chi.Context)(nil)))
			r2.URL.RawPath = escapePath(r2.URL.Path) // decoded once more on the way in
			r2.Body = io.NopCloser(bytes.NewReader(body))
			a.root.ServeHTTP(w, r2)
			return
		}
		target = leader
	}
}

// syncTimeout bounds readYourWrite.
const syncTimeout = 5 * time.Second

// readYourWrite brings this worker's view up to a write another worker
// just made for it, before the answer goes back: a client that created a
// connector through a follower and asks the same follower for its status,
// or restarts one of its tasks, at once, gets the answer the leader would
// give (Kafka Connect's follower reads the config topic in its own time,
// and may answer "Unknown connector" or 409 in between). A failure is
// logged; the write stands and its answer goes back.
func (a *api) readYourWrite(r *http.Request) {
	cl, ok := a.h.(worker.Cluster)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), syncTimeout)
	defer cancel()
	if err := cl.SyncConfigs(ctx); err != nil {
		a.log.Warn("rest: this worker could not read a write forwarded to another one back; it may answer from an older config for a moment",
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
}

// escapePath encodes a decoded path (whose segments hold no '/') segment
// by segment, so that the receiver decodes exactly the same segments: a
// name such as "a;b" or "a?b" keeps its ';' and '?' ("a;b" as an escaped
// path would lose ";b", a path parameter).
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// send issues the forwarded request.
func (a *api) send(r *http.Request, target string, q url.Values, body []byte) (*http.Response, error) {
	u := strings.TrimRight(target, "/") + escapePath(r.URL.Path) + "?" + q.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u, rd)
	if err != nil {
		return nil, err
	}
	for _, h := range forwardedHeaders {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	return a.client.Do(req)
}

// relay writes the other worker's answer as this worker's.
func (a *api) relay(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "IO Error trying to forward REST request: "+err.Error())
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			scheme := "http"
			if r.TLS != nil {
				scheme = "https"
			}
			u.Scheme, u.Host = scheme, r.Host
			loc = u.String()
		}
		w.Header().Set("Location", loc)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(b)
}

// holdTimeout is how long forwarding waits for the group to settle.
func (a *api) holdTimeout() time.Duration {
	if cl, ok := a.h.(worker.Cluster); ok {
		return cl.HoldTimeout()
	}
	return 0
}

// putTaskConfigs is the internal POST /connectors/{connector}/tasks.
func (a *api) putTaskConfigs(w http.ResponseWriter, r *http.Request) {
	cl, ok := a.h.(worker.Cluster)
	if !ok {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var configs []map[string]string
	if err := json.Unmarshal(body, &configs); err != nil {
		badRequest(w, "Cannot deserialize the task configurations: "+jsonError(err).Error())
		return
	}
	var sig *worker.Signature
	alg, val := r.Header.Get("X-Connect-Request-Signature-Algorithm"), r.Header.Get("X-Connect-Authorization")
	if alg != "" || val != "" {
		sig = &worker.Signature{Algorithm: alg, Value: val, Body: body}
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	if err := cl.PutTaskConfigs(ctx, connectorName(r), configs, sig); err != nil {
		a.fail(w, r, err)
		return
	}
	writeEmpty(w, http.StatusNoContent)
}

// fenceZombies is the internal PUT /connectors/{connector}/fence (KIP-618):
// a worker about to start an exactly-once source task asks the leader for a
// round of zombie fencing. Signed like POST /tasks; the body is empty.
func (a *api) fenceZombies(w http.ResponseWriter, r *http.Request) {
	f, ok := a.h.(worker.Fencer)
	if !ok {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	// No body, and so no content type, as Kafka Connect sends it: the
	// signature is of the empty body.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes))
	if err != nil {
		badRequest(w, "Cannot read the request body: "+err.Error())
		return
	}
	var sig *worker.Signature
	alg, val := r.Header.Get("X-Connect-Request-Signature-Algorithm"), r.Header.Get("X-Connect-Authorization")
	if alg != "" || val != "" {
		sig = &worker.Signature{Algorithm: alg, Value: val, Body: body}
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	if err := f.FenceZombies(ctx, connectorName(r), sig); err != nil {
		a.fail(w, r, err)
		return
	}
	writeEmpty(w, http.StatusNoContent)
}

// errForward is a *worker.Error that asks for forwarding.
func errForward(err error) (*worker.Error, bool) {
	var we *worker.Error
	if errors.As(err, &we) && we.Forward != "" {
		return we, true
	}
	return nil, false
}

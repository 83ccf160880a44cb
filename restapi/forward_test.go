package restapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/restapitest"
	"github.com/tributary-dev/tributary/worker"
)

// follower is a worker.Herder of a worker that is not the leader: its
// writes answer "forward to the leader"; LeaderURL says where that is.
type follower struct {
	*restapitest.Herder
	mu       sync.Mutex
	leader   string // "" when this worker leads
	forwards int
	tasks    []map[string]string
	sig      *worker.Signature
	synced   int // SyncConfigs calls
}

func (f *follower) leaderURL() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader
}

func (f *follower) notLeader() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forwards++
	return &worker.Error{Kind: worker.KindConflict, Message: "Cannot complete request because of a conflicting operation (e.g. worker rebalance)", Forward: f.leader}
}

func (f *follower) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initialState string) (bool, worker.ConnectorInfo, error) {
	if f.leaderURL() != "" {
		return false, worker.ConnectorInfo{}, f.notLeader()
	}
	return f.Herder.PutConnectorConfig(ctx, name, config, allowReplace, initialState)
}

func (f *follower) DeleteConnector(ctx context.Context, name string) error {
	if f.leaderURL() != "" {
		return f.notLeader()
	}
	return f.Herder.DeleteConnector(ctx, name)
}

func (f *follower) LeaderURL(context.Context) (string, error) { return f.leaderURL(), nil }

func (f *follower) HoldTimeout() time.Duration { return 5 * time.Second }

func (f *follower) SyncConfigs(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced++
	return nil
}

func (f *follower) syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced
}

func (f *follower) PutTaskConfigs(_ context.Context, name string, configs []map[string]string, sig *worker.Signature) error {
	if f.leaderURL() != "" {
		return f.notLeader()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks, f.sig = configs, sig
	return nil
}

func request(t *testing.T, method, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A follower passes writes to the leader and returns its answer as it is:
// status, body, Location (pointing at the follower).
func TestForwardToLeader(t *testing.T) {
	leaderH := &follower{Herder: restapitest.NewHerder()}
	leader := httptest.NewServer(restapi.New(leaderH, restapi.Options{}))
	defer leader.Close()
	followerH := &follower{Herder: restapitest.NewHerder(), leader: leader.URL}
	fol := httptest.NewServer(restapi.New(followerH, restapi.Options{}))
	defer fol.Close()

	resp, body := request(t, "POST", fol.URL+"/connectors", `{"name":"a","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
	if resp.StatusCode != 201 || !strings.Contains(body, `"name":"a"`) {
		t.Fatalf("create through the follower: %d %s", resp.StatusCode, body)
	}
	if loc := resp.Header.Get("Location"); loc != fol.URL+"/connectors/a" {
		t.Fatalf("Location %q, want the follower's", loc)
	}
	if _, err := leaderH.ConnectorInfo(context.Background(), "a"); err != nil {
		t.Fatalf("the leader did not create it: %v", err)
	}
	// Read your writes: the follower read the config topic up to the
	// leader's write before it answered.
	if n := followerH.syncs(); n != 1 {
		t.Fatalf("the follower synced its config view %d times before answering the create, want once", n)
	}
	// The leader's error comes back unchanged (and changed nothing to
	// read back).
	resp, body = request(t, "POST", fol.URL+"/connectors", `{"name":"a","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
	if resp.StatusCode != 409 || body != `{"error_code":409,"message":"Connector a already exists"}` {
		t.Fatalf("duplicate through the follower: %d %s", resp.StatusCode, body)
	}
	if n := followerH.syncs(); n != 1 {
		t.Fatalf("the follower synced after a refused write: %d syncs", n)
	}
	resp, body = request(t, "DELETE", fol.URL+"/connectors/nope", "")
	if resp.StatusCode != 404 {
		t.Fatalf("delete of an unknown connector: %d %s", resp.StatusCode, body)
	}
	resp, _ = request(t, "DELETE", fol.URL+"/connectors/a", "")
	if resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}

	// A name with characters a path must escape reaches the leader as it
	// is, also when the follower turns out to lead after all.
	const odd = "a b;c?d#é+&=@"
	resp, body = request(t, "POST", fol.URL+"/connectors", `{"name":"`+odd+`","config":{"connector.class":"FileStreamSource","topic":"t"}}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create %q through the follower: %d %s", odd, resp.StatusCode, body)
	}
	for _, srv := range []string{fol.URL, leader.URL} {
		resp, body = request(t, "PUT", srv+"/connectors/"+url.PathEscape(odd)+"/config", `{"connector.class":"FileStreamSource","topic":"t2"}`)
		if resp.StatusCode != 200 || !strings.Contains(body, `"topic":"t2"`) {
			t.Fatalf("update %q through %s: %d %s", odd, srv, resp.StatusCode, body)
		}
	}
	if cfg, err := leaderH.ConnectorConfig(context.Background(), odd); err != nil || cfg["topic"] != "t2" {
		t.Fatalf("the leader has %v, %v", cfg, err)
	}
	// The leader dies and the follower leads now: the request runs through
	// the follower's own handler again, with the same name.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	followerH.mu.Lock()
	followerH.leader = dead.URL
	followerH.mu.Unlock()
	go func() {
		time.Sleep(300 * time.Millisecond)
		followerH.mu.Lock()
		followerH.leader = ""
		followerH.mu.Unlock()
	}()
	resp, body = request(t, "PUT", fol.URL+"/connectors/"+url.PathEscape(odd)+"/config", `{"connector.class":"FileStreamSource","topic":"t3"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create %q on the new leader: %d %s", odd, resp.StatusCode, body)
	}
	if cfg, err := followerH.ConnectorConfig(context.Background(), odd); err != nil || cfg["topic"] != "t3" {
		t.Fatalf("the new leader has %v, %v", cfg, err)
	}
}

// At most two hops: a request that was forwarded with forward=false is not
// forwarded again; one with forward=true is, once more.
func TestForwardHops(t *testing.T) {
	var got []string
	var mu sync.Mutex
	end := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RawQuery)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer end.Close()
	h := &follower{Herder: restapitest.NewHerder(), leader: end.URL}
	srv := httptest.NewServer(restapi.New(h, restapi.Options{}))
	defer srv.Close()

	resp, _ := request(t, "DELETE", srv.URL+"/connectors/a", "")
	if resp.StatusCode != 204 {
		t.Fatalf("first hop: %d", resp.StatusCode)
	}
	resp, _ = request(t, "DELETE", srv.URL+"/connectors/a?forward=true", "")
	if resp.StatusCode != 204 {
		t.Fatalf("second hop: %d", resp.StatusCode)
	}
	resp, body := request(t, "DELETE", srv.URL+"/connectors/a?forward=false", "")
	if resp.StatusCode != 409 || !strings.Contains(body, "conflicting operation") {
		t.Fatalf("third hop: %d %s", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "forward=true forward=false" {
		t.Fatalf("forwarded queries %q", got)
	}
}

// A leader that cannot be reached (killed) is no 500: the follower asks
// the group for the next leader and goes there, or does the request
// itself when it leads now.
func TestForwardRetriesWhenTheLeaderIsGone(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	h := &follower{Herder: restapitest.NewHerder(), leader: deadURL}
	srv := httptest.NewServer(restapi.New(h, restapi.Options{}))
	defer srv.Close()
	go func() {
		time.Sleep(600 * time.Millisecond) // a rebalance: this worker leads now
		h.mu.Lock()
		h.leader = ""
		h.mu.Unlock()
	}()
	resp, body := request(t, "POST", srv.URL+"/connectors", `{"name":"b","config":{"connector.class":"FileStreamSink","topics":"t"}}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create while the leader changed: %d %s", resp.StatusCode, body)
	}
}

// The internal task-config endpoint passes the signature headers and the
// raw body to the herder, and is forwarded like other writes.
func TestInternalTaskConfigs(t *testing.T) {
	leaderH := &follower{Herder: restapitest.NewHerder()}
	leader := httptest.NewServer(restapi.New(leaderH, restapi.Options{}))
	defer leader.Close()
	fol := httptest.NewServer(restapi.New(&follower{Herder: restapitest.NewHerder(), leader: leader.URL}, restapi.Options{}))
	defer fol.Close()
	body := `[{"task.class":"T","n":"0"}]`
	resp, b := request(t, "POST", fol.URL+"/connectors/a/tasks", body,
		"X-Connect-Authorization", "c2lnbmF0dXJl", "X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	if resp.StatusCode != 204 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if len(leaderH.tasks) != 1 || leaderH.tasks[0]["n"] != "0" || leaderH.sig == nil ||
		leaderH.sig.Value != "c2lnbmF0dXJl" || leaderH.sig.Algorithm != "HmacSHA256" || string(leaderH.sig.Body) != body {
		t.Fatalf("leader got %+v %+v", leaderH.tasks, leaderH.sig)
	}
	resp, b = request(t, "POST", leader.URL+"/connectors/a/tasks", `{"not":"a list"}`)
	if resp.StatusCode != 400 {
		t.Fatalf("malformed task configs: %d %s", resp.StatusCode, b)
	}
}

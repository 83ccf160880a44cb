package harness

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeEngine serves answer on GET /_ping at a unix socket in a temporary
// directory and returns the socket's path; GET /images/NAME/json answers
// 200 for the images given, 404 for the others, as Docker's API does.
func fakeEngine(t *testing.T, status int, answer string, images ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/images/"); ok && strings.HasSuffix(name, "/json") {
			if slices.Contains(images, strings.TrimSuffix(name, "/json")) {
				w.Write([]byte(`{"Id":"sha256:0"}`))
				return
			}
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such image: ` + strings.TrimSuffix(name, "/json") + `"}`))
			return
		}
		if r.URL.Path != "/_ping" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(answer))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return path
}

// TestFindDockerEngine: an engine is found where it answers Docker's ping,
// at DOCKER_HOST or, when that is unset, at the default socket; a path with
// nothing behind it, a socket answering something else, or a closed TCP
// port is no engine, and the error says where it looked.
func TestFindDockerEngine(t *testing.T) {
	ctx := context.Background()
	docker := fakeEngine(t, http.StatusOK, "OK")
	other := fakeEngine(t, http.StatusNotFound, "nope")
	nothing := filepath.Join(t.TempDir(), "nothing.sock")
	open, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	for _, c := range []struct {
		name, dockerHost, socket string
		want, wantErr            string
	}{
		{"default socket answers", "", docker, "unix://" + docker, ""},
		{"default socket missing", "", nothing, "", "DOCKER_HOST is unset and no engine answers at " + nothing},
		{"default socket not Docker", "", other, "", "not Docker's 200 OK"},
		{"DOCKER_HOST unix answers", "unix://" + docker, nothing, "unix://" + docker, ""},
		// DOCKER_HOST set: the default socket is not a fallback.
		{"DOCKER_HOST unix missing", "unix://" + nothing, docker, "", "no engine answers at DOCKER_HOST=unix://" + nothing},
		{"DOCKER_HOST tcp open", "tcp://" + open.Addr().String(), nothing, "tcp://" + open.Addr().String(), ""},
		{"DOCKER_HOST tcp closed", "tcp://" + closedAddr, docker, "", "no engine answers at DOCKER_HOST=tcp://" + closedAddr},
		{"DOCKER_HOST ssh unchecked", "ssh://user@host", nothing, "ssh://user@host", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := FindDockerEngine(ctx, c.dockerHost, c.socket)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestPlanLiveMongo: TRIBUTARY_TEST_MONGODB_URI wins (no engine is looked
// for); else an engine that answers; else a skip whose message names both
// ways to run the tests and why there is no engine.
func TestPlanLiveMongo(t *testing.T) {
	ctx := context.Background()
	docker := fakeEngine(t, http.StatusOK, "OK", DefaultMongoImage, "mongo:7.0")
	noImage := fakeEngine(t, http.StatusOK, "OK")
	nothing := filepath.Join(t.TempDir(), "nothing.sock")
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	const uri = "mongodb://127.0.0.1:27017/?replicaSet=rs0"
	if p := planLiveMongo(ctx, env("TRIBUTARY_TEST_MONGODB_URI", uri, "DOCKER_HOST", "unix://"+docker), docker); p != (liveMongoPlan{uri: uri}) {
		t.Errorf("with the URI set: %+v", p)
	}
	if p := planLiveMongo(ctx, env(), docker); p != (liveMongoPlan{dockerHost: "unix://" + docker}) {
		t.Errorf("with an engine at the default socket: %+v", p)
	}
	if p := planLiveMongo(ctx, env("DOCKER_HOST", "unix://"+docker), nothing); p != (liveMongoPlan{dockerHost: "unix://" + docker}) {
		t.Errorf("with an engine at DOCKER_HOST: %+v", p)
	}
	// An engine without the image: skip rather than pull, unless asked to.
	for _, e := range []func(string) string{env("DOCKER_HOST", "unix://"+noImage), env("DOCKER_HOST", "unix://"+docker, "TRIBUTARY_TEST_MONGODB_IMAGE", "mongo:6.0")} {
		p := planLiveMongo(ctx, e, nothing)
		if p.uri != "" || p.dockerHost != "" {
			t.Fatalf("without the image: %+v", p)
		}
		for _, want := range []string{"skipping:", "has no image mongo:", "docker pull", "TRIBUTARY_TEST_MONGODB_IMAGE", "TRIBUTARY_TEST_MONGODB_PULL", "TRIBUTARY_TEST_MONGODB_URI"} {
			if !strings.Contains(p.skip, want) {
				t.Errorf("skip message %q does not mention %q", p.skip, want)
			}
		}
	}
	if p := planLiveMongo(ctx, env("DOCKER_HOST", "unix://"+docker, "TRIBUTARY_TEST_MONGODB_IMAGE", "mongo:7.0"), nothing); p != (liveMongoPlan{dockerHost: "unix://" + docker}) {
		t.Errorf("with another image the engine has: %+v", p)
	}
	if p := planLiveMongo(ctx, env("DOCKER_HOST", "unix://"+noImage, "TRIBUTARY_TEST_MONGODB_PULL", "1"), nothing); p != (liveMongoPlan{dockerHost: "unix://" + noImage, pull: true}) {
		t.Errorf("allowed to pull: %+v", p)
	}
	for _, e := range []func(string) string{env(), env("DOCKER_HOST", "unix://"+nothing)} {
		p := planLiveMongo(ctx, e, nothing)
		if p.uri != "" || p.dockerHost != "" {
			t.Fatalf("without a URI or an engine: %+v", p)
		}
		for _, want := range []string{"skipping:", "MongoDB replica set", "TRIBUTARY_TEST_MONGODB_URI", "Docker engine", "DOCKER_HOST", nothing, "testcontainers-go"} {
			if !strings.Contains(p.skip, want) {
				t.Errorf("skip message %q does not mention %q", p.skip, want)
			}
		}
	}
}

// TestLiveMongoURIT: LiveMongo as the live tests use it, from the real
// environment: it hands over TRIBUTARY_TEST_MONGODB_URI as it is, and
// skips the test when neither that nor a Docker engine is there (DOCKER_HOST
// pointing at nothing, so that no container is started even where Docker
// runs). Close without a container is a no-op.
func TestLiveMongoURIT(t *testing.T) {
	const uri = "mongodb://127.0.0.1:1/?directConnection=true"
	t.Setenv("TRIBUTARY_TEST_MONGODB_URI", uri)
	var withURI LiveMongo
	if got := withURI.URIT(t); got != uri {
		t.Errorf("URIT %q, want %q", got, uri)
	}
	if err := withURI.Close(); err != nil {
		t.Error(err)
	}

	t.Setenv("TRIBUTARY_TEST_MONGODB_URI", "")
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "nothing.sock"))
	var none LiveMongo
	for i := range 2 { // the decision is taken once and kept
		var sub *testing.T
		t.Run("skips", func(t *testing.T) {
			sub = t
			none.URIT(t)
			t.Error("URIT returned without a replica set")
		})
		if !sub.Skipped() {
			t.Fatalf("call %d: the test was not skipped", i)
		}
	}
	if !strings.Contains(none.skip, "TRIBUTARY_TEST_MONGODB_URI") || !strings.Contains(none.skip, "DOCKER_HOST") {
		t.Errorf("skip message %q", none.skip)
	}
	if err := none.Close(); err != nil {
		t.Error(err)
	}
}

// TestMongoContainerWithoutEngine: the harness builds integration/
// mongocontainer and starts it against an "engine" that answers Docker's
// ping and nothing else (so that the harness takes it for one); the command
// refuses it at once, and the harness reports its exit with its log, which
// says what to do. No container is started, even where Docker runs.
func TestMongoContainerWithoutEngine(t *testing.T) {
	fake := fakeEngine(t, http.StatusOK, "OK")
	host, err := FindDockerEngine(context.Background(), "unix://"+fake, DefaultDockerSocket)
	if err != nil {
		t.Fatalf("the fake engine is not taken for one: %v", err)
	}
	bin, err := moduleBinary("mongocontainer")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartMongoContainer(ctx, bin, host, false)
	if err == nil {
		c.Close()
		t.Fatalf("started a container at %s", c.URI)
	}
	if ctx.Err() != nil {
		t.Fatalf("did not fail fast: %v", err)
	}
	for _, want := range []string{"mongocontainer exited during start-up", "exit status 1", "no Docker engine answers at DOCKER_HOST=unix://" + fake, "start Docker or correct DOCKER_HOST"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

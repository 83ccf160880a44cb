package container

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/worker"
)

func TestMain(m *testing.M) {
	// testcontainers' reaper (Ryuk) is an image too, which would be
	// pulled; nothing can be here. The tests remove their containers
	// themselves (t.Cleanup), and CI stops its engine at the end.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// Ports are published on 127.0.0.1 (bindLoopback). testcontainers
	// would take this machine for a container when it has /.dockerenv (as
	// some CI sandboxes do) and dial the default gateway instead.
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	// testcontainers' progress lines (creating, waiting, stopping) would
	// bury the tests' own logs and the benchmarks' figures.
	if os.Getenv("TRIBUTARY_TESTCONTAINERS_LOG") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	os.Exit(m.Run())
}

// needEngine skips t when no Docker engine answers, saying how to get one,
// or fails it when TRIBUTARY_REQUIRE_DOCKER is set (CI).
func needEngine(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := harness.FindDockerEngine(ctx, os.Getenv("DOCKER_HOST"), harness.DefaultDockerSocket); err != nil {
		msg := "the container tests need a Docker engine: on Debian, apt-get install docker.io and start dockerd " +
			"(.ci/run does: dockerd --ip-masq=false), or point DOCKER_HOST at one (" + err.Error() + ")"
		if os.Getenv("TRIBUTARY_REQUIRE_DOCKER") != "" {
			t.Fatal("TRIBUTARY_REQUIRE_DOCKER is set and " + msg)
		}
		t.Skip("skipping: " + msg)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("a Docker engine answers but the docker command is not on PATH (apt-get install docker.io): %v", err)
	}
}

// repoRoot is the checkout this module belongs to.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file))) // <root>/integration/container/this.go
}

// run runs name with args in dir and returns its combined output; it fails t
// with that output when the command fails.
func run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// runErr is run without t.
func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// testImage is the image the tests build from the checkout.
const testImage = "tributary-test/tributary:checkout"

// builtImage is testImage once built by this test process.
var builtImage struct {
	once sync.Once
	err  error
	took time.Duration
}

// tributaryImage builds testImage with `make image` (the documented path:
// a static binary, then docker build of docker/Dockerfile), once per test
// process, and returns its name.
func tributaryImage(t *testing.T) string {
	t.Helper()
	needEngine(t)
	builtImage.once.Do(func() {
		begin := time.Now()
		out, err := runErr(repoRoot(t), nil, "make", "image", "IMAGE=tributary-test/tributary", "VERSION=checkout")
		if err != nil {
			builtImage.err = fmt.Errorf("make image: %v\n%s", err, out)
		}
		builtImage.took = time.Since(begin)
	})
	if builtImage.err != nil {
		t.Fatal(builtImage.err)
	}
	return testImage
}

// hostDir returns a new directory the image's user (uid 65532) can write,
// for a bind mount. It is removed after the test as far as this process may
// (files the container made in directories of its own may stay behind when
// the tests do not run as root).
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tributary-container-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("left %s behind: %v", dir, err)
		}
	})
	return dir
}

// terminate removes c at the end of t.
func terminate(t *testing.T, c testcontainers.Container) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			dumpLogs(t, c)
		}
		if err := c.Terminate(ctx); err != nil {
			t.Logf("remove container %s: %v", c.GetContainerID(), err)
		}
	})
}

// dumpLogs prints the tail of c's output into t's log.
func dumpLogs(t *testing.T, c testcontainers.Container) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.Logs(ctx)
	if err != nil {
		t.Logf("logs of %s: %v", c.GetContainerID(), err)
		return
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	name, _ := c.Inspect(ctx)
	label := c.GetContainerID()[:12]
	if name != nil {
		label = name.Name
	}
	t.Logf("--- last lines of container %s ---\n%s", label, strings.Join(lines, "\n"))
}

// restURL is the URL of c's REST API through its published port.
func restURL(t *testing.T, c testcontainers.Container) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ep, err := c.PortEndpoint(ctx, "8083/tcp", "http")
	if err != nil {
		t.Fatalf("the REST port of %s: %v", c.GetContainerID(), err)
	}
	return ep
}

// getJSON GETs url and decodes its JSON answer into v; it returns the
// status code (0 when the request failed).
func getJSON(url string, v any) int {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return 0
		}
	}
	return resp.StatusCode
}

// send sends a JSON body with method to url and returns the status and
// body of the answer.
func send(t *testing.T, method, url string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	cl := http.Client{Timeout: 100 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// createConnector creates a connector through url and fails t unless the
// answer is 201.
func createConnector(t *testing.T, url, name string, config map[string]string) {
	t.Helper()
	if code, body := send(t, http.MethodPost, url+"/connectors", map[string]any{"name": name, "config": config}); code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, code, body)
	}
}

// connectorStatus is GET /connectors/{name}/status, as the worker writes it.
type connectorStatus worker.ConnectorStateInfo

// running reports whether the connector and tasks tasks all run.
func (s connectorStatus) running(tasks int) bool {
	if s.Connector.State != "RUNNING" || len(s.Tasks) != tasks {
		return false
	}
	for _, task := range s.Tasks {
		if task.State != "RUNNING" {
			return false
		}
	}
	return true
}

// eventually calls f every 200 ms until it returns "" or timeout passes,
// then fails t with f's last answer.
func eventually(t *testing.T, timeout time.Duration, what string, f func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		why := f()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v: %s", what, timeout, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// contentKey hashes the files and the strings that go into an image, for a
// tag that changes when they do.
func contentKey(t testing.TB, files []string, strs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	for _, s := range strs {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

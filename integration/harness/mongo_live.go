package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultDockerSocket is where a Docker engine listens when DOCKER_HOST is
// unset.
const DefaultDockerSocket = "/var/run/docker.sock"

// LiveMongo is the MongoDB replica set that the live change-stream tests
// run against, shared by the tests of one test binary. It is, in order:
//
//   - the one TRIBUTARY_TEST_MONGODB_URI names;
//   - else, when a Docker engine answers (at DOCKER_HOST, or at
//     /var/run/docker.sock when DOCKER_HOST is unset), a single-node replica
//     set of the official image (TRIBUTARY_TEST_MONGODB_IMAGE, default
//     mongo:8.0) that integration/mongocontainer starts through
//     testcontainers-go on the first call, built once like FerretDB;
//   - else none, and the tests skip saying how to have one.
//
// Close removes the container; the test binary's TestMain calls it after
// the tests. Should the test binary die first, the container is removed
// all the same: mongocontainer removes it when its standard input (a pipe
// from this process) closes, and testcontainers' reaper when mongocontainer
// dies.
type LiveMongo struct {
	once sync.Once
	uri  string
	skip string
	err  error
	c    *MongoContainer
}

// URIT returns the replica set's URI, skips t when there is none, and
// fails t when a Docker engine answered but the container did not start.
func (l *LiveMongo) URIT(t testing.TB) string {
	t.Helper()
	l.once.Do(func() { l.start(t) })
	if l.err != nil {
		t.Fatalf("harness: %v", l.err)
	}
	if l.skip != "" {
		t.Skip(l.skip)
	}
	return l.uri
}

func (l *LiveMongo) start(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	p := planLiveMongo(ctx, os.Getenv, DefaultDockerSocket)
	cancel()
	switch {
	case p.uri != "":
		l.uri = p.uri
		t.Logf("live MongoDB: TRIBUTARY_TEST_MONGODB_URI=%s", p.uri)
		return
	case p.skip != "":
		l.skip = p.skip
		return
	}
	t.Logf("live MongoDB: a Docker engine answers at %s; building integration/mongocontainer (cached after the first build) and starting a replica set through testcontainers-go (the first run pulls the image)", p.dockerHost)
	bin, err := moduleBinary("mongocontainer")
	if err != nil {
		l.err = err
		return
	}
	var args []string
	if img := os.Getenv("TRIBUTARY_TEST_MONGODB_IMAGE"); img != "" {
		args = append(args, "-image", img)
	}
	// mongocontainer gives up after its own -timeout (5 minutes); this is
	// the backstop.
	ctx, cancel = context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, err := StartMongoContainer(ctx, bin, p.dockerHost, p.pull, args...)
	if err != nil {
		l.err = err
		return
	}
	l.c, l.uri = c, c.URI
	t.Logf("live MongoDB: %s in a container started in %v (log %s)", c.URI, c.startup.Round(time.Millisecond), c.logPath)
}

// Close removes the container, if one was started. It is safe to call more
// than once, and without a call to URIT.
func (l *LiveMongo) Close() error {
	if l.c == nil {
		return nil
	}
	return l.c.Close()
}

// liveMongoPlan says where the live tests' replica set comes from: exactly
// one field is set.
type liveMongoPlan struct {
	uri        string // TRIBUTARY_TEST_MONGODB_URI
	dockerHost string // a Docker engine to start a container on
	pull       bool   // TRIBUTARY_TEST_MONGODB_PULL: images may be pulled
	skip       string // neither: why, and what to do
}

// planLiveMongo decides between the environment's replica set, a container
// on a Docker engine that answers, and skipping. getenv reads the
// environment and defaultSocket is where to look for an engine when
// DOCKER_HOST is unset.
func planLiveMongo(ctx context.Context, getenv func(string) string, defaultSocket string) liveMongoPlan {
	if uri := getenv("TRIBUTARY_TEST_MONGODB_URI"); uri != "" {
		return liveMongoPlan{uri: uri}
	}
	host, err := FindDockerEngine(ctx, getenv("DOCKER_HOST"), defaultSocket)
	if err != nil {
		return liveMongoPlan{skip: "skipping: the live change-stream tests need a MongoDB replica set, and there is none: " +
			"set TRIBUTARY_TEST_MONGODB_URI to one (e.g. mongodb://127.0.0.1:27017/?replicaSet=rs0), " +
			"or make a Docker engine reachable (DOCKER_HOST, or " + defaultSocket + ") for the harness to start one through testcontainers-go (" + err.Error() + ")"}
	}
	image := getenv("TRIBUTARY_TEST_MONGODB_IMAGE")
	if image == "" {
		image = DefaultMongoImage
	}
	// An engine without the image would try to pull it, which fails where
	// no registry is reachable (and took minutes to say so): skip instead.
	// Only a local engine is asked; a remote one is left to pull.
	pull := getenv("TRIBUTARY_TEST_MONGODB_PULL") != ""
	if socket, ok := strings.CutPrefix(host, "unix://"); ok {
		present, err := DockerImagePresent(ctx, socket, image)
		if err != nil {
			return liveMongoPlan{skip: fmt.Sprintf("skipping: could not ask the Docker engine at %s whether it has the MongoDB image %s: %v", host, image, err)}
		}
		if !present && !pull {
			return liveMongoPlan{skip: "skipping: the live change-stream tests need a MongoDB replica set; the Docker engine at " + host +
				" answers but has no image " + image + ", and the tests do not pull one (no registry may be reachable): " +
				"docker pull " + image + " (or docker load one) and run again, set TRIBUTARY_TEST_MONGODB_IMAGE to an image the engine has, " +
				"set TRIBUTARY_TEST_MONGODB_PULL=1 to let testcontainers-go pull it, or set TRIBUTARY_TEST_MONGODB_URI to a replica set"}
		}
	}
	return liveMongoPlan{dockerHost: host, pull: pull}
}

// DefaultMongoImage is the MongoDB image of the live change-stream tests
// unless TRIBUTARY_TEST_MONGODB_IMAGE names another.
const DefaultMongoImage = "mongo:8.0"

// DockerImagePresent asks the Docker engine listening at the unix socket
// whether it has image (a name with its tag, or an id) without pulling it.
func DockerImagePresent(ctx context.Context, socket, image string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	defer cl.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/images/"+image+"/json", nil)
	if err != nil {
		return false, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("GET /images/%s/json answered %s: %s", image, resp.Status, strings.TrimSpace(string(body)))
}

// FindDockerEngine returns the Docker host (as DOCKER_HOST spells it) of an
// engine that answers: dockerHost when it is set, else the socket at
// defaultSocket. A unix socket must answer Docker's ping (GET /_ping: 200
// OK); a tcp:// host must accept a connection (it may want TLS, which the
// container starter sets up from DOCKER_TLS_VERIFY and DOCKER_CERT_PATH,
// and checks); other schemes (ssh://, fd://) are taken as they are and left
// to the container starter to check.
func FindDockerEngine(ctx context.Context, dockerHost, defaultSocket string) (string, error) {
	if dockerHost == "" {
		if err := pingDockerSocket(ctx, defaultSocket); err != nil {
			return "", fmt.Errorf("DOCKER_HOST is unset and no engine answers at %s: %w", defaultSocket, err)
		}
		return "unix://" + defaultSocket, nil
	}
	u, err := url.Parse(dockerHost)
	if err != nil {
		return "", fmt.Errorf("DOCKER_HOST=%s: %w", dockerHost, err)
	}
	switch u.Scheme {
	case "unix":
		err = pingDockerSocket(ctx, u.Path)
	case "tcp":
		var conn net.Conn
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		if err == nil {
			conn.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("no engine answers at DOCKER_HOST=%s: %w", dockerHost, err)
	}
	return dockerHost, nil
}

// pingDockerSocket asks the engine at the unix socket path for Docker's
// ping.
func pingDockerSocket(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	defer cl.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "OK" {
		return fmt.Errorf("GET /_ping answered %s %q, not Docker's 200 OK", resp.Status, body)
	}
	return nil
}

// MongoContainer is a running integration/mongocontainer: a single-node
// MongoDB replica set in a Docker container.
type MongoContainer struct {
	// URI connects to the replica set's one member directly.
	URI string

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
	startup time.Duration

	closeOnce sync.Once
	closeErr  error
}

// StartMongoContainer runs the mongocontainer command bin (with args) on
// the engine at dockerHost and waits until it announces the replica set.
// Without pull, testcontainers' reaper is turned off, so that nothing is
// pulled besides what the engine has. Its log (testcontainers' included)
// is in a temporary file, removed by Close when all went well.
func StartMongoContainer(ctx context.Context, bin, dockerHost string, pull bool, args ...string) (*MongoContainer, error) {
	lf, err := os.CreateTemp("", "tributary-mongocontainer-*.log")
	if err != nil {
		return nil, fmt.Errorf("harness: mongocontainer log: %w", err)
	}
	logPath := lf.Name()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+dockerHost)
	if !pull && os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		// testcontainers' reaper is an image too (testcontainers/ryuk),
		// which would be pulled: without it mongocontainer alone removes
		// the container, when its standard input closes.
		cmd.Env = append(cmd.Env, "TESTCONTAINERS_RYUK_DISABLED=true")
	}
	if strings.HasPrefix(dockerHost, "unix://") && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		// A local engine publishes on this machine, which testcontainers
		// takes for a container when it has /.dockerenv (some CI
		// sandboxes do), and would then dial the default gateway.
		cmd.Env = append(cmd.Env, "TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1")
	}
	cmd.Stderr = lf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	// The pipe stays open while the container is wanted: mongocontainer
	// removes the container when it closes, which it also does when this
	// process dies. No process group or death signal here: either would
	// stop mongocontainer before it could remove the container.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("harness: start mongocontainer: %w", err)
	}
	c := &MongoContainer{cmd: cmd, stdin: stdin, logPath: logPath, logFile: lf, done: make(chan struct{})}
	ready := followReady(stdout, lf)
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	select {
	case uri, ok := <-ready:
		if !ok {
			<-c.done
			c.logFile.Close()
			return nil, fmt.Errorf("harness: mongocontainer exited during start-up: %v\n--- %s ---\n%s", c.waitErr, logPath, logTail(logPath, 40))
		}
		c.URI = uri
	case <-ctx.Done():
		c.cmd.Process.Signal(syscall.SIGTERM) // it reads stdin only once started
		err := c.Close()
		return nil, fmt.Errorf("harness: the MongoDB container not ready: %w (removal: %v)\n--- %s ---\n%s", ctx.Err(), err, logPath, logTail(logPath, 40))
	}
	c.startup = time.Since(started)
	return c, nil
}

// Close has mongocontainer remove the container (closing its stdin), then
// waits for it: up to 90 s, then SIGTERM, then SIGKILL (testcontainers'
// reaper removes the container then). It is safe to call more than once.
func (c *MongoContainer) Close() error {
	c.closeOnce.Do(func() {
		c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(90 * time.Second):
			c.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				c.cmd.Process.Kill()
				<-c.done
			}
		}
		c.logFile.Close()
		if c.waitErr != nil {
			c.closeErr = fmt.Errorf("harness: mongocontainer: %v\n--- %s ---\n%s", c.waitErr, c.logPath, logTail(c.logPath, 20))
			return
		}
		os.Remove(c.logPath)
	})
	return c.closeErr
}

package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WorkerProcess is a Tributary connect worker running as a child process
// (`tributary worker`) in its own process group, so that a test can SIGKILL
// it like a crash and start it again.
type WorkerProcess struct {
	t       testing.TB
	cmd     *exec.Cmd
	url     string
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
	started time.Time
	ready   time.Duration

	killOnce sync.Once
}

// WorkerProps returns worker properties for a test: bootstrap, a group and
// internal topics named after group, replication factor 1, JsonConverter,
// a REST listener on a free port and a 1 s offset flush; extra wins.
func WorkerProps(t testing.TB, bootstrap, group string, extra map[string]string) map[string]string {
	p := map[string]string{
		"bootstrap.servers":                 bootstrap,
		"group.id":                          group,
		"config.storage.topic":              group + "-configs",
		"offset.storage.topic":              group + "-offsets",
		"status.storage.topic":              group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"listeners":                         "http://127.0.0.1:" + strconv.Itoa(FreePort(t)),
		"offset.flush.interval.ms":          "1000",
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// StartWorkerProcess writes props to DIR/worker.properties, starts `bin
// worker` on it and waits until GET /health answers 200. Output goes to
// DIR/worker.log (appended across restarts). The worker is killed at the end
// of the test if still running.
func StartWorkerProcess(t testing.TB, bin, dir string, props map[string]string) *WorkerProcess {
	t.Helper()
	return StartWorkerProcessWith(t, bin, dir, props, WorkerSetup{})
}

// WorkerSetup is what a worker process needs besides its properties:
// extra environment variables (KAFKA_OPTS, say), and how a test reaches a
// worker whose REST API is secured: the CA that signed its HTTPS
// certificate, a client certificate (PEM, chain and key) for
// ssl.client.auth, basic credentials.
type WorkerSetup struct {
	Env            []string
	CA, ClientCert string
	User, Password string
}

// Client returns an HTTP client for a's worker: trusting a.CA, sending
// a.ClientCert. (Credentials are the caller's to set.)
func (a WorkerSetup) Client(t testing.TB) *http.Client {
	t.Helper()
	for _, f := range []string{a.CA, a.ClientCert} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	return a.client()
}

func (a WorkerSetup) client() *http.Client {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.CA != "" {
		if b, err := os.ReadFile(a.CA); err == nil {
			cfg.RootCAs = x509.NewCertPool()
			cfg.RootCAs.AppendCertsFromPEM(b)
		}
	}
	if a.ClientCert != "" {
		if c, err := tls.LoadX509KeyPair(a.ClientCert, a.ClientCert); err == nil {
			cfg.Certificates = []tls.Certificate{c}
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// StartWorkerProcessWith is StartWorkerProcess for a worker whose REST API
// listens on https:// or requires credentials: its health is polled
// through access, which also gives the process extra environment.
func StartWorkerProcessWith(t testing.TB, bin, dir string, props map[string]string, access WorkerSetup) *WorkerProcess {
	t.Helper()
	client := access.Client(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("harness: %v", err)
	}
	propsPath := filepath.Join(dir, "worker.properties")
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf []byte
	for _, k := range keys {
		buf = fmt.Appendf(buf, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(propsPath, buf, 0o644); err != nil {
		t.Fatalf("harness: %v", err)
	}
	scheme, l, err := parseListenerURL(props["listeners"])
	if err != nil {
		t.Fatalf("harness: listeners: %v", err)
	}
	logPath := filepath.Join(dir, "worker.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("harness: open worker log: %v", err)
	}
	from, _ := f.Seek(0, io.SeekEnd) // where this run's lines begin
	fmt.Fprintf(f, "=== harness: starting worker at %s ===\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, "worker", propsPath)
	if len(access.Env) > 0 {
		cmd.Env = append(os.Environ(), access.Env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	setProcAttr(cmd)
	w := &WorkerProcess{t: t, cmd: cmd, url: scheme + "://" + l, logPath: logPath, logFile: f, done: make(chan struct{}), started: time.Now()}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("harness: start worker: %v", err)
	}
	go func() {
		w.waitErr = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		if t.Failed() { // after the kill: the whole run
			t.Logf("harness: warnings, errors and group changes of the worker started at %s (%s):\n%s",
				w.started.Format("15:04:05.000"), logPath, logProblems(logPath, from, 30))
		}
	})
	t.Cleanup(func() { w.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-w.done:
			t.Fatalf("harness: worker exited during start-up: %v\n--- %s ---\n%s", w.waitErr, logPath, logTail(logPath, 40))
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, w.url+"/health", nil)
		if access.User != "" {
			req.SetBasicAuth(access.User, access.Password)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				w.ready = time.Since(w.started)
				return w
			}
		}
		if time.Now().After(deadline) {
			w.Kill()
			t.Fatalf("harness: worker not healthy at %s after 60s\n--- %s ---\n%s", w.url, logPath, logTail(logPath, 60))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parseListenerURL reads the first of listeners: its scheme and
// host:port.
func parseListenerURL(v string) (string, string, error) {
	first, _, _ := strings.Cut(v, ",")
	scheme, hp, ok := strings.Cut(strings.TrimSpace(first), "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", "", fmt.Errorf("%q is not http://host:port or https://host:port", v)
	}
	if _, _, err := net.SplitHostPort(hp); err != nil {
		return "", "", err
	}
	return scheme, hp, nil
}

// URL is the worker's REST base URL.
func (w *WorkerProcess) URL() string { return w.url }

// LogPath is the worker's log file.
func (w *WorkerProcess) LogPath() string { return w.logPath }

// ReadyAfter is the time from process start to GET /health answering 200.
func (w *WorkerProcess) ReadyAfter() time.Duration { return w.ready }

// Pid is the worker's process id.
func (w *WorkerProcess) Pid() int { return w.cmd.Process.Pid }

// Kill sends SIGKILL to the worker's process group (its plugins included)
// and waits for it. It is safe to call more than once.
func (w *WorkerProcess) Kill() {
	w.killOnce.Do(func() {
		if err := killGroup(w.cmd); err != nil {
			w.t.Errorf("harness: kill worker: %v", err)
		}
		<-w.done
		w.logFile.Close()
	})
}

// Stop sends SIGTERM and waits up to 30 s for a clean exit (then kills).
func (w *WorkerProcess) Stop() error {
	var err error
	w.killOnce.Do(func() {
		w.cmd.Process.Signal(os.Interrupt)
		select {
		case <-w.done:
			err = w.waitErr
		case <-time.After(30 * time.Second):
			killGroup(w.cmd)
			<-w.done
			err = fmt.Errorf("worker did not stop within 30s")
		}
		w.logFile.Close()
	})
	return err
}

// Suspend sends SIGSTOP to the worker's process group (its plugins
// included): the worker hangs as on a frozen machine, its sockets open.
func (w *WorkerProcess) Suspend() error { return signalGroup(w.cmd, syscall.SIGSTOP) }

// Continue sends SIGCONT to the worker's process group after Suspend.
func (w *WorkerProcess) Continue() error { return signalGroup(w.cmd, syscall.SIGCONT) }

// Exited reports whether the worker process has ended.
func (w *WorkerProcess) Exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// RunFailingWorker starts `bin worker` on props (written to
// DIR/worker.properties) and waits for it to exit, at most within. It
// fails t when the worker is still running then (it is killed) or exits 0,
// and returns the worker's output and how long it ran.
func RunFailingWorker(t testing.TB, bin, dir string, props map[string]string, within time.Duration) (string, time.Duration) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("harness: %v", err)
	}
	propsPath := filepath.Join(dir, "worker.properties")
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf []byte
	for _, k := range keys {
		buf = fmt.Appendf(buf, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(propsPath, buf, 0o644); err != nil {
		t.Fatalf("harness: %v", err)
	}
	cmd := exec.Command(bin, "worker", propsPath)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setProcAttr(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness: start worker: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("harness: the worker exited 0; its output:\n%s", out.String())
		}
	case <-time.After(within):
		_ = killGroup(cmd)
		<-done
		t.Errorf("harness: the worker was still running after %v; its output:\n%s", within, out.String())
	}
	return out.String(), time.Since(start)
}

// lockedBuffer is a bytes.Buffer for a child's stdout and stderr at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

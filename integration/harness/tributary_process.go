package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildTributary returns the path of the tributary binary (cmd/tributary of
// the module the harness belongs to), built at most once per test process
// and shared by every test of the package, so that a package run links the
// binary once instead of once per test. The first-party connectors'
// executables (cmd/tributary-connector-*) are built beside it, where the
// binary's workers look for them. All live under the user's cache directory
// (tributary/testbin/<hash of the module path>): `go build -o` leaves an
// up-to-date binary alone, so a later run of unchanged sources does not
// link them again either. A file lock serialises builds of the same module
// by concurrent test processes (go test runs packages side by side). Tests
// must treat the binaries as read-only. With TRIBUTARY_BUILD_RACE set they
// are built with the race detector, in a race/ directory of their own (a
// race is reported in the process's log).
func BuildTributary(t testing.TB) string {
	t.Helper()
	tributaryBin.once.Do(func() { tributaryBin.path, tributaryBin.err = buildTributary() })
	if tributaryBin.err != nil {
		t.Fatalf("harness: %v", tributaryBin.err)
	}
	return tributaryBin.path
}

// tributaryBin is the binary BuildTributary built for this test process.
var tributaryBin struct {
	once sync.Once
	path string
	err  error
}

// buildTributary builds the commands of cmd/ (tributary and the
// connectors' executables) into their cache directory under a file lock
// and returns tributary's path.
func buildTributary() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the harness source to find the module")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file))) // <module>/integration/harness/this.go
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "tributary", "testbin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := lockFile(filepath.Join(dir, "lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	args := []string{"build"}
	if os.Getenv("TRIBUTARY_BUILD_RACE") != "" {
		dir = filepath.Join(dir, "race")
		args = append(args, "-race")
	}
	// With -o naming a directory (the trailing separator), go build writes
	// each command into it under its own name.
	args = append(args, "-o", dir+string(filepath.Separator), "./cmd/...")
	begin := time.Now()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/... in %s: %w\n%s", root, err, out)
	}
	bin := filepath.Join(dir, "tributary")
	if d := time.Since(begin); d > 5*time.Second {
		fmt.Fprintf(os.Stderr, "harness: built %s and the connectors' executables beside it in %v\n", bin, d.Round(time.Millisecond))
	}
	return bin, nil
}

// BrokerProcess is Tributary's broker running as a child process
// (`tributary broker`) in its own process group, so that a test can kill it
// with SIGKILL like a crash and start it again on the same data and port.
type BrokerProcess struct {
	t       testing.TB
	cmd     *exec.Cmd
	addr    string
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
	// metricsURL is the base URL of GET /metrics.
	metricsURL string

	killOnce sync.Once
}

// StartBrokerProcess starts `bin broker` with log.dirs=dir and a PLAINTEXT
// listener on 127.0.0.1:port, plus extra overrides ("key=value"), and waits
// until it accepts connections (that is, until log recovery is done). Its
// output is appended to dir+".log", so restarts on the same dir share one
// log file. The process is killed at the end of the test if still running.
func StartBrokerProcess(t testing.TB, bin, dir string, port int, overrides ...string) *BrokerProcess {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := dir + ".log"
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("harness: open broker log: %v", err)
	}
	fmt.Fprintf(f, "=== harness: starting broker at %s ===\n", time.Now().Format(time.RFC3339Nano))
	args := []string{"broker",
		"--override", "log.dirs=" + dir,
		"--override", "listeners=PLAINTEXT://" + addr,
	}
	// GET /metrics on a port of its own (the default, 9404, is every
	// broker's); an override wins.
	metricsURL := "http://127.0.0.1:" + strconv.Itoa(FreePort(t))
	args = append(args, "--override", "tributary.metrics.listener="+metricsURL)
	for _, o := range overrides {
		args = append(args, "--override", o)
		if strings.HasPrefix(o, "tributary.metrics.listener=") {
			metricsURL = strings.TrimPrefix(o, "tributary.metrics.listener=")
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("harness: start broker: %v", err)
	}
	p := &BrokerProcess{t: t, cmd: cmd, addr: addr, logPath: logPath, logFile: f, done: make(chan struct{}), metricsURL: metricsURL}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill() })

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("harness: broker exited during start-up: %v\n--- %s ---\n%s", p.waitErr, logPath, logTail(logPath, 40))
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			p.Kill()
			t.Fatalf("harness: broker not accepting on %s after 30s: %v\n--- %s ---\n%s", addr, err, logPath, logTail(logPath, 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addr is the broker's host:port.
func (p *BrokerProcess) Addr() string { return p.addr }

// MetricsURL is the base URL of the broker's GET /metrics ("" when an
// override turned it off).
func (p *BrokerProcess) MetricsURL() string { return p.metricsURL }

// LogPath is the file the broker's output goes to.
func (p *BrokerProcess) LogPath() string { return p.logPath }

// Pid is the broker's process id.
func (p *BrokerProcess) Pid() int { return p.cmd.Process.Pid }

// Kill sends SIGKILL to the broker's process group and waits for it to exit.
// It is safe to call more than once.
func (p *BrokerProcess) Kill() {
	p.killOnce.Do(func() {
		if err := killGroup(p.cmd); err != nil {
			p.t.Errorf("harness: kill broker: %v", err)
		}
		<-p.done
		p.logFile.Close()
	})
}

// Stop asks the broker to shut down cleanly (SIGTERM) and waits up to
// timeout for it; then it kills it. It returns the exit error, nil for a
// clean exit.
func (p *BrokerProcess) Stop(timeout time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("harness: broker did not stop within %v", timeout)
	}
	p.Kill() // closes the log file; the process is gone already
	return p.waitErr
}

// Wait blocks until the broker exits and returns how it ended.
func (p *BrokerProcess) Wait() error {
	<-p.done
	return p.waitErr
}

// Exited reports whether the broker process has ended.
func (p *BrokerProcess) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DevProcess is `tributary dev` (broker, worker and built-in connectors in
// one process) running as a child process in its own process group, so that
// a test can SIGKILL it like a crash and start it again on the same data.
type DevProcess struct {
	t        testing.TB
	cmd      *exec.Cmd
	dataDir  string
	broker   string
	url      string
	logPath  string
	logFile  *os.File
	done     chan struct{}
	waitErr  error
	killOnce sync.Once
	from     int64 // where this run's output begins in the log
}

// Output is what this run of the process has written so far.
func (p *DevProcess) Output() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || int64(len(b)) < p.from {
		return ""
	}
	return string(b[p.from:])
}

// StartDevProcess starts `bin dev --data-dir dataDir` with its Kafka
// listener on 127.0.0.1:brokerPort and its REST API on 127.0.0.1:restPort,
// plus extra arguments, and waits until GET /health answers 200. Output is
// appended to dataDir+".log", so restarts on one directory share one log
// file. The process is killed at the end of the test if still running.
// With --secure among extra, the REST API is https:// and the process is
// ready when its banner says so.
func StartDevProcess(t testing.TB, bin, dataDir string, brokerPort, restPort int, extra ...string) *DevProcess {
	t.Helper()
	logPath := dataDir + ".log"
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("harness: open dev log: %v", err)
	}
	from, _ := f.Seek(0, io.SeekEnd) // where this run's output begins
	fmt.Fprintf(f, "=== harness: starting tributary dev at %s ===\n", time.Now().Format(time.RFC3339Nano))
	secure := slices.Contains(extra, "--secure")
	if !slices.Contains(extra, "--registry-port") {
		// dev's schema registry listens on 8081 unless told otherwise:
		// tests that do not ask for it run without one.
		extra = append([]string{"--registry-port", "0"}, extra...)
	}
	args := append([]string{"dev", "--data-dir", dataDir,
		"--broker-port", strconv.Itoa(brokerPort), "--rest-port", strconv.Itoa(restPort), "--log-level", "info"}, extra...)
	if !slices.Contains(extra, "--rest-proxy-port") {
		// No fixed port (dev's default 8082) shared by parallel tests.
		args = append(args, "--rest-proxy-port", "0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("harness: start tributary dev: %v", err)
	}
	p := &DevProcess{t: t, cmd: cmd, dataDir: dataDir, logPath: logPath, logFile: f, done: make(chan struct{}),
		broker: net.JoinHostPort("127.0.0.1", strconv.Itoa(brokerPort)),
		url:    "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(restPort)), from: from}
	if secure {
		p.url = "https" + strings.TrimPrefix(p.url, "http")
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("harness: tributary dev exited during start-up: %v\n--- %s ---\n%s", p.waitErr, logPath, logTail(logPath, 40))
		default:
		}
		if secure {
			// HTTPS and a password the test learns from the banner.
			if strings.Contains(p.Output(), "Tributary dev is ready") {
				return p
			}
		} else if resp, err := http.Get(p.url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			p.Kill()
			t.Fatalf("harness: tributary dev not healthy at %s after 60s\n--- %s ---\n%s", p.url, logPath, logTail(logPath, 60))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Bootstrap is the Kafka address of the dev process's broker.
func (p *DevProcess) Bootstrap() string { return p.broker }

// URL is the REST API's base URL.
func (p *DevProcess) URL() string { return p.url }

// LogPath is the file the process's output goes to.
func (p *DevProcess) LogPath() string { return p.logPath }

// Pid is the process id.
func (p *DevProcess) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *DevProcess) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL to the process group (plugin processes included) and
// waits for the exit. It is safe to call more than once.
func (p *DevProcess) Kill() {
	p.killOnce.Do(func() {
		if err := killGroup(p.cmd); err != nil {
			p.t.Errorf("harness: kill tributary dev: %v", err)
		}
		<-p.done
		p.logFile.Close()
	})
}

// Result is how a command that ran to its end ended.
type Result struct {
	ExitCode       int // -1 when killed by a signal or on timeout
	Stdout, Stderr string
	Elapsed        time.Duration
}

// RunTributary runs `bin args...` to its end (at most timeout; then it is
// killed and the test fails) and returns its exit code and output. For
// commands expected to refuse to start.
func RunTributary(t testing.TB, bin string, timeout time.Duration, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcAttr(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	start := time.Now()
	err := cmd.Run()
	res := Result{ExitCode: -1, Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("harness: %s %v still running after %v\nstderr: %s", filepath.Base(bin), args, timeout, res.Stderr)
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("harness: run %s %v: %v", filepath.Base(bin), args, err)
	}
	return res
}

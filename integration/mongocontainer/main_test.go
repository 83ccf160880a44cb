package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain runs main instead of the tests when the tests start this test
// binary as the command (see runCommand).
func TestMain(m *testing.M) {
	if os.Getenv("MONGOCONTAINER_AS_COMMAND") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.image != "mongo:8.0" || o.replicaSet != "rs0" || o.timeout != 5*time.Minute {
		t.Fatalf("defaults %+v, %v", o, err)
	}
	o, err = parseFlags([]string{"-image", "mongo:7.0", "-replica-set", "x", "-timeout", "30s"}, io.Discard)
	if err != nil || o.image != "mongo:7.0" || o.replicaSet != "x" || o.timeout != 30*time.Second {
		t.Fatalf("flags %+v, %v", o, err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-image", ""}, "-image must name an image"},
		{[]string{"-replica-set", ""}, "-replica-set must not be empty"},
		{[]string{"-timeout", "0s"}, "-timeout must be positive"},
		{[]string{"-timeout", "soon"}, "invalid value"},
		{[]string{"-nope"}, "flag provided but not defined"},
	} {
		if _, err := parseFlags(bad.args, io.Discard); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error containing %q", bad.args, err, bad.want)
		}
	}
}

// fakeStarter stands for Docker in the tests of run's protocol.
type fakeStarter struct {
	block     bool // start waits for its context to end
	err       error
	removeErr error
	removed   atomic.Bool
}

func (f *fakeStarter) start(ctx context.Context, _ settings, _ io.Writer) (replicaSet, error) {
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}
func (f *fakeStarter) uri() string { return "mongodb://127.0.0.1:1/?directConnection=true" }
func (f *fakeStarter) remove(context.Context) error {
	f.removed.Store(true)
	return f.removeErr
}

// startRun runs run with a fake replica set and returns the first stdout
// line, the stdin writer and run's result.
func startRun(t *testing.T, ctx context.Context, f *fakeStarter) (string, io.WriteCloser, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, settings{image: "mongo:8.0", replicaSet: "rs0", timeout: time.Minute}, f, inR, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no line on stdout: %v", err)
	}
	go io.Copy(io.Discard, outR)
	return line, inW, done
}

func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return")
		return nil
	}
}

// TestRunRemovesWhenStdinCloses: the URI is announced on one "ready" line,
// the container stays while stdin is open and is removed when it closes.
func TestRunRemovesWhenStdinCloses(t *testing.T) {
	f := &fakeStarter{}
	line, stdin, done := startRun(t, context.Background(), f)
	if line != "ready mongodb://127.0.0.1:1/?directConnection=true\n" {
		t.Fatalf("stdout %q", line)
	}
	select {
	case err := <-done:
		t.Fatalf("run returned while stdin was open: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if f.removed.Load() {
		t.Fatal("removed while stdin was open")
	}
	stdin.Close()
	if err := waitDone(t, done); err != nil || !f.removed.Load() {
		t.Fatalf("after stdin closed: %v, removed %v", err, f.removed.Load())
	}
}

// TestRunRemovesOnSignal: a signal (the context's end) removes it too.
func TestRunRemovesOnSignal(t *testing.T) {
	f := &fakeStarter{}
	ctx, cancel := context.WithCancel(context.Background())
	_, stdin, done := startRun(t, ctx, f)
	defer stdin.Close()
	cancel()
	if err := waitDone(t, done); err != nil || !f.removed.Load() {
		t.Fatalf("after the signal: %v, removed %v", err, f.removed.Load())
	}
}

// TestRunErrors: a failed start is returned with nothing announced; a
// failed removal is reported with what to do.
func TestRunErrors(t *testing.T) {
	var out strings.Builder
	f := &fakeStarter{err: errors.New("boom")}
	err := run(context.Background(), settings{timeout: time.Minute}, f, strings.NewReader(""), &out, io.Discard)
	if err == nil || err.Error() != "boom" || out.Len() != 0 {
		t.Fatalf("start error: %v, stdout %q", err, out.String())
	}
	f = &fakeStarter{removeErr: errors.New("engine gone")}
	err = run(context.Background(), settings{timeout: time.Minute}, f, strings.NewReader(""), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "engine gone") || !strings.Contains(err.Error(), "reaper") {
		t.Fatalf("remove error: %v", err)
	}
}

// TestRunGivesUpStart: stdin closing (the harness gone) or a signal during
// the start (an image pull can take minutes) gives the start up.
func TestRunGivesUpStart(t *testing.T) {
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), settings{timeout: time.Minute}, &fakeStarter{block: true}, inR, io.Discard, io.Discard)
	}()
	inW.Close()
	if err := waitDone(t, done); err == nil || !strings.Contains(err.Error(), "stdin closed during the start") {
		t.Fatalf("stdin closed during the start: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW = io.Pipe()
	defer inW.Close()
	go func() {
		done <- run(ctx, settings{timeout: time.Minute}, &fakeStarter{block: true}, inR, io.Discard, io.Discard)
	}()
	cancel()
	if err := waitDone(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("signalled during the start: %v", err)
	}
}

// runCommand runs this test binary as the command with args and the
// environment env added, and returns its exit code and stderr. It stops it
// after a minute: an engine that does not answer must fail it well before.
func runCommand(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{"MONGOCONTAINER_AS_COMMAND=1"}, env...)...)
	var stderr, stdout strings.Builder
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	// stdin stays open, as the harness keeps it: its end would end the start.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinW.Close()
	cmd.Stdin = stdinR
	err = cmd.Run()
	stdinR.Close()
	if ctx.Err() != nil {
		t.Fatalf("still running after a minute; stderr:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing (no ready line)", stdout.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestCommandWithoutEngine: where DOCKER_HOST names no engine (a socket
// path with nothing behind it, a closed TCP port, or a socket answering
// something that is not Docker) the command exits 1 at once, saying so and
// what to do; it never gets as far as pulling an image. A bad argument
// exits 2.
func TestCommandWithoutEngine(t *testing.T) {
	notDocker := filepath.Join(t.TempDir(), "not-docker.sock")
	ln, err := net.Listen("unix", notDocker)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not a Docker engine", http.StatusTeapot)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	for _, host := range []string{
		"unix://" + filepath.Join(t.TempDir(), "nothing.sock"),
		"tcp://" + closedAddr,
		"unix://" + notDocker,
	} {
		code, stderr := runCommand(t, []string{"DOCKER_HOST=" + host, "DOCKER_TLS_VERIFY=", "DOCKER_CERT_PATH="}, "-timeout", "2m")
		if code != 1 || !strings.Contains(stderr, "no Docker engine answers at DOCKER_HOST="+host) || !strings.Contains(stderr, "start Docker or correct DOCKER_HOST") {
			t.Errorf("DOCKER_HOST=%s: exit %d, stderr:\n%s", host, code, stderr)
		}
		if strings.Contains(stderr, "starting mongo") || strings.Contains(stderr, "stdin closed") {
			t.Errorf("DOCKER_HOST=%s: went on to start a container:\n%s", host, stderr)
		}
	}
	if code, stderr := runCommand(t, nil, "extra"); code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("a bad argument: exit %d, stderr:\n%s", code, stderr)
	}
}

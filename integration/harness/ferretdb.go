package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FerretDB is a FerretDB v1.24.2 server (the MongoDB wire protocol over a
// SQLite backend, without change streams or SCRAM authentication) started
// by the harness on a free 127.0.0.1 port with its data in a directory of
// its own.
//
// FerretDB is a heavy test-only dependency, so it lives in a Go module of
// its own, integration/ferretdb, which the harness builds once into
// ${TRIBUTARY_CACHE:-$HOME/.cache/tributary}/ferretdb/<hash of its
// sources>/ferretdb and starts as a process; the product's go.mod does not
// mention it.
type FerretDB struct {
	// URI is the server's connection string (mongodb://127.0.0.1:port/).
	URI string

	dir     string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
	startup time.Duration

	closeOnce sync.Once
}

// StartFerretDBT starts FerretDB for the test and stops it in t.Cleanup,
// printing the tail of its log if the test failed. The first call on a
// machine builds the server (about a minute); later calls reuse the build.
func StartFerretDBT(t testing.TB) *FerretDB {
	t.Helper()
	bin, err := FerretDBBinary()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := StartFerretDB(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FerretDB log tail (%s):\n%s", f.logPath, logTail(f.logPath, 40))
		}
		f.Close()
	})
	t.Logf("FerretDB at %s started in %v", f.URI, f.startup.Round(time.Millisecond))
	return f
}

// CacheDir is where the harness keeps builds between runs.
func CacheDir() string {
	if d := os.Getenv("TRIBUTARY_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "tributary-cache")
	}
	return filepath.Join(home, ".cache", "tributary")
}

// FerretDBBinary returns the path of the built FerretDB server, building
// integration/ferretdb first if its sources changed since the last build.
// Concurrent callers (parallel test binaries) wait for one build.
func FerretDBBinary() (string, error) { return moduleBinary("ferretdb") }

// moduleBinary returns the path of the command built from the Go module
// integration/<name> (a module of its own, to keep its dependencies out of
// the product's go.mod), building it into
// CacheDir()/<name>/<hash of its sources>/<name> first if its sources
// changed since the last build. Concurrent callers (parallel test
// binaries) wait for one build.
func moduleBinary(name string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("harness: cannot locate the harness sources")
	}
	mod := filepath.Join(filepath.Dir(file), "..", name)
	sum, err := hashSources(mod)
	if err != nil {
		return "", fmt.Errorf("harness: hash %s: %w", mod, err)
	}
	root := filepath.Join(CacheDir(), name)
	bin := filepath.Join(root, sum[:16], name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(root, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("harness: lock the %s build: %w", name, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built while we waited
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("harness: build %s (go build in %s): %v\n%s", name, mod, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	return bin, nil
}

// hashSources hashes the module's go.mod, go.sum and Go files.
func hashSources(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && (n == "go.mod" || n == "go.sum" || (strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go"))) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\x00%s\x00", n)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StartFerretDB starts the server bin with its data in dataDir and waits
// until it accepts connections. Its log is dataDir/../<base>.log.
func StartFerretDB(ctx context.Context, bin, dataDir string) (*FerretDB, error) {
	return startFerretDB(ctx, bin, dataDir, "127.0.0.1:0")
}

// RestartFerretDBT kills f with SIGKILL, as a crash would, waits down for
// a while, then starts the server again on the same address and data
// (what it had committed is there) and stops the new one in t.Cleanup.
func RestartFerretDBT(t testing.TB, f *FerretDB, down time.Duration) *FerretDB {
	t.Helper()
	f.Close()
	listen := strings.TrimSuffix(strings.TrimPrefix(f.URI, "mongodb://"), "/")
	_, portText, _ := strings.Cut(listen, ":")
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("harness: FerretDB address %q: %v", listen, err)
	}
	release, err := holdPort(port)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(down)
	release()
	bin, err := FerretDBBinary()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := startFerretDB(ctx, bin, f.dir, listen)
	if err != nil {
		t.Fatalf("harness: restart FerretDB: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

func startFerretDB(ctx context.Context, bin, dataDir, listen string) (*FerretDB, error) {
	logPath := filepath.Join(filepath.Dir(dataDir), filepath.Base(dataDir)+"-ferretdb.log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: FerretDB log: %w", err)
	}
	cmd := exec.Command(bin, "--listen", listen, "--data", dataDir)
	cmd.Stderr = lf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	setProcAttr(cmd)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("harness: start FerretDB: %w", err)
	}
	f := &FerretDB{dir: dataDir, cmd: cmd, logPath: logPath, logFile: lf, done: make(chan struct{})}
	ready := followReady(stdout, lf)
	go func() {
		f.waitErr = cmd.Wait()
		close(f.done)
	}()
	select {
	case uri, ok := <-ready:
		if !ok {
			<-f.done
			f.Close()
			return nil, fmt.Errorf("harness: FerretDB exited during start-up: %v\n--- %s ---\n%s", f.waitErr, logPath, logTail(logPath, 40))
		}
		f.URI = uri
	case <-ctx.Done():
		f.Close()
		return nil, fmt.Errorf("harness: FerretDB not ready: %w\n--- %s ---\n%s", ctx.Err(), logPath, logTail(logPath, 40))
	}
	f.startup = time.Since(started)
	return f, nil
}

// Pid is the server's process id.
func (f *FerretDB) Pid() int { return f.cmd.Process.Pid }

// LogPath is the server's log file.
func (f *FerretDB) LogPath() string { return f.logPath }

// Close kills the server and waits for it. It is safe to call more than once.
func (f *FerretDB) Close() {
	f.closeOnce.Do(func() {
		killGroup(f.cmd)
		<-f.done
		f.logFile.Close()
	})
}

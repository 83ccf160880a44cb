package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersityGWVersion is the S3-compatible server the S3 tests run against
// (github.com/versity/versitygw, POSIX backend).
const VersityGWVersion = "v1.8.0"

// S3 is a running versitygw serving a temporary directory over the S3 API
// on a free 127.0.0.1 port. Credentials are the root user's.
type S3 struct {
	URL       string
	AccessKey string
	SecretKey string
	Region    string
	Dir       string // the POSIX backend's directory: bucket/key files
	proc      *process
	bin, home string // what Restart starts again, and where
	port      int
	restarts  int
	held      portHold // the port, held while killed
}

// S3CacheBin is where the harness (and .ci/run) install versitygw when it is
// not already on the machine.
func S3CacheBin() string {
	if d := os.Getenv("TRIBUTARY_BIN_CACHE"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "tributary", "bin")
}

// FindVersityGW returns a versitygw binary: $VERSITYGW, then PATH, $GOBIN,
// $(go env GOPATH)/bin and S3CacheBin.
func FindVersityGW() (string, error) {
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, d := range filepath.SplitList(string(trimNL(out))) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	dirs = append(dirs, S3CacheBin())
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: versitygw not found (install it: GOBIN=%s go install github.com/versity/versitygw/cmd/versitygw@%s)",
		ErrUnavailable, S3CacheBin(), VersityGWVersion)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// InstallVersityGW builds versitygw into S3CacheBin with go install (about
// two minutes), holding a lock file so that parallel test packages build it
// once.
func InstallVersityGW(ctx context.Context) (string, error) {
	dir := S3CacheBin()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".versitygw.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "versitygw")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/versity/versitygw/cmd/versitygw@"+VersityGWVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: go install versitygw@%s: %v\n%s", ErrUnavailable, VersityGWVersion, err, out)
	}
	return bin, nil
}

// VersityGW starts versitygw for the test with a fresh bucket named bucket
// (none if empty), installing versitygw first when it is missing (unless
// TRIBUTARY_NO_FETCH is set); the test is skipped, saying what to install,
// when it cannot be had. It is stopped when the test ends.
func VersityGW(t testing.TB, bucket string) *S3 {
	t.Helper()
	bin, err := FindVersityGW()
	if err != nil && os.Getenv("TRIBUTARY_NO_FETCH") == "" {
		t.Logf("harness: %v; installing it (about two minutes)", err)
		bin, err = InstallVersityGW(context.Background())
	}
	if err != nil {
		t.Skipf("harness: %v", err)
	}
	dir := t.TempDir()
	s, err := StartVersityGW(context.Background(), bin, dir)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of %s ---\n%s", s.proc.logPath, s.proc.tail(30))
		}
		s.Close()
	})
	if bucket != "" {
		if err := s.CreateBucket(context.Background(), bucket); err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	return s
}

// StartVersityGW starts bin (versitygw) with its POSIX backend on
// dir/data, logging to dir/versitygw.log, and waits until it answers.
func StartVersityGW(ctx context.Context, bin, dir string) (*S3, error) {
	return startRetrying(func() (*S3, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &S3{URL: "http://127.0.0.1:" + strconv.Itoa(port), AccessKey: "tributary", SecretKey: "tributary-secret",
			Region: "us-east-1", Dir: filepath.Join(dir, "data"), bin: bin, home: dir, port: port}
		if err := s.start(ctx, "versitygw.log"); err != nil {
			return nil, err
		}
		return s, nil
	})
}

// start starts the server on s's port and directories, logging to
// home/logName, and waits until it answers.
func (s *S3) start(ctx context.Context, logName string) error {
	for _, d := range []string{s.Dir, filepath.Join(s.home, "meta")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("harness: %w", err)
		}
	}
	argv := []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--port", "127.0.0.1:" + strconv.Itoa(s.port), "--quiet", "posix", "--sidecar", filepath.Join(s.home, "meta"), s.Dir}
	p, err := startProcess("versitygw", s.bin, argv, s.home, filepath.Join(s.home, logName))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, p, s.URL, 30*time.Second); err != nil {
		p.Close()
		return startError(p, err)
	}
	s.proc = p
	return nil
}

// Kill stops the server with SIGKILL, as an outage would: requests in
// flight fail, connections are refused until Restart.
func (s *S3) Kill() error {
	return s.held.kill(s.proc, s.port)
}

// Restart starts the server again after Kill, on the same port and with
// the same data (objects written before the kill are there).
func (s *S3) Restart(ctx context.Context) error {
	s.restarts++
	s.held.free()
	return s.start(ctx, fmt.Sprintf("versitygw-%d.log", s.restarts))
}

// waitHTTP waits until url answers any HTTP response.
func waitHTTP(ctx context.Context, p *process, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: time.Second}
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("harness: %s exited during start-up: %v", p.name, err)
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			return nil
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			var ne net.Error
			if !errors.As(err, &ne) {
				return fmt.Errorf("harness: %s: %w", p.name, err)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("harness: %s did not answer at %s within %v", p.name, url, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Client returns an aws-sdk-go-v2 client for the server (path-style).
func (s *S3) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// CreateBucket creates a bucket.
func (s *S3) CreateBucket(ctx context.Context, name string) error {
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		return fmt.Errorf("harness: create bucket %s: %w", name, err)
	}
	return nil
}

// SinkConfig returns the S3 sink keys that point at this server.
func (s *S3) SinkConfig(bucket string) map[string]string {
	return map[string]string{
		"s3.bucket.name": bucket, "store.url": s.URL, "s3.region": s.Region,
		"aws.access.key.id": s.AccessKey, "aws.secret.access.key": s.SecretKey,
	}
}

// Close stops the server.
func (s *S3) Close() error {
	s.held.free()
	return s.proc.Close()
}

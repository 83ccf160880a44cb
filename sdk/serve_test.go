package sdk

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
)

// After go-plugin swapped os.Stdout and os.Stderr for its forwarding pipes,
// the first call points both back at the real stderr, before its handler
// runs: what a plugin writes just before os.Exit is not lost with the
// forwarding.
func TestStdioRestoredAtFirstCall(t *testing.T) {
	realOut, realErr := os.Stdout, os.Stderr
	t.Cleanup(func() { os.Stdout, os.Stderr = realOut, realErr })
	fd2, err := os.Create(filepath.Join(t.TempDir(), "fd2"))
	if err != nil {
		t.Fatal(err)
	}
	defer fd2.Close()
	r := &stdioRestorer{stderr: fd2}

	// go-plugin's swap, before it serves.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	os.Stdout, os.Stderr = pw, pw

	err = r.stream(nil, nil, &grpc.StreamServerInfo{}, func(any, grpc.ServerStream) error {
		_, _ = os.Stderr.WriteString("to stderr\n")
		_, _ = os.Stdout.WriteString("to stdout\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.unary(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) {
		_, _ = os.Stderr.WriteString("later\n")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fd2.Name())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "to stderr\nto stdout\nlater\n" {
		t.Errorf("real stderr got %q", got)
	}
	if os.Stdout != fd2 || os.Stderr != fd2 {
		t.Error("os.Stdout and os.Stderr not restored")
	}
	_ = pw.Close()
	if rest, _ := io.ReadAll(pr); strings.TrimSpace(string(rest)) != "" {
		t.Errorf("the pipe got %q", rest)
	}
}

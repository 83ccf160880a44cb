package main

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestDevHelpNamesOnlyRealFlags: dev --help mentioned a --verbose flag
// that does not exist.
func TestDevHelpNamesOnlyRealFlags(t *testing.T) {
	var out bytes.Buffer
	run([]string{"dev", "--help"}, &out, &out)
	if strings.Contains(out.String(), "--verbose") {
		t.Errorf("dev --help mentions --verbose:\n%s", out.String())
	}
}

// TestDevPortClashNamesTheFlag: a busy port is reported with the flag that
// picks another (it said "change listeners", a worker property dev users
// never see).
func TestDevPortClashNamesTheFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--broker-port", busy, "--rest-port", free()}, "--broker-port"},
		{[]string{"--broker-port", free(), "--rest-port", busy}, "--rest-port"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"dev", "--data-dir", t.TempDir()}, tc.args...), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "address already in use") || !strings.Contains(stderr.String(), tc.want) ||
			strings.Contains(stderr.String(), "change listeners") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and a hint naming %s", tc.args, code, stderr.String(), tc.want)
		}
	}
}

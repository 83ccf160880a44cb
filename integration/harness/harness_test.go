package harness

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteProperties(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.properties")
	err := writeProperties(path, map[string]string{
		"b.key":    `C:\dir`,
		"a:key=x":  " leading space",
		"multi":    "line1\nline2",
		"listener": "PLAINTEXT://127.0.0.1:9092",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "a\\:key\\=x=\\ leading space\n" +
		"b.key=C:\\\\dir\n" +
		"listener=PLAINTEXT://127.0.0.1:9092\n" +
		"multi=line1\\nline2\n"
	if string(got) != want {
		t.Errorf("properties file:\n%s\nwant:\n%s", got, want)
	}
}

func TestTailLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"", 3, ""},
	} {
		if got := tailLines([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("tailLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestLogProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.log")
	old := "time=1 level=WARN msg=\"an earlier run\"\n"
	run := "=== harness: starting worker ===\ntime=2 level=INFO msg=started\ntime=2 level=INFO msg=\"joined the group\" generation=3\n" +
		"time=3 level=WARN msg=\"slow\"\ntime=4 level=ERROR msg=\"task failed\"\ntime=5 level=ERROR msg=\"again\"\n"
	if err := os.WriteFile(path, []byte(old+run), 0o644); err != nil {
		t.Fatal(err)
	}
	from := int64(len(old))
	if got, want := logProblems(path, from, 2), "time=4 level=ERROR msg=\"task failed\"\ntime=5 level=ERROR msg=\"again\""; got != want {
		t.Errorf("logProblems(last 2) = %q, want %q", got, want)
	}
	if got := logProblems(path, from, 10); strings.Contains(got, "earlier run") || !strings.Contains(got, "slow") ||
		!strings.Contains(got, "generation=3") || strings.Contains(got, "msg=started") {
		t.Errorf("logProblems from this run's offset = %q", got)
	}
	if got := logProblems(path, int64(len(old+run)), 10); got != "(none)" {
		t.Errorf("logProblems with nothing logged since = %q, want (none)", got)
	}
}

func TestFollowReady(t *testing.T) {
	var log bytes.Buffer
	ready := followReady(strings.NewReader("starting\nready mongodb://127.0.0.1:1/\nready mongodb://other/\nserving\n"), &log)
	if uri, ok := <-ready; !ok || uri != "mongodb://127.0.0.1:1/" {
		t.Errorf("announced %q (%v), want the first ready line's URI", uri, ok)
	}
	if _, ok := <-ready; ok {
		t.Error("a second URI came through, or the channel stayed open after the output ended")
	}
	if want := "starting\nready mongodb://127.0.0.1:1/\nready mongodb://other/\nserving\n"; log.String() != want {
		t.Errorf("log = %q, want every line, %q", log.String(), want)
	}
	if uri, ok := <-followReady(strings.NewReader("panic: no version file\n"), io.Discard); ok {
		t.Errorf("an output without a ready line announced %q", uri)
	}
}

func TestNewClusterID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, err := newClusterID()
		if err != nil {
			t.Fatal(err)
		}
		b, err := base64.RawURLEncoding.DecodeString(id)
		if err != nil || len(b) != 16 || id[0] == '-' {
			t.Fatalf("bad cluster id %q (%d bytes, %v)", id, len(b), err)
		}
		if seen[id] {
			t.Fatalf("duplicate cluster id %q", id)
		}
		seen[id] = true
	}
}

func TestCheckJarsMissing(t *testing.T) {
	err := CheckJars(t.TempDir())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("CheckJars(empty dir) = %v, want ErrUnavailable", err)
	}
}

func TestFindJava(t *testing.T) {
	java, err := FindJava()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	v, err := javaVersion(java)
	if err != nil || v < MinJavaVersion {
		t.Fatalf("FindJava() = %s, version %d, %v", java, v, err)
	}
}

func TestFreePort(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("freePorts returned duplicates: %v", ports)
	}
	if p := FreePort(t); p <= 0 {
		t.Errorf("FreePort = %d", p)
	}
}

// LastJoin takes the last rebalance Kafka Connect logged (its
// DistributedHerder.RebalanceListener line), -1 before any.
func TestConnectLastJoin(t *testing.T) {
	log := filepath.Join(t.TempDir(), "connect.log")
	c := &Connect{proc: &process{logPath: log}}
	if err := os.WriteFile(log, []byte("[2026-01-01 00:00:00,000] INFO starting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gen, leader, err := c.LastJoin(); err != nil || gen != -1 || leader != "" {
		t.Fatalf("before a join: %d %q %v", gen, leader, err)
	}
	line := func(gen, url string) string {
		return "[2026-01-01 00:00:01,000] INFO [Worker clientId=connect-127.0.0.1:8083, groupId=g] Joined group at generation " + gen +
			" with protocol version 2 and got assignment: Assignment{error=0, leader='connect-127.0.0.1:8083-1', leaderUrl='" + url +
			"', offset=3, connectorIds=[], taskIds=[], revokedConnectorIds=[], revokedTaskIds=[], delay=0} with rebalance delay: 0 (org.apache.kafka.connect.runtime.distributed.DistributedHerder:2404)\n"
	}
	if err := os.WriteFile(log, []byte(line("1", "http://127.0.0.1:8083/")+line("12", "http://127.0.0.1:8084/")), 0o644); err != nil {
		t.Fatal(err)
	}
	if gen, leader, err := c.LastJoin(); err != nil || gen != 12 || leader != "http://127.0.0.1:8084" {
		t.Fatalf("after two joins: %d %q %v", gen, leader, err)
	}
}

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// kgoSuiteSkip names the kgo tests left out: none. The KIP-848 tests
// (Test848RegexBrokerResolves, the 848 variants of TestGroupETL) run against
// the broker's consumer group protocol. The SASL tests (TestSCRAMAuth,
// TestSCRAMAuthBadCredentials) run against the broker's SASL_PLAINTEXT
// listener (KGO_TEST_SCRAM_SEEDS) with a SCRAM-SHA-256 user created by
// tributary.scram.credentials; share group tests skip themselves without
// ShareFetch v2.
const kgoSuiteSkip = ``

// TestKgoSuite runs franz-go's own kgo integration tests (the module at the
// version this repository uses, fetched through the Go module proxy into the
// module cache, never committed) against Tributary's broker: KGO_SEEDS
// points at the broker, KGO_TEST_RF=1, and KGO_TEST_RECORDS (default 10000
// here; TRIBUTARY_KGO_RECORDS overrides it) bounds the ETL tests, among them
// TestTxnEtl and TestGroupETL. Every test that does not need SASL, share
// groups must pass.
func TestKgoSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("franz-go's suite takes a few minutes")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go command is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// The franz-go version of this repository's go.mod.
	vout, err := exec.CommandContext(ctx, goBin, "list", "-m", "-f", "{{.Version}}", "github.com/twmb/franz-go").Output()
	version := strings.TrimSpace(string(vout))
	if err != nil || version == "" {
		t.Fatalf("go list -m github.com/twmb/franz-go: %v %q", err, vout)
	}

	// The module's source, tests included, from the Go module proxy.
	dl := exec.CommandContext(ctx, goBin, "mod", "download", "-json", "github.com/twmb/franz-go@"+version)
	out, err := dl.Output()
	if err != nil {
		t.Skipf("skipping: go mod download github.com/twmb/franz-go@%s: %v (needs the Go module proxy)", version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download output %q: %v", out, err)
	}
	src := filepath.Join(t.TempDir(), "franz-go")
	if out, err := exec.Command("cp", "-r", mod.Dir, src).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v: %s", mod.Dir, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", src).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v: %s", err, out)
	}

	// Two listeners: the suite's PLAINTEXT one (KGO_SEEDS) and a
	// SASL_PLAINTEXT one for its SCRAM tests.
	b := harness.TributaryBroker(t, func(c *broker.Config) {
		c.Listeners = []broker.ListenerConfig{
			{Name: "PLAINTEXT", Protocol: broker.ProtocolPlaintext, Addr: "127.0.0.1:0"},
			{Name: "SASL", Protocol: broker.ProtocolSASLPlaintext, Addr: "127.0.0.1:0", Mechanisms: []string{broker.MechanismSCRAMSHA256, broker.MechanismSCRAMSHA512}},
		}
		c.SCRAMUsers = []broker.SCRAMUser{{Mechanism: broker.MechanismSCRAMSHA256, Name: "kgo", Password: "kgo-secret"}}
	})
	records := "10000"
	if r := os.Getenv("TRIBUTARY_KGO_RECORDS"); r != "" {
		records = r
	}
	args := []string{"test", "-count=1", "-timeout", "12m", "-v", "."}
	if kgoSuiteSkip != "" {
		args = append(args, "-skip", kgoSuiteSkip)
	}
	if run := os.Getenv("TRIBUTARY_KGO_RUN"); run != "" {
		args = append(args, "-run", run)
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = filepath.Join(src, "pkg", "kgo")
	cmd.Env = append(os.Environ(),
		"KGO_SEEDS="+b.Bootstrap(),
		"KGO_TEST_SCRAM_SEEDS="+b.ListenerAddr("SASL"),
		"KGO_TEST_SCRAM=kgo:kgo-secret:256",
		"KGO_TEST_RF=1",
		"KGO_TEST_RECORDS="+records,
		"KGO_LOG_LEVEL=none",
		// -trimpath: the copy's temp dir is not compiled into the
		// objects, so the build cache serves the suite's package on the
		// next run instead of compiling it again.
		"GOFLAGS=-mod=mod -trimpath",
	)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	begin := time.Now()
	runErr := cmd.Run()
	passed, failed, skipped := summarize(buf.Bytes())
	t.Logf("franz-go %s kgo suite against the broker in %v: %d passed, %d failed, %d skipped", version, time.Since(begin).Round(time.Second), len(passed), len(failed), len(skipped))
	if len(skipped) > 0 {
		t.Logf("skipped: %s", strings.Join(skipped, ", "))
	}
	if runErr != nil || len(failed) > 0 {
		os.WriteFile(filepath.Join(os.TempDir(), "kgo-suite.log"), buf.Bytes(), 0o644)
		t.Fatalf("kgo suite: %v; failed: %s\n(full output in %s)\n%s", runErr, strings.Join(failed, ", "),
			filepath.Join(os.TempDir(), "kgo-suite.log"), tailOf(buf.String(), 60))
	}
	if len(passed) < 50 {
		t.Fatalf("only %d kgo tests passed:\n%s", len(passed), tailOf(buf.String(), 40))
	}
}

var testResult = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// summarize lists the top-level tests of `go test -v` output by result.
func summarize(out []byte) (passed, failed, skipped []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := testResult.FindStringSubmatch(sc.Text())
		if m == nil || strings.Contains(m[2], "/") {
			continue
		}
		switch m[1] {
		case "PASS":
			passed = append(passed, m[2])
		case "FAIL":
			failed = append(failed, m[2])
		case "SKIP":
			skipped = append(skipped, m[2])
		}
	}
	return passed, failed, skipped
}

func tailOf(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

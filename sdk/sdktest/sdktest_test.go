package sdktest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/sdktest"
)

// The kit's own tests: a connector that keeps the SDK's contract passes the
// kit, one with a known defect fails it with the matching complaint. A run
// expected to fail is made in a child process (this test binary, running
// TestKitHelper with helperEnv naming the case) and judged by its output.

const helperEnv = "SDKTEST_KIT_HELPER"

func sourceDriver(t *testing.T, partitions, interleave, defect string) sdktest.SourceDriver {
	t.Helper()
	return sdktest.SourceDriver{
		Connector:     testSource(),
		Deterministic: true,
		Timeout:       3 * time.Second,
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"id": newID(t), "partitions": partitions, "interleave": interleave, "defect": defect}
		},
		Seed: seedSource,
	}
}

func sinkDriver(mode string) sdktest.SinkDriver {
	return sdktest.SinkDriver{
		Connector: testSink(),
		Timeout:   time.Second,
		Config: func(t *testing.T) map[string]string {
			return map[string]string{"id": newID(t), "mode": mode, "topics": "sdktest-a,sdktest-b"}
		},
		ReadBack: readBack,
	}
}

// helpers are the kit runs that must fail, by name.
var helpers = map[string]func(t *testing.T){
	"source-1-lose":         func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "1", "alternate", "lose")) },
	"source-1-repeat":       func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "1", "alternate", "repeat")) },
	"source-2-lose":         func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "lose")) },
	"source-2-repeat":       func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "repeat")) },
	"source-2-lose-last":    func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "lose-last")) },
	"source-2-blocks-lose":  func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "blocks", "lose")) },
	"source-3-repeat-first": func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "3", "alternate", "repeat-first")) },
	"sink-none":             func(t *testing.T) { sdktest.RunSink(t, sinkDriver("none")) },
	"sink-partial":          func(t *testing.T) { sdktest.RunSink(t, sinkDriver("partial")) },
	"sink-liar":             func(t *testing.T) { sdktest.RunSink(t, sinkDriver("liar")) },
}

// TestKitHelper runs one failing case when started by runHelper.
func TestKitHelper(t *testing.T) {
	name := os.Getenv(helperEnv)
	if name == "" {
		t.Skip("run by the kit's tests in a child process")
	}
	helpers[name](t)
}

// runHelper runs a helper case in a child process and returns its output;
// the case must fail (and only by failing a test).
func runHelper(t *testing.T, name string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKitHelper$", "-test.v", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "--- FAIL: TestKitHelper") {
		t.Fatalf("%s: the kit did not fail the connector (exit %v):\n%s", name, err, out)
	}
	return string(out)
}

func expectFailure(t *testing.T, name, subtest string, want ...string) {
	t.Helper()
	out := runHelper(t, name)
	if !strings.Contains(out, "--- FAIL: TestKitHelper/"+subtest) {
		t.Errorf("%s: subtest %s did not fail:\n%s", name, subtest, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q:\n%s", name, w, out)
		}
	}
	// The other checks must pass: the failure is the defect's, not noise.
	if n := strings.Count(out, "--- FAIL: TestKitHelper/"); n != 1 {
		t.Errorf("%s: %d subtests failed, want only %s:\n%s", name, n, subtest, out)
	}
}

// TestCorrectSourcesPass: sources that resume every partition exactly
// after its committed offset pass, with one partition or several, however
// they interleave partitions (alternating, or one partition per Poll, which
// gives a different interleaving after the restart since the kit's Poll max
// differs).
func TestCorrectSourcesPass(t *testing.T) {
	for _, c := range []struct{ partitions, interleave string }{
		{"1", "alternate"}, {"2", "alternate"}, {"3", "alternate"}, {"2", "blocks"}, {"3", "blocks"},
	} {
		t.Run(c.partitions+"-"+c.interleave, func(t *testing.T) {
			sdktest.RunSource(t, sourceDriver(t, c.partitions, c.interleave, "none"))
		})
	}
}

// TestSourceLossOrRepeatFails: a source that, after the restart, loses or
// repeats one record of one partition fails records-and-resume, with one
// partition (as strictly as before) and with several.
func TestSourceLossOrRepeatFails(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		// Records 0..16 of one partition: committed n=16; n=17 is skipped.
		{"source-1-lose", `partition {"p":"p0"}: record 0 after the restart is {"p":"p0"}@{"n":18}=p0-18, want {"p":"p0"}@{"n":17}=p0-17`},
		{"source-1-repeat", `partition {"p":"p0"}: record 0 after the restart, {"p":"p0"}@{"n":16}=p0-16, repeats a record acknowledged before it`},
		// Two alternating partitions: committed p0 n=8, p1 n=7.
		{"source-2-lose", `partition {"p":"p1"}: record 0 after the restart is {"p":"p1"}@{"n":9}=p1-9, want {"p":"p1"}@{"n":8}=p1-8`},
		{"source-2-repeat", `partition {"p":"p1"}: record 0 after the restart, {"p":"p1"}@{"n":7}=p1-7, repeats a record acknowledged before it`},
		// Loses p1's last record: noticed when the partition stays short.
		{"source-2-lose-last", `partition {"p":"p1"} gave 11 records within 3s, want 12`},
		// One partition per Poll: committed p0 n=9, p1 n=6.
		{"source-2-blocks-lose", `partition {"p":"p1"}: record 0 after the restart is {"p":"p1"}@{"n":8}=p1-8, want {"p":"p1"}@{"n":7}=p1-7`},
		// Three partitions, the first one repeats its committed record.
		{"source-3-repeat-first", `partition {"p":"p0"}: record 0 after the restart, {"p":"p0"}@{"n":5}=p0-5, repeats a record acknowledged before it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, "records-and-resume", c.want)
		})
	}
}

// TestCorrectSinksPass: a sink that writes and reports at once passes, and
// so does an asynchronous one that reports nothing, then part, then all.
func TestCorrectSinksPass(t *testing.T) {
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) { sdktest.RunSink(t, sinkDriver(mode)) })
	}
}

// TestDishonestOrStalledSinksFail: a sink that never reports anything
// durable (and writes nothing), one that never reports one of its
// partitions, and one that reports what it did not write fail
// durable-offsets.
func TestDishonestOrStalledSinksFail(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		{"sink-none", "Flush still reports map[] durable"},
		{"sink-partial", "Flush still reports map[sdktest-a-0:9] durable"},
		{"sink-liar", "but record 0 is not in the external system"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, "durable-offsets", c.want)
		})
	}
}

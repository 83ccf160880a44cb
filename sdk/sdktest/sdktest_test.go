package sdktest_test

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
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

// sinkDriver drives the test sink with the given settings (mode, fault,
// kinds, resume); it looks for records of every kind (RenderRecord), and
// edit may change the rest.
func sinkDriver(settings map[string]string, edit ...func(*sdktest.SinkDriver)) sdktest.SinkDriver {
	d := sdktest.SinkDriver{
		Connector: testSink(),
		Timeout:   time.Second,
		Config: func(t *testing.T) map[string]string {
			cfg := map[string]string{"id": newID(t), "topics": "sdktest-a,sdktest-b"}
			maps.Copy(cfg, settings)
			return cfg
		},
		ReadBack:     readBack,
		RenderRecord: render,
	}
	for _, e := range edit {
		e(&d)
	}
	return d
}

func mode(m string) map[string]string { return map[string]string{"mode": m} }

func fault(f string) map[string]string { return map[string]string{"fault": f} }

func format(f string) map[string]string { return map[string]string{"format": f} }

var (
	idempotent = func(d *sdktest.SinkDriver) { d.Idempotent = true }
	lose       = func(d *sdktest.SinkDriver) { d.Lose = loseHalf }
	// writesJSON: the sink declares it writes values as schema.AppendJSON
	// with the default options.
	writesJSON = func(d *sdktest.SinkDriver) { d.JSON = &schema.JSONOptions{}; d.RenderRecord = nil }
	// stringsOnly: what the strings-only test sink documents it takes.
	stringsOnly = func(d *sdktest.SinkDriver) {
		d.Supports = []sdktest.RecordKind{sdktest.StringValues, sdktest.NilKeys, sdktest.Headers}
	}
)

// helpers are the kit runs that must fail, by name.
var helpers = map[string]func(t *testing.T){
	"source-1-lose":          func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "1", "alternate", "lose")) },
	"source-1-repeat":        func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "1", "alternate", "repeat")) },
	"source-2-lose":          func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "lose")) },
	"source-2-repeat":        func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "repeat")) },
	"source-2-lose-last":     func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "alternate", "lose-last")) },
	"source-2-blocks-lose":   func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "2", "blocks", "lose")) },
	"source-3-repeat-first":  func(t *testing.T) { sdktest.RunSource(t, sourceDriver(t, "3", "alternate", "repeat-first")) },
	"sink-none":              func(t *testing.T) { sdktest.RunSink(t, sinkDriver(mode("none"))) },
	"sink-partial":           func(t *testing.T) { sdktest.RunSink(t, sinkDriver(mode("partial"))) },
	"sink-liar":              func(t *testing.T) { sdktest.RunSink(t, sinkDriver(mode("liar"))) },
	"sink-ahead":             func(t *testing.T) { sdktest.RunSink(t, sinkDriver(mode("ahead"))) },
	"sink-rewind-stale":      func(t *testing.T) { sdktest.RunSink(t, sinkDriver(fault("rewind-stale"))) },
	"sink-lose-no-rewind":    func(t *testing.T) { sdktest.RunSink(t, sinkDriver(nil, lose)) },
	"sink-retriable-forever": func(t *testing.T) { sdktest.RunSink(t, sinkDriver(fault("retriable-forever"))) },
	"sink-retriable-after-write-idempotent": func(t *testing.T) {
		sdktest.RunSink(t, sinkDriver(fault("retriable-after-write"), idempotent))
	},
	"sink-write-twice":  func(t *testing.T) { sdktest.RunSink(t, sinkDriver(fault("write-twice"))) },
	"sink-strings-only": func(t *testing.T) { sdktest.RunSink(t, sinkDriver(map[string]string{"kinds": "strings"})) },
	"sink-skip-structs": func(t *testing.T) { sdktest.RunSink(t, sinkDriver(fault("skip-structs"))) },
	"sink-leak":         func(t *testing.T) { sdktest.RunSink(t, sinkDriver(fault("leak"))) },
	"sink-lossy": func(t *testing.T) {
		sdktest.RunSink(t, sinkDriver(format("lossy"), func(d *sdktest.SinkDriver) { d.RenderRecord = renderLossy }))
	},
	"sink-json-numeric": func(t *testing.T) { sdktest.RunSink(t, sinkDriver(format("json-numeric"), writesJSON)) },
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

// TestCorrectSinksPass: sinks that keep the contract pass: one that writes
// and reports at once, looked for by record (RenderRecord) or by STRING
// value only (Render); an asynchronous one that reports nothing, then part,
// then all; one that reports partitions it was not given (ignored, as the
// runtime does); ones whose Put fails with retriable errors, before or
// after writing (at-least-once: the records delivered again may be held
// twice); ones that rewind, from Put or from Flush; one that rejects the
// kinds of records it documents it does not take; and one that keeps its
// offsets in the external system and rewinds to them after a loss.
func TestCorrectSinksPass(t *testing.T) {
	for _, c := range []struct {
		name string
		d    sdktest.SinkDriver
	}{
		{"sync", sinkDriver(mode("sync"))},
		{"sync-render", sinkDriver(mode("sync"), func(d *sdktest.SinkDriver) { d.RenderRecord = nil })},
		{"async", sinkDriver(mode("async"))},
		{"extra-partition", sinkDriver(mode("extra"))},
		{"retriable", sinkDriver(fault("retriable"), idempotent)},
		{"retriable-after-write", sinkDriver(fault("retriable-after-write"))},
		{"rewind-in-put", sinkDriver(fault("rewind"), idempotent)},
		{"rewind-in-flush", sinkDriver(map[string]string{"mode": "async", "fault": "drop-buffer"}, idempotent,
			func(d *sdktest.SinkDriver) { d.Timeout = 5 * time.Second })},
		{"strings-only", sinkDriver(map[string]string{"kinds": "strings"}, stringsOnly)},
		{"rewind-after-loss", sinkDriver(map[string]string{"resume": "rewind"}, lose, idempotent)},
		{"json", sinkDriver(format("json"), writesJSON)},
		{"json-numeric", sinkDriver(format("json-numeric"), func(d *sdktest.SinkDriver) {
			d.JSON, d.RenderRecord = &schema.JSONOptions{DecimalFormat: "NUMERIC"}, nil
		})},
	} {
		t.Run(c.name, func(t *testing.T) { sdktest.RunSink(t, c.d) })
	}
}

// TestDishonestOrStalledSinksFail: a sink that never reports anything
// durable (and writes nothing), one that never reports one of its
// partitions, one that reports what it did not write, and one that
// reports more than it was given fail durable-offsets.
func TestDishonestOrStalledSinksFail(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		{"sink-none", "Flush still reports map[] durable"},
		{"sink-partial", "Flush still reports map[sdktest-a-0:9] durable"},
		{"sink-liar", "but record 0 is not in the external system"},
		{"sink-ahead", "flush reported sdktest-a-0 durable up to 10, but was given map[sdktest-a-0:9 sdktest-b-3:8]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, "durable-offsets", c.want)
		})
	}
}

// TestSinkRedeliveryFaultsFail: after a rewind, a sink that reports the
// records it asked for again durable before they are delivered again; one
// that keeps its offsets in the external system but does not rewind to
// them after a loss; one whose Put never recovers from a retriable error;
// one said to be idempotent that holds a record delivered twice twice; and
// one that writes a record delivered once twice.
func TestSinkRedeliveryFaultsFail(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, subtest, want string }{
		{"sink-rewind-stale", "durable-offsets",
			"flush reported sdktest-a-0 durable up to 9, but was given map[sdktest-a-0:5 sdktest-b-3:8] (the task rewound sdktest-a-0 to 5"},
		{"sink-lose-no-rewind", "rewind-after-loss",
			"but record 3 is not in the external system (after SinkDriver.Lose, with the task restarted from the committed offsets map[sdktest-a-0:6 sdktest-b-3:6]"},
		{"sink-retriable-forever", "durable-offsets",
			"put of records sdktest-a-0@0..4, sdktest-b-3@0..4 (kinds [string struct tombstone headers]) returned a retriable error 10 times in a row, the last one: sdktest sink: external system down"},
		{"sink-retriable-after-write-idempotent", "durable-offsets",
			`record sdktest-a-0@0 ("sdktest sdktest-a-0@0") is held 2 times in the external system; SinkDriver.Idempotent says each record is held once`},
		{"sink-write-twice", "durable-offsets",
			`record sdktest-a-0@0 ("sdktest sdktest-a-0@0") is held 2 times in the external system, but was handed to Put 1 times`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, c.subtest, c.want)
		})
	}
}

// TestSinkRecordKindsFail: a sink that rejects struct values and tombstones
// it is not documented (SinkDriver.Supports) to reject fails with the
// kinds of the batch and its error; one that takes struct values but does
// not write them fails once they are reported durable.
func TestSinkRecordKindsFail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want []string
	}{
		{"sink-strings-only", []string{"put of records sdktest-a-0@0..4, sdktest-b-3@0..4 (kinds [string struct tombstone headers]) failed: " +
			"sdktest sink: only STRING values are supported, sdktest-a-0@2 has a dev.tributary.sdktest.Row:struct{", "leave out of it the kinds it documents it does not support"}},
		{"sink-skip-structs", []string{"flush reported sdktest-a-0 durable up to 9, but record 2 (kinds [struct]) is not in the external system"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, "durable-offsets", c.want...)
		})
	}
}

// TestLossySinksFail: a sink that writes every struct value as {}, with a
// RenderRecord that renders it the same way (so every record is "found"),
// fails the lossless check, naming two records whose values differ and
// how to render them; a sink declared to write schema.AppendJSON's JSON
// that writes decimals as numbers instead fails on the first struct
// value, showing the JSON it should have written.
func TestLossySinksFail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, subtest string
		want          []string
	}{
		{"sink-lossy", "lossless", []string{
			"RenderRecord renders records sdktest-a-0@0 (the base value) and sdktest-a-0@1 (field \"i16\" 301 instead of 300) both as struct {}: the sink's rendering loses information",
			"write values with schema.AppendJSON(dst, r.ValueSchema, r.Value, opts)"}},
		{"sink-json-numeric", "durable-offsets", []string{
			"but record 2 (kinds [struct]) is not in the external system as SinkDriver.JSON says the sink writes it: want {\"id\":2,",
			"\"amount\":\"MDs=\"}",
			"and the external system holds e.g.",
			"render values with schema.AppendJSON(dst, r.ValueSchema, r.Value, opts), or set SinkDriver.JSON to the options the sink uses"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, c.name, c.subtest, c.want...)
		})
	}
}

// TestLeakingSinkFails: a task that leaves a goroutine running after Close
// fails the kit, which shows the goroutine's stack and says what to fix.
func TestLeakingSinkFails(t *testing.T) {
	t.Parallel()
	expectFailure(t, "sink-leak", "durable-offsets",
		"sdktest: 1 goroutine(s) the connector started still run 2s after its task was closed; Close (and a Poll or Put whose context is cancelled) must stop and wait for every goroutine the task started",
		"sdktest_test.(*sinkTask).Open.func1")
}

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMongoGoldenEventsUpToDate runs Debezium 3.6.1's MongoDB event builder
// (integration/debezium-mongodb/GoldenEvents.java) on the MongoDB source's
// test inputs again and checks that the golden events committed in
// connectors/mongodb/testdata, which the source's unit tests compare with,
// are what Debezium writes (but for the envelope's ts_ms, Debezium's
// clock).
func TestMongoGoldenEventsUpToDate(t *testing.T) {
	t.Parallel()
	if _, err := harness.FindJava(); err != nil {
		t.Skipf("skipping: %v (install a JDK 17+)", err)
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("skipping: javac not found (install a JDK 17+)")
	}
	jars := harness.JarsDir()
	if m, _ := filepath.Glob(filepath.Join(jars, "debezium-connector-mongodb-*.jar")); len(m) == 0 {
		t.Skipf("skipping: no debezium-connector-mongodb jar in %s; run: bash integration/fetch-jars.sh", jars)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "debezium-mongodb/gen-golden.sh", jars)
	cmd.Env = append(os.Environ(), "GOLDEN_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-golden.sh: %v\n%s", err, b)
	}
	for _, name := range []string{"golden-events.jsonl", "golden-fieldexclude.jsonl"} {
		want := goldenLines(t, filepath.Join("..", "connectors", "mongodb", "testdata", name))
		got := goldenLines(t, filepath.Join(out, name))
		if len(got) != len(want) {
			t.Fatalf("%s: Debezium wrote %d events, the committed file has %d: regenerate it with gen-golden.sh", name, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: event %d differs from what Debezium writes now: regenerate with integration/debezium-mongodb/gen-golden.sh", name, i)
			}
		}
	}
}

// goldenLines parses a golden file, without the envelopes' ts_ms.
func goldenLines(t *testing.T, path string) []any {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v, ok := m["value"].(map[string]any); ok {
			if p, ok := v["payload"].(map[string]any); ok {
				delete(p, "ts_ms")
			}
		}
		out = append(out, m)
	}
	return out
}

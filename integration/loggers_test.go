package integration

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestClusterLogLevel: PUT /admin/loggers/{ns}?scope=cluster on one worker
// sets the level on every worker of the group (KIP-976, through the config
// topic), while scope worker stays on the worker asked.
func TestClusterLogLevel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs two workers")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w1 := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w1"), harness.WorkerProps(t, b.Bootstrap(), "logs", nil))
	w2 := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w2"), harness.WorkerProps(t, b.Bootstrap(), "logs", nil))
	r1, r2 := rest{t, w1.URL()}, rest{t, w2.URL()}
	level := func(r rest, name string) string {
		code, out := r.do("GET", "/admin/loggers/"+name, nil)
		if code != 200 {
			return ""
		}
		var l struct{ Level string }
		json.Unmarshal(out, &l)
		return l.Level
	}

	out := r1.must("PUT", "/admin/loggers/dev.tributary.worker", map[string]string{"level": "DEBUG"}, 200)
	if string(out) != `["dev.tributary.worker","dev.tributary.worker.member","dev.tributary.worker.store","dev.tributary.worker.task"]` {
		t.Fatalf("worker scope answer %s", out)
	}
	if l := level(r2, "dev.tributary.worker"); l != "INFO" {
		t.Fatalf("a worker-scope level reached the other worker: %s", l)
	}

	r2.must("PUT", "/admin/loggers/org.apache.kafka.connect.file?scope=cluster", map[string]string{"level": "TRACE"}, 204)
	deadline := time.Now().Add(20 * time.Second)
	for level(r1, "org.apache.kafka.connect.file.FileStreamSourceTask") != "TRACE" || level(r2, "org.apache.kafka.connect.file") != "TRACE" {
		if time.Now().After(deadline) {
			t.Fatalf("cluster level not applied: w1 %s, w2 %s", level(r1, "org.apache.kafka.connect.file.FileStreamSourceTask"), level(r2, "org.apache.kafka.connect.file"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A worker that starts later does not apply levels written before it
	// started (as in Kafka Connect).
	w3 := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w3"), harness.WorkerProps(t, b.Bootstrap(), "logs", nil))
	if l := level(rest{t, w3.URL()}, "org.apache.kafka.connect.file.FileStreamSourceTask"); l != "INFO" {
		t.Fatalf("a new worker applied an old cluster level: %s", l)
	}
}

package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOffsetsAskTheConnector: PATCH and DELETE /connectors/{c}/offsets ask
// the connector first, as Kafka Connect asks alterOffsets (issue 21). A
// third-party plugin built on the SDK with the AlterOffsets hook (the
// ticker example, from plugin.path) refuses a bad offset with its message,
// and nothing changes; a good offset is written and the task resumes from
// it. A plugin without the hook (datagen) is answered as Kafka Connect
// answers for a connector that keeps the default alterOffsets.
func TestOffsetsAskTheConnector(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs a worker and a plugin")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	pluginDir := t.TempDir()
	// The examples are their own module, beside this one.
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "ticker"), "./ticker")
	build.Dir = filepath.Join("..", "examples")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the ticker plugin: %v\n%s", err, out)
	}
	w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"),
		harness.WorkerProps(t, b.Bootstrap(), "offhook", map[string]string{"plugin.path": pluginDir}))
	r := rest{t, w.URL()}

	r.must("POST", "/connectors", map[string]any{"name": "tick", "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": "Ticker", "topic": "ticks", "interval.ms": "10"}}, 201)
	r.waitState("tick", "STOPPED", 0)
	part := map[string]any{"ticker": "main"}
	for _, bad := range []map[string]any{{"seq": 1.5}, {"seq": "41"}, {"seq": -1}, {"other": 1}} {
		out := r.must("PATCH", "/connectors/tick/offsets", map[string]any{"offsets": []any{map[string]any{"partition": part, "offset": bad}}}, 400)
		if !strings.Contains(string(out), `a ticker offset is {\"seq\": n} with n a whole number \u003e= 0`) {
			t.Fatalf("offset %v: %s; want the connector's refusal", bad, out)
		}
	}
	if out := r.must("GET", "/connectors/tick/offsets", nil, 200); string(out) != `{"offsets":[]}` {
		t.Fatalf("refused changes changed the offsets: %s", out)
	}
	out := r.must("PATCH", "/connectors/tick/offsets", map[string]any{"offsets": []any{map[string]any{"partition": part, "offset": map[string]any{"seq": 41}}}}, 200)
	if string(out) != `{"message":"The offsets for this connector have been altered successfully"}` {
		t.Fatalf("accepted change: %s", out)
	}
	// The task resumes after the offset that was set.
	r.must("PUT", "/connectors/tick/resume", nil, 202)
	r.waitState("tick", "RUNNING", 1)
	cl := newClient(t, b.Bootstrap(), kgo.ConsumeTopics("ticks"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first *kgo.Record
	for first == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no tick arrived")
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if first == nil {
				first = rec
			}
		})
	}
	var v struct {
		Payload struct {
			Seq int64 `json:"seq"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(first.Value, &v); err != nil || v.Payload.Seq != 42 {
		t.Fatalf("first tick %s (%v); want seq 42, after the offset set to 41", first.Value, err)
	}

	// Datagen has no hook.
	r.must("POST", "/connectors", map[string]any{"name": "gen", "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": "Datagen", "kafka.topic": "gen"}}, 201)
	r.waitState("gen", "STOPPED", 0)
	out = r.must("PATCH", "/connectors/gen/offsets", map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"any": "thing"}, "offset": map[string]any{"n": 1}}}}, 200)
	if string(out) != `{"message":"The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."}` {
		t.Fatalf("no hook, alter: %s", out)
	}
	out = r.must("DELETE", "/connectors/gen/offsets", nil, 200)
	if string(out) != `{"message":"The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."}` {
		t.Fatalf("no hook, reset: %s", out)
	}
}

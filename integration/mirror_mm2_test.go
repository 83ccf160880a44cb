package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// kafkaMM2Properties is Kafka's config/connect-mirror-maker.properties
// with only the bootstrap servers changed to the test's clusters.
const kafkaMM2Properties = `# Sample MirrorMaker 2.0 top-level configuration file
clusters = A, B
A.bootstrap.servers = @A@
B.bootstrap.servers = @B@
A->B.enabled = true
A->B.topics = .*
B->A.enabled = true
B->A.topics = .*
replication.factor=1
checkpoints.topic.replication.factor=1
heartbeats.topic.replication.factor=1
offset-syncs.topic.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
config.storage.replication.factor=1
`

// TestMirrorDedicatedMode runs `tributary mirror` on Kafka's example
// mm2.properties between two bundled brokers: both flows run, each with
// Kafka's internal topic names, and records cross both ways.
func TestMirrorDedicatedMode(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	a := harness.TributaryBroker(t).Bootstrap()
	b := harness.TributaryBroker(t).Bootstrap()
	ca, cb := mirrorClient(t, a), mirrorClient(t, b)
	mirrorCreateTopic(t, ca, "orders", 2, nil)
	mirrorCreateTopic(t, cb, "returns", 1, nil)
	mirrorProduce(t, ca, "orders", 2, 0, 200)
	mirrorProduce(t, cb, "returns", 1, 0, 20)

	dir := t.TempDir()
	file := filepath.Join(dir, "mm2.properties")
	props := strings.NewReplacer("@A@", a, "@B@", b).Replace(kafkaMM2Properties)
	if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "mirror.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mirror", file)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("tributary mirror output:\n%s", out)
		}
	})
	readPartitions(t, b, "A.orders", 200, 60*time.Second)
	readPartitions(t, a, "B.returns", 20, 60*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for addr, want := range map[string][]string{b: {"mm2-configs.A.internal", "mm2-offsets.A.internal", "mm2-status.A.internal", "heartbeats", "A.checkpoints.internal"},
		a: {"mm2-configs.B.internal", "mm2-offsets.B.internal", "mm2-status.B.internal", "mm2-offset-syncs.B.internal"}} {
		mirrorWait(t, 30*time.Second, "internal topics", func() string {
			topics, err := kadmClient(t, addr).ListTopics(ctx)
			if err != nil {
				return err.Error()
			}
			for _, w := range want {
				if !topics.Has(w) {
					return w + " missing on " + addr
				}
			}
			return ""
		})
	}
}

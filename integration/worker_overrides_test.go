package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestWorkerClientOverrides checks a connector's consumer.override.*
// settings, which Kafka Connect applies under its default
// connector.client.config.override.policy (All): a sink with
// auto.offset.reset=latest skips what its topic held before it started,
// and a value the client would refuse is a validation error.
func TestWorkerClientOverrides(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, "ov", map[string]string{
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter"}))
	r := rest{t, w.URL()}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("ov"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(v string) {
		t.Helper()
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		produce(fmt.Sprintf("old-%d", i))
	}

	code, body := r.do("POST", "/connectors", map[string]any{"name": "bad", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(dir, "bad.txt"), "topics": "ov",
		"consumer.override.auto.offset.reset": "bogus"}})
	if code != 400 || !strings.Contains(string(body), "Invalid value bogus for configuration consumer.override.auto.offset.reset: must be earliest, latest or none") {
		t.Errorf("refused override: status %d, body %s", code, body)
	}

	out := filepath.Join(dir, "out.txt")
	r.must("POST", "/connectors", map[string]any{"name": "late", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "ov",
		"consumer.override.auto.offset.reset": "latest", "consumer.override.max.poll.records": "2"}}, 201)
	r.waitState("late", "RUNNING", 1)
	// The consumer resolves "latest" when it first fetches: keep producing
	// until records arrive, then check that none of the old ones did.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; len(readLines(out)) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no record reached the sink")
		}
		produce(fmt.Sprintf("new-%d", i))
		time.Sleep(200 * time.Millisecond)
	}
	produce("last")
	var got []string
	for deadline := time.Now().Add(15 * time.Second); !slices.Contains(got, "last"); got = readLines(out) {
		if time.Now().After(deadline) {
			t.Fatalf("the last record never arrived: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, l := range got {
		if strings.HasPrefix(l, "old-") {
			t.Fatalf("auto.offset.reset=latest read %q: %q", l, got)
		}
	}
}

// TestWorkerErrorTolerance: a FileStreamSink with errors.tolerance=all and a
// dead letter queue, through a worker process and a plugin process, writes
// the records its JsonConverter accepts and sends the others, as read, to
// the queue.
func TestWorkerErrorTolerance(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, "tol", nil))
	r := rest{t, w.URL()}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("mixed"), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("bad"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range []string{`"a"`, `{oops`, `"b"`} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	r.must("POST", "/connectors", map[string]any{"name": "tol", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "mixed",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"errors.tolerance": "all", "errors.log.enable": "true", "errors.deadletterqueue.topic.name": "bad",
		"errors.deadletterqueue.topic.replication.factor": "1", "errors.deadletterqueue.context.headers.enable": "true"}}, 201)
	if got := waitLines(t, out, 2, 30*time.Second); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("sink wrote %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	fs := cl.PollFetches(ctx)
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != `{oops` {
		t.Fatalf("dead letter queue: %v %v", recs, fs.Errors())
	}
	r.waitState("tol", "RUNNING", 1)
}

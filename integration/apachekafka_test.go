package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestApacheKafkaRoundTrip starts the reference Apache Kafka 4.4 broker,
// round-trips 1000 records through it with franz-go, and round-trips records
// with Kafka's own Java console producer and consumer, crossing the two
// clients in both directions.
func TestApacheKafkaRoundTrip(t *testing.T) {
	t.Parallel()
	k := harness.ApacheKafka(t, harness.WithServerProperty("log.flush.interval.messages", "1"))
	t.Logf("Apache Kafka start-up: %v", k.StartupTime().Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Bootstrap()))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"kgo-roundtrip", "java-roundtrip"} {
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}

	const n = 1000
	want := make([]string, n)
	recs := make([]*kgo.Record, n)
	for i := range n {
		want[i] = fmt.Sprintf("value-%04d", i)
		recs[i] = &kgo.Record{Topic: "kgo-roundtrip", Key: fmt.Appendf(nil, "key-%04d", i), Value: []byte(want[i])}
	}
	begin := time.Now()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	got := consume(ctx, t, k.Bootstrap(), "kgo-roundtrip", n)
	t.Logf("franz-go: produced and consumed %d records in %v", n, time.Since(begin).Round(time.Millisecond))
	if !slices.Equal(got, want) {
		t.Fatalf("franz-go consumed %d records, first %q; want %d in order", len(got), head(got), n)
	}

	// Java console consumer reads what franz-go wrote.
	begin = time.Now()
	out, err := k.RunTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", k.Bootstrap(), "--topic", "kgo-roundtrip", "--from-beginning",
		"--max-messages", fmt.Sprint(n), "--timeout-ms", "60000")
	if err != nil {
		t.Fatalf("ConsoleConsumer: %v", err)
	}
	t.Logf("Java ConsoleConsumer read %d records in %v", n, time.Since(begin).Round(time.Millisecond))
	if got := lines(out); !slices.Equal(got, want) {
		t.Fatalf("ConsoleConsumer printed %d lines, first %q; want %d in order", len(got), head(got), n)
	}

	// Java console producer writes; Java console consumer and franz-go read.
	const m = 100
	javaWant := make([]string, m)
	for i := range m {
		javaWant[i] = fmt.Sprintf("java-%03d", i)
	}
	begin = time.Now()
	if _, err := harness.JavaToolWithInput(ctx, strings.NewReader(strings.Join(javaWant, "\n")+"\n"),
		"org.apache.kafka.tools.ConsoleProducer",
		"--bootstrap-server", k.Bootstrap(), "--topic", "java-roundtrip",
		"--producer-property", "acks=all"); err != nil {
		t.Fatalf("ConsoleProducer: %v", err)
	}
	t.Logf("Java ConsoleProducer wrote %d records in %v", m, time.Since(begin).Round(time.Millisecond))
	out, err = harness.JavaTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", k.Bootstrap(), "--topic", "java-roundtrip", "--from-beginning",
		"--max-messages", fmt.Sprint(m), "--timeout-ms", "60000")
	if err != nil {
		t.Fatalf("ConsoleConsumer: %v", err)
	}
	if got := lines(out); !slices.Equal(got, javaWant) {
		t.Fatalf("ConsoleConsumer printed %q; want %q", got, javaWant)
	}
	if got := consume(ctx, t, k.Bootstrap(), "java-roundtrip", m); !slices.Equal(got, javaWant) {
		t.Fatalf("franz-go consumed %q; want %q", got, javaWant)
	}
}

// TestApacheKafkaConnect starts a Kafka Connect 4.4 distributed worker
// against the reference Apache Kafka broker and checks its REST API.
func TestApacheKafkaConnect(t *testing.T) {
	t.Parallel()
	k := harness.ApacheKafka(t)
	t.Logf("Apache Kafka start-up: %v", k.StartupTime().Round(time.Millisecond))
	c := harness.KafkaConnect(t, k.Bootstrap())
	t.Logf("Kafka Connect start-up: %v", c.StartupTime().Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var root struct {
		Version        string `json:"version"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}
	if err := json.Unmarshal(get(ctx, t, c.URL()+"/"), &root); err != nil {
		t.Fatalf("decode GET /: %v", err)
	}
	if !strings.HasPrefix(root.Version, "4.4") {
		t.Errorf("GET / version = %q, want 4.4.x", root.Version)
	}
	if got := strings.TrimSpace(string(get(ctx, t, c.URL()+"/connectors"))); got != "[]" {
		t.Errorf("GET /connectors = %s, want []", got)
	}
	var plugins []struct {
		Class string `json:"class"`
	}
	if err := json.Unmarshal(get(ctx, t, c.URL()+"/connector-plugins"), &plugins); err != nil {
		t.Fatalf("decode GET /connector-plugins: %v", err)
	}
	var classes []string
	for _, p := range plugins {
		classes = append(classes, p.Class)
	}
	if !slices.Contains(classes, "org.apache.kafka.connect.file.FileStreamSourceConnector") {
		t.Fatalf("connector plugins %v lack FileStreamSourceConnector", classes)
	}

	// A FileStreamSource connector copies a file's lines into a topic, as
	// JsonConverter envelopes.
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatalf("write input: %v", err)
	}
	cfg, err := json.Marshal(map[string]any{
		"name": "file-source",
		"config": map[string]string{
			"connector.class": "FileStreamSource",
			"tasks.max":       "1",
			"file":            in,
			"topic":           "file-lines",
		},
	})
	if err != nil {
		t.Fatalf("encode connector config: %v", err)
	}
	begin := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL()+"/connectors", bytes.NewReader(cfg))
	if err != nil {
		t.Fatalf("POST /connectors: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /connectors: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /connectors: %s: %s", resp.Status, body)
	}
	var payloads []string
	for _, v := range consume(ctx, t, k.Bootstrap(), "file-lines", 3) {
		var env struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal([]byte(v), &env); err != nil {
			t.Fatalf("decode record %q: %v", v, err)
		}
		payloads = append(payloads, env.Payload)
	}
	t.Logf("FileStreamSource: 3 lines in the topic %v after creating the connector", time.Since(begin).Round(time.Millisecond))
	if want := []string{"alpha", "beta", "gamma"}; !slices.Equal(payloads, want) {
		t.Errorf("file-lines payloads = %q, want %q", payloads, want)
	}
}

// consume reads n records of topic from the start with a fresh franz-go
// consumer and returns their values.
func consume(ctx context.Context, t *testing.T, bootstrap, topic string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatalf("new consumer: %v", err)
	}
	defer cl.Close()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: got %d of %d records: %v", topic, len(got), n, err)
		}
		if err := fs.Err(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// get returns the body of a 200 answer to GET url.
func get(ctx context.Context, t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body
}

// lines splits tool output into its non-empty lines.
func lines(b []byte) []string {
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func head(s []string) []string {
	return s[:min(len(s), 3)]
}

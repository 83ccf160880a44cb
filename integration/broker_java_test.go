package integration

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

func requireJavaTools(t *testing.T) {
	t.Helper()
	if _, err := harness.FindJava(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if err := harness.CheckJars(harness.JarsDir()); err != nil {
		t.Skipf("skipping: Kafka jars unavailable: %v (run integration/fetch-jars.sh)", err)
	}
}

// TestBrokerJavaClients round-trips records through Tributary's broker with
// Kafka's own Java clients: ConsoleProducer → ConsoleConsumer,
// ConsoleProducer → franz-go, franz-go → ConsoleConsumer, and
// ProducerPerformance.
func TestBrokerJavaClients(t *testing.T) {
	t.Parallel()
	requireJavaTools(t)
	b := harness.TributaryBroker(t)
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The console consumer reads one partition by assignment (no consumer
	// group), from the earliest offset.
	consoleConsume := func(t *testing.T, topic string, partition, n int, extra ...string) []string {
		t.Helper()
		args := append([]string{"--bootstrap-server", bs, "--topic", topic,
			"--partition", strconv.Itoa(partition), "--offset", "earliest",
			"--max-messages", strconv.Itoa(n), "--timeout-ms", "60000"}, extra...)
		out, err := harness.JavaTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", args...)
		if err != nil {
			t.Fatalf("ConsoleConsumer: %v", err)
		}
		return lines(out)
	}

	t.Run("console-producer-to-console-consumer", func(t *testing.T) {
		topic := "java-console"
		createTopic(ctx, t, bs, topic, 1, nil)
		const n = 500
		var want []string
		for i := range n {
			want = append(want, fmt.Sprintf("key-%03d:java-value-%03d", i, i))
		}
		for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
			if _, err := harness.JavaToolWithInput(ctx, strings.NewReader(strings.Join(want, "\n")+"\n"),
				"org.apache.kafka.tools.ConsoleProducer",
				"--bootstrap-server", bs, "--topic", topic,
				"--compression-codec", codec,
				"--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
				"--producer-property", "acks=all"); err != nil {
				t.Fatalf("ConsoleProducer (%s): %v", codec, err)
			}
		}
		got := consoleConsume(t, topic, 0, 5*n,
			"--formatter-property", "print.key=true", "--formatter-property", "key.separator=:")
		var all []string
		for range 5 {
			all = append(all, want...)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("ConsoleConsumer printed %d lines, first %q; want %d", len(got), head(got), len(all))
		}
		// franz-go sees the same records, keys split off, and each
		// ConsoleProducer run's codec in the stored batches.
		recs := consumeRecords(ctx, t, bs, topic, 5*n)
		for i, r := range recs {
			if w := all[i]; string(r.Key)+":"+string(r.Value) != w {
				t.Fatalf("franz-go record %d = %q:%q, want %q", i, r.Key, r.Value, w)
			}
			if c, w := codecName(r.Attrs.CompressionType()), []string{"none", "gzip", "snappy", "lz4", "zstd"}[i/n]; c != w {
				t.Fatalf("record %d stored with codec %s, want %s", i, c, w)
			}
		}
	})

	t.Run("franz-go-to-console-consumer", func(t *testing.T) {
		topic := "java-from-kgo"
		createTopic(ctx, t, bs, topic, 2, nil)
		const n = 400
		want := map[int32][]string{}
		var recs []*kgo.Record
		for i := range n {
			p := int32(i % 2)
			v := fmt.Sprintf("kgo-%03d", i)
			want[p] = append(want[p], v)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
		}
		cl := newClient(t, bs, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.Lz4Compression()))
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		for p := range int32(2) {
			if got := consoleConsume(t, topic, int(p), n/2); !slices.Equal(got, want[p]) {
				t.Fatalf("partition %d: ConsoleConsumer printed %d lines, first %q; want %d, first %q", p, len(got), head(got), len(want[p]), head(want[p]))
			}
		}
	})

	t.Run("producer-performance", func(t *testing.T) {
		topic := "java-perf"
		createTopic(ctx, t, bs, topic, 3, nil)
		const n = 5000
		out, err := harness.JavaTool(ctx, "org.apache.kafka.tools.ProducerPerformance",
			"--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", "200",
			"--throughput", "-1",
			"--producer-props", "bootstrap.servers="+bs, "acks=all", "linger.ms=5", "compression.type=lz4")
		if err != nil {
			t.Fatalf("ProducerPerformance: %v\n%s", err, out)
		}
		summary := regexp.MustCompile(`(?m)^(\d+) records sent, .*$`).FindAllSubmatch(out, -1)
		if len(summary) == 0 {
			t.Fatalf("ProducerPerformance printed no summary:\n%s", out)
		}
		last := summary[len(summary)-1]
		t.Logf("ProducerPerformance: %s", last[0])
		if string(last[1]) != strconv.Itoa(n) {
			t.Fatalf("ProducerPerformance summary %q, want %d records", last[0], n)
		}
		// Every record is stored exactly once.
		adm := newAdmin(t, bs)
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatalf("list end offsets: %v", err)
		}
		var total int64
		ends.Each(func(o kadmListedOffset) { total += o.Offset })
		if total != n {
			t.Fatalf("end offsets sum to %d, want %d", total, n)
		}
		if recs := consumeRecords(ctx, t, bs, topic, n); len(recs) != n {
			t.Fatalf("consumed %d records, want %d", len(recs), n)
		}
	})
}

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// pythonWithConfluentKafka returns a python that can import confluent_kafka
// (librdkafka's Python client), or skips t.
func pythonWithConfluentKafka(t *testing.T) string {
	t.Helper()
	return harness.Python(t, "confluent_kafka")
}

// TestBrokerTxnLibrdkafka drives transactions through librdkafka: the
// confluent-kafka Python client commits, aborts and commits with a group's
// offsets (send_offsets_to_transaction); its read_committed consumer sees
// only the committed records, read_uncommitted sees all; kcat (the
// distribution's librdkafka, read_committed by default) agrees.
func TestBrokerTxnLibrdkafka(t *testing.T) {
	t.Parallel()
	py := pythonWithConfluentKafka(t)
	b := harness.TributaryBroker(t)
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createTopic(ctx, t, bs, "rdk-txn", 1, nil)

	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "txn_librdkafka.py"), bs, "rdk-txn")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("txn_librdkafka.py: %v\n%s", err, stderr.String())
	}
	var res struct {
		ReadCommitted      []string `json:"read_committed"`
		ReadUncommitted    []string `json:"read_uncommitted"`
		ETLCommittedOffset int64    `json:"etl_committed_offset"`
		ETLExpectedOffset  int64    `json:"etl_expected_offset"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("decode %q: %v", stdout.String(), err)
	}
	count := func(vs []string, prefix string) int {
		n := 0
		for _, v := range vs {
			if strings.HasPrefix(v, prefix+"-") {
				n++
			}
		}
		return n
	}
	if c, a, e := count(res.ReadCommitted, "commit"), count(res.ReadCommitted, "abort"), count(res.ReadCommitted, "etl"); c != 100 || a != 0 || e != 25 {
		t.Errorf("librdkafka read_committed: %d committed, %d aborted, %d etl; want 100, 0, 25", c, a, e)
	}
	if c, a, e := count(res.ReadUncommitted, "commit"), count(res.ReadUncommitted, "abort"), count(res.ReadUncommitted, "etl"); c != 100 || a != 50 || e != 25 {
		t.Errorf("librdkafka read_uncommitted: %d committed, %d aborted, %d etl; want 100, 50, 25", c, a, e)
	}
	if res.ETLCommittedOffset != res.ETLExpectedOffset {
		t.Errorf("offset committed with the transaction: %d, want %d", res.ETLCommittedOffset, res.ETLExpectedOffset)
	}

	if _, err := exec.LookPath("kcat"); err != nil {
		t.Log("kcat not installed (apt-get install kcat): its check is left out")
		return
	}
	out := kcat(ctx, t, "", "-b", bs, "-C", "-t", "rdk-txn", "-o", "beginning", "-e")
	got := lines([]byte(out))
	if count(got, "commit") != 100 || count(got, "abort") != 0 || count(got, "etl") != 25 {
		t.Errorf("kcat (read_committed) read %d records: %d committed, %d aborted, %d etl", len(got), count(got, "commit"), count(got, "abort"), count(got, "etl"))
	}
	out = kcat(ctx, t, "", "-b", bs, "-C", "-t", "rdk-txn", "-o", "beginning", "-e", "-X", "isolation.level=read_uncommitted")
	if got := lines([]byte(out)); count(got, "abort") != 50 {
		t.Errorf("kcat read_uncommitted: %d aborted records, want 50", count(got, "abort"))
	}
}

// TestBrokerTxnJavaClients copies records with Kafka's own Java clients in
// transactional mode (TransactionalMessageCopier: a read_committed
// consumer and a transactional producer that sends the consumed offsets
// with each transaction and aborts some of them at random), then checks
// with the Java console consumer (read_committed) and franz-go that the
// output holds every input record exactly once.
func TestBrokerTxnJavaClients(t *testing.T) {
	t.Parallel()
	requireJavaTools(t)
	b := harness.TributaryBroker(t)
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	createTopic(ctx, t, bs, "java-txn-in", 1, nil)
	createTopic(ctx, t, bs, "java-txn-out", 1, nil)
	const n = 2000
	in := newClient(t, bs, kgo.DefaultProduceTopic("java-txn-in"))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, kgo.StringRecord(strconv.Itoa(i)))
	}
	if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	out, err := harness.JavaTool(ctx, "org.apache.kafka.tools.TransactionalMessageCopier",
		"--broker-list", bs, "--input-topic", "java-txn-in", "--input-partition", "0",
		"--output-topic", "java-txn-out", "--transactional-id", "java-copier",
		"--consumer-group", "java-copier", "--group-mode", "--use-group-metadata",
		"--transaction-size", "100", "--enable-random-aborts", "--max-messages", strconv.Itoa(n))
	if err != nil {
		t.Fatalf("TransactionalMessageCopier: %v\n%s", err, out)
	}
	aborts := strings.Count(string(out), `"aborted"`) + strings.Count(string(out), "abort")
	t.Logf("TransactionalMessageCopier done (%d lines mention aborts)", aborts)

	got, err := harness.JavaTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", bs, "--topic", "java-txn-out", "--from-beginning",
		"--isolation-level", "read_committed", "--max-messages", strconv.Itoa(n), "--timeout-ms", "30000")
	if err != nil {
		t.Fatalf("ConsoleConsumer: %v", err)
	}
	check := func(who string, values []string) {
		t.Helper()
		want := make([]string, n)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		if !slices.Equal(values, want) {
			t.Errorf("%s read %d records (first %q), want 0..%d once each, in order", who, len(values), head(values), n-1)
		}
	}
	check("Java ConsoleConsumer read_committed", lines(got))
	var kv []string
	for _, r := range pollRecords(ctx, t, bs, "java-txn-out", n+1, 15*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
		kv = append(kv, string(r.Value))
	}
	check("franz-go read_committed", kv)
	all := pollRecords(ctx, t, bs, "java-txn-out", n, 15*time.Second)
	t.Logf("read_uncommitted sees %d records (aborted copies included)", len(all))

}

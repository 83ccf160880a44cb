package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMetricsBroker checks `tributary broker`'s GET /metrics after a
// workload: records and bytes in and out per topic (the names of Strimzi's
// Kafka dashboard), requests and their latency per API, no
// under-replicated partition, log sizes per partition, and a consumer
// group's lag per partition as kafka_exporter names it.
func TestMetricsBroker(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bp := harness.StartBrokerProcess(t, bin, filepath.Join(t.TempDir(), "broker"), harness.FreePort(t))
	ctx := context.Background()
	cl := newClient(t, bp.Addr())
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "metered"); err != nil {
		t.Fatal(err)
	}
	const n = 300
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "metered", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "value %d", i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A group that consumed everything and committed 100 records of each
	// partition's: its lag is the rest.
	cons, err := kgo.NewClient(kgo.SeedBrokers(bp.Addr()), kgo.ConsumeTopics("metered"), kgo.ConsumerGroup("readers"), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for got < n {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := cons.PollFetches(fctx)
		cancel()
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	ends, err := adm.ListEndOffsets(ctx, "metered")
	if err != nil {
		t.Fatal(err)
	}
	commit := map[string]map[int32]kgo.EpochOffset{"metered": {}}
	committed := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		c := min(o.Offset, 40)
		committed += c
		commit["metered"][o.Partition] = kgo.EpochOffset{Epoch: -1, Offset: c}
	})
	var commitErr error
	cons.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				if p.ErrorCode != 0 && commitErr == nil {
					commitErr = fmt.Errorf("commit %s-%d: error %d", tp.Topic, p.Partition, p.ErrorCode)
				}
			}
		}
	})
	if commitErr != nil {
		t.Fatal(commitErr)
	}

	url := bp.MetricsURL()
	check := func(what string, ok func(float64) bool, name string, kv ...string) {
		t.Helper()
		metricEventually(t, url, 15*time.Second, what, ok, name, kv...)
	}
	positive := func(v float64) bool { return v > 0 }
	check("records in", equals(n), "kafka_server_brokertopicmetrics_messagesin_total", "topic", "metered")
	check("bytes in", positive, "kafka_server_brokertopicmetrics_bytesin_total", "topic", "metered")
	check("bytes out", positive, "kafka_server_brokertopicmetrics_bytesout_total", "topic", "metered")
	check("records out", func(v float64) bool { return v >= n }, "kafka_server_brokertopicmetrics_messagesout_total", "topic", "metered")
	check("produce requests", positive, "kafka_network_requestmetrics_requests_total", "request", "Produce")
	check("produce latency", positive, "kafka_network_requestmetrics_totaltimems", "request", "Produce")
	check("fetch requests", positive, "kafka_network_requestmetrics_requests_total", "request", "Fetch")
	check("no under-replicated partition", equals(0), "kafka_server_replicamanager_underreplicatedpartitions")
	check("log size", positive, "kafka_log_log_size", "topic", "metered", "partition", "0")
	check("log end offsets", equals(n), "kafka_log_log_logendoffset", "topic", "metered")
	check("group lag", equals(float64(n-committed)), "kafka_consumergroup_lag", "consumergroup", "readers", "topic", "metered")
	check("group offsets", equals(float64(committed)), "kafka_consumergroup_current_offset", "consumergroup", "readers", "topic", "metered")
	check("a connection at least", positive, "kafka_server_socket_server_metrics_connection_count")
	fams := scrape(t, url)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "tributary_info"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

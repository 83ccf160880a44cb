package task

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/worker/metrics"
)

// metricValue scrapes m and returns the value of the series name of the
// task (connector, task 0); -1 when there is none.
func metricValue(t testing.TB, m *metrics.Connect, name, connector string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if label(s, "connector") == connector && label(s, "task") == "0" {
				switch {
				case s.Counter != nil:
					return s.GetCounter().GetValue()
				case s.Histogram != nil:
					return float64(s.GetHistogram().GetSampleCount())
				}
				return s.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestRunnerMetrics runs a FileStream source and sink through their
// runners and checks the counts Kafka Connect's groups show: records
// polled and written (source), read and put (sink), the sink's partitions
// and commits, nothing active once done.
func TestRunnerMetrics(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 2)
	m := metrics.New(metrics.Config{WorkerID: "w:8083"})

	// Source: 500 lines into topic "in".
	src := filepath.Join(t.TempDir(), "src.txt")
	writeLines(t, src, 0, 500)
	info := sdk.TaskInfo{Connector: "src", Task: 0}
	offsets := &memOffsets{}
	pt, err := loader(t).StartSourceTask(context.Background(), file.SourceClass, info,
		map[string]string{"file": src, "topic": "in", "batch.size": "50"}, offsets)
	if err != nil {
		t.Fatal(err)
	}
	sm := m.StartTask(metrics.TaskID{Connector: "src", Task: 0}, metrics.Source)
	r, err := NewSource(SourceConfig{Info: info, Task: pt, Key: jsonConv(t, false), Value: stringConv(t),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets, FlushInterval: 20 * time.Millisecond,
		Logger: quietLogger(), Metrics: sm})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	consumeAll(t, addr, "in", 500)
	waitFor(t, 10*time.Second, "500 records written", func() bool {
		return metricValue(t, m, "kafka_connect_source_task_source_record_write_total", "src") == 500
	})
	if got := metricValue(t, m, "kafka_connect_source_task_source_record_poll_total", "src"); got != 500 {
		t.Errorf("poll total %v, want 500", got)
	}
	if got := metricValue(t, m, "kafka_connect_connector_task_batch_size_max", "src"); got <= 0 || got > 500 {
		t.Errorf("batch size max %v", got)
	}
	waitFor(t, 10*time.Second, "an offset commit", func() bool {
		return metricValue(t, m, "kafka_connect_connector_task_offset_commit_max_time_ms", "src") >= 0
	})
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}

	// Sink: the 500 records into a file.
	out := filepath.Join(t.TempDir(), "out.txt")
	km := m.StartTask(metrics.TaskID{Connector: "snk", Task: 0}, metrics.Sink)
	sr, _, _ := startFileSink(t, addr, "snk", 0, out, func(c *SinkConfig) { c.Metrics = km; c.LagInterval = 50 * time.Millisecond })
	waitFor(t, 15*time.Second, "500 records put", func() bool {
		return metricValue(t, m, "kafka_connect_sink_task_sink_record_send_total", "snk") == 500
	})
	waitFor(t, 15*time.Second, "nothing active", func() bool {
		return metricValue(t, m, "kafka_connect_sink_task_sink_record_active_count", "snk") == 0 &&
			metricValue(t, m, "kafka_connect_sink_task_offset_commit_completion_total", "snk") > 0
	})
	for name, want := range map[string]float64{
		"kafka_connect_sink_task_sink_record_read_total": 500,
		"kafka_connect_sink_task_partition_count":        2,
	} {
		if got := metricValue(t, m, name, "snk"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metricValue(t, m, "kafka_connect_sink_task_offset_commit_seq_no", "snk"); got < 1 {
		t.Errorf("commit seq no %v", got)
	}
	// Beyond Kafka: the sink's lag per partition, caught up, and the
	// records' end-to-end latency.
	waitFor(t, 10*time.Second, "sink lag 0 on both partitions", func() bool {
		return sinkLag(t, m) == 0
	})
	if got := metricValue(t, m, "tributary_sink_e2e_latency_seconds", "snk"); got <= 0 {
		t.Errorf("no end-to-end latency sample: %v", got)
	}
	if err := sr.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// sinkLag sums tributary_sink_lag_records of the sink task snk-0; -1
// when there are not its two partitions.
func sinkLag(t testing.TB, m *metrics.Connect) float64 {
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "tributary_sink_lag_records" {
			if len(f.GetMetric()) != 2 {
				return -1
			}
			sum := 0.0
			for _, s := range f.GetMetric() {
				sum += s.GetGauge().GetValue()
			}
			return sum
		}
	}
	return -1
}

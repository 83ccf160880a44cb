package integration

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// readGolden reads a golden list of worker/metrics/testdata.
func readGolden(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "worker", "metrics", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// jvmOnly reports whether a golden series is the JVM's or the JMX
// exporter's own: a Go process has go_* series instead.
func jvmOnly(line string) bool {
	name := strings.Fields(line)[1]
	return strings.HasPrefix(name, "jvm_") || strings.HasPrefix(name, "jmx_")
}

// shape splits "TYPE name{a,b=c}" into its type and name and labels.
func shape(line string) (typ, name string, labels []string) {
	f := strings.Fields(line)
	i := strings.IndexByte(f[1], '{')
	name = f[1][:i]
	if in := strings.TrimSuffix(f[1][i+1:], "}"); in != "" {
		labels = strings.Split(in, ",")
	}
	return f[0], name, labels
}

// covers reports whether one of ours has the golden line's type and name
// and every one of its labels (ours may have more, with extra true: the
// worker adds connector and task to a plugin's series).
func covers(ours []string, golden string, extra bool) bool {
	gt, gn, gl := shape(golden)
	for _, o := range ours {
		ot, on, ol := shape(o)
		if on != gn || ot != gt {
			continue
		}
		if !extra && len(ol) != len(gl) {
			continue
		}
		ok := true
		for _, l := range gl {
			ok = ok && slices.Contains(ol, l)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestMetricsSeriesMatchKafkaConnect runs the pipeline of the golden lists
// (FileStream source and sink, the PostgreSQL source after a snapshot, a
// FileStream sink of its topic) on a Tributary worker per naming style and
// requires every series a real Kafka Connect 4.4 exports for it through the
// Prometheus JMX exporter, with Strimzi's and with Confluent's rules
// (testdata of worker/metrics, written by TestKafkaConnectMetricsGolden),
// to exist with the same type, name and labels, but for the JVM's own
// (jvm_*, jmx_*: Go's are go_*); and every Debezium series Debezium's
// PostgreSQL connector exports through the exporter's Debezium rules
// (Confluent's include them), with the connector and task labels the
// worker adds.
func TestMetricsSeriesMatchKafkaConnect(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL, a broker and two workers")
	}
	pg := harness.StartPostgresT(t)
	pg.Exec(t, metricsPipelineSchema)
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	for i, style := range []struct{ naming, golden string }{
		{"strimzi", "kafka-connect-4.4.strimzi.txt"},
		{"confluent", "kafka-connect-4.4.confluent.txt"},
	} {
		t.Run(style.naming, func(t *testing.T) {
			props := harness.WorkerProps(t, bootstrap, "golden-"+style.naming, map[string]string{"tributary.metrics.naming": style.naming})
			w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"), props)
			r := rest{t, w.URL()}
			pipeline := metricsPipeline(t, pg, fmt.Sprintf("trib%d", i))
			for name, cfg := range pipeline {
				r.must("POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
			}
			for name := range pipeline {
				r.waitState(name, "RUNNING", 1)
			}
			metricEventually(t, w.URL(), time.Minute, "the snapshot", equals(1), "debezium_metrics_SnapshotCompleted")
			// The sinks' first lag readings (every 5 s), and a few offset commits.
			metricEventually(t, w.URL(), time.Minute, "lag readings", func(v float64) bool { return !math.IsNaN(v) },
				"tributary_sink_lag_records", "connector", "pg-out")
			time.Sleep(2 * time.Second)
			ours := seriesShapes(scrape(t, w.URL()))
			var missing []string
			for _, g := range readGolden(t, style.golden) {
				// Confluent's rules include Debezium's: those series are
				// the plugin's, with the worker's connector and task labels.
				plugin := strings.Contains(g, " debezium_metrics_")
				if !jvmOnly(g) && !covers(ours, g, plugin) {
					missing = append(missing, g)
				}
			}
			// Debezium's own rules file names Kafka Connect's worker
			// groups a third way (kafka_connect_worker_metrics_*), which
			// Tributary does not serve: only its Debezium series count.
			if style.naming == "strimzi" {
				for _, g := range readGolden(t, "kafka-connect-4.4.debezium.txt") {
					if !jvmOnly(g) && strings.Contains(g, "debezium_metrics_") && !covers(ours, g, true) {
						missing = append(missing, g)
					}
				}
			}
			if len(missing) > 0 {
				t.Errorf("%d series of Kafka Connect's are missing:\n  %s", len(missing), strings.Join(missing, "\n  "))
			}
		})
	}
}

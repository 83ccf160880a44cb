package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tributary-dev/tributary/integration/harness"
)

// goldenRulesDir holds the JMX exporter rules files users run Kafka
// Connect with, copied unchanged from their projects (each file's header
// says from where): strimzi.yml (the metrics-config.yml of Strimzi's
// packaging/examples/metrics/kafka-connect-metrics.yaml), confluent.yml
// (confluentinc/jmx-monitoring-stacks' shared-assets/jmx-exporter/kafka_connect.yml)
// and debezium.yml (debezium/debezium-examples'
// monitoring/debezium-jmx-exporter/config.yml). TRIBUTARY_METRICS_RULES
// names another directory of the same three files.
var goldenRulesDir = filepath.Join("testdata", "jmx-exporter")

// goldenStyles are the rules files and the golden lists they produce.
var goldenStyles = []struct{ rules, golden string }{
	{"strimzi.yml", "kafka-connect-4.4.strimzi.txt"},
	{"confluent.yml", "kafka-connect-4.4.confluent.txt"},
	{"debezium.yml", "kafka-connect-4.4.debezium.txt"},
}

// TestKafkaConnectMetricsGolden checks the golden lists of series in
// worker/metrics/testdata against the real thing: it runs a Kafka
// Connect 4.4 worker with the Prometheus JMX exporter's agent once per
// rules file, the pipeline of TestMetricsSeriesMatchKafkaConnect
// (FileStream source and sink, Debezium 3.6.1's PostgreSQL source after a
// snapshot, a sink of its topic), scrapes each agent and keeps every
// series' type, name and label names (with the values of the labels that
// name a state or a kind). Every series it sees must be in the golden
// list, which TestMetricsSeriesMatchKafkaConnect requires of Tributary:
// so every series Kafka Connect exports for the pipeline, Tributary
// exports. A series the golden list has and a run did not show (some
// appear only after a rebalance or a retry) is logged. With
// TRIBUTARY_UPDATE_GOLDEN=1 the lists are rewritten as the union of the
// golden and the run's.
func TestKafkaConnectMetricsGolden(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: runs Kafka Connect with the JMX exporter three times")
	}
	rulesDir := goldenRulesDir
	if d := os.Getenv("TRIBUTARY_METRICS_RULES"); d != "" {
		rulesDir = d
	}
	if _, err := harness.JMXExporterAgent(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	harness.RequireDebezium(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, metricsPipelineSchema)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	update := os.Getenv("TRIBUTARY_UPDATE_GOLDEN") != ""
	// One worker per rules file: the agent registers its own series in
	// one registry per JVM, so a second agent in the same JVM fails.
	for i, s := range goldenStyles {
		t.Run(s.rules, func(t *testing.T) {
			kc := harness.KafkaConnect(t, bootstrap, harness.WithJMXExporter(filepath.Join(rulesDir, s.rules)))
			r := rest{t, kc.URL()}
			pipeline := metricsPipeline(t, pg, fmt.Sprintf("gold%d", i))
			for name, cfg := range pipeline {
				r.must("POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
			}
			for name := range pipeline {
				r.waitState(name, "RUNNING", 1)
			}
			time.Sleep(15 * time.Second) // the snapshot, streaming, a few offset commits
			lines := scrapeSeries(t, kc.MetricsURLs()[0])
			if raw := os.Getenv("TRIBUTARY_METRICS_RAW"); raw != "" {
				resp, err := http.Get(kc.MetricsURLs()[0])
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					os.WriteFile(filepath.Join(raw, s.golden), b, 0o644)
				}
			}
			var golden []string
			path := filepath.Join("..", "worker", "metrics", "testdata", s.golden)
			if _, err := os.Stat(path); err == nil || !update {
				golden = readGolden(t, s.golden)
			}
			var missing []string
			for _, l := range lines {
				if !slices.Contains(golden, l) {
					missing = append(missing, l)
				}
			}
			for _, g := range golden {
				if !slices.Contains(lines, g) {
					t.Logf("%s: in the golden list, not in this run: %s", s.golden, g)
				}
			}
			if !update {
				if len(missing) > 0 {
					t.Errorf("Kafka Connect exports %d series the golden list %s lacks (Tributary need not have them yet); rewrite it with TRIBUTARY_UPDATE_GOLDEN=1, then make Tributary export them:\n%s",
						len(missing), s.golden, strings.Join(missing, "\n"))
				}
				return
			}
			all := append(golden, missing...)
			slices.Sort(all)
			header := fmt.Sprintf("# The series of a Kafka Connect 4.4 worker running the pipeline of TestMetricsSeriesMatchKafkaConnect,\n"+
				"# exported by the Prometheus JMX exporter with the rules of integration/testdata/jmx-exporter/%s;\n"+
				"# checked and written by TestKafkaConnectMetricsGolden (TRIBUTARY_UPDATE_GOLDEN=1).\n", s.rules)
			if err := os.WriteFile(path, []byte(header+strings.Join(all, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d series (%d new)", path, len(all), len(missing))
		})
	}
}

// metricsPipelineSchema is the table the pipeline's PostgreSQL source
// snapshots.
const metricsPipelineSchema = `CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 100) i`

// metricsPipeline is the pipeline the metrics tests run on Kafka Connect
// and on Tributary: a FileStream source and sink, a PostgreSQL source
// (Debezium's class name, which Tributary serves too) over pg's table
// items, and a FileStream sink of its topic. id makes the names of the
// Postgres objects unique.
func metricsPipeline(t *testing.T, pg *harness.Postgres, id string) map[string]map[string]string {
	dir := filepath.Join(os.TempDir(), "tributary-metrics-"+id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.txt")
	if _, err := os.Stat(in); err != nil {
		var b strings.Builder
		for i := range 50 {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pgc := pgConnectorConfig(pg, id, "public.items")
	pgc["tasks.max"] = "1"
	return map[string]map[string]string{
		"files-in":  {"connector.class": "FileStreamSource", "file": in, "topic": id + "-lines"},
		"files-out": {"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": id + "-lines"},
		"pg":        pgc,
		"pg-out":    {"connector.class": "FileStreamSink", "file": filepath.Join(dir, "pg-out.txt"), "topics": id + ".public.items"},
	}
}

// valueLabels are the labels whose values a golden list keeps: they name
// a state or a kind, and dashboards select on them.
var valueLabels = map[string]bool{"status": true, "connector_type": true, "context": true, "plugin": true}

// scrapeSeries reads url's Prometheus text and returns one line per
// distinct series shape, sorted: "TYPE name{label,label=value,...}".
func scrapeSeries(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	families, err := parseMetrics(body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return seriesShapes(families)
}

// parseMetrics parses Prometheus text exposition.
func parseMetrics(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(strings.NewReader(string(body)))
}

// seriesShapes returns one "TYPE name{labels}" line per distinct shape.
func seriesShapes(families map[string]*dto.MetricFamily) []string {
	seen := map[string]bool{}
	for name, f := range families {
		typ := strings.ToLower(f.GetType().String())
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if valueLabels[l.GetName()] {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				} else {
					labels = append(labels, l.GetName())
				}
			}
			slices.Sort(labels)
			seen[typ+" "+name+"{"+strings.Join(labels, ",")+"}"] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

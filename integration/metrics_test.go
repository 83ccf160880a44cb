package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-dev/tributary/integration/harness"
)

// rulesFile is the alerting rules Tributary ships, dashboardFile its
// Grafana dashboard.
var (
	rulesFile     = filepath.Join("..", "docker", "monitoring", "tributary-rules.yml")
	dashboardFile = filepath.Join("..", "docker", "monitoring", "grafana", "tributary-connect.json")
)

// dashboardPanel is a panel of the Grafana dashboard with its queries,
// the dashboard's variables ($job, $connector) set to match anything.
type dashboardPanel struct {
	title string
	exprs []string
}

func dashboardPanels(t *testing.T) []dashboardPanel {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	vars := strings.NewReplacer("$job", ".*", "$connector", ".*")
	var out []dashboardPanel
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		dp := dashboardPanel{title: p.Title}
		for _, tg := range p.Targets {
			dp.exprs = append(dp.exprs, vars.Replace(tg.Expr))
		}
		if len(dp.exprs) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		out = append(out, dp)
	}
	if d.UID == "" || len(out) < 30 {
		t.Fatalf("%s: uid %q, %d panels", dashboardFile, d.UID, len(out))
	}
	return out
}

// promEventually runs expr until check accepts its result, for up to
// within; it fails the test with the last result otherwise.
func promEventually(t *testing.T, p *harness.Prometheus, within time.Duration, expr string, check func([]harness.Sample) bool) []harness.Sample {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := p.Query(context.Background(), expr)
		if err == nil && check(got) {
			return got
		}
		if time.Now().After(deadline) {
			targets, _ := p.Targets(context.Background())
			t.Fatalf("Prometheus: %s = %v (err %v) after %v; targets %v", expr, got, err, within, targets)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// scalarIs accepts a one-sample result equal to want.
func scalarIs(want float64) func([]harness.Sample) bool {
	return func(s []harness.Sample) bool { return len(s) == 1 && s[0].Value == want }
}

// hostPort is a worker URL's host:port, a scrape target.
func hostPort(t *testing.T, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// TestMetricsPrometheus runs a real Prometheus (Debian's prometheus
// package) against two workers running a FileStream pipeline, a PostgreSQL
// source, an S3 sink and a sink whose task fails, with the alert rules of
// docker/monitoring, and checks the queries of Strimzi's Kafka Connect
// dashboard and alerts: the connector and task counts, the task states,
// the records written equal to those in the topics, the failed task
// visible through kafka_connect_connector_task_status{status="failed"},
// and the failed-task alert firing (its for: 5m shortened to 2 s).
func TestMetricsPrometheus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts Prometheus, PostgreSQL, versitygw and two workers")
	}
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	pg := harness.StartPostgresT(t)
	s3 := harness.VersityGW(t, "lake")
	pg.Exec(t, `CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 150) i`)
	cluster := newWorkerCluster(t, bin, bootstrap, "metrics", 2, nil)
	prom := harness.StartPrometheusT(t, harness.PrometheusConfig{
		Targets:   []string{hostPort(t, cluster.rest(0).url), hostPort(t, cluster.rest(1).url)},
		RuleFiles: []string{rulesFile}, Shorten: 2 * time.Second,
	})

	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var lines strings.Builder
	for i := range 200 {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	id := pgID("prom")
	pgc := pgConnectorConfig(pg, id, "public.items")
	lake := map[string]string{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": id + ".public.items",
		"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "50"}
	maps.Copy(lake, s3.SinkConfig("lake"))
	connectors := map[string]map[string]string{
		"files-in":  {"connector.class": "FileStreamSource", "file": in, "topic": "prom-lines"},
		"files-out": {"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "prom-lines"},
		"pg":        pgc,
		"lake":      lake,
		// A file in a directory that does not exist: the task fails.
		"broken": {"connector.class": "FileStreamSink", "file": filepath.Join(dir, "missing", "out.txt"), "topics": "prom-lines"},
	}
	r := cluster.rest(0)
	for name, cfg := range connectors {
		r.must("POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
	}
	for name := range connectors {
		if name != "broken" {
			r.waitState(name, "RUNNING", 1)
		}
	}
	waitFor(t, "the broken task FAILED", func() bool {
		s, _ := r.status("broken")
		return len(s.Tasks) == 1 && s.Tasks[0].State == "FAILED"
	})

	// Strimzi's dashboard, overview and workers rows.
	const within = 60 * time.Second
	promEventually(t, prom, within, `sum(kafka_connect_worker_connector_count)`, scalarIs(5))
	promEventually(t, prom, within, `sum(kafka_connect_worker_task_count)`, scalarIs(5))
	promEventually(t, prom, within, `sum(kafka_connect_coordinator_assigned_connectors)`, scalarIs(5))
	promEventually(t, prom, within, `sum(kafka_connect_coordinator_assigned_tasks)`, scalarIs(5))
	promEventually(t, prom, within, `sum(kafka_connect_worker_rebalance_rebalancing)`, scalarIs(0))
	// Connectors and tasks row: the task states.
	promEventually(t, prom, within, `sum(kafka_connect_worker_connector_running_task_count)`, scalarIs(4))
	promEventually(t, prom, within, `sum(kafka_connect_worker_connector_failed_task_count)`, scalarIs(1))
	promEventually(t, prom, within, `sum(kafka_connect_worker_connector_paused_task_count) + sum(kafka_connect_worker_connector_unassigned_task_count) + sum(kafka_connect_worker_connector_destroyed_task_count)`, scalarIs(0))
	promEventually(t, prom, within, `kafka_connect_connector_task_status{connector="broken",status="failed"}`, scalarIs(1))
	// The "Connector Status" table: status joined with class and type.
	promEventually(t, prom, within, `count(kafka_connect_connector_status * on(connector) group_left(connector_class) kafka_connect_connector_connector_class * on(connector) group_left(connector_type) kafka_connect_connector_connector_type)`, scalarIs(5))
	// The "Connector Task Status" table.
	promEventually(t, prom, within, `count(kafka_connect_task_error_total_record_failures * on(connector,task) group_left(status) kafka_connect_connector_task_status)`, scalarIs(5))

	// Records written equal the records in the topics.
	adm := kadm.NewClient(newClient(t, bootstrap))
	topicRecords := func(topic string) float64 {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return float64(n)
	}
	promEventually(t, prom, within, `sum(kafka_connect_source_task_source_record_write_total{connector="files-in"})`, scalarIs(200))
	if n := topicRecords("prom-lines"); n != 200 {
		t.Errorf("prom-lines holds %v records, the source wrote 200", n)
	}
	promEventually(t, prom, within, `sum(kafka_connect_source_task_source_record_write_total{connector="pg"})`, scalarIs(150))
	if n := topicRecords(id + ".public.items"); n != 150 {
		t.Errorf("%s.public.items holds %v records, the source wrote 150", id, n)
	}
	promEventually(t, prom, within, `sum(kafka_connect_sink_task_sink_record_send_total{connector="files-out"})`, scalarIs(200))
	promEventually(t, prom, within, `sum(kafka_connect_sink_task_sink_record_read_total{connector="lake"})`, scalarIs(150))

	// Beyond Kafka: the sinks' lag per partition goes to 0 once they caught
	// up, their end offsets being the records in the topics.
	promEventually(t, prom, within, `sum(tributary_sink_end_offset{connector="files-out"})`, scalarIs(200))
	promEventually(t, prom, within, `sum(tributary_sink_lag_records{connector="files-out"})`, scalarIs(0))
	promEventually(t, prom, within, `sum(tributary_sink_lag_records{connector="lake"})`, scalarIs(0))
	promEventually(t, prom, within, `sum(tributary_sink_e2e_latency_seconds_count{connector="files-out"}) > 0`, func(s []harness.Sample) bool { return len(s) == 1 })
	// The overview row's client series.
	positive := func(s []harness.Sample) bool { return len(s) == 1 && s[0].Value > 0 }
	promEventually(t, prom, within, `sum(kafka_producer_outgoing_byte_total)`, positive)
	promEventually(t, prom, within, `sum(kafka_consumer_incoming_byte_total)`, positive)
	promEventually(t, prom, within, `sum(kafka_admin_client_connection_count) + sum(kafka_producer_connection_count) + sum(kafka_consumer_connection_count)`, positive)

	// The plugins' own series: Debezium's of the PostgreSQL source, the S3
	// sink's (150 records in files of 50).
	promEventually(t, prom, within, `sum(debezium_metrics_RowsScanned{connector="pg",context="snapshot"})`, scalarIs(150))
	promEventually(t, prom, within, `debezium_metrics_SnapshotCompleted{connector="pg",plugin="postgres",name="`+id+`"}`, scalarIs(1))
	promEventually(t, prom, within, `debezium_metrics_Connected{connector="pg",context="streaming"}`, scalarIs(1))
	promEventually(t, prom, within, `sum(tributary_s3_records_uploaded_total{connector="lake"})`, scalarIs(150))
	promEventually(t, prom, within, `sum(tributary_s3_files_committed_total{connector="lake"})`, scalarIs(3))
	promEventually(t, prom, within, `sum(tributary_s3_rotations_total{connector="lake",reason="flush_size"})`, scalarIs(3))
	promEventually(t, prom, within, `sum(tributary_s3_upload_duration_seconds_count{connector="lake"})`, scalarIs(3))
	promEventually(t, prom, within, `sum(tributary_s3_upload_errors_total{connector="lake"})`, func(s []harness.Sample) bool {
		return len(s) == 0 || s[0].Value == 0
	})

	// Strimzi's alerts: the failed task's fires; no connector failed.
	waitFor(t, "ConnectFailedTask firing", func() bool {
		alerts, err := prom.Alerts(context.Background())
		if err != nil {
			return false
		}
		for _, a := range alerts {
			if a.Labels["alertname"] == "ConnectFailedTask" && a.State == "firing" {
				return true
			}
		}
		return false
	})
	alerts, _ := prom.Alerts(context.Background())
	for _, a := range alerts {
		if a.Labels["alertname"] == "ConnectFailedConnector" || a.Labels["alertname"] == "ConnectWorkerDown" {
			t.Errorf("alert %s %s: %v", a.Labels["alertname"], a.State, a.Labels)
		}
	}

	// Every panel of the dashboard shows something: each of its queries is
	// valid PromQL, and one at least has a result.
	for _, p := range dashboardPanels(t) {
		deadline := time.Now().Add(within)
		for {
			var errs []error
			results := 0
			for _, e := range p.exprs {
				got, err := prom.Query(context.Background(), e)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", e, err))
				}
				results += len(got)
			}
			if len(errs) > 0 {
				t.Errorf("dashboard panel %q: %v", p.title, errs)
				break
			}
			if results > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("dashboard panel %q: no query has a result: %q", p.title, p.exprs)
				break
			}
			time.Sleep(time.Second)
		}
	}

	// Deleting the broken connector removes its series: the alert resolves.
	r.must("DELETE", "/connectors/broken", nil, 204)
	promEventually(t, prom, within, `sum(kafka_connect_worker_connector_failed_task_count)`, func(s []harness.Sample) bool {
		return len(s) == 0 || s[0].Value == 0
	})
	promEventually(t, prom, within, `count(kafka_connect_connector_task_status{connector="broken"})`, func(s []harness.Sample) bool { return len(s) == 0 })
}

package integration

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tributary-dev/tributary/integration/harness"
)

// scrape reads a worker's GET /metrics.
func scrape(t *testing.T, workerURL string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(workerURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s: %s", resp.Status, body)
	}
	fams, err := parseMetrics(body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sumOf adds the values of the series of name whose labels include kv
// (name=value pairs), the sample counts of summaries and histograms; NaN
// when there is none.
func sumOf(fams map[string]*dto.MetricFamily, name string, kv ...string) float64 {
	f := fams[name]
	if f == nil {
		return math.NaN()
	}
	sum, n := 0.0, 0
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(kv); i += 2 {
			ok := false
			for _, l := range m.GetLabel() {
				ok = ok || l.GetName() == kv[i] && l.GetValue() == kv[i+1]
			}
			if !ok {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		case m.Summary != nil: // its sample count
			sum += float64(m.GetSummary().GetSampleCount())
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		default:
			continue
		}
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return sum
}

// metricEventually scrapes the worker until check accepts the sum of the
// series name{kv}.
func metricEventually(t *testing.T, workerURL string, within time.Duration, what string, check func(float64) bool, name string, kv ...string) float64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v := sumOf(scrape(t, workerURL), name, kv...)
		if check(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s%v = %v after %v", what, name, kv, v, within)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func equals(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// TestMetricsDebezium checks the PostgreSQL source's Debezium series as
// users' dashboards and alerts read them: after a snapshot of N rows
// RowsScanned sums to N and SnapshotCompleted is 1; streamed changes are
// counted; Connected is 0 while PostgreSQL is down and 1 again after it
// came back; MilliSecondsBehindSource grows while the connector is paused
// and changes wait, and falls back once it resumed and caught up. The
// slot's lag in bytes, wal_status and activity are there too, and no
// secret of the connector's configuration appears in any series.
func TestMetricsDebezium(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts PostgreSQL and a worker, and stops PostgreSQL")
	}
	const n = 1234
	pg := harness.StartPostgresT(t)
	// A password no series name contains, to look for it in /metrics.
	const secret = "Vq7-zebra-p4ss"
	pg.Exec(t, `ALTER USER postgres PASSWORD '`+secret+`'`)
	pg.Password = secret
	pg.Exec(t, fmt.Sprintf(`CREATE TABLE items (id int PRIMARY KEY, name text);
		INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, %d) i;
		CREATE TABLE other (id int PRIMARY KEY); INSERT INTO other SELECT generate_series(1, 66)`, n))
	_, r, w, _ := startWorker(t, "dbzmetrics", nil)
	id := pgID("dbzm")
	cfg := pgConnectorConfig(pg, id, "public.items,public.other")
	cfg["tasks.max"] = "1"
	r.must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	r.waitState("pg", "RUNNING", 1)
	url := w.URL()
	sel := []string{"connector", "pg", "task", "0", "plugin", "postgres", "name", id}
	with := func(kv ...string) []string { return append(append([]string{}, sel...), kv...) }

	// The snapshot.
	metricEventually(t, url, time.Minute, "snapshot completed", equals(1), "debezium_metrics_SnapshotCompleted", with("context", "snapshot")...)
	fams := scrape(t, url)
	for name, want := range map[string]float64{
		"debezium_metrics_RowsScanned":             n + 66,
		"debezium_metrics_TotalNumberOfEventsSeen": n + 66,
		"debezium_metrics_RemainingTableCount":     0,
		"debezium_metrics_TotalTableCount":         2,
		"debezium_metrics_SnapshotRunning":         0,
		"debezium_metrics_SnapshotAborted":         0,
	} {
		if got := sumOf(fams, name, with("context", "snapshot")...); got != want {
			t.Errorf("%s{context=snapshot} = %v, want %v", name, got, want)
		}
	}
	if got := sumOf(fams, "debezium_metrics_RowsScanned", with("table", "public.items")...); got != n {
		t.Errorf("RowsScanned{table=public.items} = %v, want %d", got, n)
	}

	// Streaming.
	metricEventually(t, url, time.Minute, "connected", equals(1), "debezium_metrics_Connected", with("context", "streaming")...)
	pg.Exec(t, `INSERT INTO items VALUES (100001, 'a'), (100002, 'b'); UPDATE items SET name = 'c' WHERE id = 1; DELETE FROM items WHERE id = 2`)
	metricEventually(t, url, time.Minute, "4 changes streamed", equals(4), "debezium_metrics_TotalNumberOfEventsSeen", with("context", "streaming")...)
	fams = scrape(t, url)
	for name, want := range map[string]float64{
		"debezium_metrics_TotalNumberOfCreateEventsSeen": 2, "debezium_metrics_TotalNumberOfUpdateEventsSeen": 1,
		"debezium_metrics_TotalNumberOfDeleteEventsSeen": 1, "debezium_metrics_NumberOfCommittedTransactions": 1,
	} {
		if got := sumOf(fams, name, with("context", "streaming")...); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := sumOf(fams, "debezium_metrics_MilliSecondsBehindSource", with("context", "streaming")...); got < 0 || got > 10000 {
		t.Errorf("MilliSecondsBehindSource while streaming = %v", got)
	}
	metricEventually(t, url, 30*time.Second, "slot active", equals(1), "tributary_postgres_slot_active", "connector", "pg", "slot_name", "slot_"+id)
	if got := sumOf(scrape(t, url), "tributary_postgres_slot_wal_status", "connector", "pg", "wal_status", "reserved"); got != 1 {
		t.Errorf("wal_status reserved = %v", got)
	}
	if got := sumOf(scrape(t, url), "tributary_postgres_slot_lag_bytes", "connector", "pg"); math.IsNaN(got) || got < 0 {
		t.Errorf("slot lag bytes = %v", got)
	}

	// Paused: the changes wait, MilliSecondsBehindSource grows.
	r.must("PUT", "/connectors/pg/pause", nil, 202)
	r.waitState("pg", "PAUSED", 1)
	ctx := context.Background()
	conn := pgConn(t, pg)
	for i := range 60 {
		// Many small transactions: the few batches the plugin and the
		// worker buffer fill up, and the rest wait in the task's queue.
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO items SELECT g, repeat('x', 200) FROM generate_series(%d, %d) g`, 200000+i*100, 200000+i*100+99)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	behind1 := metricEventually(t, url, 30*time.Second, "changes waiting 3 s", func(v float64) bool { return v >= 3000 },
		"debezium_metrics_MilliSecondsBehindSource", with("context", "streaming")...)
	time.Sleep(2 * time.Second)
	behind2 := sumOf(scrape(t, url), "debezium_metrics_MilliSecondsBehindSource", with("context", "streaming")...)
	if behind2 < behind1+1500 {
		t.Errorf("MilliSecondsBehindSource did not grow while paused: %v, then %v 2 s later", behind1, behind2)
	}
	if got := sumOf(scrape(t, url), "debezium_metrics_QueueRemainingCapacity", with("context", "streaming")...); got != 0 {
		t.Logf("queue remaining capacity while paused: %v", got)
	}
	// Resumed: the backlog goes out; a change made now is seconds behind at
	// most.
	r.must("PUT", "/connectors/pg/resume", nil, 202)
	r.waitState("pg", "RUNNING", 1)
	metricEventually(t, url, time.Minute, "the backlog streamed", func(v float64) bool { return v >= 4+6000 },
		"debezium_metrics_TotalNumberOfEventsSeen", with("context", "streaming")...)
	pg.Exec(t, `INSERT INTO items VALUES (300001, 'after')`)
	metricEventually(t, url, time.Minute, "caught up", func(v float64) bool { return v < 2000 },
		"debezium_metrics_MilliSecondsBehindSource", with("context", "streaming")...)
	if got := sumOf(scrape(t, url), "debezium_metrics_MilliSecondsBehindSourceMaxValue", with("context", "streaming")...); got < behind2 {
		t.Errorf("MilliSecondsBehindSourceMaxValue = %v, below the %v seen while paused", got, behind2)
	}

	// PostgreSQL down: Connected 0; back: 1.
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	metricEventually(t, url, time.Minute, "disconnected", equals(0), "debezium_metrics_Connected", with("context", "streaming")...)
	if err := pg.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	metricEventually(t, url, 2*time.Minute, "connected again", equals(1), "debezium_metrics_Connected", with("context", "streaming")...)

	// No secret in any series.
	if strings.Contains(scrapeText(t, url), secret) {
		t.Errorf("/metrics holds the database password")
	}
}

// scrapeText returns a worker's /metrics as text.
func scrapeText(t *testing.T, workerURL string) string {
	t.Helper()
	resp, err := http.Get(workerURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

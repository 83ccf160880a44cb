package console

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tributary-dev/tributary/restapi/console"
)

// TestConsoleLogic runs the console's pure helpers (logic.js) in Chromium,
// served by the console's handler alone: the holistic states, the order
// of the list, secret masking that keeps references, the trace's telling
// line and the metrics parser.
func TestConsoleLogic(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(console.Handler())
	t.Cleanup(srv.Close)
	b := newBrowser(t, srv.URL)
	b.run(chromedp.Navigate(srv.URL + "/ui/"))
	var got map[string]any
	const script = `import('./logic.js').then((L) => {
  const st = (c, ...tasks) => ({ connector: { state: c }, tasks: tasks.map((s, id) => ({ id, state: s })) });
  const pw = new Set(['database.password']);
  const batch = {
    ok: { status: st('RUNNING', 'RUNNING'), info: { config: { 'connector.class': 'A' } } },
    half: { status: st('RUNNING', 'RUNNING', 'FAILED'), info: { config: {} } },
    dead: { status: st('RUNNING', 'FAILED'), info: { config: {} } },
    held: { status: st('PAUSED', 'PAUSED'), info: { config: {} } },
  };
  return JSON.stringify({
    healthy: L.holistic(st('RUNNING', 'RUNNING', 'RUNNING')),
    degraded: L.holistic(st('RUNNING', 'RUNNING', 'FAILED')),
    failedTasks: L.holistic(st('RUNNING', 'FAILED', 'FAILED')),
    failedConnector: L.holistic(st('FAILED')),
    paused: L.holistic(st('PAUSED', 'PAUSED')),
    stopped: L.holistic(st('STOPPED')),
    restarting: L.holistic(st('RUNNING', 'RESTARTING')),
    order: L.rows(batch).map((r) => r.name).join(','),
    literal: L.masked('database.password', 'hunter2', pw),
    reference: L.masked('database.password', '${file:/etc/db.properties:password}', pw),
    plain: L.masked('database.user', 'alice', pw),
    unmasked: L.unmask({ 'database.password': L.MASK, x: 'y' }, { 'database.password': 'hunter2' })['database.password'],
    caused: L.firstLine('org.apache.kafka.connect.errors.ConnectException: boom\n\tat X\nCaused by: java.io.IOException: disk full\n\tat Y'),
    first: L.firstLine('open: file sink: no such file\ngoroutine 1'),
    metric: L.parseMetrics('# HELP x\nkafka_connect_worker_rebalance_leader_name{leader_name="http://a:8083/"} 1\nup 0\n')[0].labels.leader_name,
    snapshot: L.describeSnapshot(L.snapshot(L.parseMetrics([
      'debezium_metrics_SnapshotRunning{connector="c",task="0",context="snapshot"} 1',
      'debezium_metrics_TotalTableCount{connector="c",task="0",context="snapshot"} 3',
      'debezium_metrics_RemainingTableCount{connector="c",task="0",context="snapshot"} 1',
      'debezium_metrics_RowsScanned{connector="c",task="0",context="snapshot",table="public.a"} 1000',
      'debezium_metrics_RowsScanned{connector="c",task="0",context="snapshot",table="public.b"} 234',
      'debezium_metrics_SnapshotDurationInSeconds{connector="c",task="0",context="snapshot"} 12.4',
      'debezium_metrics_SnapshotRunning{connector="other",task="0",context="snapshot"} 0',
    ].join('\n')), 'c')),
    done: L.describeSnapshot(L.snapshot(L.parseMetrics('debezium_metrics_SnapshotCompleted{connector="c",context="snapshot"} 1\ndebezium_metrics_TotalTableCount{connector="c",context="snapshot"} 1\ndebezium_metrics_RowsScanned{connector="c",context="snapshot",table="t"} 5\n'), 'c')),
    none: L.describeSnapshot(L.snapshot(L.parseMetrics('debezium_metrics_SnapshotRunning{connector="x",context="snapshot"} 1\n'), 'c')),
    rate: L.throughput(L.parseMetrics('kafka_connect_source_task_source_record_poll_rate{connector="c",task="0"} 2.5\nkafka_connect_source_task_source_record_poll_rate{connector="c",task="1"} 1.5\n'), 'c').rate,
  });
})`
	var s string
	b.run(chromedp.Evaluate(script, &s, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"healthy": "healthy", "degraded": "degraded", "failedTasks": "failed", "failedConnector": "failed",
		"paused": "paused", "stopped": "stopped", "restarting": "restarting",
		"order":   "dead,half,held,ok",
		"literal": "••••••••", "reference": "${file:/etc/db.properties:password}", "plain": "alice", "unmasked": "hunter2",
		"caused": "java.io.IOException: disk full", "first": "open: file sink: no such file",
		"metric": "http://a:8083/", "rate": 4.0,
		"snapshot": "running: 2 of 3 table(s) done, 1,234 rows scanned, 12 s so far",
		"done":     "completed: 5 rows from 1 table(s) in 0 s",
		"none":     "no snapshot metrics on this worker",
	} {
		if got[k] != want {
			t.Errorf("%s: %v, want %v", k, got[k], want)
		}
	}
}

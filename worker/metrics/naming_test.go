package metrics

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tributary-dev/tributary/internal/stats"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for the tests.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time      { return c.now }
func (c *clock) add(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock               { return &clock{now: t0} }
func gather(t *testing.T, c *Connect) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// valueLabels are the labels whose values the golden lists keep (as
// integration's TestKafkaConnectMetricsGolden writes them).
var valueLabels = map[string]bool{"status": true, "connector_type": true, "context": true, "plugin": true}

// shapes is integration's seriesShapes: "TYPE name{labels}" per series.
func shapes(fams map[string]*dto.MetricFamily) map[string]bool {
	out := map[string]bool{}
	for name, f := range fams {
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
			out[typ+" "+name+"{"+strings.Join(labels, ",")+"}"] = true
		}
	}
	return out
}

// golden reads a golden list of testdata.
func golden(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
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

// goldenPipeline makes the sets of the golden lists' pipeline: two
// sources and two sinks, running, after some work.
func goldenPipeline(cl *clock, style Style) *Connect {
	c := New(Config{Style: style, Window: stats.DefaultWindow, WorkerID: "127.0.0.1:8083", Version: "4.4.0", Commit: "abc", Now: cl.Now})
	c.RebalanceStarted()
	cl.add(10 * time.Millisecond)
	c.RebalanceCompleted(3, "sessioned", "http://127.0.0.1:8083/", 4, 4)
	for _, x := range []struct {
		name string
		kind Kind
	}{{"files-in", Source}, {"files-out", Sink}, {"pg", Source}, {"pg-out", Sink}} {
		c.SetConnector(x.name, x.kind, "org.example.C", "1.0")
		c.SetConnectorState(x.name, "RUNNING")
		c.ConnectorStartup(true)
		t := c.StartTask(TaskID{x.name, 0}, x.kind)
		c.SetTaskState(TaskID{x.name, 0}, "RUNNING")
		c.TaskStartup(true)
		t.RecordPoll(10, time.Millisecond)
		t.RecordWrite(10, 0)
		t.RecordRead(10)
		t.RecordPut(10, time.Millisecond)
		t.RecordCommit(time.Millisecond, true)
	}
	cl.add(time.Second)
	return c
}

// connectGroup reports whether a golden line is of Kafka Connect's own
// groups (what Connect exports), not of its clients' network metrics.
func connectGroup(line string, style Style) bool {
	name := strings.Fields(line)[1]
	name = name[:strings.IndexByte(name, '{')]
	if style == Confluent {
		return strings.HasPrefix(name, "kafka_connect_") && !strings.HasPrefix(name, "kafka_connect_connect_metrics_") &&
			(!strings.HasPrefix(name, "kafka_connect_connect_coordinator_metrics_") || strings.Contains(name, "_assigned_"))
	}
	switch {
	case strings.HasPrefix(name, "kafka_connect_worker_"), strings.HasPrefix(name, "kafka_connect_connector_"),
		strings.HasPrefix(name, "kafka_connect_source_task_"), strings.HasPrefix(name, "kafka_connect_sink_task_"),
		strings.HasPrefix(name, "kafka_connect_task_error_"), strings.HasPrefix(name, "kafka_connect_coordinator_assigned_"),
		name == "kafka_connect_start_time_seconds", name == "kafka_connect_version", name == "kafka_connect_commit_id":
		return true
	}
	return false
}

// beyondKafka are the series Tributary adds to Kafka Connect's groups.
var beyondKafka = map[string]bool{
	"gauge kafka_connect_sink_task_sink_record_lag_max{connector,task}":                true,
	"untyped kafka_connect_sink_task_metrics_sink_record_lag_max{connector,task}":      true,
	"gauge kafka_connect_connector_task_status{connector,status=running,task}":         false, // in the golden list
	"untyped kafka_connect_connector_task_metrics_sink_record_lag_max{connector,task}": true,
}

// TestSeriesMatchGolden checks the names, types and labels of the Connect
// groups' series against those a real Kafka Connect 4.4 worker exports
// through the JMX exporter with Strimzi's and Confluent's rules
// (testdata, written by integration's TestKafkaConnectMetricsGolden):
// every golden series of those groups is made, and nothing else but
// Tributary's additions.
func TestSeriesMatchGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		style  Style
		golden string
	}{{Strimzi, "kafka-connect-4.4.strimzi.txt"}, {Confluent, "kafka-connect-4.4.confluent.txt"}} {
		t.Run("style="+tc.style.String(), func(t *testing.T) {
			got := shapes(gather(t, goldenPipeline(newClock(), tc.style)))
			want := map[string]bool{}
			for _, l := range golden(t, tc.golden) {
				if connectGroup(l, tc.style) {
					want[l] = true
				}
			}
			if len(want) < 50 {
				t.Fatalf("only %d golden lines of Connect's groups in %s", len(want), tc.golden)
			}
			for l := range want {
				if !got[l] {
					t.Errorf("missing %s", l)
				}
			}
			for l := range got {
				if !want[l] && !beyondKafka[l] && !strings.Contains(l, " tributary_") {
					t.Errorf("not in Kafka Connect's series: %s", l)
				}
			}
		})
	}
}

func TestJMXQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"files-in":                       "files-in",
		"a b.c%d_e":                      "a b.c%d_e",
		"127.0.0.1:8083":                 `"127.0.0.1:8083"`,
		"a->b.MirrorSourceConnector":     `"a->b.MirrorSourceConnector"`,
		`q"*?\`:                          `"q\"\*\?\\"`,
		"line\nbreak":                    `"line\nbreak"`,
		"connect-127.0.0.1:8083":         `"connect-127.0.0.1:8083"`,
		"ünïcode":                        `"ünïcode"`,
		"connector-consumer-files-out-0": "connector-consumer-files-out-0",
	} {
		if got := jmxQuote(in); got != want {
			t.Errorf("jmxQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	for attr, want := range map[string]string{
		"source-record-active-count-max":   "source-record-active-count",
		"poll-batch-max-time-ms":           "poll-batch-max-time-ms",
		"offset-commit-seq-no":             "offset-commit-seq-no",
		"batch-size-max":                   "batch-size-max",
		"offset-commit-success-percentage": "",
	} {
		got, ok := capture(attr, strimziTaskGauges)
		if got != want || ok != (want != "") {
			t.Errorf("capture(%s) = %q %v, want %q", attr, got, ok, want)
		}
	}
}

// value returns the one value of the family name whose labels include kv.
func valueOf(t *testing.T, fams map[string]*dto.MetricFamily, name string, kv ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i < len(kv); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || l.GetName() == kv[i] && l.GetValue() == kv[i+1]
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		default:
			return m.GetUntyped().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, kv)
	return math.NaN()
}

package metrics

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// SeriesDoc describes one series a worker serves: what the README's
// list of series is generated from.
type SeriesDoc struct {
	// Name is the series' name with Strimzi's naming (the default);
	// Confluent its name with Confluent's ("" when that style has none).
	Name, Confluent string
	Type            string // counter, gauge, untyped, histogram
	Labels          []string
	Help            string
}

// extraDocs are the series the worker adds beyond Kafka Connect's, for
// sink tasks (sinklag.go).
var extraDocs = []struct {
	d    *prometheus.Desc
	name string
	typ  string
}{
	{descSinkLag, "tributary_sink_lag_records", "gauge"},
	{descSinkEnd, "tributary_sink_end_offset", "gauge"},
	{descSinkCommitted, "tributary_sink_committed_offset", "gauge"},
	{descE2E, "tributary_sink_e2e_latency_seconds", "histogram"},
}

// Describe lists every series of Kafka Connect's groups and of the Kafka
// clients that a worker serves, with both namings, taken from an example
// worker that runs a source task and a sink task: the same code as a
// scrape's, so the list cannot drift from it.
func Describe() []SeriesDoc {
	c := New(Config{WorkerID: "w:8083", Version: "v", Commit: "c", Now: time.Now})
	c.Client(ClientConnect, c.ClientID()).OnBrokerE2E(kgo.BrokerMetadata{NodeID: 1}, keyJoin, kgo.BrokerE2E{})
	c.Client(ClientAdmin, "w-shared-admin").OnBrokerE2E(kgo.BrokerMetadata{NodeID: 1}, keyMetadata, kgo.BrokerE2E{})
	c.SetConnector("src", Source, "C", "1")
	c.SetConnectorState("src", StateRunning)
	src := c.StartTask(TaskID{"src", 0}, Source)
	c.SetTaskState(TaskID{"src", 0}, "RUNNING")
	p := src.Client(ClientProducer, "connector-producer-src-0")
	p.OnBrokerE2E(kgo.BrokerMetadata{NodeID: 1}, keyProduce, kgo.BrokerE2E{})
	p.OnProduceBatchWritten(kgo.BrokerMetadata{NodeID: 1}, "t", 0, kgo.ProduceBatchMetrics{NumRecords: 1})
	snk := c.StartTask(TaskID{"snk", 0}, Sink)
	c.SetTaskState(TaskID{"snk", 0}, "RUNNING")
	cons := snk.Client(ClientConsumer, "connector-consumer-snk-0")
	cons.OnBrokerE2E(kgo.BrokerMetadata{NodeID: 1}, keyFetch, kgo.BrokerE2E{})
	cons.OnFetchBatchRead(kgo.BrokerMetadata{NodeID: 1}, "t", 0, kgo.FetchBatchMetrics{NumRecords: 1})
	cons.Lag("t", 0, 0, 0)

	type key struct{ name, labels string }
	seen := map[key]bool{}
	var out []SeriesDoc
	w := &writer{descs: &descCache{}, seen: func(b bean, attr string, v value, help string) {
		a, okA := Strimzi.name(b, attr, v, help)
		bs, okB := Confluent.name(b, attr, v, help)
		if !okA && !okB {
			return
		}
		d := SeriesDoc{Help: help}
		if okA {
			d.Name, d.Type, d.Labels = a.name, typeName(a.typ), a.labels
		}
		if okB {
			d.Confluent = bs.name
			if !okA {
				d.Type, d.Labels = typeName(bs.typ), bs.labels
			}
		}
		k := key{d.Name + "/" + d.Confluent, strings.Join(d.Labels, ",")}
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, d)
	}}
	c.collect(w, time.Now())
	for _, e := range extraDocs {
		s := e.d.String() // the one way to read a Desc's help and labels
		out = append(out, SeriesDoc{Name: e.name, Confluent: e.name, Type: e.typ, Labels: descLabels(s), Help: descHelp(s)})
	}
	sortKey := func(d SeriesDoc) string {
		if d.Name != "" {
			return d.Name
		}
		return d.Confluent
	}
	slices.SortStableFunc(out, func(x, y SeriesDoc) int {
		return strings.Compare(sortKey(x), sortKey(y))
	})
	return out
}

func typeName(t prometheus.ValueType) string {
	switch t {
	case prometheus.CounterValue:
		return "counter"
	case prometheus.GaugeValue:
		return "gauge"
	}
	return "untyped"
}

// descHelp and descLabels read a Desc's String(), Desc{fqName: "…",
// help: "…", unit: "…", constLabels: {}, variableLabels: {a,b}}, whose
// strings are Go-quoted.
func descHelp(s string) string {
	i := strings.Index(s, "help: ")
	if i < 0 {
		return ""
	}
	q, err := strconv.QuotedPrefix(s[i+len("help: "):])
	if err != nil {
		return ""
	}
	help, _ := strconv.Unquote(q)
	return help
}

func descLabels(s string) []string {
	i := strings.Index(s, "variableLabels: {")
	if i < 0 {
		return nil
	}
	rest := s[i+len("variableLabels: {"):]
	j := strings.IndexByte(rest, '}')
	if j <= 0 {
		return nil
	}
	return strings.Split(rest[:j], ",")
}

package mongodb

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/tributary-dev/tributary/connectors/internal/cdcmetrics"
	"github.com/tributary-dev/tributary/sdk"
)

// taskMetrics are Debezium's MongoDB metrics: the snapshot and streaming
// attributes every Debezium connector has (cdcmetrics), and MongoDB's
// NumberOfDisconnects and NumberOfPrimaryElections.
type taskMetrics struct {
	*cdcmetrics.Metrics
	disconnects map[string]*sdk.Gauge // by context
	elections   *sdk.Gauge

	mu      sync.Mutex
	primary string // the replica set's primary as last seen
}

func newTaskMetrics(reg *sdk.Metrics, prefix string) *taskMetrics {
	m := &taskMetrics{Metrics: cdcmetrics.New(reg, "mongodb", prefix, time.Now), disconnects: map[string]*sdk.Gauge{}}
	for _, ctx := range []string{"snapshot", "streaming"} {
		m.disconnects[ctx] = reg.Untyped("debezium_metrics_NumberOfDisconnects", "The number of times the connector lost its connection to the server (a failed read it retries).",
			"plugin", "name", "context").With("mongodb", prefix, ctx)
	}
	m.elections = reg.Untyped("debezium_metrics_NumberOfPrimaryElections", "The number of times the replica set's primary changed while the task ran.",
		"plugin", "name", "context").With("mongodb", prefix, "streaming")
	return m
}

// MetricsDoc lists the families a task registers (their series carry the
// connector and task labels the worker adds too): what Tributary's
// README's list of series is generated from.
func MetricsDoc() []sdk.MetricFamily {
	reg := sdk.NewMetrics()
	newTaskMetrics(reg, "<topic.prefix>")
	return reg.Families()
}

// disconnected counts a lost connection in the context the task is in.
func (m *taskMetrics) disconnected(snapshot bool) {
	if m == nil {
		return
	}
	ctx := "streaming"
	if snapshot {
		ctx = "snapshot"
	}
	m.disconnects[ctx].Add(1)
}

// monitor is the client's server monitor: it counts changes of primary.
func (m *taskMetrics) monitor() *event.ServerMonitor {
	return &event.ServerMonitor{TopologyDescriptionChanged: func(e *event.TopologyDescriptionChangedEvent) {
		primary := ""
		for _, s := range e.NewDescription.Servers {
			if s.Kind == "RSPrimary" {
				primary = s.Addr.String()
			}
		}
		if primary == "" {
			return
		}
		m.mu.Lock()
		changed := m.primary != "" && m.primary != primary
		m.primary = primary
		m.mu.Unlock()
		if changed {
			m.elections.Add(1)
		}
	}}
}

// opOf is a change stream event's kind, as Debezium counts it.
func opOf(op string) cdcmetrics.Op {
	switch op {
	case "insert":
		return cdcmetrics.Create
	case "update", "replace":
		return cdcmetrics.Update
	case "delete":
		return cdcmetrics.Delete
	}
	return 0
}

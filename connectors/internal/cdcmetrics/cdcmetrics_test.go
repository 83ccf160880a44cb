package cdcmetrics

import (
	"math"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// values returns the snapshot's values by name and context (and table).
func values(reg *sdk.Metrics) map[string]float64 {
	out := map[string]float64{}
	for _, f := range reg.Snapshot() {
		for _, m := range f.Metrics {
			k := f.Name
			for i, l := range f.LabelNames {
				if l == "context" || l == "table" {
					k += "/" + m.LabelValues[i]
				}
			}
			out[k] = m.Value
		}
	}
	return out
}

func TestSnapshotAndStreaming(t *testing.T) {
	t.Parallel()
	c := &clock{time.Unix(1_700_000_000, 0)}
	reg := sdk.NewMetrics()
	m := New(reg, "postgres", "cdc", c.now)
	m.Queue(reg, "postgres", "cdc", 4)
	m.SnapshotStarted([]string{"public.a", "public.b"})
	a, b := m.TableRows("postgres", "cdc", "public.a"), m.TableRows("postgres", "cdc", "public.b")
	for range 3 {
		m.SnapshotRow(a)
	}
	m.SnapshotTableDone()
	m.SnapshotRow(b)
	c.t = c.t.Add(2500 * time.Millisecond)
	v := values(reg)
	for k, want := range map[string]float64{
		"debezium_metrics_RowsScanned/snapshot/public.a":        3,
		"debezium_metrics_RowsScanned/snapshot/public.b":        1,
		"debezium_metrics_TotalNumberOfEventsSeen/snapshot":     4,
		"debezium_metrics_SnapshotRunning/snapshot":             1,
		"debezium_metrics_RemainingTableCount/snapshot":         1,
		"debezium_metrics_TotalTableCount/snapshot":             2,
		"debezium_metrics_SnapshotDurationInSeconds/snapshot":   2,
		"debezium_metrics_MilliSecondsSinceLastEvent/snapshot":  2500,
		"debezium_metrics_MilliSecondsSinceLastEvent/streaming": -1,
		"debezium_metrics_QueueRemainingCapacity/streaming":     4,
	} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
	m.SnapshotCompleted()
	m.SetConnected(true)
	m.Event(Create)
	m.Event(Update)
	m.Event(Delete)
	m.Committed()
	v = values(reg)
	for k, want := range map[string]float64{
		"debezium_metrics_SnapshotCompleted/snapshot":              1,
		"debezium_metrics_SnapshotRunning/snapshot":                0,
		"debezium_metrics_Connected/streaming":                     1,
		"debezium_metrics_TotalNumberOfEventsSeen/streaming":       3,
		"debezium_metrics_TotalNumberOfCreateEventsSeen/streaming": 1,
		"debezium_metrics_NumberOfCommittedTransactions/streaming": 1,
	} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
}

// TestBehindSource: the lag of the batches Poll hands out, and while
// batches wait (a paused worker stops polling), the age of the oldest.
func TestBehindSource(t *testing.T) {
	t.Parallel()
	c := &clock{time.Unix(1_700_000_000, 0)}
	reg := sdk.NewMetrics()
	m := New(reg, "postgres", "cdc", c.now)
	m.Queue(reg, "postgres", "cdc", 4)
	behind := func() float64 { return values(reg)["debezium_metrics_MilliSecondsBehindSource/streaming"] }
	if got := behind(); got != -1 {
		t.Errorf("before any event: %v, want -1", got)
	}
	m.Queued(c.t.Add(-200 * time.Millisecond))
	m.Delivered()
	if got := behind(); got != 200 {
		t.Errorf("after a batch 200 ms old: %v", got)
	}
	m.Queued(time.Time{}) // a heartbeat batch: no source time
	m.Queued(c.t)
	if got := values(reg)["debezium_metrics_QueueRemainingCapacity/streaming"]; got != 2 {
		t.Errorf("remaining capacity %v, want 2", got)
	}
	c.t = c.t.Add(5 * time.Second) // nobody polls
	if got := behind(); got != 5000 {
		t.Errorf("while a batch waits 5 s: %v", got)
	}
	m.Delivered()
	m.Delivered()
	c.t = c.t.Add(time.Second)
	if got := behind(); got != 5000 {
		t.Errorf("after delivering it: %v, want its lag, 5000", got)
	}
	m.Queued(c.t.Add(-10 * time.Millisecond))
	m.Delivered()
	if got := behind(); got != 10 {
		t.Errorf("caught up: %v, want 10", got)
	}
	v := values(reg)
	if v["debezium_metrics_MilliSecondsBehindSourceMaxValue/streaming"] != 5000 || v["debezium_metrics_MilliSecondsBehindSourceMinValue/streaming"] != 10 {
		t.Errorf("min/max: %v", v)
	}
}

func TestSketchQuantiles(t *testing.T) {
	t.Parallel()
	var s sketch
	for i := 1; i <= 1000; i++ {
		s.add(float64(i))
	}
	for q, want := range map[float64]float64{0.5: 500, 0.95: 950, 0.99: 990} {
		got := s.quantile(q)
		if math.Abs(got-want)/want > 0.02 {
			t.Errorf("q%v = %v, want %v within 2%%", q, got, want)
		}
	}
}

func TestNilRecordsNothing(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.SnapshotStarted(nil)
	m.SnapshotRow(m.TableRows("p", "n", "t"))
	m.Event(Create)
	m.Queued(time.Now())
	m.Delivered()
	m.Requeued()
}

package store

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// FuzzApplyRecords hands arbitrary records to the three stores, as another
// worker, a newer version or a broken tool may have written them: no record
// may panic a store (which would stop the worker at start-up, for good),
// and what a store shows must stay consistent.
func FuzzApplyRecords(f *testing.F) {
	f.Add(byte(0), []byte("connector-a"), []byte(`{"properties":{"connector.class":"X"}}`))
	f.Add(byte(0), []byte("connector-a"), []byte(`{"properties":{"n":1}}`))
	f.Add(byte(0), []byte("target-state-a"), []byte(`{"state.v2":"SUSPENDED"}`))
	f.Add(byte(0), []byte("task-a-0"), []byte(`{"properties":{}}`))
	f.Add(byte(0), []byte("commit-a"), []byte(`{"tasks":-1}`))
	f.Add(byte(0), []byte("restart-connector-a"), []byte(`x`))
	f.Add(byte(1), []byte("status-connector-a"), []byte(`{"state":"RUNNING","worker_id":"w"}`))
	f.Add(byte(1), []byte("status-task-a-x"), []byte(`{}`))
	f.Add(byte(1), []byte("status-topic-t:connector-a"), []byte(`{}`))
	f.Add(byte(2), []byte(`["a",{"f":"x"}]`), []byte(`{"position":1}`))
	f.Add(byte(2), []byte(`["a",{"f":{"x":1}}]`), []byte(`[1]`))
	f.Add(byte(2), []byte(`["a",7]`), []byte(nil))
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, which byte, key, value []byte) {
		r := &kgo.Record{Topic: "t", Key: key, Value: value, Offset: 3}
		switch which % 3 {
		case 0:
			s := newConfigStore(log, func(ConfigEvent) {})
			s.apply(r)
			s.apply(&kgo.Record{Topic: "t", Key: []byte("connector-a"), Value: []byte(`{"properties":{"connector.class":"X"}}`), Offset: 4})
			s.apply(r)
			snap := s.Snapshot()
			for name := range snap.Problems {
				if _, ok := snap.Connectors[name]; !ok {
					t.Fatalf("a problem for %q, which is not listed", name)
				}
			}
			for name := range snap.Tasks {
				if _, ok := snap.Connectors[name]; !ok && strings.HasPrefix(string(key), "connector-") {
					t.Fatalf("tasks of %q, which is gone", name)
				}
			}
		case 1:
			s := newStatusStore(log)
			s.apply(r)
			s.Snapshot()
			for _, n := range s.Connectors() {
				s.Tasks(n)
				s.Topics(n)
			}
		case 2:
			s := newOffsetStore(log)
			s.apply(r)
			for c := range s.data {
				if s.Problem(c) != "" && len(s.data[c]) > 0 && len(s.bad[c]) == 0 {
					t.Fatal("a problem without a bad record")
				}
			}
			for c := range s.bad {
				if s.Problem(c) == "" {
					t.Fatalf("a bad record of %q without a problem", c)
				}
			}
		}
	})
}

// Records a store cannot apply mark their connector (Problems, a FAILED
// status, an offsets Problem) instead of vanishing, and the next good
// record of the same key clears the mark.
func TestUnreadableRecords(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	rec := func(key, value string, off int64) *kgo.Record {
		r := &kgo.Record{Topic: "t", Key: []byte(key), Offset: off}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}

	var changed []string // connectors whose events said their Problem changed
	cs := newConfigStore(log, func(ev ConfigEvent) {
		if ev.ProblemChanged {
			changed = append(changed, ev.Connector)
		}
	})
	cs.apply(rec("connector-a", `{"properties":`, 0))
	cs.apply(rec("connector-b", `{"properties":{"connector.class":"X"}}`, 1))
	cs.apply(rec("target-state-b", `{"state":"PAUSED","state.v2":"SUSPENDED"}`, 2))
	snap := cs.Snapshot()
	if !strings.Contains(snap.Problems["a"], "config record (offset 0") || snap.Connectors["a"] == nil {
		t.Fatalf("a: %q %v", snap.Problems["a"], snap.Connectors["a"])
	}
	if !strings.Contains(snap.Problems["b"], `unknown target state "SUSPENDED"`) || snap.TargetStates["b"] != TargetStarted {
		t.Fatalf("b: %q %v", snap.Problems["b"], snap.TargetStates["b"])
	}
	cs.apply(rec("connector-a", `{"properties":{"connector.class":"X"}}`, 3))
	cs.apply(rec("target-state-b", `{"state":"PAUSED","state.v2":"PAUSED"}`, 4))
	if snap := cs.Snapshot(); len(snap.Problems) != 0 || snap.TargetStates["b"] != TargetPaused {
		t.Fatalf("after good records: %v %v", snap.Problems, snap.TargetStates)
	}
	cs.apply(rec("commit-a", `{"tasks":0}`, 5))
	if strings.Join(changed, ",") != "a,b,a,b" {
		t.Fatalf("Problem changes announced for %v, want a,b,a,b (for a rebalance)", changed)
	}

	ss := newStatusStore(log)
	ss.apply(rec("status-connector-a", `not json`, 5))
	if st, _ := ss.Connector("a"); st.State != StateFailed || !strings.Contains(st.Trace, "cannot be read") {
		t.Fatalf("status %+v", st)
	}

	offs := newOffsetStore(log)
	offs.apply(rec(`["a",{"f":"x"}]`, `[1,2]`, 6))
	if p := offs.Problem("a"); !strings.Contains(p, "the offset is not a JSON object") {
		t.Fatalf("offsets problem %q", p)
	}
	offs.apply(rec(`["a",{"f":"x"}]`, `{"position":1}`, 7))
	if p := offs.Problem("a"); p != "" || len(offs.data["a"]) != 1 {
		t.Fatalf("after a good record: %q %v", p, offs.data["a"])
	}
}

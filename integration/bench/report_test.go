package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func rate(recsPerSec float64) *Rate {
	return &Rate{Records: 1000, Bytes: 100_000, Seconds: 1000 / recsPerSec, RecordsPerSec: recsPerSec, MBPerSec: recsPerSec * 100 / 1e6}
}

func result(t Target, prod, cons float64) Result {
	var r Result
	r.Target = t
	r.setRuns([]*Rate{rate(prod)}, []*Rate{rate(cons)})
	return r
}

func TestNewRate(t *testing.T) {
	r := newRate(Workload{RecordSize: 1000, Records: 50_000}, 2*time.Second)
	if r.RecordsPerSec != 25_000 || r.MBPerSec != 25 || r.Bytes != 50_000_000 || r.Seconds != 2 {
		t.Errorf("newRate = %+v", r)
	}
}

func TestComputeRatios(t *testing.T) {
	rep := newReport([]Workload{{RecordSize: 100, Partitions: 1, Records: 1000, Runs: 1}}, AllTargets, "none")
	w := &rep.Workloads[0]
	w.Results = []Result{
		result(Tributary, 300, 1000),
		result(KfakeMemory, 500, 900),
		result(KfakeSync, 150, 800),
		result(KafkaDurable, 400, 700),
	}
	rep.compute()
	want := []struct {
		ratio float64
		met   bool
	}{
		{2.0, true},   // produce 300/150 >= 1.5
		{0.75, false}, // produce 300/400 < 1
		{1000.0 / 900, true},
	}
	if len(w.Ratios) != len(want) {
		t.Fatalf("%d ratios, want %d", len(w.Ratios), len(want))
	}
	for i, ra := range w.Ratios {
		if ra.Ratio == nil || ra.Met == nil {
			t.Fatalf("ratio %d (%s) not computed: %s", i, ra.Goal, ra.Note)
		}
		if math.Abs(*ra.Ratio-want[i].ratio) > 1e-9 || *ra.Met != want[i].met {
			t.Errorf("ratio %d (%s) = %.3f met=%v, want %.3f met=%v", i, ra.Goal, *ra.Ratio, *ra.Met, want[i].ratio, want[i].met)
		}
	}
	if rep.AllMet {
		t.Error("AllMet with a missed goal")
	}

	// Exactly at the threshold counts as met.
	w.Results[3] = result(KafkaDurable, 300, 700)
	rep.compute()
	if !rep.AllMet {
		t.Errorf("AllMet = false with every goal met: %+v", w.Ratios)
	}
}

func TestMissingFiguresAreNotMet(t *testing.T) {
	rep := newReport([]Workload{{RecordSize: 100, Partitions: 6, Records: 1000, Runs: 1}}, AllTargets, "none")
	w := &rep.Workloads[0]
	failed := result(KfakeSync, 100, 100)
	failed.Error = "run 1: produce: boom"
	w.Results = []Result{result(Tributary, 300, 1000), result(KfakeMemory, 500, 900), failed}
	rep.setTargetError(KafkaDurable, errors.Join(ErrSkipped, errors.New("no java")))
	rep.compute()
	if rep.AllMet {
		t.Error("AllMet with figures missing")
	}
	if w.Ratios[0].Ratio != nil || !strings.Contains(w.Ratios[0].Note, "kfake-sync") {
		t.Errorf("ratio against a failed target: %+v", w.Ratios[0])
	}
	if w.Ratios[1].Met != nil || !strings.Contains(w.Ratios[1].Note, "kafka-durable") {
		t.Errorf("ratio against a missing target: %+v", w.Ratios[1])
	}
	if w.Ratios[2].Met == nil || !*w.Ratios[2].Met {
		t.Errorf("consume ratio: %+v", w.Ratios[2])
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, s := range []string{
		"100 B records, 6 partitions",
		"kafka-durable NOT RUN: skipped:",
		"kfake-sync failed: run 1: produce: boom",
		"n/a (no kafka-durable figure)",
		"consume tributary/kfake-memory >= 1.0x:",
		"1.11x  met",
		"1 goal checks met, 0 missed, 2 not decidable",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not round-trip: %v\n%s", err, js.String())
	}
	if len(back.Workloads) != 1 || len(back.Workloads[0].Ratios) != 3 || back.TargetErrors[KafkaDurable] == "" {
		t.Errorf("JSON lost data:\n%s", js.String())
	}
}

func TestMedianAndSpread(t *testing.T) {
	runs := []*Rate{rate(300), rate(100), rate(200)}
	if m := median(runs); m.RecordsPerSec != 200 {
		t.Errorf("median = %v, want 200", m.RecordsPerSec)
	}
	if s := spread(runs); s != 1 { // (300-100)/200
		t.Errorf("spread = %v, want 1", s)
	}
	if runs[0].RecordsPerSec != 300 {
		t.Error("median reordered its input")
	}
	if m := median(runs[:2]); m.RecordsPerSec != 100 { // lower middle
		t.Errorf("median of two = %v, want 100", m.RecordsPerSec)
	}
	if median(nil) != nil || spread(runs[:1]) != 0 {
		t.Error("median/spread of too few runs")
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("kafka-durable, tributary")
	if err != nil || len(got) != 2 || got[0] != Tributary || got[1] != KafkaDurable {
		t.Errorf("ParseTargets = %v, %v; want run order [tributary kafka-durable]", got, err)
	}
	if got, err := ParseTargets("all"); err != nil || len(got) != len(AllTargets) {
		t.Errorf("ParseTargets(all) = %v, %v", got, err)
	}
	if _, err := ParseTargets("redpanda"); err == nil {
		t.Error("unknown target accepted")
	}
}

func TestDefaultsAndFormatting(t *testing.T) {
	if n := DefaultRecords(100); n != 1_000_000 {
		t.Errorf("DefaultRecords(100) = %d", n)
	}
	if n := DefaultRecords(1024); n != 262_144 {
		t.Errorf("DefaultRecords(1024) = %d", n)
	}
	for v, want := range map[float64]string{0: "0", 999.6: "1,000", 1234567: "1,234,567", 100: "100", -4321: "-4,321"} {
		if got := group(v); got != want {
			t.Errorf("group(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTxnGoals(t *testing.T) {
	rep := newReport([]Workload{{RecordSize: 1024, Partitions: 6, Records: 1000, Runs: 1, TxnEvery: 100}}, []Target{Tributary, Kafka, KafkaDurable}, "none")
	rep.Txn = true
	w := &rep.Workloads[0]
	w.Results = []Result{result(Tributary, 300, 900), result(KafkaDurable, 100, 700)}
	w.Results[0].Produce.setCPU(2 * time.Millisecond)
	rep.compute()
	if len(w.Ratios) != 2 || w.Ratios[0].Goal != TxnGoals[0] || *w.Ratios[0].Ratio != 3 || !*w.Ratios[0].Met || *w.Ratios[1].Met {
		t.Fatalf("transactional ratios %+v", w.Ratios)
	}
	if got := w.Results[0].Produce.CPUSecondsPerRecord; math.Abs(got-2e-6) > 1e-12 {
		t.Errorf("CPU seconds per record %g, want 2e-6", got)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "a transaction every 100 records, read_committed") || !strings.Contains(b.String(), "CPU µs/rec") {
		t.Errorf("text report lacks the transactional workload or CPU column:\n%s", b.String())
	}
}

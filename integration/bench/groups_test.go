package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStatsOf(t *testing.T) {
	if _, ok := statsOf(nil); ok {
		t.Error("statsOf(nil) ok")
	}
	s, _ := statsOf([]float64{7.5, 5.2, 6.1})
	if s != (Stats{Median: 6.1, Min: 5.2, Max: 7.5}) {
		t.Errorf("stats = %+v", s)
	}
	s, _ = statsOf([]float64{4, 1, 3, 2}) // even count: lower middle
	if s.Median != 2 || s.Min != 1 || s.Max != 4 {
		t.Errorf("stats = %+v", s)
	}
}

func TestRebalanceGoal(t *testing.T) {
	for _, c := range []struct {
		runs []float64
		err  string
		met  bool
	}{
		{[]float64{5.5, 6.2, 7.9}, "", true},
		{[]float64{5.5, 8.0}, "", true}, // exactly at the goal
		{[]float64{5.5, 8.01}, "", false},
		{[]float64{5.5}, "run 2: timeout", false},
	} {
		r := &RebalanceResult{Target: Tributary, Error: c.err}
		for _, s := range c.runs {
			r.Runs = append(r.Runs, RebalanceRun{Seconds: s, AssignedSeconds: s - 0.1})
		}
		g := &GroupReport{Rebalance: []*RebalanceResult{r, {Target: KfakeMemory, Error: "boom"}}}
		g.compute()
		if g.GoalMet == nil || *g.GoalMet != c.met || r.Met == nil || *r.Met != c.met {
			t.Errorf("runs %v err %q: GoalMet=%v Met=%v, want %v", c.runs, c.err, g.GoalMet, r.Met, c.met)
		}
		if !g.Failed() {
			t.Error("Failed() = false with a failed target")
		}
	}
	// No tributary figure: undecided, and the report's AllMet is false.
	rep := newReport(nil, []Target{KfakeMemory}, "none")
	rep.Groups = &GroupReport{Rebalance: []*RebalanceResult{{Target: KfakeMemory, Runs: []RebalanceRun{{Seconds: 5}}}}}
	rep.compute()
	if rep.Groups.GoalMet != nil || rep.AllMet {
		t.Errorf("GoalMet=%v AllMet=%v without a tributary run", rep.Groups.GoalMet, rep.AllMet)
	}
	// Groups only, goal met: AllMet.
	rep = newReport(nil, []Target{Tributary}, "none")
	rep.Groups = &GroupReport{Rebalance: []*RebalanceResult{{Target: Tributary, Runs: []RebalanceRun{{Seconds: 5}}}}}
	rep.compute()
	if !rep.AllMet {
		t.Error("AllMet = false with the rebalance goal met and no workloads")
	}
	// Workload goals still count.
	rep = newReport([]Workload{{RecordSize: 100, Partitions: 1, Records: 1000, Runs: 1}}, AllTargets, "none")
	rep.Workloads[0].Results = []Result{result(Tributary, 100, 100), result(KfakeSync, 100, 100)}
	rep.Groups = &GroupReport{Rebalance: []*RebalanceResult{{Target: Tributary, Runs: []RebalanceRun{{Seconds: 5}}}}}
	rep.compute()
	if rep.AllMet {
		t.Error("AllMet = true with workload goals missed")
	}
}

func TestGroupStable(t *testing.T) {
	m := func(consuming bool, ps ...int32) memberSnapshot {
		return memberSnapshot{Owned: ps, Consuming: consuming}
	}
	for _, c := range []struct {
		ms   []memberSnapshot
		want bool
	}{
		{[]memberSnapshot{m(true, 0, 3), m(true, 1, 4), m(true, 2, 5)}, true},
		{[]memberSnapshot{m(true, 0, 3), m(false, 1, 4), m(true, 2, 5)}, false}, // one not consuming yet
		{[]memberSnapshot{m(true, 0, 1, 2, 3), m(true, 4, 5), m(true)}, false},  // one owns nothing
		{[]memberSnapshot{m(true, 0, 3), m(true, 1, 3), m(true, 2, 5)}, false},  // 3 owned twice, 4 by none
		{[]memberSnapshot{m(true, 0, 3), m(true, 1, 4), m(true, 2)}, false},     // 5 unowned
		{[]memberSnapshot{m(true, 0, 3), m(true, 1, 4), m(true, 2, 6)}, false},  // out of range
	} {
		if got := groupStable(c.ms, 6); got != c.want {
			t.Errorf("groupStable(%v) = %v, want %v", c.ms, got, c.want)
		}
	}
}

func TestMemberState(t *testing.T) {
	var changes [][]int32
	st := newMemberState(func(o []int32) { changes = append(changes, o) })
	st.change([]int32{3, 0}, nil)
	if _, done := st.consumed([]int32{0}, time.Now()); done {
		t.Error("consuming with partition 3 not read yet")
	}
	if owned, done := st.consumed([]int32{3}, time.Now()); !done || !slices.Equal(owned, []int32{0, 3}) {
		t.Errorf("consumed = %v, %v", owned, done)
	}
	if _, done := st.consumed([]int32{3}, time.Now()); done {
		t.Error("consumed reported twice")
	}
	if s := st.snapshot(); !s.Consuming || s.Gen != 1 {
		t.Errorf("snapshot %+v", s)
	}
	st.change(nil, []int32{3}) // a revocation resets the consuming flag
	if s := st.snapshot(); s.Consuming || !slices.Equal(s.Owned, []int32{0}) || s.Gen != 2 {
		t.Errorf("snapshot after revoke %+v", s)
	}
	if len(changes) != 2 || !slices.Equal(changes[1], []int32{0}) {
		t.Errorf("changes %v", changes)
	}

	// After a kill: assignment and first-record times are recorded.
	kill := time.Now()
	st.setKill(kill)
	time.Sleep(time.Millisecond)
	st.change([]int32{5}, nil)
	st.consumed([]int32{5}, kill.Add(2*time.Second))
	st.consumed([]int32{5}, kill.Add(3*time.Second)) // only the first counts
	other := newMemberState(nil)
	other.setKill(kill)
	other.consumed([]int32{2}, kill.Add(4*time.Second))
	a, c, missing := survivorsTimes([]*memberState{st, other}, []int32{5, 2})
	if len(missing) != 0 || c.Sub(kill) != 4*time.Second || a.IsZero() || a.After(c) {
		t.Errorf("survivorsTimes = %v, %v, %v", a.Sub(kill), c.Sub(kill), missing)
	}
	if _, _, missing := survivorsTimes([]*memberState{st, other}, []int32{5, 1}); !slices.Equal(missing, []int32{1}) {
		t.Errorf("missing = %v, want [1]", missing)
	}
}

func TestMemberLines(t *testing.T) {
	var c childState
	c.line("owned 1,4")
	c.line("consumed 1") // stale: not the current ownership
	if s, _ := c.get(); s.Consuming || !slices.Equal(s.Owned, []int32{1, 4}) || s.Gen != 1 {
		t.Errorf("state %+v", s)
	}
	c.line("consumed 1,4")
	if s, _ := c.get(); !s.Consuming {
		t.Errorf("state %+v", s)
	}
	c.line("owned -")
	if s, _ := c.get(); len(s.Owned) != 0 || s.Consuming || s.Gen != 2 {
		t.Errorf("state %+v", s)
	}
	c.line("garbage")
	if _, err := c.get(); err == nil {
		t.Error("no error for a bad line")
	}
	if formatPartitions([]int32{0, 3}) != "0,3" || formatPartitions(nil) != "-" {
		t.Error("formatPartitions")
	}
}

func TestWrap(t *testing.T) {
	if got := wrap("aa bb cc dddddd e", 7, "  "); got != "  aa bb\n  cc\n  dddddd\n  e" {
		t.Errorf("wrap = %q", got)
	}
}

func TestGroupReportText(t *testing.T) {
	rep := newReport(nil, []Target{Tributary, KfakeMemory}, "none")
	rep.Groups = &GroupReport{Settings: groupSettings(1000, 1, 2)}
	w := Workload{RecordSize: GroupRecordSize, Records: 1000}
	rep.Groups.Consume = []*GroupConsumeResult{
		{Target: Tributary, Runs: []GroupConsumeRun{{Rate: newRate(w, time.Second/2), JoinSeconds: 1.2}}},
		{Target: KfakeMemory, Error: "run 1: boom"},
	}
	rep.Groups.Rebalance = []*RebalanceResult{
		{Target: Tributary, Runs: []RebalanceRun{{Seconds: 5.5, AssignedSeconds: 5.4}, {Seconds: 6.5, AssignedSeconds: 6.4}}},
		{Target: KfakeMemory, Runs: []RebalanceRun{{Seconds: 9}}},
	}
	rep.compute()
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"session.timeout.ms=6000,",
		"group.initial.rebalance.delay.ms=0",
		"2,000", // 1000 records in 0.5 s
		"1.20s",
		"kfake-memory failed: run 1: boom",
		"5.50s  5.50s  6.50s",
		"every run resumed within 8s: met",
		"  no\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Groups == nil || back.Groups.GoalMet == nil || !*back.Groups.GoalMet ||
		back.Groups.Rebalance[0].Resume.Median != 5.5 {
		t.Errorf("JSON round trip: %v %+v", err, back.Groups)
	}
}

// TestGroupSmoke runs the group benchmarks briefly against Tributary's
// broker, with this test binary as the member child (see TestMain). It
// takes about 10 s.
func TestGroupSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	var progress bytes.Buffer
	rep, err := Run(context.Background(), Options{
		Sizes: []int{100}, Partitions: []int{1}, Targets: []Target{Tributary}, Runs: 1,
		NoWorkloads: true, Groups: true, GroupRecords: 20_000, RebalanceRuns: 1,
		Dir: t.TempDir(), PhaseTimeout: time.Minute, Progress: &progress,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	g := rep.Groups
	if g == nil || len(g.Consume) != 1 || len(g.Rebalance) != 1 || g.Failed() {
		t.Fatalf("group report %+v\n%s", g, progress.String())
	}
	if c := g.Consume[0].Median; c == nil || c.Rate.Records != 20_000 || c.Duplicates != 0 {
		t.Errorf("consume %+v", c)
	}
	r := g.Rebalance[0]
	if len(r.Runs) != 1 || len(r.Runs[0].DeadPartitions) == 0 {
		t.Fatalf("rebalance %+v", r)
	}
	// The member cannot be expired before its session timeout has passed
	// since its last heartbeat, at most a heartbeat interval before the kill.
	if s := r.Runs[0].Seconds; s < (SessionTimeout - HeartbeatInterval - 100*time.Millisecond).Seconds() {
		t.Errorf("survivors resumed %.2fs after the kill: before the session timeout, so the member was not really dead", s)
	}
	t.Logf("rebalance: %.2fs; %s", r.Runs[0].Seconds, strings.TrimSpace(progress.String()))
}

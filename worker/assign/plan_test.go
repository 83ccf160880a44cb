package assign

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// group is a scripted group: members, what each owns (it starts what it is
// assigned and stops what is revoked, as a worker does), and the leader's
// memory.
type group struct {
	t        *testing.T
	work     map[string]int
	maxDelay time.Duration
	urls     map[string]string     // member id -> URL
	owned    map[string]Assignment // member id -> what it runs
	state    State
	last     Result
}

func newGroup(t *testing.T, work map[string]int, maxDelay time.Duration) *group {
	return &group{t: t, work: work, maxDelay: maxDelay, urls: map[string]string{}, owned: map[string]Assignment{}}
}

func (g *group) join(id, url string) { g.urls[id], g.owned[id] = url, Assignment{} }
func (g *group) leave(id string)     { delete(g.urls, id); delete(g.owned, id) }

// round runs one rebalance at now and applies it to the members.
func (g *group) round(now time.Time) Result {
	var ms []Member
	for id, url := range g.urls {
		ms = append(ms, Member{ID: id, URL: url, Previous: g.owned[id]})
	}
	res := Plan(Input{Members: ms, Work: g.work, Now: now, MaxDelay: g.maxDelay, State: g.state})
	g.state = res.State
	for id := range g.urls {
		g.owned[id] = apply(g.owned[id], res.Revoked[id], res.Assigned[id])
	}
	g.last = res
	return res
}

// settle runs rounds at now until nothing is revoked (a cooperative
// rebalance's follow-up rounds).
func (g *group) settle(now time.Time) Result {
	for i := 0; i < 5; i++ {
		res := g.round(now)
		revoked := 0
		for _, a := range res.Revoked {
			revoked += len(a.Connectors) + len(a.Tasks)
		}
		if revoked == 0 {
			return res
		}
	}
	g.t.Fatal("no settled assignment after 5 rounds")
	return Result{}
}

func apply(prev, revoked, added Assignment) Assignment {
	out := Assignment{}
	rc, rt := map[string]bool{}, map[TaskID]bool{}
	for _, c := range revoked.Connectors {
		rc[c] = true
	}
	for _, t := range revoked.Tasks {
		rt[t] = true
	}
	for _, c := range prev.Connectors {
		if !rc[c] {
			out.Connectors = append(out.Connectors, c)
		}
	}
	for _, t := range prev.Tasks {
		if !rt[t] {
			out.Tasks = append(out.Tasks, t)
		}
	}
	out.Connectors = append(out.Connectors, added.Connectors...)
	out.Tasks = append(out.Tasks, added.Tasks...)
	sortAny(out.Connectors)
	sortTasks(out.Tasks)
	return out
}

// count is how many connectors and tasks the members run.
func (g *group) count() (conns, tasks int) {
	for _, a := range g.owned {
		conns += len(a.Connectors)
		tasks += len(a.Tasks)
	}
	return conns, tasks
}

func (g *group) total() (conns, tasks int) {
	for _, n := range g.work {
		conns++
		tasks += n
	}
	return conns, tasks
}

func (g *group) checkBalanced() {
	g.t.Helper()
	var cc, tc []int
	for _, a := range g.owned {
		cc, tc = append(cc, len(a.Connectors)), append(tc, len(a.Tasks))
	}
	if spread(cc) > 1 || spread(tc) > 1 {
		g.t.Fatalf("unbalanced: connectors %v tasks %v (%+v)", cc, tc, g.owned)
	}
	if c, t := g.count(); func() bool { wc, wt := g.total(); return c != wc || t != wt }() {
		g.t.Fatalf("not everything runs: %d connectors, %d tasks: %+v", c, t, g.owned)
	}
}

// A member that dies has its work held back for the delay, while the
// others keep theirs; when the delay is over the survivors share it.
func TestPlanLostWorkWaitsForTheDelay(t *testing.T) {
	t.Parallel()
	g := newGroup(t, map[string]int{"a": 3, "b": 3}, 10*time.Second)
	for _, id := range []string{"m1", "m2", "m3"} {
		g.join(id, "http://"+id)
	}
	g.settle(t0)
	g.checkBalanced()
	before := map[string]Assignment{"m1": g.owned["m1"], "m2": g.owned["m2"]}
	lostConns, lostTasks := len(g.owned["m3"].Connectors), len(g.owned["m3"].Tasks)

	g.leave("m3")
	res := g.round(t0.Add(2 * time.Second))
	if res.Delay != 10*time.Second {
		t.Fatalf("delay %v, want the whole 10s", res.Delay)
	}
	if !reflect.DeepEqual(before["m1"], g.owned["m1"]) || !reflect.DeepEqual(before["m2"], g.owned["m2"]) {
		t.Fatalf("survivors' work changed during the delay: %+v", g.owned)
	}
	if c, tk := g.count(); c != 2-lostConns || tk != 6-lostTasks {
		t.Fatalf("held-back work was assigned: %+v", g.owned)
	}
	// A rebalance during the delay (another reason) keeps holding it back,
	// with the delay counted from the first round.
	res = g.round(t0.Add(7 * time.Second))
	if res.Delay != 5*time.Second || len(res.State.Lost.Tasks) != lostTasks {
		t.Fatalf("second round during the delay: delay %v lost %+v", res.Delay, res.State.Lost)
	}
	// The delay is over: the survivors share everything, balanced.
	res = g.settle(t0.Add(12 * time.Second))
	if res.Delay != 0 || !res.State.Lost.empty() {
		t.Fatalf("after the delay: delay %v lost %+v", res.Delay, res.State.Lost)
	}
	g.checkBalanced()
}

// The same worker back (a new member id, the same URL) within the delay
// gets exactly its old work back, and nobody else's moves.
func TestPlanReturningWorkerGetsItsWorkBack(t *testing.T) {
	t.Parallel()
	g := newGroup(t, map[string]int{"a": 4, "b": 2, "c": 3}, time.Minute)
	for _, id := range []string{"m1", "m2", "m3"} {
		g.join(id, "http://"+id)
	}
	g.settle(t0)
	old := g.owned["m3"]
	others := map[string]Assignment{"m1": g.owned["m1"], "m2": g.owned["m2"]}
	g.leave("m3")
	g.round(t0.Add(time.Second))
	g.join("m3-restarted", "http://m3")
	res := g.round(t0.Add(3 * time.Second))
	if res.Delay != 0 || !res.State.Lost.empty() {
		t.Fatalf("still holding back: %+v", res.State)
	}
	if !reflect.DeepEqual(g.owned["m3-restarted"], old) {
		t.Fatalf("restarted worker got %+v, had %+v", g.owned["m3-restarted"], old)
	}
	for id, a := range others {
		if !reflect.DeepEqual(g.owned[id], a) {
			t.Fatalf("%s's work moved: %+v -> %+v", id, a, g.owned[id])
		}
	}
}

// With scheduled.rebalance.max.delay.ms=0, and for a new leader (which
// remembers nothing), lost work is assigned at once.
func TestPlanNoDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		maxDelay time.Duration
		forget   bool
	}{{"max.delay=0", 0, false}, {"new-leader", time.Minute, true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, map[string]int{"a": 3, "b": 3}, tc.maxDelay)
			for _, id := range []string{"m1", "m2", "m3"} {
				g.join(id, "http://"+id)
			}
			g.settle(t0)
			g.leave("m2")
			if tc.forget {
				g.state = State{}
			}
			res := g.settle(t0.Add(time.Second))
			if res.Delay != 0 {
				t.Fatalf("delay %v", res.Delay)
			}
			g.checkBalanced()
		})
	}
}

// A member joining gets its share; only the moved work is revoked, and
// never while it is held back for someone else.
func TestPlanJoinMovesOnlyItsShare(t *testing.T) {
	t.Parallel()
	g := newGroup(t, map[string]int{"a": 4, "b": 4, "c": 4}, 10*time.Second)
	for _, id := range []string{"m1", "m2", "m3"} {
		g.join(id, "http://"+id)
	}
	g.settle(t0)
	before := map[string]Assignment{}
	for id, a := range g.owned {
		before[id] = a
	}
	g.join("m4", "http://m4")
	g.settle(t0.Add(time.Second))
	g.checkBalanced()
	moved := 0
	for id, a := range before {
		now := map[TaskID]bool{}
		for _, tk := range g.owned[id].Tasks {
			now[tk] = true
		}
		for _, tk := range a.Tasks {
			if !now[tk] {
				moved++
			}
		}
	}
	if moved != len(g.owned["m4"].Tasks) || moved != 3 {
		t.Fatalf("%d tasks moved, m4 has %+v", moved, g.owned["m4"])
	}
}

// Random churn with random delays: nothing ever runs twice, held-back
// work runs nowhere, and once the group is left alone past the delay
// everything runs, balanced.
func TestPlanChurn(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		work := map[string]int{}
		for c := 0; c < 1+r.Intn(6); c++ {
			work[fmt.Sprintf("c%d", c)] = r.Intn(5)
		}
		g := newGroup(t, work, time.Duration(r.Intn(3))*5*time.Second)
		now := t0
		next := 0
		for step := 0; step < 12; step++ {
			switch k := r.Intn(4); {
			case k == 0 || len(g.urls) == 0:
				id := fmt.Sprintf("m%d", next)
				next++
				url := fmt.Sprintf("http://w%d", r.Intn(4))
				dup := false
				for _, u := range g.urls {
					dup = dup || u == url
				}
				if dup {
					url += "-" + id
				}
				g.join(id, url)
			case k == 1 && len(g.urls) > 1:
				for id := range g.urls {
					g.leave(id)
					break
				}
			}
			now = now.Add(time.Duration(r.Intn(4000)) * time.Millisecond)
			res := g.round(now)
			runs := map[TaskID]int{}
			for _, a := range g.owned {
				for _, tk := range a.Tasks {
					runs[tk]++
				}
			}
			for tk, n := range runs {
				if n > 1 {
					t.Fatalf("iter %d step %d: %v runs %d times", iter, step, tk, n)
				}
				if _, held := res.State.Lost.Tasks[tk]; held {
					t.Fatalf("iter %d step %d: held-back %v runs", iter, step, tk)
				}
			}
		}
		g.settle(now.Add(time.Minute))
		g.checkBalanced()
	}
}

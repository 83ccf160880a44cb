package assign

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

func TestAssignBasic(t *testing.T) {
	t.Parallel()
	res := Assign([]Member{{ID: "b"}, {ID: "a"}}, map[string]int{"x": 3, "y": 1})
	want := map[string]Assignment{
		"a": {Connectors: []string{"x"}, Tasks: []TaskID{{"x", 0}, {"x", 2}}},
		"b": {Connectors: []string{"y"}, Tasks: []TaskID{{"x", 1}, {"y", 0}}},
	}
	if !reflect.DeepEqual(res.Target, want) {
		t.Fatalf("got %+v", res.Target)
	}
	if !reflect.DeepEqual(res.Assigned, want) {
		t.Fatalf("assigned %+v", res.Assigned)
	}
}

func TestAssignStickyAndRevoke(t *testing.T) {
	t.Parallel()
	work := map[string]int{"x": 4}
	one := Assign([]Member{{ID: "a"}}, work)
	// A second member arrives: half the tasks move; they are revoked from a
	// and withheld from b until a has stopped them.
	two := Assign([]Member{{ID: "a", Previous: one.Target["a"]}, {ID: "b"}}, work)
	if n := len(two.Target["a"].Tasks); n != 2 {
		t.Fatalf("target a %+v", two.Target["a"])
	}
	if len(two.Revoked["a"].Tasks) != 2 || len(two.Assigned["b"].Tasks) != 0 {
		t.Fatalf("revoked %+v assigned %+v", two.Revoked, two.Assigned)
	}
	// Follow-up round after a revoked: b gets them.
	aNow := Assignment{Connectors: one.Target["a"].Connectors, Tasks: two.Target["a"].Tasks}
	three := Assign([]Member{{ID: "a", Previous: aNow}, {ID: "b"}}, work)
	if !reflect.DeepEqual(three.Assigned["b"].Tasks, two.Target["b"].Tasks) || len(three.Revoked["a"].Tasks) != 0 {
		t.Fatalf("follow-up %+v", three)
	}
	// Balanced and unchanged: nothing moves.
	four := Assign([]Member{{ID: "a", Previous: three.Target["a"]}, {ID: "b", Previous: three.Target["b"]}}, work)
	for _, id := range []string{"a", "b"} {
		if len(four.Assigned[id].Tasks)+len(four.Revoked[id].Tasks)+len(four.Assigned[id].Connectors)+len(four.Revoked[id].Connectors) != 0 {
			t.Fatalf("stable assignment moved work: %+v", four)
		}
	}
	// Deleted connector is revoked.
	five := Assign([]Member{{ID: "a", Previous: three.Target["a"]}, {ID: "b", Previous: three.Target["b"]}}, map[string]int{})
	if len(five.Revoked["a"].Connectors) != 1 || len(five.Revoked["a"].Tasks) != 2 {
		t.Fatalf("delete: %+v", five.Revoked)
	}
}

// naive is deliberately simple round robin of sorted work.
func naive(n, members int) []int {
	counts := make([]int, members)
	for i := 0; i < n; i++ {
		counts[i%members]++
	}
	return counts
}

func spread(counts []int) int {
	lo, hi := counts[0], counts[0]
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	return hi - lo
}

func TestAssignProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 2000; iter++ {
		nm := 1 + r.Intn(6)
		work := map[string]int{}
		for c := 0; c < r.Intn(8); c++ {
			work[fmt.Sprintf("c%d", c)] = r.Intn(6)
		}
		members := make([]Member, nm)
		for i := range members {
			members[i].ID = fmt.Sprintf("m%d", r.Intn(100))
			// Random (possibly stale, duplicated) previous ownership.
			for c, n := range work {
				if r.Intn(3) == 0 {
					members[i].Previous.Connectors = append(members[i].Previous.Connectors, c)
				}
				for k := 0; k < n+1; k++ {
					if r.Intn(3) == 0 {
						members[i].Previous.Tasks = append(members[i].Previous.Tasks, TaskID{c, int32(k)})
					}
				}
			}
		}
		dedup := map[string]bool{}
		var ms []Member
		for _, m := range members {
			if !dedup[m.ID] {
				dedup[m.ID] = true
				ms = append(ms, m)
			}
		}
		res := Assign(ms, work)
		var cc, tc []int
		seenC, seenT := map[string]int{}, map[TaskID]int{}
		total := 0
		for _, m := range ms {
			a := res.Target[m.ID]
			cc, tc = append(cc, len(a.Connectors)), append(tc, len(a.Tasks))
			for _, c := range a.Connectors {
				seenC[c]++
			}
			for _, t := range a.Tasks {
				seenT[t]++
			}
			total += len(a.Tasks)
		}
		nTasks := 0
		for _, n := range work {
			nTasks += n
		}
		if len(seenC) != len(work) || total != nTasks || len(seenT) != nTasks {
			t.Fatalf("iter %d: not everything assigned once: %+v for %v", iter, res.Target, work)
		}
		for _, n := range seenC {
			if n != 1 {
				t.Fatalf("iter %d: connector assigned twice", iter)
			}
		}
		if spread(cc) > spread(naive(len(work), len(ms))) || spread(tc) > spread(naive(nTasks, len(ms))) {
			t.Fatalf("iter %d: unbalanced: connectors %v tasks %v", iter, cc, tc)
		}
		// Deterministic.
		if again := Assign(ms, work); !reflect.DeepEqual(again, res) {
			t.Fatalf("iter %d: not deterministic", iter)
		}
		// Stable: feeding the target back moves nothing.
		var prev []Member
		for _, m := range ms {
			prev = append(prev, Member{ID: m.ID, Previous: res.Target[m.ID]})
		}
		if st := Assign(prev, work); !reflect.DeepEqual(st.Target, res.Target) {
			t.Fatalf("iter %d: balanced assignment not sticky", iter)
		}
	}
}

package assign

import (
	"sort"
	"time"
)

// TaskID names a task of a connector.
type TaskID struct {
	Connector string
	Task      int32
}

// Assignment is the work of one member: sorted connectors and tasks.
type Assignment struct {
	Connectors []string
	Tasks      []TaskID
}

// Member is a group member as the leader sees it.
type Member struct {
	ID  string
	URL string
	// Previous is what the member owns now (from its metadata; empty for the
	// eager protocol or a new member).
	Previous Assignment
}

// Result is the assignor's answer, keyed by member id.
type Result struct {
	// Target is where every connector and task should run once balanced;
	// for the eager protocol it is the assignment to send.
	Target map[string]Assignment
	// Assigned is what each member newly gets this round (incremental
	// protocols): Target minus Previous, minus work another member still has
	// to revoke (it is assigned in the follow-up rebalance those members
	// trigger after revoking).
	Assigned map[string]Assignment
	// Revoked is what each member must stop: Previous minus Target
	// (including deleted connectors and tasks).
	Revoked map[string]Assignment
	// Delay is how long work stays held back (Plan only): members rejoin
	// after it so that the leader assigns it.
	Delay time.Duration
	// State is what the leader remembers for the next round (Plan only).
	State State
}

// workSet is the work to spread: sorted connectors and tasks.
type workSet struct {
	conns []string
	tasks []TaskID
}

// setOf lists every connector and task of a connector → task count map.
func setOf(work map[string]int) workSet {
	ws := workSet{}
	for c, n := range work {
		ws.conns = append(ws.conns, c)
		for i := 0; i < n; i++ {
			ws.tasks = append(ws.tasks, TaskID{c, int32(i)})
		}
	}
	return ws
}

// Assign spreads connectors and tasks (connector name → task count) over
// the members: connectors and tasks are balanced separately so that no
// member has more than one more of either than any other; work stays with
// its previous owner while that keeps the balance (sticky); everything else
// goes round robin in sorted order. The result depends only on its inputs.
// Work claimed by two members (zombies) stays with the first by id and is
// revoked from the other.
func Assign(members []Member, tasks map[string]int) Result {
	return assignWork(members, setOf(tasks), nil)
}

// assignWork spreads ws; prefer adds work that a member (by id) should
// keep if the balance allows although it does not own it now.
func assignWork(members []Member, ws workSet, prefer map[string]Assignment) Result {
	ms := append([]Member(nil), members...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	res := Result{Target: map[string]Assignment{}, Assigned: map[string]Assignment{}, Revoked: map[string]Assignment{}}
	if len(ms) == 0 {
		return res
	}
	conns := append([]string(nil), ws.conns...)
	allTasks := append([]TaskID(nil), ws.tasks...)
	sort.Strings(conns)
	sortTasks(allTasks)

	prevConns := make([][]string, len(ms))
	prevTasks := make([][]TaskID, len(ms))
	keepConns := make([][]string, len(ms))
	keepTasks := make([][]TaskID, len(ms))
	for i, m := range ms {
		prevConns[i] = m.Previous.Connectors
		prevTasks[i] = m.Previous.Tasks
		keepConns[i] = append(append([]string(nil), m.Previous.Connectors...), prefer[m.ID].Connectors...)
		keepTasks[i] = append(append([]TaskID(nil), m.Previous.Tasks...), prefer[m.ID].Tasks...)
	}
	tc := balance(conns, keepConns)
	tt := balance(allTasks, keepTasks)

	// Who currently holds what (for withholding work until it is revoked).
	heldC := map[string]int{}
	heldT := map[TaskID]int{}
	for i := range ms {
		for _, c := range prevConns[i] {
			heldC[c]++
		}
		for _, t := range prevTasks[i] {
			heldT[t]++
		}
	}
	for i, m := range ms {
		target := Assignment{Connectors: tc[i], Tasks: tt[i]}
		sort.Strings(target.Connectors)
		sortTasks(target.Tasks)
		res.Target[m.ID] = target
		newC, revC := diff(target.Connectors, prevConns[i], heldC)
		newT, revT := diff(target.Tasks, prevTasks[i], heldT)
		res.Assigned[m.ID] = Assignment{Connectors: newC, Tasks: newT}
		res.Revoked[m.ID] = Assignment{Connectors: revC, Tasks: revT}
	}
	return res
}

// diff returns target items the member does not have and nobody holds,
// and previous items not in target.
func diff[T comparable](target, prev []T, held map[T]int) (added, revoked []T) {
	had := map[T]bool{}
	for _, x := range prev {
		had[x] = true
	}
	want := map[T]bool{}
	for _, x := range target {
		want[x] = true
		if !had[x] && held[x] == 0 {
			added = append(added, x)
		}
	}
	seen := map[T]bool{}
	for _, x := range prev {
		if !want[x] && !seen[x] {
			revoked = append(revoked, x)
			seen[x] = true
		}
	}
	sortAny(revoked)
	return added, revoked
}

// balance gives each member floor(n/m) or ceil(n/m) of items, keeping
// previous owners where it can. items is sorted; the members with the most
// keepable work get the extra ones.
func balance[T comparable](items []T, prev [][]T) [][]T {
	m := len(prev)
	exists := map[T]bool{}
	for _, x := range items {
		exists[x] = true
	}
	claimed := map[T]bool{}
	keep := make([][]T, m)
	for i := range prev {
		p := append([]T(nil), prev[i]...)
		sortAny(p)
		for _, x := range p {
			if exists[x] && !claimed[x] {
				claimed[x] = true
				keep[i] = append(keep[i], x)
			}
		}
	}
	floor, extra := len(items)/m, len(items)%m
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(keep[order[a]]) > len(keep[order[b]]) })
	capacity := make([]int, m)
	for rank, i := range order {
		capacity[i] = floor
		if rank < extra {
			capacity[i]++
		}
	}
	out := make([][]T, m)
	taken := map[T]bool{}
	for i := range keep {
		if len(keep[i]) > capacity[i] {
			keep[i] = keep[i][:capacity[i]]
		}
		out[i] = append(out[i], keep[i]...)
		for _, x := range keep[i] {
			taken[x] = true
		}
	}
	next := 0
	for _, x := range items {
		if taken[x] {
			continue
		}
		for len(out[next]) >= capacity[next] {
			next = (next + 1) % m
		}
		out[next] = append(out[next], x)
		next = (next + 1) % m
	}
	return out
}

func sortTasks(ts []TaskID) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Connector != ts[j].Connector {
			return ts[i].Connector < ts[j].Connector
		}
		return ts[i].Task < ts[j].Task
	})
}

func sortAny[T comparable](xs []T) {
	sort.Slice(xs, func(i, j int) bool {
		switch a := any(xs[i]).(type) {
		case string:
			return a < any(xs[j]).(string)
		case TaskID:
			b := any(xs[j]).(TaskID)
			if a.Connector != b.Connector {
				return a.Connector < b.Connector
			}
			return a.Task < b.Task
		}
		return false
	})
}

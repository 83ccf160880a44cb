package assign

import (
	"sort"
	"time"
)

// State is what a leader remembers between the rebalances it leads: where
// it put everything last time, and the work it is holding back for a
// departed member. A new leader starts from the zero State (so, as in
// Kafka Connect, it sees no lost work and assigns everything at once).
type State struct {
	// Previous is the last round's target of every member, by member id.
	Previous map[string]Owned
	// Lost is work whose owner left the group, held back (not assigned to
	// anyone) until Deadline, each item with its last owner's URL.
	Lost Held
	// Deadline is when held-back work is assigned anyway (zero: nothing
	// held).
	Deadline time.Time
}

// Owned is a member's work and its advertised URL.
type Owned struct {
	URL  string
	Work Assignment
}

// Held is work held back for a departed member, by the member's URL.
type Held struct {
	Connectors map[string]string
	Tasks      map[TaskID]string
}

func (h Held) empty() bool { return len(h.Connectors)+len(h.Tasks) == 0 }

// Input is everything Plan decides from.
type Input struct {
	Members []Member
	// Work maps every connector to its task count (0 for a stopped one).
	Work map[string]int
	// Now is the current time; only compared with State.Deadline.
	Now time.Time
	// MaxDelay is scheduled.rebalance.max.delay.ms: how long the work of a
	// member that left stays unassigned, waiting for it to come back.
	MaxDelay time.Duration
	// State is what the leader remembers (zero for a new leader).
	State State
}

// Plan is Assign with Kafka Connect's scheduled rebalance delay (KIP-415):
//
//   - Work whose remembered owner left the group and that no member owns
//     is lost. A member with the departed owner's URL (the same worker,
//     restarted) gets it back at once.
//   - Other lost work is held back, unassigned, for MaxDelay from the
//     round that first saw it lost; Result.Delay tells the members when to
//     rejoin so that the leader can assign it then. A second departure
//     during the delay does not extend it.
//   - With MaxDelay 0, lost work is assigned at once like new work.
//
// Everything else is Assign's. Plan is pure: equal inputs give equal
// results.
func Plan(in Input) Result {
	present := map[string]bool{}
	byURL := map[string]int{}
	members := append([]Member(nil), in.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].ID < members[j].ID })
	for i, m := range members {
		present[m.ID] = true
		if _, dup := byURL[m.URL]; !dup {
			byURL[m.URL] = i
		}
	}
	owned := Held{Connectors: map[string]string{}, Tasks: map[TaskID]string{}}
	for _, m := range members {
		for _, c := range m.Previous.Connectors {
			owned.Connectors[c] = m.ID
		}
		for _, t := range m.Previous.Tasks {
			owned.Tasks[t] = m.ID
		}
	}
	exists := func(c string) bool { _, ok := in.Work[c]; return ok }
	existsTask := func(t TaskID) bool { n, ok := in.Work[t.Connector]; return ok && t.Task >= 0 && int(t.Task) < n }

	// Lost: still held from an earlier round, or newly orphaned by a
	// departure.
	lost := Held{Connectors: map[string]string{}, Tasks: map[TaskID]string{}}
	for c, url := range in.State.Lost.Connectors {
		if exists(c) && owned.Connectors[c] == "" {
			lost.Connectors[c] = url
		}
	}
	for t, url := range in.State.Lost.Tasks {
		if existsTask(t) && owned.Tasks[t] == "" {
			lost.Tasks[t] = url
		}
	}
	departed := false
	for id, prev := range in.State.Previous {
		if present[id] {
			continue
		}
		departed = true
		for _, c := range prev.Work.Connectors {
			if exists(c) && owned.Connectors[c] == "" {
				lost.Connectors[c] = prev.URL
			}
		}
		for _, t := range prev.Work.Tasks {
			if existsTask(t) && owned.Tasks[t] == "" {
				lost.Tasks[t] = prev.URL
			}
		}
	}
	if !departed && in.State.Lost.empty() {
		lost = Held{} // nothing to hold back: unowned work is new work
	}

	// The same worker back under a new member id gets its work back.
	prefer := map[string]Assignment{}
	for _, c := range sortedKeys(lost.Connectors) {
		if i, ok := byURL[lost.Connectors[c]]; ok {
			p := prefer[members[i].ID]
			p.Connectors = append(p.Connectors, c)
			prefer[members[i].ID] = p
			delete(lost.Connectors, c)
		}
	}
	for _, t := range sortedTaskKeys(lost.Tasks) {
		if i, ok := byURL[lost.Tasks[t]]; ok {
			p := prefer[members[i].ID]
			p.Tasks = append(p.Tasks, t)
			prefer[members[i].ID] = p
			delete(lost.Tasks, t)
		}
	}

	next := State{Previous: map[string]Owned{}}
	work := setOf(in.Work)
	var delay time.Duration
	if in.MaxDelay > 0 && !lost.empty() {
		deadline := in.State.Deadline
		if deadline.IsZero() {
			deadline = in.Now.Add(in.MaxDelay)
		}
		if in.Now.Before(deadline) {
			delay = deadline.Sub(in.Now)
			next.Lost, next.Deadline = lost, deadline
			work = withheld(in.Work, lost)
		}
	}
	res := assignWork(members, work, prefer)
	for id, a := range res.Target {
		next.Previous[id] = Owned{URL: urlOf(members, id), Work: a}
	}
	res.Delay = delay
	res.State = next
	return res
}

func urlOf(ms []Member, id string) string {
	for _, m := range ms {
		if m.ID == id {
			return m.URL
		}
	}
	return ""
}

// withheld is the work minus the held-back items.
func withheld(work map[string]int, lost Held) workSet {
	ws := workSet{}
	for c, n := range work {
		if _, held := lost.Connectors[c]; !held {
			ws.conns = append(ws.conns, c)
		}
		for i := 0; i < n; i++ {
			t := TaskID{c, int32(i)}
			if _, held := lost.Tasks[t]; !held {
				ws.tasks = append(ws.tasks, t)
			}
		}
	}
	return ws
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedTaskKeys(m map[TaskID]string) []TaskID {
	out := make([]TaskID, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortTasks(out)
	return out
}

package herder

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/worker/assign"
)

// cluster simulates workers (Machines) sharing a config topic, with a
// group coordinator that runs the leader's assignor (package assign) the
// way the worker's membership code does, and a driver that performs every
// action at once. No sockets, no clocks: the test moves time.
type cluster struct {
	t        *testing.T
	now      time.Time
	maxDelay time.Duration
	nodes    map[string]*node
	order    []string // join order: the first is the leader
	gen      int32
	plan     assign.State
	rebAt    time.Time // a scheduled rebalance (Result.Delay)
	rejoin   bool

	offset   int64
	conns    map[string]Connector
	statuses []PutStatus
	token    Token
}

type node struct {
	id, url string
	m       *Machine
	dead    bool
	owned   assign.Assignment
	running map[string]bool // "conn" or "conn-i"
}

func newCluster(t *testing.T, maxDelay time.Duration) *cluster {
	return &cluster{t: t, now: t0, maxDelay: maxDelay, nodes: map[string]*node{}, conns: map[string]Connector{}}
}

func (c *cluster) snapshot() Snapshot {
	s := Snapshot{Offset: c.offset, Connectors: map[string]Connector{}}
	maps.Copy(s.Connectors, c.conns)
	return s
}

func (c *cluster) start(id string) *node {
	n := &node{id: id, url: "http://" + id, running: map[string]bool{}}
	n.m = New(Config{WorkerID: id, URL: n.url})
	c.nodes[id] = n
	c.order = append(c.order, id)
	c.step(n, Configs{Snapshot: c.snapshot()})
	c.rejoin = true
	return n
}

// kill makes a node vanish without leaving the group (kill -9).
func (c *cluster) kill(id string) {
	c.nodes[id].dead = true
	c.order = slices.DeleteFunc(c.order, func(s string) bool { return s == id })
	c.rejoin = true
}

func (c *cluster) step(n *node, ev Event) {
	if n.dead {
		return
	}
	n.m.Step(c.now, ev)
	for _, a := range n.m.Ready() {
		c.perform(n, a)
	}
}

func (c *cluster) perform(n *node, a Action) {
	switch a := a.(type) {
	case StartConnector:
		n.running[a.Name] = true
		c.step(n, ConnectorStarted{Name: a.Name, Run: a.Run})
	case GenerateTaskConfigs:
		k, _ := strconv.Atoi(c.conns[a.Name].Config["tasks"])
		var cfgs []map[string]string
		for i := 0; i < k; i++ {
			cfgs = append(cfgs, map[string]string{"task": strconv.Itoa(i)})
		}
		c.step(n, TaskConfigsGenerated{Name: a.Name, Run: a.Run, Gen: a.Gen, Configs: cfgs})
	case StopConnector:
		delete(n.running, a.Name)
		c.step(n, ConnectorStopped(a))
	case StartTask:
		key := a.ID.String()
		for _, o := range c.nodes {
			if o.running[key] && !o.dead {
				c.t.Fatalf("%s starts %s, which runs on %s", n.id, key, o.id)
			}
		}
		n.running[key] = true
		c.step(n, TaskStarted{ID: a.ID, Run: a.Run})
	case StopTask:
		delete(n.running, a.ID.String())
		c.step(n, TaskStopped(a))
	case PutStatus:
		c.statuses = append(c.statuses, a)
	case WriteConfigs:
		for _, w := range a.Writes {
			c.offset++
			switch w.Kind {
			case WriteConnector:
				if w.Config == nil {
					delete(c.conns, w.Name)
				} else {
					cc := c.conns[w.Name]
					cc.Config, cc.Target = w.Config, Started
					c.conns[w.Name] = cc
				}
			case WriteTasks:
				cc := c.conns[w.Name]
				cc.Tasks, cc.Applied = w.Tasks, cc.Config
				c.conns[w.Name] = cc
			}
		}
		c.step(n, Done{Op: a.Op})
		for _, id := range slices.Sorted(maps.Keys(c.nodes)) {
			c.step(c.nodes[id], Configs{Snapshot: c.snapshot()})
		}
	case SendTaskConfigs:
		leader := c.nodes[c.order[0]]
		c.token++
		c.step(leader, Request{Reply: c.token, Op: PutTaskConfigs{Name: a.Name, Configs: a.Configs}})
		c.step(n, Done{Op: a.Op})
	case Rejoin:
		c.rejoin = true
	case ReadConfigs:
		c.step(n, Configs{Snapshot: c.snapshot()})
	}
}

// settle runs rebalances until none is needed, like the coordinator and
// the members' rejoins would.
func (c *cluster) settle() {
	c.t.Helper()
	for round := 0; c.rejoin || (!c.rebAt.IsZero() && !c.now.Before(c.rebAt)); round++ {
		if round > 10 {
			c.t.Fatal("the group does not settle")
		}
		c.rejoin, c.rebAt = false, time.Time{}
		c.gen++
		var ms []assign.Member
		for _, id := range c.order {
			n := c.nodes[id]
			c.token++
			c.step(n, JoinPrepare{Reply: c.token})
			ms = append(ms, assign.Member{ID: id, URL: n.url, Previous: n.owned})
		}
		work := map[string]int{}
		for name, cc := range c.conns {
			work[name] = len(cc.Tasks)
		}
		res := assign.Plan(assign.Input{Members: ms, Work: work, Now: c.now, MaxDelay: c.maxDelay, State: c.plan})
		c.plan = res.State
		if res.Delay > 0 {
			c.rebAt = c.now.Add(res.Delay)
		}
		revoked := false
		for i, id := range c.order {
			n := c.nodes[id]
			n.owned = applyDelta(n.owned, res.Revoked[id], res.Assigned[id])
			revoked = revoked || len(res.Revoked[id].Connectors)+len(res.Revoked[id].Tasks) > 0
			var ts []TaskID
			for _, t := range n.owned.Tasks {
				ts = append(ts, TaskID{t.Connector, int(t.Task)})
			}
			c.token++
			c.step(n, Assigned{Reply: c.token, Generation: c.gen, Protocol: Compatible, Leader: i == 0,
				LeaderURL: c.nodes[c.order[0]].url, ConfigOffset: c.offset, Connectors: n.owned.Connectors, Tasks: ts})
		}
		c.rejoin = c.rejoin || revoked
	}
}

func applyDelta(prev, revoked, added assign.Assignment) assign.Assignment {
	out := assign.Assignment{}
	for _, x := range prev.Connectors {
		if !slices.Contains(revoked.Connectors, x) {
			out.Connectors = append(out.Connectors, x)
		}
	}
	for _, x := range prev.Tasks {
		if !slices.Contains(revoked.Tasks, x) {
			out.Tasks = append(out.Tasks, x)
		}
	}
	out.Connectors = append(out.Connectors, added.Connectors...)
	out.Tasks = append(out.Tasks, added.Tasks...)
	return out
}

func (c *cluster) create(via, name string, tasks int) {
	c.t.Helper()
	c.token++
	tok := c.token
	var got *Result
	n := c.nodes[via]
	n.m.Step(c.now, Request{Reply: tok, Op: PutConfig{Name: name, Config: map[string]string{"tasks": strconv.Itoa(tasks), "tasks.max": strconv.Itoa(tasks)}}})
	for _, a := range n.m.Ready() {
		if r, ok := a.(Reply); ok && r.To == tok {
			got = &r.Result
			continue
		}
		c.perform(n, a)
	}
	if got != nil && got.Err != nil && got.Err.Forward != "" {
		c.create(c.order[0], name, tasks) // what the REST layer does
		return
	}
	c.settle()
}

// runningTasks maps each running task to the nodes running it.
func (c *cluster) runningTasks() map[string][]string {
	out := map[string][]string{}
	for id, n := range c.nodes {
		if n.dead {
			continue
		}
		for k := range n.running {
			out[k] = append(out[k], id)
		}
	}
	return out
}

func (c *cluster) checkBalanced(conns, tasks int) {
	c.t.Helper()
	run := c.runningTasks()
	if len(run) != conns+tasks {
		c.t.Fatalf("%d connectors and tasks run, want %d: %v", len(run), conns+tasks, run)
	}
	counts := map[string]int{}
	for k, ns := range run {
		if len(ns) != 1 {
			c.t.Fatalf("%s runs on %v", k, ns)
		}
		counts[ns[0]]++
	}
	lo, hi := 1<<30, 0
	for _, id := range c.order {
		lo, hi = min(lo, counts[id]), max(hi, counts[id])
	}
	// connectors and tasks are balanced separately: at most 2 apart
	// together.
	if hi-lo > 2 {
		c.t.Fatalf("unbalanced: %v", counts)
	}
}

// runningSince counts RUNNING statuses written after mark, by task.
func (c *cluster) runningSince(mark int) map[string]int {
	out := map[string]int{}
	for _, s := range c.statuses[mark:] {
		if s.State == StateRunning && s.Task >= 0 {
			out[fmt.Sprintf("%s-%d", s.Connector, s.Task)]++
		}
	}
	return out
}

// Three workers: connectors created through a follower are balanced; a
// fourth joins and only the tasks moved to it restart.
func TestClusterJoinRestartsOnlyMovedTasks(t *testing.T) {
	c := newCluster(t, 10*time.Second)
	for _, id := range []string{"w1", "w2", "w3"} {
		c.start(id)
	}
	c.settle()
	for i := 0; i < 4; i++ {
		c.create("w2", fmt.Sprintf("c%d", i), 3)
	}
	c.checkBalanced(4, 12)
	mark := len(c.statuses)
	before := c.runningTasks()
	c.start("w4")
	c.settle()
	c.checkBalanced(4, 12)
	restarted := c.runningSince(mark)
	after := c.runningTasks()
	moved := 0
	for k, ns := range after {
		if len(k) > 2 && k[len(k)-2] == '-' && before[k][0] != ns[0] {
			moved++
			if ns[0] != "w4" {
				t.Fatalf("%s moved from %s to %s, not to the new worker", k, before[k][0], ns[0])
			}
		}
	}
	if len(restarted) != moved || moved != 3 {
		t.Fatalf("%d tasks restarted (%v), %d moved", len(restarted), restarted, moved)
	}
	for k, n := range restarted {
		if n != 1 || after[k][0] != "w4" {
			t.Fatalf("%s restarted %d times, runs on %v", k, n, after[k])
		}
	}
}

// A worker dies: its work waits scheduled.rebalance.max.delay.ms, unowned,
// while the others keep theirs; then the survivors run it. A worker that
// comes back in time (same URL) gets its own work back instead.
func TestClusterLostWorkerAndScheduledDelay(t *testing.T) {
	for _, back := range []bool{false, true} {
		t.Run(fmt.Sprintf("returns=%t", back), func(t *testing.T) {
			c := newCluster(t, 10*time.Second)
			for _, id := range []string{"w1", "w2", "w3"} {
				c.start(id)
			}
			c.settle()
			for i := 0; i < 3; i++ {
				c.create("w1", fmt.Sprintf("c%d", i), 2)
			}
			c.checkBalanced(3, 6)
			lost := map[string]bool{}
			for k := range c.nodes["w3"].running {
				lost[k] = true
			}
			c.kill("w3")
			mark := len(c.statuses)
			c.now = c.now.Add(time.Second)
			c.settle()
			for k, ns := range c.runningTasks() {
				if lost[k] {
					t.Fatalf("%s runs on %v during the delay", k, ns)
				}
			}
			if len(c.runningSince(mark)) != 0 {
				t.Fatalf("tasks restarted during the delay: %v", c.runningSince(mark))
			}
			if back {
				c.now = c.now.Add(4 * time.Second)
				n := c.start("w3-again")
				n.url = "http://w3"
				c.nodes["w3-again"].m = New(Config{WorkerID: "w3", URL: n.url})
				c.step(n, Configs{Snapshot: c.snapshot()})
				c.settle()
				for k := range lost {
					if ns := c.runningTasks()[k]; len(ns) != 1 || ns[0] != "w3-again" {
						t.Fatalf("%s runs on %v, not on the returning worker", k, ns)
					}
				}
				c.checkBalanced(3, 6)
				return
			}
			c.now = c.now.Add(10 * time.Second) // the delay is over
			c.settle()
			c.checkBalanced(3, 6)
		})
	}
}

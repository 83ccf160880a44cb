package member

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/worker/assign"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func forEachBroker(t *testing.T, f func(t *testing.T, brokers []string)) {
	t.Run("broker=tributary", func(t *testing.T) {
		b := harness.TributaryBroker(t)
		f(t, []string{b.Bootstrap()})
	})
	t.Run("broker=kfake", func(t *testing.T) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		f(t, c.ListenAddrs())
	})
}

// worker is a test member with the assignor wired like a herder would.
type worker struct {
	id     string
	m      *Member
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	gens []Generation
}

var work = map[string]int{"a": 2, "b": 3, "c": 1}

func leaderAssign(_ context.Context, g LeaderView) (map[string]Assignment, error) {
	var ms []assign.Member
	for _, jm := range g.Members {
		am := assign.Member{ID: jm.ID, URL: jm.Metadata.URL}
		if a := jm.Metadata.Allocation; a != nil {
			am.Previous.Connectors = a.Connectors
			for _, t := range a.Tasks {
				am.Previous.Tasks = append(am.Previous.Tasks, assign.TaskID{Connector: t.Connector, Task: t.Task})
			}
		}
		ms = append(ms, am)
	}
	res := assign.Assign(ms, work)
	leaderURL := ""
	for _, jm := range g.Members {
		if jm.ID == g.LeaderID {
			leaderURL = jm.Metadata.URL
		}
	}
	out := map[string]Assignment{}
	for _, jm := range g.Members {
		a := Assignment{Leader: g.LeaderID, LeaderURL: leaderURL, ConfigOffset: 7}
		src := res.Target[jm.ID]
		if g.Protocol.Incremental() {
			src = res.Assigned[jm.ID]
			a.RevokedConnectors = res.Revoked[jm.ID].Connectors
			a.RevokedTasks = toTasks(res.Revoked[jm.ID].Tasks)
		}
		a.Connectors = src.Connectors
		a.Tasks = toTasks(src.Tasks)
		out[jm.ID] = a
	}
	return out, nil
}

func toTasks(ts []assign.TaskID) []TaskID {
	var out []TaskID
	for _, t := range ts {
		out = append(out, TaskID{t.Connector, t.Task})
	}
	return out
}

func startWorker(t *testing.T, brokers []string, id string, protos []Protocol) *worker {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{id: id, cl: cl, done: make(chan error, 1)}
	w.m, err = New(Config{
		Client: cl, GroupID: "connect-cluster", URL: "http://" + id + ":8083/", Protocols: protos,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, RebalanceTimeout: 10 * time.Second,
		ConfigOffset: func() int64 { return 7 },
		Assign:       leaderAssign,
		OnAssigned: func(_ context.Context, g Generation) {
			w.mu.Lock()
			w.gens = append(w.gens, g)
			w.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.m.Run(ctx) }()
	t.Cleanup(w.stop)
	return w
}

// stop leaves the group cleanly.
func (w *worker) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cl.Close()
	w.cancel = nil
}

// kill drops the member without LeaveGroup: the coordinator notices only
// after the session timeout.
func (w *worker) kill() {
	w.cl.Close()
	w.cancel()
	<-w.done
	w.cancel = nil
}

func (w *worker) last() (Generation, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.gens) == 0 {
		return Generation{}, false
	}
	return w.gens[len(w.gens)-1], true
}

// settled waits until every worker's latest generation is the same one,
// with no revocations pending, and returns each worker's ownership.
func settled(t *testing.T, ws []*worker, after int32) map[string]Generation {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		out := map[string]Generation{}
		gen := int32(-2)
		ok := true
		for _, w := range ws {
			g, has := w.last()
			if !has || g.ID <= after || (gen != -2 && g.ID != gen) || w.m.Generation() != g.ID ||
				len(g.Assignment.RevokedConnectors)+len(g.Assignment.RevokedTasks) > 0 {
				ok = false
				break
			}
			gen = g.ID
			out[w.id] = g
		}
		if ok {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range ws {
		g, _ := w.last()
		t.Logf("%s: gen %d (member gen %d) %+v", w.id, g.ID, w.m.Generation(), g)
	}
	t.Fatal("group did not settle")
	return nil
}

// checkCovers verifies every connector and task is owned exactly once and
// the spread is at most one.
func checkCovers(t *testing.T, gs map[string]Generation) {
	t.Helper()
	conns, tasks := map[string]int{}, map[TaskID]int{}
	leaders := 0
	var cc, tc []int
	for _, g := range gs {
		for _, c := range g.Connectors {
			conns[c]++
		}
		for _, tk := range g.Tasks {
			tasks[tk]++
		}
		if g.IsLeader {
			leaders++
		}
		cc, tc = append(cc, len(g.Connectors)), append(tc, len(g.Tasks))
	}
	if leaders != 1 {
		t.Fatalf("%d leaders: %+v", leaders, gs)
	}
	nTasks := 0
	for c, n := range work {
		nTasks += n
		if conns[c] != 1 {
			t.Fatalf("connector %s owned %d times: %+v", c, conns[c], gs)
		}
	}
	if len(tasks) != nTasks {
		t.Fatalf("tasks owned: %v", tasks)
	}
	for tk, n := range tasks {
		if n != 1 {
			t.Fatalf("task %v owned %d times", tk, n)
		}
	}
	sort.Ints(cc)
	sort.Ints(tc)
	if cc[len(cc)-1]-cc[0] > 1 || tc[len(tc)-1]-tc[0] > 1 {
		t.Fatalf("unbalanced: %v %v", cc, tc)
	}
}

func TestGroup(t *testing.T) {
	for _, protos := range [][]Protocol{nil, {Eager}} {
		name := "protocol=sessioned"
		if protos != nil {
			name = "protocol=eager"
		}
		t.Run(name, func(t *testing.T) {
			forEachBroker(t, func(t *testing.T, brokers []string) {
				ws := []*worker{
					startWorker(t, brokers, "w1", protos),
					startWorker(t, brokers, "w2", protos),
					startWorker(t, brokers, "w3", protos),
				}
				gs := settled(t, ws, 0)
				checkCovers(t, gs)
				for _, g := range gs {
					want := Sessioned
					if protos != nil {
						want = Eager
					}
					if g.Protocol != want || g.Assignment.ConfigOffset != 7 || g.Assignment.LeaderURL == "" {
						t.Fatalf("generation %+v", g)
					}
				}
				// Kill the leader without LeaveGroup: the rest rebalance after
				// the session timeout.
				var dead *worker
				var rest []*worker
				for _, w := range ws {
					if g, _ := w.last(); g.IsLeader {
						dead = w
					} else {
						rest = append(rest, w)
					}
				}
				dead.kill()
				gs2 := settled(t, rest, gs[rest[0].id].ID)
				checkCovers(t, gs2)
				if gs2[rest[0].id].ID <= gs[rest[0].id].ID {
					t.Fatal("no new generation after a member died")
				}
				// A clean leave rebalances at once; the survivor owns everything.
				rest[1].stop()
				gs3 := settled(t, rest[:1], gs2[rest[0].id].ID)
				checkCovers(t, gs3)
				// Rejoin on request gives a new generation with the same work.
				before := gs3[rest[0].id]
				rest[0].m.Rejoin()
				deadline := time.Now().Add(20 * time.Second)
				for {
					g, _ := rest[0].last()
					if g.ID > before.ID {
						if !equalOwned(g, before) {
							t.Fatalf("rejoin changed ownership: %+v vs %+v", g, before)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("Rejoin did not rebalance")
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		})
	}
}

func equalOwned(a, b Generation) bool {
	if len(a.Connectors) != len(b.Connectors) || len(a.Tasks) != len(b.Tasks) {
		return false
	}
	for i := range a.Connectors {
		if a.Connectors[i] != b.Connectors[i] {
			return false
		}
	}
	for i := range a.Tasks {
		if a.Tasks[i] != b.Tasks[i] {
			return false
		}
	}
	return true
}

// A member whose heartbeats the coordinator stops answering treats its
// membership as lost, and its work as to be stopped, before the
// coordinator can expire its session and give the work to another member.
func TestLeaseEndsBeforeTheSession(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	assigned := make(chan struct{}, 10)
	lostAt := make(chan time.Time, 1)
	m, err := New(Config{
		Client: cl, GroupID: "lease", URL: "http://w1:8083/",
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond, StopTimeout: 2 * time.Second,
		ConfigOffset: func() int64 { return 0 }, Assign: leaderAssign,
		OnAssigned: func(context.Context, Generation) { assigned <- struct{}{} },
		OnJoinPrepare: func(_ context.Context, _ Protocol, lost bool) {
			if lost {
				select {
				case lostAt <- time.Now():
				default:
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-assigned
	time.Sleep(time.Second) // a few good heartbeats
	if m.Lease() <= 0 {
		t.Fatal("no lease while heartbeats are answered")
	}
	// The coordinator goes silent: heartbeats are read and never answered.
	cut := time.Now()
	c.ControlKey(kmsg.Heartbeat.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true
	})
	select {
	case at := <-lostAt:
		// The last answered heartbeat was sent before cut; the session
		// ends no earlier than its send plus the session timeout.
		if took := at.Sub(cut); took >= 6*time.Second-2*time.Second {
			t.Fatalf("membership given up %v after the coordinator went silent: too late to stop work before the session may expire", took)
		}
		if m.Lease() > 0 {
			t.Fatal("lease still valid after it was given up")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("membership not given up while the coordinator is silent")
	}
}

// An assignment with a scheduled rebalance delay makes the member rejoin
// when it is over (for the leader to assign the held-back work).
func TestScheduledRejoin(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	gens := make(chan Generation, 10)
	rounds := 0
	m, err := New(Config{
		Client: cl, GroupID: "delay", URL: "http://w1:8083/",
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
		ConfigOffset: func() int64 { return 0 },
		Assign: func(ctx context.Context, g LeaderView) (map[string]Assignment, error) {
			rounds++
			out, err := leaderAssign(ctx, g)
			if rounds == 1 {
				for id, a := range out {
					a.Delay = 700
					out[id] = a
				}
			}
			return out, err
		},
		OnAssigned: func(_ context.Context, g Generation) { gens <- g },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	first := <-gens
	if first.Assignment.Delay != 700 {
		t.Fatalf("first generation %+v", first)
	}
	select {
	case g := <-gens:
		if g.ID <= first.ID {
			t.Fatalf("generation %d after %d", g.ID, first.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no rebalance after the scheduled delay")
	}
}

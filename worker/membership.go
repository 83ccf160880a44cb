package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/worker/assign"
	"github.com/tributary-dev/tributary/worker/member"
	"github.com/tributary-dev/tributary/worker/store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// joinGroup runs the worker's membership in the group.id group (protocol
// type "connect"). The elected leader assigns connectors and tasks with
// package assign; every new generation is handed to the herder. A worker
// alone in its group is its leader and gets everything.
func (w *Worker) joinGroup(ctx context.Context, cfgStore *store.ConfigStore, rejoin chan struct{}) (<-chan struct{}, error) {
	protocols, err := member.ProtocolsFor(w.cfg.ConnectProtocol)
	if err != nil {
		return nil, fmt.Errorf("worker: connect.protocol: %w", err)
	}
	cl, err := kgo.NewClient(w.clientOpts(nil)...)
	if err != nil {
		return nil, fmt.Errorf("worker: group client: %w", err)
	}
	url := "http://" + w.id + "/"
	m, err := member.New(member.Config{
		Client: cl, GroupID: w.cfg.GroupID, URL: url, Protocols: protocols,
		SessionTimeout: w.cfg.SessionTimeout, RebalanceTimeout: w.cfg.RebalanceTimeout, HeartbeatInterval: w.cfg.HeartbeatInterval,
		ConfigOffset: cfgStore.Offset,
		Assign: func(ctx context.Context, g member.LeaderView) (map[string]member.Assignment, error) {
			return w.leaderAssign(ctx, cfgStore, g)
		},
		OnJoinPrepare: func(ctx context.Context, p member.Protocol, lost bool) {
			if lost || !p.Incremental() {
				// Another member may be given this work: stop it first.
				w.h.do(ctx, func(ctx context.Context) error {
					select { // a generation the loop has not applied yet is stale now
					case <-w.h.assignments:
					default:
					}
					w.h.assign = assignment{}
					w.h.stopAll()
					return nil
				})
			}
		},
		OnAssigned: func(ctx context.Context, g member.Generation) {
			a := assignment{generation: g.ID, leader: g.IsLeader, leaderURL: g.Assignment.LeaderURL,
				connectors: map[string]bool{}, tasks: map[TaskID]bool{}}
			for _, c := range g.Connectors {
				a.connectors[c] = true
			}
			for _, t := range g.Tasks {
				a.tasks[TaskID{Connector: t.Connector, Task: int(t.Task)}] = true
			}
			if len(g.Assignment.RevokedConnectors)+len(g.Assignment.RevokedTasks) > 0 {
				// The member rejoins right after this returns and the
				// leader may hand the revoked work to another worker:
				// stop it here first.
				w.h.do(ctx, func(ctx context.Context) error {
					select {
					case <-w.h.assignments:
					default:
					}
					w.h.assign = a
					w.h.ready.Store(true)
					w.h.reconcile(ctx)
					return nil
				})
				return
			}
			w.h.setAssignment(a)
		},
		Logger: loglevel.Named(w.logger, "dev.tributary.worker.member"),
	})
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("worker: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cl.Close()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-rejoin:
					m.Rejoin()
				}
			}
		}()
		if err := m.Run(ctx); err != nil && ctx.Err() == nil {
			w.logger.Error("worker group membership failed", "err", err)
		}
	}()
	return done, nil
}

// leaderAssign computes a generation's assignment on the leader from the
// config topic, as Kafka Connect's assignors do.
func (w *Worker) leaderAssign(ctx context.Context, cfgStore *store.ConfigStore, g member.LeaderView) (map[string]member.Assignment, error) {
	// The leader must have read at least as far as every member.
	var maxOffset int64 = -1
	for _, jm := range g.Members {
		maxOffset = max(maxOffset, jm.Metadata.ConfigOffset)
	}
	if cfgStore.Offset() < maxOffset {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cfgStore.Refresh(rctx)
		cancel()
	}
	snap := cfgStore.Snapshot()
	leaderURL := ""
	for _, jm := range g.Members {
		if jm.ID == g.LeaderID {
			leaderURL = jm.Metadata.URL
		}
	}
	out := map[string]member.Assignment{}
	if snap.Offset < maxOffset {
		for _, jm := range g.Members {
			out[jm.ID] = member.Assignment{Error: member.ConfigMismatch, Leader: g.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset}
		}
		return out, nil
	}
	work := map[string]int{}
	for name := range snap.Connectors {
		n := len(snap.Tasks[name])
		if snap.TargetStates[name] == store.TargetStopped {
			n = 0
		}
		work[name] = n
	}
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
	toTasks := func(ts []assign.TaskID) []member.TaskID {
		var o []member.TaskID
		for _, t := range ts {
			o = append(o, member.TaskID{Connector: t.Connector, Task: t.Task})
		}
		return o
	}
	for _, jm := range g.Members {
		a := member.Assignment{Leader: g.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset}
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

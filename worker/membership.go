package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/worker/assign"
	"github.com/tributary-dev/tributary/worker/herder"
	"github.com/tributary-dev/tributary/worker/member"
	"github.com/tributary-dev/tributary/worker/store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// assignMemory is what the leader keeps between the rebalances it leads
// (used on the member's goroutine only).
type assignMemory struct {
	state assign.State
	// owners of the last assignment, handed to the herder core with it.
	connOwners map[string]string
	taskOwners map[herder.TaskID]string
}

// joinGroup runs the worker's membership in the group.id group (protocol
// type "connect"). The elected leader assigns connectors and tasks with
// assign.Plan; every generation goes to the herder core, and the member
// waits for its answer (revoked work stopped) before it goes on.
func (d *driver) joinGroup(ctx context.Context, cl *kgo.Client) (*member.Member, error) {
	protocols, err := member.ProtocolsFor(d.cfg.ConnectProtocol)
	if err != nil {
		return nil, fmt.Errorf("worker: connect.protocol: %w", err)
	}
	m, err := member.New(member.Config{
		Client: cl, GroupID: d.cfg.GroupID, URL: d.url + "/", Protocols: protocols,
		SessionTimeout: d.cfg.SessionTimeout, RebalanceTimeout: d.cfg.RebalanceTimeout, HeartbeatInterval: d.cfg.HeartbeatInterval,
		StopTimeout:  d.cfg.TaskShutdownTimeout + time.Second,
		ConfigOffset: d.configs.Offset,
		Assign:       d.leaderAssign,
		OnJoinPrepare: func(ctx context.Context, p member.Protocol, lost bool) {
			d.metrics.RebalanceStarted()
			if _, err := d.call(ctx, func(t herder.Token) herder.Event {
				return herder.JoinPrepare{Reply: t, Lost: lost, Eager: !p.Incremental()}
			}); err != nil {
				d.logger.Warn("stopping work before rejoining the group was interrupted", "err", err)
			}
		},
		OnAssigned: func(ctx context.Context, g member.Generation) {
			if g.Assignment.Error != member.NoError {
				// CONFIG_MISMATCH: read the config topic before rejoining.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				d.configs.Refresh(rctx)
				cancel()
				return
			}
			d.sessioned.Store(g.Protocol == member.Sessioned)
			d.logger.Info("joined the group", "generation", g.ID, "protocol", string(g.Protocol), "leader", g.IsLeader,
				"leader_url", strings.TrimRight(g.Assignment.LeaderURL, "/"), "connectors", len(g.Connectors), "tasks", len(g.Tasks),
				"revoked", len(g.Assignment.RevokedConnectors)+len(g.Assignment.RevokedTasks), "delay_ms", g.Assignment.Delay)
			ev := herder.Assigned{Generation: g.ID, Protocol: herder.Protocol(g.Protocol), Leader: g.IsLeader,
				LeaderURL: strings.TrimRight(g.Assignment.LeaderURL, "/"), ConfigOffset: g.Assignment.ConfigOffset,
				Connectors: g.Connectors}
			for _, t := range g.Tasks {
				ev.Tasks = append(ev.Tasks, herder.TaskID{Connector: t.Connector, Task: int(t.Task)})
			}
			if g.IsLeader {
				ev.ConnectorOwners, ev.TaskOwners = d.assignState.connOwners, d.assignState.taskOwners
			}
			if _, err := d.call(ctx, func(t herder.Token) herder.Event { ev.Reply = t; return ev }); err != nil {
				d.logger.Warn("applying the assignment was interrupted", "generation", g.ID, "err", err)
				return
			}
			d.metrics.RebalanceCompleted(g.ID, string(g.Protocol), g.Assignment.LeaderURL, len(g.Connectors), len(g.Tasks))
			if !d.ready.Swap(true) {
				d.stage.Store("running")
			}
		},
		Logger: loglevel.Named(d.logger, "dev.tributary.worker.member"),
	})
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	d.member = m
	return m, nil
}

// leaderAssign computes a generation's assignment on the leader from the
// config topic, as Kafka Connect's IncrementalCooperativeAssignor does,
// with the scheduled rebalance delay.
func (d *driver) leaderAssign(ctx context.Context, g member.LeaderView) (map[string]member.Assignment, error) {
	// The leader must have read at least as far as every member.
	var maxOffset int64 = -1
	for _, jm := range g.Members {
		maxOffset = max(maxOffset, jm.Metadata.ConfigOffset)
	}
	if d.configs.Offset() < maxOffset {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d.configs.Refresh(rctx)
		cancel()
	}
	snap := d.configs.Snapshot()
	leaderURL := ""
	urls := map[string]string{}
	for _, jm := range g.Members {
		urls[jm.ID] = strings.TrimRight(jm.Metadata.URL, "/")
		if jm.ID == g.LeaderID {
			leaderURL = jm.Metadata.URL
		}
	}
	out := map[string]member.Assignment{}
	if snap.Offset < maxOffset {
		d.logger.Warn("was selected to perform assignments but is behind a member on the config topic; asking all to read it and rejoin",
			"offset", snap.Offset, "member_offset", maxOffset)
		for _, jm := range g.Members {
			out[jm.ID] = member.Assignment{Error: member.ConfigMismatch, Leader: g.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset}
		}
		return out, nil
	}
	work := map[string]int{}
	for name := range snap.Connectors {
		if p := connectorProblem(name, snap); p != "" {
			continue // no worker can run it; the herder reports it FAILED
		}
		n := len(snap.Tasks[name])
		if snap.TargetStates[name] == store.TargetStopped {
			n = 0
		}
		work[name] = n
	}
	var ms []assign.Member
	for _, jm := range g.Members {
		am := assign.Member{ID: jm.ID, URL: urls[jm.ID]}
		if a := jm.Metadata.Allocation; a != nil {
			am.Previous.Connectors = a.Connectors
			for _, t := range a.Tasks {
				am.Previous.Tasks = append(am.Previous.Tasks, assign.TaskID{Connector: t.Connector, Task: t.Task})
			}
		}
		ms = append(ms, am)
	}
	maxDelay := d.cfg.ScheduledRebalanceDelay
	if !g.Protocol.Incremental() {
		maxDelay = 0
	}
	res := assign.Plan(assign.Input{Members: ms, Work: work, Now: time.Now(), MaxDelay: maxDelay, State: d.assignState.state})
	d.assignState.state = res.State
	if res.Delay > 0 {
		d.logger.Info("holding back the work of a departed worker until the scheduled rebalance",
			"connectors", len(res.State.Lost.Connectors), "tasks", len(res.State.Lost.Tasks), "delay", res.Delay.Round(time.Millisecond))
	}
	d.assignState.connOwners, d.assignState.taskOwners = map[string]string{}, map[herder.TaskID]string{}
	for id, a := range res.Target {
		for _, c := range a.Connectors {
			d.assignState.connOwners[c] = urls[id]
		}
		for _, t := range a.Tasks {
			d.assignState.taskOwners[herder.TaskID{Connector: t.Connector, Task: int(t.Task)}] = urls[id]
		}
	}
	toTasks := func(ts []assign.TaskID) []member.TaskID {
		var o []member.TaskID
		for _, t := range ts {
			o = append(o, member.TaskID{Connector: t.Connector, Task: t.Task})
		}
		return o
	}
	for _, jm := range g.Members {
		a := member.Assignment{Leader: g.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset, Delay: int32(res.Delay.Milliseconds())}
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

package herder

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// trace drives one Machine through scripted events and checks the actions
// of each step, printed one per line (see format).
type trace struct {
	t   *testing.T
	m   *Machine
	now time.Time
}

func newTrace(t *testing.T, cfg Config) *trace {
	if cfg.WorkerID == "" {
		cfg.WorkerID, cfg.URL = "w1:8083", "http://w1:8083"
	}
	return &trace{t: t, m: New(cfg), now: t0}
}

// at moves the clock.
func (tr *trace) at(d time.Duration) *trace { tr.now = t0.Add(d); return tr }

// step applies ev and requires exactly the actions want, in order.
func (tr *trace) step(ev Event, want ...string) {
	tr.t.Helper()
	tr.m.Step(tr.now, ev)
	got := format(tr.m.Ready())
	if !slices.Equal(got, want) {
		tr.t.Fatalf("after %T%+v:\ngot:\n  %s\nwant:\n  %s", ev, ev, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func format(as []Action) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, formatAction(a))
	}
	return out
}

func formatAction(a Action) string {
	switch a := a.(type) {
	case StartConnector:
		return fmt.Sprintf("start %s run=%d", a.Name, a.Run)
	case GenerateTaskConfigs:
		return fmt.Sprintf("generate %s run=%d gen=%d max=%d", a.Name, a.Run, a.Gen, a.MaxTasks)
	case StopConnector:
		return fmt.Sprintf("stop %s run=%d", a.Name, a.Run)
	case StartTask:
		p := ""
		if a.Paused {
			p = " paused"
		}
		if a.ExactlyOnce {
			p += fmt.Sprintf(" eos taskgen=%d", a.TaskGeneration)
		}
		return fmt.Sprintf("start %s-%d run=%d%s conn=%s task=%s", a.ID.Connector, a.ID.Task, a.Run, p, a.Connector["v"], a.Config["t"])
	case PauseTask:
		return fmt.Sprintf("pause %s-%d", a.ID.Connector, a.ID.Task)
	case ResumeTask:
		return fmt.Sprintf("resume %s-%d", a.ID.Connector, a.ID.Task)
	case StopTask:
		return fmt.Sprintf("stop %s-%d run=%d", a.ID.Connector, a.ID.Task, a.Run)
	case PutStatus:
		who := a.Connector
		if a.Task >= 0 {
			who = fmt.Sprintf("%s-%d", a.Connector, a.Task)
		}
		tr := ""
		if a.Trace != "" {
			tr = fmt.Sprintf(" %q", firstLine(a.Trace))
		}
		return fmt.Sprintf("status %s %s%s gen=%d", who, a.State, tr, a.Generation)
	case CleanStatuses:
		return "clean-statuses"
	case WriteConfigs:
		var ws []string
		for _, w := range a.Writes {
			switch w.Kind {
			case WriteConnector:
				if w.Config == nil {
					ws = append(ws, "delete "+w.Name)
				} else {
					ws = append(ws, "connector "+w.Name+" v="+w.Config["v"])
				}
			case WriteTarget:
				ws = append(ws, "target "+w.Name+" "+string(w.Target))
			case WriteTasks:
				ws = append(ws, fmt.Sprintf("tasks %s n=%d", w.Name, len(w.Tasks)))
			case WriteRestart:
				ws = append(ws, fmt.Sprintf("restart %s tasks=%t failed=%t", w.Name, w.IncludeTasks, w.OnlyFailed))
			case WriteSessionKey:
				ws = append(ws, "session-key")
			case WriteTaskCount:
				ws = append(ws, fmt.Sprintf("task-count %s n=%d", w.Name, w.TaskCount))
			}
		}
		return fmt.Sprintf("write op=%d [%s]", a.Op, strings.Join(ws, ", "))
	case SendTaskConfigs:
		s := ""
		if a.Signed {
			s = " signed"
		}
		return fmt.Sprintf("send op=%d %s n=%d to=%s%s", a.Op, a.Name, len(a.Configs), a.LeaderURL, s)
	case ModifyOffsetsAction:
		return fmt.Sprintf("offsets op=%d %s", a.Op, a.Name)
	case FenceProducers:
		return fmt.Sprintf("fence op=%d %s tasks=%d", a.Op, a.Name, a.Tasks)
	case ClaimWrites:
		if a.Claim {
			return "claim-writes"
		}
		return "relinquish-writes"
	case ReadConfigs:
		return "read-configs"
	case Rejoin:
		return "rejoin"
	case Reply:
		r := a.Result
		switch {
		case r.Err != nil && r.Err.Forward != "":
			return fmt.Sprintf("reply %d forward=%s", a.To, r.Err.Forward)
		case r.Err != nil:
			return fmt.Sprintf("reply %d %d %q", a.To, r.Err.Code, r.Err.Message)
		case r.Created:
			return fmt.Sprintf("reply %d created", a.To)
		case r.Stale:
			return fmt.Sprintf("reply %d stale", a.To)
		case r.LeaderURL != "":
			return fmt.Sprintf("reply %d leader=%s", a.To, r.LeaderURL)
		case r.Message != "":
			return fmt.Sprintf("reply %d %q", a.To, r.Message)
		}
		return fmt.Sprintf("reply %d ok", a.To)
	}
	return fmt.Sprintf("%T", a)
}

// configs builds snapshots: connector name -> version of its config
// ("v"), target and task count; task configs are {"t": "<v>-<i>"}.
type cfgs map[string]spec

type spec struct {
	v      string
	target Target
	tasks  int
	// applied is the version the tasks were committed for ("": v).
	applied string
	// problem and offsetsProblem: Connector.Problem and OffsetsProblem.
	problem        string
	offsetsProblem bool
	// cfgOffset is Connector.ConfigOffset.
	cfgOffset int64
	// source, taskCount (-1: none), pending and gen: Connector.Source,
	// TaskCount/HasTaskCount, PendingFencing and Generation.
	source    bool
	taskCount int
	pending   bool
	gen       int
}

func snapshot(offset int64, cs cfgs) Configs {
	s := Snapshot{Offset: offset, Connectors: map[string]Connector{}}
	for _, name := range slices.Sorted(maps.Keys(cs)) {
		sp := cs[name]
		c := Connector{Config: cfgOf(name, sp.v), Target: sp.target, Problem: sp.problem, OffsetsProblem: sp.offsetsProblem, ConfigOffset: sp.cfgOffset,
			Source: sp.source, TaskCount: sp.taskCount, HasTaskCount: sp.taskCount > 0, PendingFencing: sp.pending, Generation: sp.gen}
		if c.Target == "" {
			c.Target = Started
		}
		av := sp.applied
		if av == "" {
			av = sp.v
		}
		c.Applied = cfgOf(name, av)
		for i := 0; i < sp.tasks; i++ {
			c.Tasks = append(c.Tasks, taskCfg(av, i))
		}
		s.Connectors[name] = c
	}
	return Configs{Snapshot: s}
}

func cfgOf(name, v string) map[string]string {
	return map[string]string{"name": name, "v": v, "tasks.max": "3"}
}

func taskCfg(v string, i int) map[string]string {
	return map[string]string{"t": fmt.Sprintf("%s-%d", v, i)}
}

func taskCfgs(v string, n int) []map[string]string {
	var out []map[string]string
	for i := 0; i < n; i++ {
		out = append(out, taskCfg(v, i))
	}
	return out
}

func tasks(conn string, ids ...int) []TaskID {
	var out []TaskID
	for _, i := range ids {
		out = append(out, TaskID{conn, i})
	}
	return out
}

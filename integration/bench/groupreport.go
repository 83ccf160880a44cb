package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// GroupConsumeRun is one consumer group consume run.
type GroupConsumeRun struct {
	// Rate counts every record once, over the time from resuming fetches
	// on the stable group to the last record's arrival.
	Rate *Rate `json:"rate"`
	// JoinSeconds is the time from creating the 3 clients until the group
	// was stable (each member owning 2 partitions), not in Rate.
	JoinSeconds float64 `json:"join_seconds"`
	// FirstRecordSeconds is the time from resuming to the first record.
	FirstRecordSeconds float64 `json:"first_record_seconds"`
	// Duplicates counts records delivered more than once (none expected:
	// the group is stable before fetching starts).
	Duplicates int `json:"duplicates"`
	// PerMember counts the records each member received.
	PerMember []int `json:"per_member"`
}

// GroupConsumeResult is one target's group consume figures: Median is the
// median run by records/s.
type GroupConsumeResult struct {
	Target Target            `json:"target"`
	Median *GroupConsumeRun  `json:"median,omitempty"`
	Runs   []GroupConsumeRun `json:"runs,omitempty"`
	Error  string            `json:"error,omitempty"`
}

func (g *GroupConsumeResult) pickMedian() {
	if len(g.Runs) == 0 {
		g.Median = nil
		return
	}
	s := slices.Clone(g.Runs)
	slices.SortStableFunc(s, func(a, b GroupConsumeRun) int { return cmp.Compare(a.Rate.RecordsPerSec, b.Rate.RecordsPerSec) })
	m := s[(len(s)-1)/2]
	g.Median = &m
}

func (g *GroupConsumeResult) rates() []*Rate {
	var rs []*Rate
	for _, r := range g.Runs {
		rs = append(rs, r.Rate)
	}
	return rs
}

// RebalanceRun is one kill-and-recover repetition.
type RebalanceRun struct {
	// StableSeconds is how long the 3 members took to own 2 partitions
	// each and consume from all of them (before the kill).
	StableSeconds float64 `json:"stable_seconds"`
	// DeadPartitions are the partitions the killed member owned.
	DeadPartitions []int32 `json:"dead_partitions"`
	// AssignedSeconds is the time from the kill until every dead
	// partition was assigned to a survivor (the rebalance completed).
	AssignedSeconds float64 `json:"assigned_seconds"`
	// Seconds is the time from the kill until survivors received records
	// from every dead partition: the measured rebalance time.
	Seconds float64 `json:"seconds"`
}

// Stats are the median, minimum and maximum of some seconds.
type Stats struct {
	Median float64 `json:"median_seconds"`
	Min    float64 `json:"min_seconds"`
	Max    float64 `json:"max_seconds"`
}

// statsOf computes Stats (the lower middle value for an even count); ok is
// false for no values.
func statsOf(v []float64) (Stats, bool) {
	if len(v) == 0 {
		return Stats{}, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Stats{Median: s[(len(s)-1)/2], Min: s[0], Max: s[len(s)-1]}, true
}

func (s Stats) String() string {
	return fmt.Sprintf("%.2fs (min %.2fs, max %.2fs)", s.Median, s.Min, s.Max)
}

// RebalanceResult is one target's rebalance figures.
type RebalanceResult struct {
	Target   Target         `json:"target"`
	Runs     []RebalanceRun `json:"runs,omitempty"`
	Resume   *Stats         `json:"resume,omitempty"`   // RebalanceRun.Seconds
	Assigned *Stats         `json:"assigned,omitempty"` // RebalanceRun.AssignedSeconds
	// Met: every run resumed within RebalanceGoal (nil without runs).
	Met   *bool  `json:"goal_met,omitempty"`
	Error string `json:"error,omitempty"`
}

func (r *RebalanceResult) summarize() {
	var resume, assigned []float64
	for _, run := range r.Runs {
		resume = append(resume, run.Seconds)
		assigned = append(assigned, run.AssignedSeconds)
	}
	r.Resume, r.Assigned, r.Met = nil, nil, nil
	if s, ok := statsOf(resume); ok {
		r.Resume = &s
		met := r.Error == "" && rebalanceMet(s)
		r.Met = &met
	}
	if s, ok := statsOf(assigned); ok {
		r.Assigned = &s
	}
}

// rebalanceMet: the goal is met when even the slowest run resumed within
// RebalanceGoal.
func rebalanceMet(s Stats) bool { return s.Max <= RebalanceGoal.Seconds() }

// GroupReport holds the consumer group benchmarks.
type GroupReport struct {
	Settings  string                `json:"settings"`
	Consume   []*GroupConsumeResult `json:"consume,omitempty"`
	Rebalance []*RebalanceResult    `json:"rebalance,omitempty"`
	// GoalMet is Tributary's rebalance goal (nil when it did not run).
	GoalMet *bool `json:"rebalance_goal_met,omitempty"`
}

// groupSettings describes the group benchmark set-up.
func groupSettings(records, runs, rebalanceRuns int) string {
	return fmt.Sprintf("%d franz-go members (kgo.ConsumerGroup, default cooperative-sticky balancer, autocommit), "+
		"one group, %d partitions, %d B records; session.timeout.ms=%d, heartbeat.interval.ms=%d; "+
		"group.initial.rebalance.delay.ms=%d on tributary and kafka (kfake has no such delay). "+
		"Consume: %d records (round robin over the partitions) read from the start by a new group, %d run(s), median shown; "+
		"the members join with fetching paused and the clock starts when the group is stable (join = time to that point, not in the rate). Rebalance: %d repetition(s), each a new group on a continuous stream of %d records/s; "+
		"one member runs in a child process and is SIGKILLed (no LeaveGroup); time from the kill until the two "+
		"in-process survivors received records from every partition it owned; goal: every repetition within %v",
		GroupMembers, GroupPartitions, GroupRecordSize, SessionTimeout.Milliseconds(), HeartbeatInterval.Milliseconds(),
		InitialRebalanceDelay, records, runs, rebalanceRuns, GroupPartitions*int(time.Second/streamInterval), RebalanceGoal)
}

func (g *GroupReport) compute() {
	g.GoalMet = nil
	for _, r := range g.Rebalance {
		r.summarize()
		if r.Target == Tributary {
			met := r.Error == "" && r.Met != nil && *r.Met
			g.GoalMet = &met
		}
	}
	for _, c := range g.Consume {
		c.pickMedian()
	}
}

// Failed reports whether a group run failed.
func (g *GroupReport) Failed() bool {
	for _, c := range g.Consume {
		if c.Error != "" {
			return true
		}
	}
	for _, r := range g.Rebalance {
		if r.Error != "" {
			return true
		}
	}
	return false
}

// writeText writes the group tables.
func (g *GroupReport) writeText(b *strings.Builder) {
	fmt.Fprintf(b, "\n== Consumer groups\n%s\n", wrap(g.Settings+".", 100, "  "))
	if len(g.Consume) == 0 && len(g.Rebalance) == 0 {
		fmt.Fprintf(b, "  Not run: none of the targets that run them (%s, %s, %s) was selected.\n", Tributary, KfakeMemory, Kafka)
	}
	if len(g.Consume) > 0 {
		fmt.Fprintf(b, "\nGroup consume (%d members):\n", GroupMembers)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "target\tconsume rec/s\tMB/s\tspread\tjoin\tduplicates\t\n")
		for _, c := range g.Consume {
			if c.Error != "" || c.Median == nil {
				fmt.Fprintf(tw, "%s\tfailed (see below)\t\t\t\t\t\n", c.Target)
				continue
			}
			cells := rateCells(c.Median.Rate, c.rates())
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fs\t%d\t\n", c.Target, cells[0], cells[1], cells[2], c.Median.JoinSeconds, c.Median.Duplicates)
		}
		tw.Flush()
		for _, c := range g.Consume {
			if c.Error != "" {
				fmt.Fprintf(b, "  %s failed: %s\n", c.Target, c.Error)
			}
		}
	}
	if len(g.Rebalance) > 0 {
		fmt.Fprintf(b, "\nRebalance after SIGKILL of 1 of %d members (session timeout %v, heartbeat %v):\n", GroupMembers, SessionTimeout, HeartbeatInterval)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "target\truns\tresumed median\tmin\tmax\treassigned median\twithin 8s\t\n")
		for _, r := range g.Rebalance {
			if r.Resume == nil {
				fmt.Fprintf(tw, "%s\tfailed (see below)\t\t\t\t\t\t\n", r.Target)
				continue
			}
			within := "no"
			if r.Met != nil && *r.Met {
				within = "yes"
			}
			fmt.Fprintf(tw, "%s\t%d\t%.2fs\t%.2fs\t%.2fs\t%.2fs\t%s\t\n", r.Target, len(r.Runs),
				r.Resume.Median, r.Resume.Min, r.Resume.Max, r.Assigned.Median, within)
		}
		tw.Flush()
		for _, r := range g.Rebalance {
			if r.Error != "" {
				fmt.Fprintf(b, "  %s failed: %s\n", r.Target, r.Error)
			}
		}
		goal := fmt.Sprintf("rebalance %s: every run resumed within %v:", Tributary, RebalanceGoal)
		switch {
		case g.GoalMet == nil:
			fmt.Fprintf(b, "  %-40s n/a (no %s figure)\n", goal, Tributary)
		case *g.GoalMet:
			fmt.Fprintf(b, "  %-40s met\n", goal)
		default:
			fmt.Fprintf(b, "  %-40s NOT MET\n", goal)
		}
	}
}

// wrap breaks s into lines of at most width columns (words longer than that
// stay whole), each starting with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

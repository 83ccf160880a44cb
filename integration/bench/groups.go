package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Settings of the consumer group benchmarks.
const (
	// GroupMembers is the member count of the group runs.
	GroupMembers = 3
	// GroupPartitions is the partition count of the group topics.
	GroupPartitions = 6
	// GroupRecordSize is the record value size of the group runs.
	GroupRecordSize = 100
	// SessionTimeout is the members' session.timeout.ms.
	SessionTimeout = 6 * time.Second
	// HeartbeatInterval is the members' heartbeat.interval.ms.
	HeartbeatInterval = 1 * time.Second
	// RebalanceGoal: survivors must consume from every partition of a
	// killed member within this time of the kill.
	RebalanceGoal = 8 * time.Second
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms on every
	// target (kfake has no such delay).
	InitialRebalanceDelay = 0
	// DefaultGroupRecords is the default record count of a group consume run.
	DefaultGroupRecords = 2_000_000
	// DefaultRebalanceRuns is the default repetition count of the rebalance run.
	DefaultRebalanceRuns = 3
)

// streamInterval is how often the rebalance run's producer writes one
// record to every partition (600 records/s over 6 partitions).
const streamInterval = 10 * time.Millisecond

// hasGroups reports whether the group runs apply to t: one target per
// broker implementation (durability settings do not change groups).
func (t Target) hasGroups() bool { return t == Tributary || t == KfakeMemory || t == Kafka }

// groupConsume produces n records to a fresh 6-partition topic (round
// robin), then runs times: 3 new members of a new group join with fetching
// paused and, once the group is stable, consume them from the start, timed
// from resuming until every record arrived. The join time is reported
// apart.
func groupConsume(ctx context.Context, t Target, bootstrap string, n, runs int, timeout time.Duration, logf func(string, ...any)) *GroupConsumeResult {
	res := &GroupConsumeResult{Target: t}
	fail := func(err error) *GroupConsumeResult {
		res.Error = err.Error()
		logf("%s group consume: FAILED %s", t, res.Error)
		return res
	}
	topic := fmt.Sprintf("bench-group-%db-%dp", GroupRecordSize, GroupPartitions)
	if err := createTopics(ctx, bootstrap, GroupPartitions, []string{topic}); err != nil {
		return fail(fmt.Errorf("create topic: %w", err))
	}
	// Round-robin: every partition, hence every member, gets n/6 records.
	prod, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return fail(err)
	}
	logf("%s group consume: produce %d records to %s", t, n, topic)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	_, err = produce(pctx, prod, topic, GroupRecordSize, n, 0)
	cancel()
	prod.Close()
	if err != nil {
		return fail(fmt.Errorf("produce: %w", err))
	}
	w := Workload{RecordSize: GroupRecordSize, Partitions: GroupPartitions, Records: n}
	for run := 1; run <= runs; run++ {
		group := fmt.Sprintf("bench-consume-%s-%d-%d", t, run, time.Now().UnixNano())
		cctx, cancel := context.WithTimeout(ctx, timeout)
		r, err := consumeGroup(cctx, bootstrap, topic, group, n)
		cancel()
		if err != nil {
			return fail(fmt.Errorf("run %d: %w", run, err))
		}
		r.Rate = newRate(w, time.Duration(r.Rate.Seconds*float64(time.Second)))
		logf("%s group consume run %d/%d: group stable after %.2fs, then %s, %d duplicates, per member %v",
			t, run, runs, r.JoinSeconds, r.Rate, r.Duplicates, r.PerMember)
		res.Runs = append(res.Runs, r)
	}
	res.pickMedian()
	return res
}

// consumeGroup runs GroupMembers members of group on topic until all n
// records arrived. The members start with fetching paused; once the group
// is stable (each member owns its share of the partitions) fetching
// resumes on all of them and the clock starts, so that the rate is that of
// 3 members, not of the first one to join (with no initial rebalance
// delay it would otherwise read most records alone).
func consumeGroup(ctx context.Context, bootstrap, topic, group string, n int) (GroupConsumeRun, error) {
	var (
		mu       sync.Mutex
		seen     = make([]uint64, (n+63)/64)
		unique   int
		dups     int
		first    time.Time
		per      = make([]int, GroupMembers)
		bad      error
		done     = make(chan struct{})
		doneOnce sync.Once
	)
	begin := time.Now()
	var clients []*kgo.Client
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	states := make([]*memberState, GroupMembers)
	for i := range states {
		states[i] = newMemberState(nil)
		cl, err := kgo.NewClient(groupMemberOpts(bootstrap, topic, group, states[i], kgo.NewOffset().AtStart())...)
		if err != nil {
			return GroupConsumeRun{}, err
		}
		cl.PauseFetchTopics(topic)
		clients = append(clients, cl)
	}
	var wg sync.WaitGroup
	pctx, stop := context.WithCancel(ctx)
	defer func() { stop(); wg.Wait() }()
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				fs := cl.PollFetches(pctx)
				mu.Lock()
				fs.EachRecord(func(r *kgo.Record) {
					if bad != nil {
						return
					}
					if len(r.Value) != GroupRecordSize {
						bad = fmt.Errorf("partition %d offset %d: value of %d bytes", r.Partition, r.Offset, len(r.Value))
						return
					}
					seq := binary.BigEndian.Uint64(r.Value)
					if seq >= uint64(n) {
						bad = fmt.Errorf("partition %d offset %d: sequence %d out of range", r.Partition, r.Offset, seq)
						return
					}
					if first.IsZero() {
						first = time.Now()
					}
					per[i]++
					if seen[seq/64]&(1<<(seq%64)) != 0 {
						dups++
						return
					}
					seen[seq/64] |= 1 << (seq % 64)
					unique++
				})
				if bad != nil || unique == n {
					doneOnce.Do(func() { close(done) })
				}
				mu.Unlock()
			}
		}()
	}
	// Wait for a stable group: every partition owned by one member, each
	// member owning some, unchanged for a moment.
	var last []memberSnapshot
	var since time.Time
	for {
		var ss []memberSnapshot
		for _, st := range states {
			s := st.snapshot()
			s.Consuming = true // paused: nothing to consume yet
			ss = append(ss, s)
		}
		if groupStable(ss, GroupPartitions) {
			if last == nil || !sameGens(ss, last) {
				last, since = ss, time.Now()
			} else if time.Since(since) >= 200*time.Millisecond {
				break
			}
		} else {
			last = nil
		}
		select {
		case <-ctx.Done():
			return GroupConsumeRun{}, fmt.Errorf("group not stable: members own %v (%w)", ss, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	joined := time.Since(begin)
	start := time.Now()
	for _, cl := range clients {
		cl.ResumeFetchTopics(topic)
	}
	select {
	case <-done:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return GroupConsumeRun{}, fmt.Errorf("%w after %d of %d records", ctx.Err(), unique, n)
	}
	d := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if bad != nil {
		return GroupConsumeRun{}, bad
	}
	return GroupConsumeRun{
		Rate:               &Rate{Seconds: d.Seconds()},
		JoinSeconds:        joined.Seconds(),
		FirstRecordSeconds: first.Sub(start).Seconds(),
		Duplicates:         dups,
		PerMember:          slices.Clone(per),
	}, nil
}

// memberCommand returns the command that runs a member child.
func memberCommand(o *Options) (*exec.Cmd, error) {
	exe := o.MemberExe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find own executable for the member child: %w", err)
		}
	}
	return exec.Command(exe, o.MemberArgs...), nil
}

// rebalance measures, runs times, how long after one of GroupMembers
// members is SIGKILLed the survivors consume from every partition it owned.
func rebalance(ctx context.Context, t Target, bootstrap string, o *Options, logf func(string, ...any)) *RebalanceResult {
	res := &RebalanceResult{Target: t}
	fail := func(err error) *RebalanceResult {
		res.Error = err.Error()
		logf("%s rebalance: FAILED %s", t, res.Error)
		return res
	}
	topic := fmt.Sprintf("bench-rebalance-%dp", GroupPartitions)
	if err := createTopics(ctx, bootstrap, GroupPartitions, []string{topic}); err != nil {
		return fail(fmt.Errorf("create topic: %w", err))
	}
	stopStream, streamErr, err := stream(ctx, bootstrap, topic)
	if err != nil {
		return fail(fmt.Errorf("producer: %w", err))
	}
	defer stopStream()
	for run := 1; run <= o.RebalanceRuns; run++ {
		r, err := rebalanceOnce(ctx, t, bootstrap, topic, run, o, logf)
		if err == nil {
			err = streamErr()
		}
		if err != nil {
			return fail(fmt.Errorf("run %d: %w", run, err))
		}
		logf("%s rebalance run %d/%d: killed member owned %s; survivors assigned them after %.2fs, consuming all of them after %.2fs",
			t, run, o.RebalanceRuns, formatPartitions(r.DeadPartitions), r.AssignedSeconds, r.Seconds)
		res.Runs = append(res.Runs, r)
	}
	res.summarize()
	return res
}

// stream produces one record to each partition of topic every
// streamInterval until stopped. err returns the first produce error.
func stream(ctx context.Context, bootstrap, topic string) (stop func(), err func() error, _ error) {
	cl, e := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if e != nil {
		return nil, nil, e
	}
	var (
		first   atomic.Pointer[error]
		wg      sync.WaitGroup
		sctx, c = context.WithCancel(ctx)
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(streamInterval)
		defer tick.Stop()
		var seq uint64
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
			}
			for p := range int32(GroupPartitions) {
				v := make([]byte, GroupRecordSize)
				binary.BigEndian.PutUint64(v, seq)
				seq++
				cl.Produce(sctx, &kgo.Record{Topic: topic, Partition: p, Value: v}, func(_ *kgo.Record, err error) {
					if err != nil && sctx.Err() == nil {
						first.CompareAndSwap(nil, &err)
					}
				})
			}
		}
	}()
	return func() { c(); wg.Wait(); cl.Close() }, func() error {
		if p := first.Load(); p != nil {
			return fmt.Errorf("stream producer: %w", *p)
		}
		return nil
	}, nil
}

// childState is the parent's view of the member child, from its stdout.
type childState struct {
	mu   sync.Mutex
	snap memberSnapshot
	err  error
}

func (c *childState) line(s string) {
	verb, ps, err := parseMemberLine(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.err = err
		return
	}
	switch verb {
	case "owned":
		c.snap = memberSnapshot{Owned: ps, Gen: c.snap.Gen + 1}
	case "consumed":
		if slices.Equal(ps, c.snap.Owned) {
			c.snap.Consuming = true
		}
	}
}

func (c *childState) get() (memberSnapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap, c.err
}

// rebalanceOnce runs one repetition on a new group: a member child and
// GroupMembers-1 in-process members consume the stream; once the group is
// stable the child is SIGKILLed and the survivors are watched.
func rebalanceOnce(ctx context.Context, t Target, bootstrap, topic string, run int, o *Options, logf func(string, ...any)) (RebalanceRun, error) {
	var res RebalanceRun
	group := fmt.Sprintf("bench-rebalance-%s-%d-%d", t, run, time.Now().UnixNano())
	rctx, cancel := context.WithTimeout(ctx, o.PhaseTimeout)
	defer cancel()

	// The member child.
	cmd, err := memberCommand(o)
	if err != nil {
		return res, err
	}
	spec, _ := json.Marshal(memberSpec{Bootstrap: bootstrap, Topic: topic, Group: group,
		SessionMs: SessionTimeout.Milliseconds(), HeartbeatMs: HeartbeatInterval.Milliseconds()})
	cmd.Env = append(os.Environ(), MemberChildEnv+"="+string(spec))
	var childErr bytes.Buffer
	cmd.Stderr = &childErr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start member child: %w", err)
	}
	var (
		child    childState
		exited   = make(chan struct{})
		killed   atomic.Bool
		waitErr  error
		readDone = make(chan struct{})
	)
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			child.line(sc.Text())
		}
	}()
	go func() {
		<-readDone
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		if !killed.Load() {
			cmd.Process.Kill()
		}
		stdin.Close()
		<-exited
	}()

	// The survivors, in this process.
	states := make([]*memberState, GroupMembers-1)
	var clients []*kgo.Client
	var wg sync.WaitGroup
	pctx, stopPoll := context.WithCancel(rctx)
	defer func() {
		stopPoll()
		wg.Wait()
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for i := range states {
		states[i] = newMemberState(nil)
		cl, err := kgo.NewClient(groupMemberOpts(bootstrap, topic, group, states[i], kgo.NewOffset().AtEnd())...)
		if err != nil {
			return res, err
		}
		clients = append(clients, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				fs := cl.PollFetches(pctx)
				now := time.Now()
				var ps []int32
				fs.EachPartition(func(p kgo.FetchTopicPartition) {
					if len(p.Records) > 0 {
						ps = append(ps, p.Partition)
					}
				})
				states[i].consumed(ps, now)
			}
		}()
	}
	snaps := func() ([]memberSnapshot, error) {
		c, err := child.get()
		out := []memberSnapshot{c}
		for _, s := range states {
			out = append(out, s.snapshot())
		}
		return out, err
	}
	exitedErr := func() error {
		return fmt.Errorf("member child exited early (%v): %s", waitErr, bytes.TrimSpace(childErr.Bytes()))
	}

	// Wait until the group is stable: each member consumes its own share,
	// unchanged for settle. The random part moves the kill to a random
	// point of the heartbeat cycle: the coordinator expires the member a
	// session timeout after its last heartbeat, which came up to one
	// heartbeat interval before the kill.
	settle := time.Second + rand.N(HeartbeatInterval)
	begin := time.Now()
	var stableSince time.Time
	var stableSnaps []memberSnapshot
	for {
		ss, err := snaps()
		if err != nil {
			return res, err
		}
		if groupStable(ss, GroupPartitions) {
			if stableSnaps == nil || !sameGens(ss, stableSnaps) {
				stableSince, stableSnaps = time.Now(), ss
			} else if time.Since(stableSince) >= settle {
				break
			}
		} else {
			stableSnaps = nil
		}
		select {
		case <-rctx.Done():
			return res, fmt.Errorf("group not stable after %v: members own %v (%w)", time.Since(begin).Round(time.Millisecond), ss, rctx.Err())
		case <-exited:
			return res, exitedErr()
		case <-time.After(20 * time.Millisecond):
		}
	}
	res.StableSeconds = time.Since(begin).Seconds()
	dead := stableSnaps[0].Owned
	res.DeadPartitions = dead

	// Kill the child: SIGKILL, so it sends no LeaveGroup and its
	// connections are closed by the kernel.
	killAt := time.Now()
	for _, s := range states {
		s.setKill(killAt)
	}
	killed.Store(true)
	if err := cmd.Process.Kill(); err != nil {
		return res, fmt.Errorf("kill member child: %w", err)
	}
	logf("%s rebalance run %d: group stable after %.2fs; SIGKILLed the member owning %s",
		t, run, res.StableSeconds, formatPartitions(dead))

	deadline := time.NewTimer(o.RebalanceTimeout)
	defer deadline.Stop()
	for {
		assigned, consumed, missing := survivorsTimes(states, dead)
		if len(missing) == 0 {
			res.AssignedSeconds = assigned.Sub(killAt).Seconds()
			res.Seconds = consumed.Sub(killAt).Seconds()
			return res, nil
		}
		select {
		case <-rctx.Done():
			return res, fmt.Errorf("%w: survivors not consuming partitions %s", rctx.Err(), formatPartitions(missing))
		case <-deadline.C:
			return res, fmt.Errorf("survivors not consuming partitions %s %v after the kill", formatPartitions(missing), o.RebalanceTimeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sameGens reports whether no member's ownership changed between a and b.
func sameGens(a, b []memberSnapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Gen != b[i].Gen {
			return false
		}
	}
	return true
}

// survivorsTimes returns the latest, over the dead partitions, of the
// first time a survivor was assigned it and of the first time a survivor
// received a record from it, and the partitions not consumed yet.
func survivorsTimes(states []*memberState, dead []int32) (assigned, consumed time.Time, missing []int32) {
	for _, p := range dead {
		var a, c time.Time
		for _, s := range states {
			sa, sc := s.since(p)
			a, c = earliest(a, sa), earliest(c, sc)
		}
		if c.IsZero() {
			missing = append(missing, p)
			continue
		}
		if a.IsZero() { // not seen in a callback: count the first record
			a = c
		}
		assigned, consumed = latest(assigned, a), latest(consumed, c)
	}
	return assigned, consumed, missing
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

var errNoGroupTargets = errors.New("no selected target runs the group benchmarks (tributary, kfake-memory, kafka)")

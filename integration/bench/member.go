package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// MemberChildEnv, when set in the environment, makes the process a group
// member child of the rebalance benchmark (see RunMemberChild) instead of
// whatever it was started as. Its value is the JSON of memberSpec.
const MemberChildEnv = "TRIBUTARY_BENCH_GROUP_MEMBER"

// IsMemberChild reports whether this process was started as a group member
// child of the rebalance benchmark.
func IsMemberChild() bool { return os.Getenv(MemberChildEnv) != "" }

// memberSpec is what a member child needs.
type memberSpec struct {
	Bootstrap   string `json:"bootstrap"`
	Topic       string `json:"topic"`
	Group       string `json:"group"`
	SessionMs   int64  `json:"session_ms"`
	HeartbeatMs int64  `json:"heartbeat_ms"`
}

// groupMemberOpts are the client options of every group member of the
// group benchmarks (consume and rebalance).
func groupMemberOpts(bootstrap, topic, group string, st *memberState, reset kgo.Offset) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(reset),
		kgo.SessionTimeout(SessionTimeout),
		kgo.HeartbeatInterval(HeartbeatInterval),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.change(m[topic], nil) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.change(nil, m[topic]) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { st.change(nil, m[topic]) }),
	}
}

// RunMemberChild runs one consumer group member as described by
// $TRIBUTARY_BENCH_GROUP_MEMBER until it is killed or its stdin closes
// (the parent went away). It reports on stdout, one line each:
//
//	owned 0,3      the partitions it owns, after every change
//	consumed 0,3   it has received records from every partition it owns
//
// The parent SIGKILLs it: it never leaves the group by itself.
func RunMemberChild(ctx context.Context, stdout, stderr io.Writer) int {
	var spec memberSpec
	if err := json.Unmarshal([]byte(os.Getenv(MemberChildEnv)), &spec); err != nil {
		fmt.Fprintf(stderr, "bench member: bad %s: %v\n", MemberChildEnv, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // never outlive a lost parent for long
	defer cancel()
	go func() { // stdin closes when the parent exits
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var mu sync.Mutex
	w := bufio.NewWriter(stdout)
	say := func(verb string, ps []int32) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s %s\n", verb, formatPartitions(ps))
		w.Flush()
	}
	st := newMemberState(func(owned []int32) { say("owned", owned) })
	cl, err := kgo.NewClient(groupMemberOpts(spec.Bootstrap, spec.Topic, spec.Group, st, kgo.NewOffset().AtEnd())...)
	if err != nil {
		fmt.Fprintf(stderr, "bench member: %v\n", err)
		return 1
	}
	// No cl.Close (it would leave the group): the process ends by SIGKILL,
	// or on ctx expiry with os.Exit.
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		var ps []int32
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) > 0 {
				ps = append(ps, p.Partition)
			}
		})
		if owned, done := st.consumed(ps, time.Now()); done {
			say("consumed", owned)
		}
	}
	os.Exit(0)
	return 0
}

// memberState tracks one member's partitions and whether it has received
// records from each of them since they last changed.
type memberState struct {
	mu       sync.Mutex
	owned    map[int32]bool
	got      map[int32]bool // received since the last ownership change
	reported bool           // "consumed" said for the current ownership
	gen      int            // ownership changes
	onChange func(owned []int32)
	// after the kill: first time each partition was assigned and first
	// time a record from it arrived, after killAt.
	killAt     time.Time
	assignedAt map[int32]time.Time
	firstAt    map[int32]time.Time
}

func newMemberState(onChange func([]int32)) *memberState {
	return &memberState{owned: map[int32]bool{}, got: map[int32]bool{}, onChange: onChange,
		assignedAt: map[int32]time.Time{}, firstAt: map[int32]time.Time{}}
}

// change applies an assignment (added) or a revocation/loss (removed).
func (s *memberState) change(added, removed []int32) {
	now := time.Now()
	s.mu.Lock()
	for _, p := range added {
		s.owned[p] = true
		if !s.killAt.IsZero() && now.After(s.killAt) {
			if _, ok := s.assignedAt[p]; !ok {
				s.assignedAt[p] = now
			}
		}
	}
	for _, p := range removed {
		delete(s.owned, p)
	}
	s.got = map[int32]bool{}
	s.reported = false
	s.gen++
	owned := s.ownedLocked()
	cb := s.onChange
	s.mu.Unlock()
	if cb != nil {
		cb(owned)
	}
}

// consumed notes that records from partitions ps arrived at now. It returns
// the owned partitions and true the first time, since the last ownership
// change, that records from all of them have arrived.
func (s *memberState) consumed(ps []int32, now time.Time) ([]int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		s.got[p] = true
		if !s.killAt.IsZero() && now.After(s.killAt) {
			if _, ok := s.firstAt[p]; !ok {
				s.firstAt[p] = now
			}
		}
	}
	if s.reported || len(s.owned) == 0 {
		return nil, false
	}
	for p := range s.owned {
		if !s.got[p] {
			return nil, false
		}
	}
	s.reported = true
	return s.ownedLocked(), true
}

func (s *memberState) ownedLocked() []int32 {
	var out []int32
	for p := range s.owned {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// snapshot returns the owned partitions, whether records from all of them
// arrived since the last change, and the change count.
func (s *memberState) snapshot() memberSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return memberSnapshot{Owned: s.ownedLocked(), Consuming: s.reported, Gen: s.gen}
}

// setKill starts recording assignment and first-record times after t.
func (s *memberState) setKill(t time.Time) {
	s.mu.Lock()
	s.killAt = t
	s.mu.Unlock()
}

// since returns, for partition p, when it was first assigned to and first
// consumed by this member after the kill (zero when not yet).
func (s *memberState) since(p int32) (assigned, first time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.assignedAt[p], s.firstAt[p]
}

// memberSnapshot is one member's view at an instant.
type memberSnapshot struct {
	Owned     []int32
	Consuming bool // records arrived from every owned partition since the last change
	Gen       int
}

// groupStable reports whether the members together own each of the
// partitions exactly once, each owns at least one, and each has received
// records from everything it owns.
func groupStable(ms []memberSnapshot, partitions int) bool {
	seen := map[int32]bool{}
	for _, m := range ms {
		if len(m.Owned) == 0 || !m.Consuming {
			return false
		}
		for _, p := range m.Owned {
			if p < 0 || int(p) >= partitions || seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == partitions
}

func formatPartitions(ps []int32) string {
	if len(ps) == 0 {
		return "-"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

// parseMemberLine parses a child's "owned 0,3" / "consumed 0,3" line.
func parseMemberLine(line string) (verb string, ps []int32, err error) {
	verb, rest, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok || (verb != "owned" && verb != "consumed") {
		return "", nil, fmt.Errorf("unexpected member output %q", line)
	}
	if rest == "-" {
		return verb, nil, nil
	}
	for _, f := range strings.Split(rest, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return "", nil, fmt.Errorf("unexpected member output %q", line)
		}
		ps = append(ps, int32(n))
	}
	return verb, ps, nil
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fastGroups makes rebalances quick enough for tests.
func fastGroups(c *Config) {
	c.GroupInitialRebalanceDelay = 200 * time.Millisecond
	c.GroupMinSessionTimeout = 100 * time.Millisecond
}

// groupOpts are kgo options for a member that is noticed quickly when it dies.
func groupOpts(group string, topics ...string) []kgo.Opt {
	return []kgo.Opt{
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.SessionTimeout(3 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(5 * time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
}

// crashable is a kgo dialer whose connections can all be cut at once, so a
// member disappears without sending LeaveGroup, as if its process died.
type crashable struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
}

func (c *crashable) dial(ctx context.Context, network, host string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil, errors.New("crashed")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, host)
	if err == nil {
		c.conns = append(c.conns, nc)
	}
	return nc, err
}

func (c *crashable) crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = true
	for _, nc := range c.conns {
		nc.Close()
	}
}

// poll keeps a group consumer polling until the test ends.
func poll(t *testing.T, cl *kgo.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitAssignment waits until the group is stable with members holding the
// given numbers of partitions (in any order), as DescribeGroups reports.
func waitAssignment(t *testing.T, adm *kadm.Client, group string, want ...int) kadm.DescribedGroup {
	t.Helper()
	sort.Ints(want)
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ds, err := adm.DescribeGroups(context.Background(), group)
		if err == nil {
			d := ds[group]
			var got []int
			for _, m := range d.Members {
				n := 0
				if ca, ok := m.Assigned.AsConsumer(); ok {
					for _, t := range ca.Topics {
						n += len(t.Partitions)
					}
				}
				got = append(got, n)
			}
			sort.Ints(got)
			last = fmt.Sprintf("%s %v", d.State, got)
			if d.State == "Stable" && fmt.Sprint(got) == fmt.Sprint(want) {
				return d
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("group %s never reached assignment %v; last %s", group, want, last)
	return kadm.DescribedGroup{}
}

func TestGroupConsumersShareAndReassign(t *testing.T) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		t.Run("balancer="+bal.name, func(t *testing.T) {
			b := startBroker(t, "", fastGroups)
			createTopic(t, b, "six", 6, nil)
			adm := kadm.NewClient(newClient(t, b))
			var clients []*kgo.Client
			var dialers []*crashable
			for i := 0; i < 3; i++ {
				d := &crashable{}
				cl := newClient(t, b, append(groupOpts("g", "six"), kgo.Balancers(bal.b), kgo.Dialer(d.dial))...)
				poll(t, cl)
				clients, dialers = append(clients, cl), append(dialers, d)
			}
			waitAssignment(t, adm, "g", 2, 2, 2)

			// One member leaves cleanly.
			clients[0].Close()
			waitAssignment(t, adm, "g", 3, 3)

			// One crashes: no LeaveGroup; its session times out.
			dialers[1].crash()
			clients[1].Close()
			d := waitAssignment(t, adm, "g", 6)
			if d.Protocol != bal.name || d.ProtocolType != "consumer" {
				t.Fatalf("protocol %s/%s", d.ProtocolType, d.Protocol)
			}
		})
	}
}

func TestGroupStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	b := startBroker(t, "", fastGroups)
	createTopic(t, b, "st", 4, nil)
	adm := kadm.NewClient(newClient(t, b))
	opts := func(inst string) []kgo.Opt {
		return append(groupOpts("static", "st"), kgo.InstanceID(inst), kgo.SessionTimeout(10*time.Second))
	}
	a := newClient(t, b, opts("a")...)
	poll(t, a)
	c1 := newClient(t, b, opts("b")...)
	poll(t, c1)
	before := waitAssignment(t, adm, "static", 2, 2)
	_, gen := b.groupState("static")

	// "b" restarts: a static member's Close does not leave the group.
	c1.Close()
	c2 := newClient(t, b, opts("b")...)
	poll(t, c2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		after := waitAssignment(t, adm, "static", 2, 2)
		var ids []string
		for _, m := range after.Members {
			ids = append(ids, m.MemberID)
		}
		var was []string
		for _, m := range before.Members {
			was = append(was, m.MemberID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(was) { // the new member id took over
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restarted static member never rejoined")
		}
		time.Sleep(50 * time.Millisecond)
	}
	state, gen2 := b.groupState("static")
	if state != "Stable" || gen2 != gen {
		t.Fatalf("after a static rejoin the group is %s generation %d, want Stable %d (no rebalance)", state, gen2, gen)
	}
}

// groupState reads a group's state and generation from the coordinator.
func (b *Broker) groupState(id string) (string, int32) {
	b.groups.mu.Lock()
	defer b.groups.mu.Unlock()
	s, g := b.groups.c.GroupState(id)
	return s.String(), g
}

func produceN(t *testing.T, b *Broker, topic string, n int) {
	t.Helper()
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic))
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))}, nil)
	}
	if err := cl.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// consumeAndCommit consumes n records in group and commits them; it returns
// the first record's value.
func consumeAndCommit(t *testing.T, b *Broker, group, topic string, n int) string {
	t.Helper()
	cl := newClient(t, b, append(groupOpts(group, topic), kgo.DisableAutoCommit())...)
	defer cl.Close()
	ctx := testCtx(t)
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollRecords(ctx, n-len(recs))
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(recs), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		recs = append(recs, fs.Records()...)
	}
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	return string(recs[0].Value)
}

func TestCommittedOffsetsSurviveConsumerAndBrokerRestart(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, fastGroups)
	createTopic(t, b, "off", 1, nil)
	produceN(t, b, "off", 30)
	if first := consumeAndCommit(t, b, "resume", "off", 10); first != "0" {
		t.Fatalf("first consumer started at %s", first)
	}
	if first := consumeAndCommit(t, b, "resume", "off", 10); first != "10" {
		t.Fatalf("after a consumer restart the group resumed at %s, want 10", first)
	}
	adm := kadm.NewClient(newClient(t, b))
	if _, err := adm.CommitOffsets(context.Background(), "simple", kadm.OffsetsFromRecords(kgo.Record{Topic: "off", Partition: 0, Offset: 6})); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b = startBroker(t, dir, fastGroups)
	if first := consumeAndCommit(t, b, "resume", "off", 5); first != "20" {
		t.Fatalf("after a broker restart the group resumed at %s, want 20", first)
	}
	adm = kadm.NewClient(newClient(t, b))
	offs, err := adm.FetchOffsets(context.Background(), "simple")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("off", 0); o.At != 7 {
		t.Fatalf("simple group's offset after restart %+v", o)
	}
	lg, err := adm.ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(lg.Groups()); got != "[resume simple]" {
		t.Fatalf("groups after restart %s", got)
	}
	// Deleting an empty group deletes its offsets, durably.
	if _, err := adm.DeleteGroups(context.Background(), "simple"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = startBroker(t, dir, fastGroups)
	adm = kadm.NewClient(newClient(t, b))
	offs, err = adm.FetchOffsets(context.Background(), "simple")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := offs.Lookup("off", 0); ok {
		t.Fatalf("deleted group's offsets came back: %+v", offs)
	}
}

// rawMember is a Connect-style group member built from raw kmsg requests.
type rawMember struct {
	cl         *kgo.Client
	id         string
	gen        int32
	leader     string
	members    []string
	assignment string
}

func (m *rawMember) join(ctx context.Context, group string) error {
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, m.id, "connect"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 3000, 10000
		req.Protocols = []kmsg.JoinGroupRequestProtocol{
			{Name: "sessioned", Metadata: []byte("url=" + m.cl.OptValue(kgo.ClientID).(string))},
			{Name: "compatible", Metadata: []byte("old")},
		}
		resp, err := req.RequestWith(ctx, m.cl)
		if err != nil {
			return err
		}
		m.id = resp.MemberID
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return err
		}
		if *resp.Protocol != "sessioned" || *resp.ProtocolType != "connect" {
			return fmt.Errorf("protocol %s/%s", *resp.ProtocolType, *resp.Protocol)
		}
		m.gen, m.leader, m.members = resp.Generation, resp.LeaderID, nil
		for _, jm := range resp.Members {
			if !strings.HasPrefix(string(jm.ProtocolMetadata), "url=") {
				return fmt.Errorf("member metadata %q", jm.ProtocolMetadata)
			}
			m.members = append(m.members, jm.MemberID)
		}
		return nil
	}
}

func (m *rawMember) sync(ctx context.Context, group string) error {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = group, m.id, m.gen
	if m.id == m.leader {
		for i, id := range m.members {
			req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{
				MemberID: id, MemberAssignment: []byte(fmt.Sprintf("tasks-%d-of-%d-gen-%d", i, len(m.members), m.gen)),
			})
		}
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	m.assignment = string(resp.MemberAssignment)
	return nil
}

func (m *rawMember) heartbeat(ctx context.Context, group string) error {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = group, m.id, m.gen
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

func TestConnectStyleGroupFromRawRequests(t *testing.T) {
	b := startBroker(t, "", fastGroups)
	ctx := testCtx(t)
	const group = "connect-cluster"
	var ms []*rawMember
	for i := 0; i < 3; i++ {
		ms = append(ms, &rawMember{cl: newClient(t, b, kgo.ClientID(fmt.Sprintf("worker-%d", i)))})
	}
	// All three join together (the join phase waits for them) and sync.
	round := func(members []*rawMember) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(members))
		for i, m := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[i] = m.join(ctx, group); errs[i] == nil {
					errs[i] = m.sync(ctx, group)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	round(ms)
	seen := map[string]bool{}
	for _, m := range ms {
		if m.gen != ms[0].gen || m.leader != ms[0].leader || seen[m.assignment] || !strings.HasSuffix(m.assignment, fmt.Sprintf("of-3-gen-%d", m.gen)) {
			t.Fatalf("member %s: gen %d leader %s assignment %q", m.id, m.gen, m.leader, m.assignment)
		}
		seen[m.assignment] = true
	}
	adm := kadm.NewClient(newClient(t, b))
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[group]; d.State != "Stable" || d.ProtocolType != "connect" || d.Protocol != "sessioned" || len(d.Members) != 3 {
		t.Fatalf("describe %+v", d)
	}

	// Member 2 dies (stops heartbeating). The survivors heartbeat until the
	// coordinator tells them to rejoin, then rebalance to two members.
	gen := ms[0].gen
	survivors := ms[:2]
	deadline := time.Now().Add(20 * time.Second)
	for rebalancing := false; !rebalancing; {
		if time.Now().After(deadline) {
			t.Fatal("the dead member was never noticed")
		}
		for _, m := range survivors {
			err := m.heartbeat(ctx, group)
			if errors.Is(err, kerr.RebalanceInProgress) {
				rebalancing = true
			} else if err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	round(survivors)
	for _, m := range survivors {
		if m.gen != gen+1 || !strings.HasSuffix(m.assignment, fmt.Sprintf("of-2-gen-%d", m.gen)) {
			t.Fatalf("after the death: member %s gen %d assignment %q", m.id, m.gen, m.assignment)
		}
	}
	if err := ms[2].heartbeat(ctx, group); !errors.Is(err, kerr.UnknownMemberID) {
		t.Fatalf("dead member's heartbeat: %v, want UNKNOWN_MEMBER_ID", err)
	}
	// A consumer-type member cannot join a connect group.
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.ProtocolType, req.SessionTimeoutMillis = group, "consumer", 1000
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	resp, err := req.RequestWith(ctx, ms[2].cl)
	if err != nil || resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("consumer joining a connect group: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestFindCoordinator(t *testing.T) {
	b := startBroker(t, "")
	cl := newClient(t, b)
	ctx := testCtx(t)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKeys = []string{"g1", "g2"}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Coordinators {
		if c.ErrorCode != 0 || c.NodeID != b.cfg.NodeID || net.JoinHostPort(c.Host, fmt.Sprint(c.Port)) != b.Addr() {
			t.Fatalf("coordinator %+v", c)
		}
	}
	req.CoordinatorType = 1
	req.CoordinatorKeys = []string{"txn"}
	resp, err = req.RequestWith(ctx, cl)
	if err != nil || resp.Coordinators[0].ErrorCode != 0 || resp.Coordinators[0].NodeID != b.cfg.NodeID {
		t.Fatalf("transaction coordinator: %v %+v", err, resp)
	}
}

func TestKcatBalancedConsumer(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed (apt-get install kcat)")
	}
	b := startBroker(t, "", fastGroups)
	createTopic(t, b, "kc", 3, nil)
	produceN(t, b, "kc", 30)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", b.Addr(), "-G", "kcat-group", "-o", "beginning", "-e",
		"-X", "session.timeout.ms=6000", "-f", "%s\n", "kc")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Logf("kcat stderr: %s", ee.Stderr)
		}
		t.Fatalf("kcat -G: %v", err)
	}
	if n := len(strings.Fields(string(out))); n != 30 {
		t.Fatalf("kcat -G consumed %d records, want 30:\n%s", n, out)
	}
	// kcat commits what it consumed: a second run has nothing left.
	adm := kadm.NewClient(newClient(t, b))
	offs, err := adm.FetchOffsets(context.Background(), "kcat-group")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != 30 {
		t.Fatalf("kcat committed offsets sum to %d, want 30", total)
	}
}

func TestGroupBrokerProperties(t *testing.T) {
	c, warnings, err := FromProperties(properties.Properties{
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "250",
		"group.max.session.timeout.ms":     "60000",
	})
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	if c.GroupInitialRebalanceDelay != 0 || c.GroupMinSessionTimeout != 250*time.Millisecond || c.GroupMaxSessionTimeout != time.Minute {
		t.Fatalf("%+v", c)
	}
	if _, _, err := FromProperties(properties.Properties{"group.min.session.timeout.ms": "soon"}); err == nil {
		t.Fatal("bad value accepted")
	}
	if d := DefaultConfig(); d.GroupInitialRebalanceDelay != 3*time.Second || d.GroupMinSessionTimeout != 6*time.Second {
		t.Fatalf("defaults %+v", d)
	}
}

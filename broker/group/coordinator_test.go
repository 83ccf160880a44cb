package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// env drives a coordinator with a fake clock and collects its output.
type env struct {
	t       *testing.T
	c       *Coordinator
	now     time.Time
	replies map[string]Reply // by token
	records []Record
	nextID  int
}

func newEnv(t *testing.T, mutate ...func(*Config)) *env {
	e := &env{t: t, now: time.Unix(1000, 0), replies: map[string]Reply{}}
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	cfg.MinSessionTimeout = time.Millisecond
	cfg.NewMemberID = func(client string) string {
		e.nextID++
		return fmt.Sprintf("%s-%d", client, e.nextID)
	}
	for _, m := range mutate {
		m(&cfg)
	}
	e.c = New(cfg)
	return e
}

func (e *env) drain() {
	rd := e.c.Ready()
	e.records = append(e.records, rd.Records...)
	for _, r := range rd.Replies {
		tok := r.To.(string)
		if _, dup := e.replies[tok]; dup {
			e.t.Fatalf("token %s answered twice", tok)
		}
		e.replies[tok] = r
	}
}

func (e *env) advance(d time.Duration) {
	e.now = e.now.Add(d)
	e.c.Tick(e.now)
	e.drain()
}

// take returns and forgets the reply for tok; nil if none yet.
func (e *env) take(tok string) kmsg.Response {
	r, ok := e.replies[tok]
	if !ok {
		return nil
	}
	delete(e.replies, tok)
	return r.Resp
}

func (e *env) mustJoin(tok string) *kmsg.JoinGroupResponse {
	e.t.Helper()
	r := e.take(tok)
	if r == nil {
		e.t.Fatalf("join %s: no reply", tok)
	}
	return r.(*kmsg.JoinGroupResponse)
}

type joinOpt func(*kmsg.JoinGroupRequest)

func withInstance(id string) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.InstanceID = &id } }
func withProtocols(names ...string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.Protocols = nil
		for _, n := range names {
			r.Protocols = append(r.Protocols, kmsg.JoinGroupRequestProtocol{Name: n, Metadata: []byte("meta-" + n)})
		}
	}
}
func withType(t string) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.ProtocolType = t } }

func (e *env) join(tok, group, memberID string, opts ...joinOpt) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group, req.MemberID = group, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 60000
	req.ProtocolType = "connect"
	withProtocols("sessioned", "compatible")(req)
	for _, o := range opts {
		o(req)
	}
	e.c.Join(e.now, tok, req, "client", "/127.0.0.1")
	e.drain()
}

// joinNew does the two-step join of a dynamic member and returns its id;
// the reply to the second join is left under tok.
func (e *env) joinNew(tok, group string, opts ...joinOpt) string {
	e.t.Helper()
	e.join(tok+"-first", group, "", opts...)
	r := e.mustJoin(tok + "-first")
	if r.ErrorCode != kerr.MemberIDRequired.Code {
		e.t.Fatalf("first join: error %v, want MEMBER_ID_REQUIRED", kerr.ErrorForCode(r.ErrorCode))
	}
	e.join(tok, group, r.MemberID, opts...)
	return r.MemberID
}

func (e *env) sync(tok, group, memberID string, gen int32, assign map[string]string) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, memberID, gen
	for m, a := range assign {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(a)})
	}
	e.c.Sync(e.now, tok, req)
	e.drain()
}

func (e *env) heartbeat(group, memberID string, gen int32, instance *string) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation, req.InstanceID = group, memberID, gen, instance
	e.c.Heartbeat(e.now, "hb", req)
	e.drain()
	return e.take("hb").(*kmsg.HeartbeatResponse).ErrorCode
}

func (e *env) commit(group, memberID string, gen int32, topic string, partition int32, off int64) (int16, bool) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = group, memberID, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = partition, off
	meta := "m"
	rp.Metadata = &meta
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	e.c.Commit(e.now, "commit", req)
	e.drain()
	r := e.replies["commit"]
	delete(e.replies, "commit")
	return r.Resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, r.Durable
}

func (e *env) fetch(group, topic string, partition int32) int64 {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	e.c.FetchOffsets("fetch", req)
	e.drain()
	return e.take("fetch").(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0].Offset
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: got %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(wantCode))
	}
}

// stableGroup builds a stable group of n dynamic members and returns their
// ids (the first is the leader) and the generation.
func stableGroup(t *testing.T, e *env, group string, n int) ([]string, int32) {
	t.Helper()
	var ids []string
	var gen int32
	for i := 0; i < n; i++ {
		tok := fmt.Sprintf("j%d", i)
		ids = append(ids, e.joinNew(tok, group))
		if i == 0 {
			gen = e.mustJoin(tok).Generation
			e.sync("s0", group, ids[0], gen, map[string]string{ids[0]: "a0"})
			e.take("s0")
			continue
		}
		// Everyone else rejoins.
		for j := 0; j < i; j++ {
			e.join(fmt.Sprintf("r%d", j), group, ids[j])
		}
		assign := map[string]string{}
		for j := 0; j <= i; j++ {
			tokj := fmt.Sprintf("r%d", j)
			if j == i {
				tokj = tok
			}
			r := e.mustJoin(tokj)
			wantCode(t, "rejoin", r.ErrorCode, nil)
			gen = r.Generation
			assign[ids[j]] = "a" + ids[j]
		}
		for j := 0; j <= i; j++ {
			e.sync(fmt.Sprintf("s%d", j), group, ids[j], gen, assign)
		}
		for j := 0; j <= i; j++ {
			r := e.take(fmt.Sprintf("s%d", j)).(*kmsg.SyncGroupResponse)
			wantCode(t, "sync", r.ErrorCode, nil)
		}
	}
	if st, g := e.c.GroupState(group); st != Stable || g != gen {
		t.Fatalf("group is %v gen %d, want Stable gen %d", st, g, gen)
	}
	return ids, gen
}

func TestTwoStepJoinThenSync(t *testing.T) {
	e := newEnv(t)
	id := e.joinNew("j", "g")
	r := e.mustJoin("j")
	wantCode(t, "join", r.ErrorCode, nil)
	if r.Generation != 1 || r.LeaderID != id || r.MemberID != id || *r.Protocol != "sessioned" || *r.ProtocolType != "connect" || len(r.Members) != 1 {
		t.Fatalf("join response %+v", r)
	}
	e.sync("s", "g", id, 1, map[string]string{id: "assignment-bytes"})
	s := e.take("s").(*kmsg.SyncGroupResponse)
	if s.ErrorCode != 0 || string(s.MemberAssignment) != "assignment-bytes" {
		t.Fatalf("sync response %+v", s)
	}
	if st, _ := e.c.GroupState("g"); st != Stable {
		t.Fatalf("state %v", st)
	}
	wantCode(t, "heartbeat", e.heartbeat("g", id, 1, nil), nil)
	wantCode(t, "heartbeat old gen", e.heartbeat("g", id, 0, nil), kerr.IllegalGeneration)
	wantCode(t, "heartbeat unknown", e.heartbeat("g", "nobody", 1, nil), kerr.UnknownMemberID)
	if len(e.records) != 1 {
		t.Fatalf("want one group metadata record after sync, got %d", len(e.records))
	}
}

func TestJoinV3HasNoMemberIDRequired(t *testing.T) {
	e := newEnv(t)
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 3
	req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "g", 10000, 10000, "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1}}}
	e.c.Join(e.now, "j", req, "c", "h")
	e.drain()
	r := e.mustJoin("j")
	wantCode(t, "join", r.ErrorCode, nil)
	if r.MemberID == "" || r.Generation != 1 {
		t.Fatalf("join %+v", r)
	}
}

func TestRebalanceWithFollowers(t *testing.T) {
	e := newEnv(t)
	ids, gen := stableGroup(t, e, "g", 3)
	if gen != 3 {
		t.Fatalf("generation %d", gen)
	}
	// A follower's sync in Stable returns its assignment.
	e.sync("s", "g", ids[2], gen, nil)
	if s := e.take("s").(*kmsg.SyncGroupResponse); string(s.MemberAssignment) != "a"+ids[2] {
		t.Fatalf("assignment %q", s.MemberAssignment)
	}
	// A leader rejoin triggers a rebalance: others learn by heartbeat.
	e.join("l", "g", ids[0])
	if e.take("l") != nil {
		t.Fatal("leader join answered before the others rejoined")
	}
	wantCode(t, "heartbeat", e.heartbeat("g", ids[1], gen, nil), kerr.RebalanceInProgress)
	e.sync("s1", "g", ids[1], gen, nil)
	wantCode(t, "sync while preparing", e.take("s1").(*kmsg.SyncGroupResponse).ErrorCode, kerr.RebalanceInProgress)
	e.join("f1", "g", ids[1])
	e.join("f2", "g", ids[2])
	l := e.mustJoin("l")
	if l.Generation != gen+1 || len(l.Members) != 3 || l.LeaderID != ids[0] {
		t.Fatalf("leader join %+v", l)
	}
	for _, m := range l.Members {
		if string(m.ProtocolMetadata) != "meta-sessioned" {
			t.Fatalf("member metadata %q", m.ProtocolMetadata)
		}
	}
	if f := e.mustJoin("f1"); len(f.Members) != 0 || f.LeaderID != ids[0] {
		t.Fatalf("follower join %+v", f)
	}
	e.take("f2")
	// Followers wait for the leader's sync.
	e.sync("s1", "g", ids[1], gen+1, nil)
	e.sync("s2", "g", ids[2], gen+1, nil)
	if e.take("s1") != nil {
		t.Fatal("follower sync answered before the leader's")
	}
	wantCode(t, "heartbeat completing", e.heartbeat("g", ids[2], gen+1, nil), nil)
	e.sync("s0", "g", ids[0], gen+1, map[string]string{ids[0]: "x", ids[1]: "y"})
	for tok, want := range map[string]string{"s0": "x", "s1": "y", "s2": ""} {
		r := e.replies[tok]
		if !r.Durable || string(r.Resp.(*kmsg.SyncGroupResponse).MemberAssignment) != want {
			t.Fatalf("%s: %+v", tok, r)
		}
	}
}

func TestInconsistentProtocols(t *testing.T) {
	e := newEnv(t)
	stableGroup(t, e, "g", 1)
	e.join("x", "g", "", withType("consumer"))
	wantCode(t, "other type", e.mustJoin("x").ErrorCode, kerr.InconsistentGroupProtocol)
	e.join("y", "g", "", withProtocols("other"))
	wantCode(t, "no common protocol", e.mustJoin("y").ErrorCode, kerr.InconsistentGroupProtocol)
	e.join("z", "h", "", withType(""))
	wantCode(t, "empty type", e.mustJoin("z").ErrorCode, kerr.InconsistentGroupProtocol)
}

func TestProtocolChosenByVote(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.InitialRebalanceDelay = time.Second })
	e.joinNew("a", "g", withProtocols("p1", "p2", "p3"))
	e.joinNew("b", "g", withProtocols("p2", "p3"))
	e.joinNew("c", "g", withProtocols("p3", "p2"))
	e.joinNew("d", "g", withProtocols("p2", "p3", "p1"))
	e.advance(time.Second) // members joined during the delay: extended once
	e.advance(time.Second)
	r := e.mustJoin("a")
	if *r.Protocol != "p2" || len(r.Members) != 4 {
		t.Fatalf("protocol %q, want p2 (p1 is not supported by all; votes p2: a b d, p3: c)", *r.Protocol)
	}
}

func TestSessionTimeoutExpiresMember(t *testing.T) {
	e := newEnv(t)
	ids, gen := stableGroup(t, e, "g", 2)
	// Member 0 heartbeats, member 1 goes silent.
	for i := 0; i < 3; i++ {
		e.advance(3 * time.Second)
		wantCode(t, "heartbeat", e.heartbeat("g", ids[0], gen, nil), nil)
	}
	e.advance(3 * time.Second)
	if st, _ := e.c.GroupState("g"); st != PreparingRebalance {
		t.Fatalf("state %v after member 1's session expired", st)
	}
	wantCode(t, "heartbeat", e.heartbeat("g", ids[0], gen, nil), kerr.RebalanceInProgress)
	e.join("r", "g", ids[0])
	r := e.mustJoin("r")
	if r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
	wantCode(t, "expired heartbeat", e.heartbeat("g", ids[1], gen, nil), kerr.UnknownMemberID)
}

func TestRebalanceTimeoutDropsLaggard(t *testing.T) {
	e := newEnv(t)
	ids, gen := stableGroup(t, e, "g", 2)
	e.join("r", "g", ids[0])
	e.advance(9 * time.Second)
	wantCode(t, "heartbeat", e.heartbeat("g", ids[1], gen, nil), kerr.RebalanceInProgress)
	e.advance(9 * time.Second)
	e.heartbeat("g", ids[1], gen, nil) // keeps its session but never rejoins
	if e.take("r") != nil {
		t.Fatal("join completed before the rebalance timeout")
	}
	e.advance(60 * time.Second)
	r := e.mustJoin("r")
	if len(r.Members) != 1 || r.Generation != gen+1 {
		t.Fatalf("join %+v", r)
	}
	wantCode(t, "laggard", e.heartbeat("g", ids[1], gen, nil), kerr.UnknownMemberID)
}

func TestInitialRebalanceDelay(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
	e.joinNew("a", "g")
	e.advance(time.Second)
	e.joinNew("b", "g")
	e.advance(2 * time.Second) // the delay ends, but b joined: extended
	if e.take("a") != nil {
		t.Fatal("join completed although a member joined during the delay")
	}
	e.advance(3 * time.Second)
	r := e.mustJoin("a")
	if len(r.Members) != 2 || r.Generation != 1 {
		t.Fatalf("join %+v", r)
	}
	e.mustJoin("b")
}

func TestStaticMemberRejoinWithoutRebalance(t *testing.T) {
	e := newEnv(t)
	e.join("a", "g", "", withInstance("ia"))
	ra := e.mustJoin("a")
	wantCode(t, "static join needs no member id round trip", ra.ErrorCode, nil)
	e.sync("sa", "g", ra.MemberID, ra.Generation, map[string]string{ra.MemberID: "A"})
	e.take("sa")
	e.join("b", "g", "", withInstance("ib"))
	e.join("a2", "g", ra.MemberID, withInstance("ia"))
	rb, ra2 := e.mustJoin("b"), e.mustJoin("a2")
	gen := rb.Generation
	e.sync("sa", "g", ra.MemberID, gen, map[string]string{ra.MemberID: "A", rb.MemberID: "B"})
	e.sync("sb", "g", rb.MemberID, gen, nil)
	_ = ra2

	// b restarts: it rejoins with its instance id and no member id.
	e.join("b2", "g", "", withInstance("ib"))
	r := e.mustJoin("b2")
	wantCode(t, "static rejoin", r.ErrorCode, nil)
	if r.Generation != gen || r.MemberID == rb.MemberID {
		t.Fatalf("static rejoin %+v", r)
	}
	if st, g := e.c.GroupState("g"); st != Stable || g != gen {
		t.Fatalf("state %v gen %d: the rejoin rebalanced", st, g)
	}
	e.sync("sb2", "g", r.MemberID, gen, nil)
	if s := e.take("sb2").(*kmsg.SyncGroupResponse); string(s.MemberAssignment) != "B" {
		t.Fatalf("assignment after static rejoin %q", s.MemberAssignment)
	}
	ib := "ib"
	wantCode(t, "old member id", e.heartbeat("g", rb.MemberID, gen, &ib), kerr.FencedInstanceID)
	wantCode(t, "new member id", e.heartbeat("g", r.MemberID, gen, &ib), nil)

	// The leader rejoining statically (v9) learns it leads but skips assignment.
	e.join("a3", "g", "", withInstance("ia"))
	r = e.mustJoin("a3")
	if !r.SkipAssignment || r.LeaderID != r.MemberID || len(r.Members) != 2 {
		t.Fatalf("static leader rejoin %+v", r)
	}
}

func TestLeaveGroupBatch(t *testing.T) {
	e := newEnv(t)
	ids, _ := stableGroup(t, e, "g", 3)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 4
	req.Group = "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[1]}, {MemberID: ids[2]}, {MemberID: "ghost"}}
	e.c.Leave(e.now, "l", req)
	e.drain()
	resp := e.take("l").(*kmsg.LeaveGroupResponse)
	wantCode(t, "leave 1", resp.Members[0].ErrorCode, nil)
	wantCode(t, "leave 2", resp.Members[1].ErrorCode, nil)
	wantCode(t, "leave ghost", resp.Members[2].ErrorCode, kerr.UnknownMemberID)
	if st, _ := e.c.GroupState("g"); st != PreparingRebalance {
		t.Fatalf("state %v", st)
	}
	// The last member leaving empties the group.
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	e.c.Leave(e.now, "l", req)
	e.drain()
	if st, _ := e.c.GroupState("g"); st != Empty {
		t.Fatalf("state %v", st)
	}
}

func TestDuplicateJoinAnswersTheFirst(t *testing.T) {
	e := newEnv(t)
	ids, _ := stableGroup(t, e, "g", 3)
	e.join("r0", "g", ids[0]) // the leader's rejoin starts a rebalance
	e.join("x", "g", ids[1])
	e.join("y", "g", ids[1]) // a retry, e.g. on a new connection
	wantCode(t, "replaced join", e.mustJoin("x").ErrorCode, kerr.RebalanceInProgress)
	e.join("r2", "g", ids[2])
	wantCode(t, "retried join", e.mustJoin("y").ErrorCode, nil)
}

func TestCommitChecks(t *testing.T) {
	e := newEnv(t)
	code, durable := e.commit("simple", "", -1, "t", 0, 42)
	wantCode(t, "simple commit", code, nil)
	if !durable || e.fetch("simple", "t", 0) != 42 {
		t.Fatal("simple commit not stored durably")
	}
	code, _ = e.commit("nogroup", "m", 3, "t", 0, 1)
	wantCode(t, "commit with generation to unknown group", code, kerr.IllegalGeneration)

	ids, gen := stableGroup(t, e, "g", 2)
	code, _ = e.commit("g", ids[1], gen, "t", 1, 7)
	wantCode(t, "member commit", code, nil)
	code, _ = e.commit("g", ids[1], gen-1, "t", 1, 8)
	wantCode(t, "old generation", code, kerr.IllegalGeneration)
	code, _ = e.commit("g", "", -1, "t", 1, 8)
	wantCode(t, "simple commit to a live group", code, kerr.UnknownMemberID)
	e.join("r0", "g", ids[0])
	code, _ = e.commit("g", ids[1], gen, "t", 1, 9)
	wantCode(t, "commit while preparing", code, nil)
	e.join("r1", "g", ids[1])
	code, _ = e.commit("g", ids[1], gen+1, "t", 1, 10)
	wantCode(t, "commit while completing", code, kerr.RebalanceInProgress)
	if got := e.fetch("g", "t", 1); got != 9 {
		t.Fatalf("offset %d", got)
	}
	if got := e.fetch("g", "t", 5); got != -1 {
		t.Fatalf("uncommitted offset %d", got)
	}

	e2 := newEnv(t, func(c *Config) { c.PartitionExists = func(string, int32) bool { return false } })
	code, durable = e2.commit("g", "", -1, "t", 0, 1)
	wantCode(t, "unknown partition", code, kerr.UnknownTopicOrPartition)
	if durable {
		t.Fatal("failed commit marked durable")
	}
}

func TestReplayRestoresOffsetsAndGeneration(t *testing.T) {
	e := newEnv(t)
	e.commit("simple", "", -1, "t", 0, 42)
	e.commit("simple", "", -1, "t", 1, 43)
	e.commit("gone", "", -1, "t", 0, 1)
	ids, gen := stableGroup(t, e, "g", 2)
	e.commit("g", ids[0], gen, "u", 3, 99)
	e.commit("g", ids[0], gen, "u", 3, 100)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"gone", "g", "missing"}
	e.c.DeleteGroups("d", del)
	e.drain()
	dr := e.take("d").(*kmsg.DeleteGroupsResponse)
	wantCode(t, "delete empty", dr.Groups[0].ErrorCode, nil)
	wantCode(t, "delete live", dr.Groups[1].ErrorCode, kerr.NonEmptyGroup)
	wantCode(t, "delete missing", dr.Groups[2].ErrorCode, kerr.GroupIDNotFound)

	e2 := newEnv(t)
	for _, r := range e.records {
		if err := e2.c.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	if e2.fetch("simple", "t", 1) != 43 || e2.fetch("g", "u", 3) != 100 {
		t.Fatal("offsets not restored")
	}
	if got := e2.c.Groups(); fmt.Sprint(got) != "[g simple]" {
		t.Fatalf("groups after replay %v", got)
	}
	if st, g := e2.c.GroupState("g"); st != Empty || g != gen {
		t.Fatalf("replayed group %v gen %d, want Empty gen %d", st, g, gen)
	}
	// An old member's commit is refused; its rejoin continues the generations.
	code, _ := e2.commit("g", ids[0], gen, "u", 3, 101)
	wantCode(t, "stale member after restart", code, kerr.UnknownMemberID)
	id := e2.joinNew("j", "g")
	if r := e2.mustJoin("j"); r.Generation != gen+1 || r.MemberID != id {
		t.Fatalf("rejoin after restart %+v", r)
	}
}

func TestFetchAllAndMultipleGroups(t *testing.T) {
	e := newEnv(t)
	e.commit("a", "", -1, "t", 1, 11)
	e.commit("a", "", -1, "t", 0, 10)
	e.commit("b", "", -1, "u", 0, 20)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "a"}, {Group: "b", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "u", Partitions: []int32{0, 1}}}}, {Group: "none"}}
	e.c.FetchOffsets("f", req)
	e.drain()
	resp := e.take("f").(*kmsg.OffsetFetchResponse)
	got := fmt.Sprint(resp.Groups[0].Topics[0].Topic, resp.Groups[0].Topics[0].Partitions[0].Offset, resp.Groups[0].Topics[0].Partitions[1].Offset,
		resp.Groups[1].Topics[0].Partitions[0].Offset, resp.Groups[1].Topics[0].Partitions[1].Offset, len(resp.Groups[2].Topics))
	if got != "t10 11 20 -1 0" {
		t.Fatalf("fetch: %s", got)
	}
}

func TestListDescribeAndOffsetDelete(t *testing.T) {
	e := newEnv(t)
	ids, _ := stableGroup(t, e, "live", 2)
	e.commit("idle", "", -1, "t", 0, 5)
	list := kmsg.NewPtrListGroupsRequest()
	list.Version = 5
	list.StatesFilter = []string{"stable"}
	e.c.List("l", list)
	e.drain()
	lr := e.take("l").(*kmsg.ListGroupsResponse)
	if len(lr.Groups) != 1 || lr.Groups[0].Group != "live" || lr.Groups[0].ProtocolType != "connect" {
		t.Fatalf("list %+v", lr.Groups)
	}
	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.Groups = []string{"live", "nope"}
	e.c.Describe("d", desc)
	e.drain()
	dr := e.take("d").(*kmsg.DescribeGroupsResponse)
	if g := dr.Groups[0]; g.State != "Stable" || g.Protocol != "sessioned" || len(g.Members) != 2 || g.Members[0].MemberID != ids[0] || string(g.Members[0].MemberAssignment) != "a"+ids[0] {
		t.Fatalf("describe %+v", g)
	}
	if dr.Groups[1].State != "Dead" {
		t.Fatalf("describe unknown %+v", dr.Groups[1])
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "live"
	e.c.DeleteOffsets("o", od)
	e.drain()
	wantCode(t, "offset delete in live connect group", e.take("o").(*kmsg.OffsetDeleteResponse).ErrorCode, kerr.NonEmptyGroup)
	od.Group = "idle"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	e.c.DeleteOffsets("o", od)
	e.drain()
	wantCode(t, "offset delete", e.take("o").(*kmsg.OffsetDeleteResponse).Topics[0].Partitions[0].ErrorCode, nil)
	if e.fetch("idle", "t", 0) != -1 {
		t.Fatal("offset not deleted")
	}
}

func TestPendingMemberExpires(t *testing.T) {
	e := newEnv(t)
	ids, gen := stableGroup(t, e, "g", 1)
	// A new member gets its id but never comes back: it holds the join
	// phase only until its session timeout.
	e.join("n", "g", "")
	e.mustJoin("n")
	e.join("r", "g", ids[0])
	if st, _ := e.c.GroupState("g"); st != Stable {
		// the stable leader's rejoin starts a rebalance
	}
	e.advance(5 * time.Second)
	if e.take("r") != nil {
		t.Fatal("join completed while a member id is pending")
	}
	e.advance(6 * time.Second)
	if r := e.mustJoin("r"); r.Generation != gen+1 {
		t.Fatalf("join %+v", r)
	}
}

package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func topicID(n byte) [16]byte { return [16]byte{15: n} }

// cenv is env with topics for consumer-protocol groups.
func newCEnv(t *testing.T, topics ...TopicMeta) *env {
	e := newEnv(t)
	e.c.SetTopics(topics)
	return e
}

type hbOpt func(*kmsg.ConsumerGroupHeartbeatRequest)

func hbTopics(names ...string) hbOpt {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = names }
}
func hbRegex(re string) hbOpt {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = &re }
}
func hbInstance(id string) hbOpt {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = &id }
}
func hbAssignor(a string) hbOpt {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = &a }
}
func hbOwned(p parts) hbOpt {
	return func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = ownedOf(p) }
}

func ownedOf(p parts) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, id := range sortedTopicIDs(p) {
		out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: id, Partitions: slices.Clone(p[id])})
	}
	return out
}

// hb sends one heartbeat (v1) and returns its answer.
func (e *env) hb(group, member string, epoch int32, opts ...hbOpt) *kmsg.ConsumerGroupHeartbeatResponse {
	e.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
	if epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	for _, o := range opts {
		o(req)
	}
	e.nextID++
	tok := fmt.Sprintf("hb-%d", e.nextID)
	e.c.ConsumerHeartbeat(e.now, tok, req, "client", "/127.0.0.1")
	e.drain()
	r := e.take(tok)
	if r == nil {
		e.t.Fatalf("heartbeat %s: no reply", member)
	}
	return r.(*kmsg.ConsumerGroupHeartbeatResponse)
}

func assigned(r *kmsg.ConsumerGroupHeartbeatResponse) parts {
	if r.Assignment == nil {
		return nil
	}
	p := parts{}
	for _, t := range r.Assignment.Topics {
		for _, n := range t.Partitions {
			p.add(t.TopicID, n)
		}
	}
	return p
}

func wantHBCode(t *testing.T, r *kmsg.ConsumerGroupHeartbeatResponse, want *kerr.Error) {
	t.Helper()
	if r.ErrorCode != want.Code {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		t.Fatalf("error %v (%s), want %v", kerr.ErrorForCode(r.ErrorCode), msg, want)
	}
}

func wantOK(t *testing.T, r *kmsg.ConsumerGroupHeartbeatResponse) {
	t.Helper()
	if r.ErrorCode != 0 {
		t.Fatalf("heartbeat failed: %v %v", kerr.ErrorForCode(r.ErrorCode), *r.ErrorMessage)
	}
}

// member is a simulated client: it remembers its epoch and what it owns,
// which changes only when a response carries an assignment.
type member848 struct {
	e     *env
	group string
	id    string
	epoch int32
	owns  parts
	opts  []hbOpt
}

func (e *env) member(group, id string, opts ...hbOpt) *member848 {
	return &member848{e: e, group: group, id: id, owns: parts{}, opts: opts}
}

// beat heartbeats (joining with epoch 0 first) and applies the answer.
func (m *member848) beat() *kmsg.ConsumerGroupHeartbeatResponse {
	m.e.t.Helper()
	opts := m.opts
	if m.epoch != 0 {
		opts = []hbOpt{hbOwned(m.owns)}
		for _, o := range m.opts {
			// Only the instance id is repeated on later heartbeats.
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			o(req)
			if req.InstanceID != nil {
				opts = append(opts, o)
			}
		}
	}
	r := m.e.hb(m.group, m.id, m.epoch, opts...)
	if r.ErrorCode != 0 {
		return r
	}
	m.epoch = r.MemberEpoch
	if a := assigned(r); a != nil {
		m.owns = a
	}
	return r
}

func TestConsumerJoinRevokeThenAssign(t *testing.T) {
	foo := TopicMeta{Name: "foo", ID: topicID(1), Partitions: 4}
	e := newCEnv(t, foo)

	a := e.hb("g", "a", 0, hbTopics("foo"))
	wantOK(t, a)
	if a.MemberEpoch != 2 || assigned(a).count() != 4 || a.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("first member: epoch %d, %v", a.MemberEpoch, assigned(a))
	}
	aOwns := assigned(a)
	if len(e.records) == 0 {
		t.Fatal("joining wrote no record")
	}

	// b joins: the group epoch is 3; b waits for what a still owns.
	b := e.hb("g", "b", 0, hbTopics("foo"))
	wantOK(t, b)
	if b.MemberEpoch != 3 || assigned(b).count() != 0 {
		t.Fatalf("b before a revoked: epoch %d, %v", b.MemberEpoch, assigned(b))
	}
	// a is told to keep two partitions; it stays at epoch 2 until it revoked.
	a = e.hb("g", "a", 2, hbOwned(aOwns))
	wantOK(t, a)
	if a.MemberEpoch != 2 || assigned(a).count() != 2 {
		t.Fatalf("a asked to revoke: epoch %d, %v", a.MemberEpoch, assigned(a))
	}
	aOwns = assigned(a)
	// Until a says it revoked, b gets nothing.
	b = e.hb("g", "b", 3, hbOwned(parts{}))
	if assigned(b) != nil && assigned(b).count() != 0 {
		t.Fatalf("b got partitions a still owns: %v", assigned(b))
	}
	a = e.hb("g", "a", 2, hbOwned(aOwns))
	wantOK(t, a)
	if a.MemberEpoch != 3 {
		t.Fatalf("a after revoking: epoch %d", a.MemberEpoch)
	}
	b = e.hb("g", "b", 3, hbOwned(parts{}))
	wantOK(t, b)
	got := assigned(b)
	if got.count() != 2 {
		t.Fatalf("b after a revoked: %v", got)
	}
	for _, p := range got.list() {
		if aOwns.has(p.topic, p.partition) {
			t.Fatalf("partition %v given to both", p)
		}
	}

	// ConsumerGroupDescribe shows the stable group.
	e.c.ConsumerDescribe("d", &kmsg.ConsumerGroupDescribeRequest{Version: 1, Groups: []string{"g", "nope"}})
	e.drain()
	d := e.take("d").(*kmsg.ConsumerGroupDescribeResponse)
	g := d.Groups[0]
	if g.State != "Stable" || g.Epoch != 3 || g.AssignmentEpoch != 3 || g.AssignorName != "uniform" || len(g.Members) != 2 {
		t.Fatalf("describe: %+v", g)
	}
	if g.Members[0].Assignment.TopicPartitions[0].Topic != "foo" {
		t.Fatalf("describe assignment: %+v", g.Members[0].Assignment)
	}
	if d.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group: %+v", d.Groups[1])
	}
}

func TestConsumerFencing(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 2})
	a := e.hb("g", "a", 0, hbTopics("foo"))
	wantOK(t, a)
	wantHBCode(t, e.hb("g", "a", 5), kerr.FencedMemberEpoch)
	wantHBCode(t, e.hb("g", "zz", 1), kerr.UnknownMemberID)
	wantHBCode(t, e.hb("nogroup", "a", 1), kerr.GroupIDNotFound)

	// b joins, a reconciles to epoch 3 keeping one partition.
	e.hb("g", "b", 0, hbTopics("foo"))
	am := &member848{e: e, group: "g", id: "a", epoch: a.MemberEpoch, owns: assigned(a)}
	wantOK(t, am.beat())
	wantOK(t, am.beat())
	if am.epoch != 3 || am.owns.count() != 1 {
		t.Fatalf("a epoch %d owns %v", am.epoch, am.owns)
	}
	// The previous epoch with a subset of the partitions: a lost response.
	wantOK(t, e.hb("g", "a", 2, hbOwned(am.owns)))
	// The previous epoch without its owned partitions, or an older one: fenced.
	wantHBCode(t, e.hb("g", "a", 2), kerr.FencedMemberEpoch)
	wantHBCode(t, e.hb("g", "a", 1, hbOwned(am.owns)), kerr.FencedMemberEpoch)
	r := e.hb("g", "a", 0, hbTopics("foo"))
	wantOK(t, r) // rejoining with epoch 0 is allowed
	r2 := e.hb("g", "a", r.MemberEpoch-1, hbOwned(parts{topicID(9): {0}}))
	wantHBCode(t, r2, kerr.FencedMemberEpoch)
	if !strings.Contains(*r2.ErrorMessage, "smaller member epoch") {
		t.Fatalf("message %q", *r2.ErrorMessage)
	}
}

func TestConsumerValidation(t *testing.T) {
	e := newCEnv(t)
	for _, tc := range []struct {
		name string
		req  func(*kmsg.ConsumerGroupHeartbeatRequest)
		want *kerr.Error
		msg  string
	}{
		{"no group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" }, kerr.InvalidRequest, "GroupId can't be empty."},
		{"no member v1", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest, "MemberId can't be empty."},
		{"no rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"owned on join", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }, kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."},
		{"no subscription", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."},
		{"bad epoch", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }, kerr.InvalidRequest, "MemberEpoch is invalid."},
		{"static leave without instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -2 }, kerr.InvalidRequest, "InstanceId can't be null."},
		{"assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { s := "sticky"; r.ServerAssignor = &s }, kerr.UnsupportedAssignor, "ServerAssignor sticky is not supported. Supported assignors: uniform, range."},
		{"regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) { s := "a(b"; r.SubscribedTopicRegex = &s }, kerr.InvalidRegularExpression, ""},
	} {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.RebalanceTimeoutMillis = 1, "g", "m", 1000
		req.Topics, req.SubscribedTopicNames = []kmsg.ConsumerGroupHeartbeatRequestTopic{}, []string{"foo"}
		tc.req(req)
		e.c.ConsumerHeartbeat(e.now, tc.name, req, "c", "h")
		e.drain()
		r := e.take(tc.name).(*kmsg.ConsumerGroupHeartbeatResponse)
		if r.ErrorCode != tc.want.Code || (tc.msg != "" && (r.ErrorMessage == nil || *r.ErrorMessage != tc.msg)) {
			t.Errorf("%s: got %v %v, want %v %q", tc.name, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, tc.want, tc.msg)
		}
	}
	if len(e.c.groups) != 0 || len(e.records) != 0 {
		t.Fatalf("refused requests changed state: %d groups, %d records", len(e.c.groups), len(e.records))
	}
}

func TestConsumerSessionAndRebalanceTimeouts(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 4})
	a := e.member("g", "a", hbTopics("foo"))
	b := e.member("g", "b", hbTopics("foo"))
	wantOK(t, a.beat())
	wantOK(t, b.beat())
	// a never heartbeats again: after the session timeout it is removed,
	// and b gets every partition.
	for range 10 {
		e.advance(5 * time.Second)
		wantOK(t, b.beat())
	}
	if b.owns.count() != 4 {
		t.Fatalf("b after a expired: %v (epoch %d)", b.owns, b.epoch)
	}
	wantHBCode(t, a.beat(), kerr.UnknownMemberID)

	// c joins; b is asked to revoke but never does: after its rebalance
	// timeout (30 s) it is fenced, and c gets everything.
	c := e.member("g", "c", hbTopics("foo"))
	wantOK(t, c.beat())
	all := b.owns.clone()
	wantOK(t, b.beat())
	if b.owns.count() != 2 {
		t.Fatalf("b asked to revoke: %v", b.owns)
	}
	b.owns = all // b does not let go
	fenced := false
	for range 8 {
		e.advance(5 * time.Second)
		if r := b.beat(); r.ErrorCode != 0 {
			wantHBCode(t, r, kerr.UnknownMemberID)
			fenced = true
			break
		}
		b.owns = all
		wantOK(t, c.beat())
		if c.owns.count() > 2 {
			t.Fatalf("c got partitions b still holds: %v", c.owns)
		}
	}
	if !fenced {
		t.Fatal("b was not fenced after its rebalance timeout")
	}
	wantOK(t, c.beat())
	wantOK(t, c.beat())
	if c.owns.count() != 4 {
		t.Fatalf("c after b was fenced: %v", c.owns)
	}
}

func TestConsumerStaticMembership(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 4})
	a := e.member("g", "a1", hbTopics("foo"), hbInstance("i-a"))
	b := e.member("g", "b", hbTopics("foo"))
	wantOK(t, a.beat())
	wantOK(t, b.beat())
	for range 2 {
		wantOK(t, a.beat())
		wantOK(t, b.beat())
	}
	aOwns := a.owns.clone()
	if aOwns.count() != 2 || b.owns.count() != 2 {
		t.Fatalf("a %v b %v", aOwns, b.owns)
	}
	// Another member with the same instance id while a is active.
	wantHBCode(t, e.hb("g", "a2", 0, hbTopics("foo"), hbInstance("i-a")), kerr.UnreleasedInstanceID)
	wantHBCode(t, e.hb("g", "a2", a.epoch, hbInstance("i-a")), kerr.FencedInstanceID)
	// a leaves for now (-2): its partitions stay with it, the epoch does not move.
	epoch := e.c.groups["g"].consumer.epoch
	l := e.hb("g", "a1", -2, hbInstance("i-a"))
	wantOK(t, l)
	if l.MemberEpoch != -2 || e.c.groups["g"].consumer.epoch != epoch {
		t.Fatalf("static leave: epoch %d, group epoch %d -> %d", l.MemberEpoch, epoch, e.c.groups["g"].consumer.epoch)
	}
	wantOK(t, b.beat())
	if b.owns.count() != 2 {
		t.Fatalf("b took a's partitions: %v", b.owns)
	}
	// It comes back with a new member id and gets the same partitions.
	a2 := e.member("g", "a2", hbTopics("foo"), hbInstance("i-a"))
	wantOK(t, a2.beat())
	if !a2.owns.equal(aOwns) {
		t.Fatalf("rejoined static member got %v, had %v", a2.owns, aOwns)
	}
	// Leaving for good (-1) frees them.
	wantOK(t, e.hb("g", "a2", -1, hbInstance("i-a")))
	wantOK(t, b.beat())
	wantOK(t, b.beat())
	if b.owns.count() != 4 {
		t.Fatalf("b after a left: %v", b.owns)
	}
}

func TestConsumerRegexFollowsTopics(t *testing.T) {
	foo1 := TopicMeta{Name: "foo-1", ID: topicID(1), Partitions: 1}
	bar := TopicMeta{Name: "bar", ID: topicID(2), Partitions: 1}
	e := newCEnv(t, foo1, bar)
	a := e.hb("g", "a", 0, hbRegex("foo-.*"))
	if got := assigned(a); got.count() != 1 || !got.has(foo1.ID, 0) {
		t.Fatalf("regex assignment: %v", got)
	}
	// Full match, as Kafka: "foo" alone matches nothing.
	x := e.hb("g2", "x", 0, hbRegex("foo"))
	if assigned(x).count() != 0 {
		t.Fatalf("partial regex match: %v", assigned(x))
	}
	foo2 := TopicMeta{Name: "foo-2", ID: topicID(3), Partitions: 2}
	e.c.SetTopics([]TopicMeta{foo1, bar, foo2})
	a = e.hb("g", "a", a.MemberEpoch, hbOwned(assigned(a)))
	if got := assigned(a); got.count() != 3 || a.MemberEpoch != 3 {
		t.Fatalf("after foo-2 was created: %v epoch %d", got, a.MemberEpoch)
	}
	// foo-1 deleted: its partition is revoked.
	e.c.SetTopics([]TopicMeta{bar, foo2})
	a = e.hb("g", "a", a.MemberEpoch, hbOwned(assigned(a)))
	if got := assigned(a); got.count() != 2 || got.has(foo1.ID, 0) {
		t.Fatalf("after foo-1 was deleted: %v", got)
	}
}

func TestConsumerOffsetsAndTypes(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 1})
	a := e.hb("g", "a", 0, hbTopics("foo"))
	commit := func(member string, epoch int32, version int16) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = version, "g", member, epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "foo"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 7
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		e.c.Commit(e.now, "oc", req)
		e.drain()
		return e.take("oc").(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit("a", a.MemberEpoch+1, 9); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("stale epoch commit: %v", kerr.ErrorForCode(code))
	}
	if code := commit("a", a.MemberEpoch, 8); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("v8 commit: %v", kerr.ErrorForCode(code))
	}
	if code := commit("", -1, 9); code != kerr.UnknownMemberID.Code {
		t.Fatalf("simple commit to a live group: %v", kerr.ErrorForCode(code))
	}
	if code := commit("a", a.MemberEpoch, 9); code != 0 {
		t.Fatalf("member commit: %v", kerr.ErrorForCode(code))
	}
	fetch := func(member *string, epoch int32) *kmsg.OffsetFetchResponseGroup {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "g", member, epoch
		req.Groups = append(req.Groups, rg)
		e.c.FetchOffsets("of", req)
		e.drain()
		return &e.take("of").(*kmsg.OffsetFetchResponse).Groups[0]
	}
	if g := fetch(strp("a"), a.MemberEpoch+3); g.ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("stale fetch: %v", kerr.ErrorForCode(g.ErrorCode))
	}
	if g := fetch(nil, -1); g.ErrorCode != 0 || g.Topics[0].Partitions[0].Offset != 7 {
		t.Fatalf("admin fetch: %+v", g)
	}
	e.c.List("l", &kmsg.ListGroupsRequest{Version: 5, TypesFilter: []string{"consumer"}})
	e.drain()
	l := e.take("l").(*kmsg.ListGroupsResponse)
	if len(l.Groups) != 1 || l.Groups[0].GroupType != "consumer" || l.Groups[0].GroupState != "Stable" {
		t.Fatalf("list: %+v", l.Groups)
	}
	e.c.Describe("dg", &kmsg.DescribeGroupsRequest{Version: 5, Groups: []string{"g"}})
	e.drain()
	dg := e.take("dg").(*kmsg.DescribeGroupsResponse)
	if dg.Groups[0].ProtocolType != "consumer" || len(dg.Groups[0].Members) != 1 {
		t.Fatalf("describe groups: %+v", dg.Groups[0])
	}
}

// TestConsumerMigration: an empty classic group becomes a consumer group on
// its first heartbeat, an empty consumer group a classic one on its first
// JoinGroup; offsets are kept both ways; a classic group with members is
// not converted.
func TestConsumerMigration(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 1})
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 9, "g", -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 42}}}}
	e.c.Commit(e.now, "oc", req)
	e.drain()
	e.take("oc")

	// A classic group with a member is not converted.
	e.joinNew("j1", "live")
	wantHBCode(t, e.hb("live", "m", 0, hbTopics("foo")), kerr.GroupIDNotFound)

	a := e.hb("g", "a", 0, hbTopics("foo"))
	wantOK(t, a)
	if e.c.groups["g"].offsets["foo"][0].offset != 42 {
		t.Fatal("offsets lost in the upgrade")
	}
	// Classic join while the consumer group has members: refused.
	e.join("j2", "g", "")
	if r := e.mustJoin("j2"); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join into a live consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	wantOK(t, e.hb("g", "a", -1))
	e.join("j3", "g", "")
	if r := e.mustJoin("j3"); r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("classic join into an empty consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if g := e.c.groups["g"]; g.consumer != nil || g.offsets["foo"][0].offset != 42 {
		t.Fatalf("downgrade: consumer %v, offsets %v", g.consumer, g.offsets)
	}
	// The log replays to the same result.
	c2 := New(DefaultConfig())
	for _, r := range e.records {
		if err := c2.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	if g := c2.groups["g"]; g == nil || g.consumer != nil || g.offsets["foo"][0].offset != 42 {
		t.Fatalf("replayed: %+v", g)
	}
}

// TestConsumerReplay: a consumer group's members, epochs and assignments
// survive a restart; members continue heartbeating where they were.
func TestConsumerReplay(t *testing.T) {
	foo := TopicMeta{Name: "foo", ID: topicID(1), Partitions: 3}
	e := newCEnv(t, foo)
	a := e.member("g", "a", hbTopics("foo"), hbInstance("i"), hbAssignor("range"))
	b := e.member("g", "b", hbTopics("foo"))
	for range 3 {
		wantOK(t, a.beat())
		wantOK(t, b.beat())
	}
	if a.owns.count()+b.owns.count() != 3 {
		t.Fatalf("a %v b %v", a.owns, b.owns)
	}

	e2 := newCEnv(t, foo)
	for _, r := range e.records {
		if err := e2.c.Replay(r.Key, r.Value); err != nil {
			t.Fatal(err)
		}
	}
	cg1, cg2 := e.c.groups["g"].consumer, e2.c.groups["g"].consumer
	if cg2 == nil || cg2.epoch != cg1.epoch || cg2.assignmentEpoch != cg1.assignmentEpoch || len(cg2.members) != 2 || cg2.static["i"] != "a" {
		t.Fatalf("replayed group: %+v", cg2)
	}
	for id, m := range cg1.members {
		m2 := cg2.members[id]
		if m2.Epoch != m.Epoch || !m2.Assigned.equal(m.Assigned) || !cg2.target[id].equal(cg1.target[id]) || m2.Assignor != m.Assignor {
			t.Fatalf("member %s: %+v vs %+v", id, m2, m)
		}
	}
	a2 := e2.hb("g", "a", a.epoch, hbOwned(a.owns), hbInstance("i"))
	wantOK(t, a2)
	if a2.MemberEpoch != a.epoch {
		t.Fatalf("epoch after restart %d, before %d", a2.MemberEpoch, a.epoch)
	}
	// Sessions restart at the first tick.
	e2.advance(time.Millisecond)
	if e2.c.NextDeadline().IsZero() {
		t.Fatal("no session deadline after replay")
	}
}

func TestAssignors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		topics := map[[16]byte]TopicMeta{}
		nt := 1 + rng.IntN(4)
		for i := range nt {
			id := topicID(byte(i + 1))
			topics[id] = TopicMeta{Name: fmt.Sprint("t", i), ID: id, Partitions: int32(1 + rng.IntN(12))}
		}
		homogeneous := iter%2 == 0
		var members []assignMember
		nm := 1 + rng.IntN(6)
		var prev map[string]parts
		for round := range 2 {
			members = members[:0]
			for i := range nm + round {
				m := assignMember{id: fmt.Sprintf("m%02d", i)}
				for id := range topics {
					if homogeneous || rng.IntN(2) == 0 {
						m.topics = append(m.topics, id)
					}
				}
				slices.SortFunc(m.topics, func(a, b [16]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
				m.prev = prev[m.id]
				members = append(members, m)
			}
			for _, name := range []string{AssignorUniform, AssignorRange} {
				out := assign(name, members, topics)
				owner := map[tp]string{}
				for _, m := range members {
					for _, p := range out[m.id].list() {
						if o, dup := owner[p]; dup {
							t.Fatalf("%s: %v assigned to %s and %s", name, p, o, m.id)
						}
						if !slices.Contains(m.topics, p.topic) {
							t.Fatalf("%s: %v given to %s, not subscribed", name, p, m.id)
						}
						owner[p] = m.id
					}
				}
				for id, tm := range topics {
					subscribed := slices.ContainsFunc(members, func(m assignMember) bool { return slices.Contains(m.topics, id) })
					for n := range tm.Partitions {
						if _, ok := owner[tp{id, n}]; ok != subscribed {
							t.Fatalf("%s: partition %s/%d assigned=%v subscribed=%v", name, tm.Name, n, ok, subscribed)
						}
					}
				}
				if name == AssignorUniform && homogeneous {
					lo, hi := 1<<30, 0
					for _, m := range members {
						lo, hi = min(lo, out[m.id].count()), max(hi, out[m.id].count())
					}
					if hi-lo > 1 {
						t.Fatalf("uniform: unbalanced %d..%d", lo, hi)
					}
				}
				if name == AssignorUniform {
					prev = out
				}
			}
		}
	}
	// Range: contiguous ranges by member id, the first ones one more.
	foo := TopicMeta{Name: "foo", ID: topicID(1), Partitions: 5}
	out := assignRange([]assignMember{{id: "a", topics: [][16]byte{foo.ID}}, {id: "b", topics: [][16]byte{foo.ID}}}, map[[16]byte]TopicMeta{foo.ID: foo})
	if !slices.Equal(out["a"][foo.ID], []int32{0, 1, 2}) || !slices.Equal(out["b"][foo.ID], []int32{3, 4}) {
		t.Fatalf("range: %v", out)
	}
}

// TestConsumerNeverTwoOwners drives simulated clients that join, heartbeat,
// revoke what they are told to and leave or vanish at random, and checks
// that no partition is ever owned by two clients at once, and that once
// they settle every partition is owned.
func TestConsumerNeverTwoOwners(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		topics := []TopicMeta{{Name: "a", ID: topicID(1), Partitions: 5}, {Name: "b", ID: topicID(2), Partitions: 3}}
		e := newCEnv(t, topics...)
		type client struct {
			id     string
			epoch  int32
			owns   parts
			alive  bool
			lastOK time.Time
		}
		var clients []*client
		step := func(cl *client) {
			var r *kmsg.ConsumerGroupHeartbeatResponse
			if cl.epoch == 0 {
				r = e.hb("g", cl.id, 0, hbTopics("a", "b"), hbAssignor([]string{"uniform", "range"}[seed%2]))
			} else {
				r = e.hb("g", cl.id, cl.epoch, hbOwned(cl.owns))
			}
			if r.ErrorCode != 0 {
				// Fenced or unknown: abandon everything and rejoin.
				cl.epoch, cl.owns = 0, parts{}
				return
			}
			cl.epoch, cl.lastOK = r.MemberEpoch, e.now
			if a := assigned(r); a != nil {
				cl.owns = a
			}
		}
		check := func() {
			owner := map[tp]string{}
			for _, cl := range clients {
				if !cl.alive {
					continue
				}
				if cl.epoch != 0 && !e.now.Before(cl.lastOK.Add(45*time.Second)) {
					// No heartbeat got through for a session timeout: a
					// client gives up its partitions (kgo and the Java
					// client do) and rejoins.
					cl.epoch, cl.owns = 0, parts{}
				}
				for _, p := range cl.owns.list() {
					if o, dup := owner[p]; dup {
						t.Fatalf("seed %d: %v owned by %s and %s", seed, p, o, cl.id)
					}
					owner[p] = cl.id
				}
			}
		}
		for i := range 400 {
			switch x := rng.IntN(20); {
			case x == 0 && len(clients) < 5:
				clients = append(clients, &client{id: fmt.Sprint("c", i), owns: parts{}, alive: true})
			case x == 1:
				for _, cl := range clients {
					if cl.alive && cl.epoch > 0 {
						e.hb("g", cl.id, -1)
						cl.alive, cl.owns = false, nil
						break
					}
				}
			case x == 2:
				for _, cl := range clients {
					if cl.alive {
						cl.alive, cl.owns = false, nil // killed: its session must expire
						break
					}
				}
			case x == 3:
				e.advance(time.Duration(rng.IntN(20)) * time.Second)
				// A killed member still counts as owner until it expires;
				// for the clients, the surviving ones must not overlap.
			default:
				if len(clients) > 0 {
					cl := clients[rng.IntN(len(clients))]
					if cl.alive {
						step(cl)
					}
				}
			}
			check()
		}
		// Settle: let dead sessions expire and the live ones converge.
		e.advance(time.Minute)
		live := 0
		for range 10 {
			for _, cl := range clients {
				if cl.alive {
					step(cl)
				}
			}
			check()
		}
		owned := 0
		for _, cl := range clients {
			if cl.alive {
				live++
				owned += cl.owns.count()
			}
		}
		if live > 0 && owned != 8 {
			t.Fatalf("seed %d: %d live clients own %d of 8 partitions", seed, live, owned)
		}
	}
}

// TestConsumerTxnCommit: a KIP-848 member commits transactional offsets with
// its member epoch as the generation.
func TestConsumerTxnCommit(t *testing.T) {
	e := newCEnv(t, TopicMeta{Name: "foo", ID: topicID(1), Partitions: 1})
	a := e.hb("g", "a", 0, hbTopics("foo"))
	commit := func(member string, gen int32) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation, req.ProducerID = 3, "g", member, gen, 7
		req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Offset: 1}}}}
		e.c.TxnCommit(e.now, "tc", req)
		e.drain()
		return e.take("tc").(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit("a", a.MemberEpoch-1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("stale txn commit: %v", kerr.ErrorForCode(code))
	}
	if code := commit("x", a.MemberEpoch); code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member txn commit: %v", kerr.ErrorForCode(code))
	}
	if code := commit("a", a.MemberEpoch); code != 0 {
		t.Fatalf("txn commit: %v", kerr.ErrorForCode(code))
	}
}

package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// TestBrokerJavaConsumer848 runs Kafka's Java consumer (ConsoleConsumer of
// the 4.4 jars) with group.protocol=consumer against the broker: four
// members of one KIP-848 group read a 6-partition topic while records keep
// arriving; one member leaves gracefully (--max-messages), one is killed
// with SIGKILL (its session, 4 s here, expires). The survivors take over
// their partitions, and every record produced is printed by some member.
func TestBrokerJavaConsumer848(t *testing.T) {
	t.Parallel()
	requireJavaTools(t)
	b := harness.TributaryBroker(t, func(cfg *broker.Config) {
		cfg.ConsumerSessionTimeout = 4 * time.Second
		cfg.ConsumerHeartbeatInterval = time.Second
	})
	bs := b.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const topic, parts = "java-848", 6
	createTopic(ctx, t, bs, topic, parts, nil)

	type member struct {
		name   string
		out    []byte
		err    error
		cancel context.CancelFunc
	}
	var wg sync.WaitGroup
	start := func(name string, extra ...string) *member {
		m := &member{name: name}
		mctx, mcancel := context.WithCancel(ctx)
		m.cancel = mcancel
		args := append([]string{"--bootstrap-server", bs, "--topic", topic, "--group", "java-848-group",
			"--from-beginning", "--timeout-ms", "12000",
			"--consumer-property", "group.protocol=consumer",
			"--consumer-property", "auto.commit.interval.ms=500"}, extra...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.out, m.err = harness.JavaTool(mctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", args...)
		}()
		return m
	}
	members := []*member{
		start("a"), start("b"),
		start("leaver", "--max-messages", "300"),
		start("killed"),
	}

	// Records arrive for 16 s, round robin over the partitions.
	cl := newClient(t, bs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var produced []string
	begin := time.Now()
	killed := false
	for i := 0; time.Since(begin) < 16*time.Second; i++ {
		var batch []*kgo.Record
		for j := range 30 {
			v := fmt.Sprintf("r-%05d-%02d", i, j)
			produced = append(produced, v)
			batch = append(batch, &kgo.Record{Topic: topic, Partition: int32((i*30 + j) % parts), Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, batch...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		if !killed && time.Since(begin) > 7*time.Second {
			members[3].cancel() // SIGKILL to its process group
			killed = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()

	seen := map[string]string{}
	for _, m := range members {
		n := 0
		for _, line := range strings.Split(string(m.out), "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "r-") {
				seen[line] = m.name
				n++
			}
		}
		switch {
		case m.name == "killed":
			if m.err == nil {
				t.Errorf("the killed member exited cleanly")
			}
		case m.err != nil:
			t.Errorf("member %s: %v", m.name, m.err)
		}
		t.Logf("member %s printed %d records", m.name, n)
		if n == 0 && m.name != "killed" {
			t.Errorf("member %s consumed nothing: the group did not share the partitions", m.name)
		}
	}
	var lost []string
	for _, v := range produced {
		if _, ok := seen[v]; !ok {
			lost = append(lost, v)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d records never consumed, first %q", len(lost), len(produced), lost[:min(5, len(lost))])
	}
	// Records produced after the kill and the leave went to all six
	// partitions: the survivors took over the others' partitions.
	late := produced[len(produced)-parts:]
	for _, v := range late {
		if who := seen[v]; who != "a" && who != "b" {
			t.Errorf("late record %s consumed by %q, want a survivor", v, who)
		}
	}
}

// TestBroker848Diff runs one KIP-848 scenario of raw ConsumerGroupHeartbeat
// requests (joins, revocation, fencing, unknown members and groups, bad
// requests, static members leaving and rejoining, commits with stale epochs)
// against Apache Kafka 4.4 and Tributary's broker, and compares the error
// codes, member epochs and assigned partition counts of every answer (and
// the messages of refused requests). Kafka runs with
// group.consumer.assignment.interval.ms=0.
func TestBroker848Diff(t *testing.T) {
	t.Parallel()
	// Kafka 4.3+ batches target assignments (at most one per
	// group.consumer.assignment.interval.ms); this broker computes the new
	// target on the heartbeat that bumped the epoch, as Kafka with 0.
	targets := diffTargets(t, map[string]string{"group.consumer.assignment.interval.ms": "0"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var results []map[string]string
	for _, tg := range targets {
		results = append(results, scenario848(ctx, t, tg))
	}
	for _, k := range sortedKeys(results[0]) {
		diff(t, k, results[0][k], results[1][k])
	}
}

func scenario848(ctx context.Context, t *testing.T, tg diffTarget) map[string]string {
	t.Helper()
	res := map[string]string{}
	const topic = "d848"
	createTopic(ctx, t, tg.bs, topic, 2, nil)
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	tid := direct[*kmsg.MetadataResponse](ctx, t, tg, md).Topics[0].TopicID
	owned := func(ps ...int32) []kmsg.ConsumerGroupHeartbeatRequestTopic {
		if len(ps) == 0 {
			return []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: tid, Partitions: ps}}
	}
	// The group coordinator may still be loading (Kafka creates
	// __consumer_offsets on the first FindCoordinator): retry those answers.
	send := func(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				fc := kmsg.NewPtrFindCoordinatorRequest()
				fc.CoordinatorKeys = []string{req.Group}
				direct[*kmsg.FindCoordinatorResponse](ctx, t, tg, fc)
			}
			r := direct[*kmsg.ConsumerGroupHeartbeatResponse](ctx, t, tg, req)
			switch r.ErrorCode {
			case 14, 15, 16: // COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
				if ctx.Err() != nil {
					t.Fatalf("%s: coordinator never ready", tg.name)
				}
				time.Sleep(200 * time.Millisecond)
				continue
			}
			return r
		}
	}
	partsOf := func(r *kmsg.ConsumerGroupHeartbeatResponse) []int32 {
		if r.Assignment == nil {
			return nil
		}
		var out []int32
		for _, at := range r.Assignment.Topics {
			out = append(out, at.Partitions...)
		}
		return out
	}
	record := func(step string, r *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
		a := "no assignment"
		if r.Assignment != nil {
			a = fmt.Sprintf("%d partitions", len(partsOf(r)))
		}
		res[step] = fmt.Sprintf("%s epoch=%d %s", errName(r.ErrorCode), r.MemberEpoch, a)
		if r.ErrorCode != 0 && r.ErrorCode != 69 { // messages of refusals; GROUP_ID_NOT_FOUND's differs
			res[step] += " message=" + deref(r.ErrorMessage)
		}
		return r
	}
	hb := func(group, member string, epoch int32, mod func(*kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatRequest {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames, req.Topics = 30000, []string{topic}, owned()
		}
		if mod != nil {
			mod(req)
		}
		return req
	}
	const g = "diff-848"
	a, b := "member-a-000000000000a", "member-b-000000000000b"

	ra := record("01 a joins", send(hb(g, a, 0, nil)))
	record("02 a epoch ahead", send(hb(g, a, ra.MemberEpoch+5, nil)))
	record("03 unknown member", send(hb(g, "member-x-000000000000x", 1, nil)))
	record("04 unknown group", send(hb("no-such-848", a, 1, nil)))
	rb := record("05 b joins", send(hb(g, b, 0, nil)))
	aOwns := partsOf(ra)
	ra = record("06 a told to revoke", send(hb(g, a, ra.MemberEpoch, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned(aOwns...) })))
	aOwns = partsOf(ra)
	record("07 b waits", send(hb(g, b, rb.MemberEpoch, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned() })))
	prev := ra.MemberEpoch
	ra = record("08 a revoked", send(hb(g, a, ra.MemberEpoch, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned(aOwns...) })))
	rb = record("09 b assigned", send(hb(g, b, rb.MemberEpoch, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned() })))
	record("10 a previous epoch, subset", send(hb(g, a, prev, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned(aOwns...) })))
	record("11 a previous epoch, no partitions", send(hb(g, a, prev, nil)))

	record("20 join without topics", send(hb(g, "member-y-000000000000y", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil })))
	record("21 join without rebalance timeout", send(hb(g, "member-y-000000000000y", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 })))
	record("22 join owning partitions", send(hb(g, "member-y-000000000000y", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = owned(0) })))
	record("23 epoch -3", send(hb(g, a, -3, nil)))
	record("24 static leave without instance", send(hb(g, a, -2, nil)))
	record("25 no member id", send(hb(g, "", 0, nil)))
	record("26 empty group id", send(hb("", a, 0, nil)))
	record("27 unknown assignor", send(hb(g, "member-y-000000000000y", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = kmsg.StringPtr("foo") })))
	res["28 bad regex"] = errName(send(hb(g, "member-y-000000000000y", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("d84(")
	})).ErrorCode)

	// Commits: the member's epoch, not another.
	commit := func(member string, epoch int32) string {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.MemberID, req.Generation = g, member, epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = partsOf(rb)[0], 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return errName(direct[*kmsg.OffsetCommitResponse](ctx, t, tg, req).Topics[0].Partitions[0].ErrorCode)
	}
	if len(partsOf(rb)) == 1 {
		res["30 commit with a stale epoch"] = commit(b, rb.MemberEpoch-1)
		res["31 commit with the epoch"] = commit(b, rb.MemberEpoch)
		res["32 simple commit to a live group"] = commit("", -1)
	} else {
		res["30 b assignment"] = fmt.Sprint(partsOf(rb))
	}

	// Static members.
	const gs = "diff-848-static"
	static := func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = kmsg.StringPtr("instance-1") }
	c, d := "member-c-000000000000c", "member-d-000000000000d"
	rc := record("40 static c joins", send(hb(gs, c, 0, static)))
	record("41 d takes the live instance id", send(hb(gs, d, 0, static)))
	record("42 d heartbeats as the instance", send(hb(gs, d, rc.MemberEpoch, static)))
	record("43 c leaves for now", send(hb(gs, c, -2, static)))
	record("44 d rejoins as the instance", send(hb(gs, d, 0, static)))
	record("45 c is gone", send(hb(gs, c, rc.MemberEpoch, static)))

	record("50 a leaves", send(hb(g, a, -1, nil)))
	record("51 a after leaving", send(hb(g, a, ra.MemberEpoch, nil)))

	lg := kmsg.NewPtrListGroupsRequest()
	lg.TypesFilter = []string{"consumer"}
	var listed []string
	for _, gr := range direct[*kmsg.ListGroupsResponse](ctx, t, tg, lg).Groups {
		listed = append(listed, gr.Group+" "+gr.GroupType+" "+gr.ProtocolType)
	}
	slices.Sort(listed)
	res["60 consumer groups listed"] = strings.Join(listed, ", ")
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{g, "no-such-848"}
	dr := direct[*kmsg.ConsumerGroupDescribeResponse](ctx, t, tg, cgd)
	res["61 describe"] = fmt.Sprintf("%s %s members=%d assignor=%s", errName(dr.Groups[0].ErrorCode), dr.Groups[0].State, len(dr.Groups[0].Members), dr.Groups[0].AssignorName)
	res["62 describe unknown"] = errName(dr.Groups[1].ErrorCode)
	return res
}

// TestConsumerGroup848SurvivesKill9: a KIP-848 group (franz-go with
// ServerSideBalancer) reads and commits, the broker is killed with SIGKILL
// and restarted on the same data; the group comes back with the same group
// epoch, member and assignment, the member carries on without being fenced,
// and it resumes after its committed offsets.
func TestConsumerGroup848SurvivesKill9(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	port := harness.FreePort(t)
	overrides := []string{"group.consumer.heartbeat.interval.ms=500"}
	p := harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	const topic, group = "crash-848", "crash-848-group"
	createTopicAt(t, p.Addr(), topic, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod := crashClient(t, p.Addr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 40)

	cons := crashClient(t, p.Addr(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	committed := commitPolled(ctx, t, cons, pollGroup(ctx, t, cons, 20, nil))
	describe := func(addr string) kmsg.ConsumerGroupDescribeResponseGroup {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, crashClient(t, addr))
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("ConsumerGroupDescribe: %v %+v", err, resp)
		}
		return resp.Groups[0]
	}
	summary := func(g kmsg.ConsumerGroupDescribeResponseGroup) string {
		s := fmt.Sprintf("epoch %d assignment epoch %d", g.Epoch, g.AssignmentEpoch)
		for _, m := range g.Members {
			s += fmt.Sprintf("; member %s epoch %d assigned %v", m.MemberID, m.MemberEpoch, m.Assignment.TopicPartitions)
		}
		return s
	}
	before := describe(p.Addr())
	if before.State != "Stable" || len(before.Members) != 1 {
		t.Fatalf("before the kill: %s %s", before.State, summary(before))
	}

	p.Kill()
	p = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	after := describe(p.Addr())
	if summary(after) != summary(before) {
		t.Fatalf("group after kill -9:\n  %s\nbefore:\n  %s", summary(after), summary(before))
	}

	// The member carries on: new records arrive, none below the commit.
	produce(40, 60)
	pollGroup(ctx, t, cons, 40, committed)
	if now := describe(p.Addr()); now.Members[0].MemberID != before.Members[0].MemberID || now.Epoch != before.Epoch {
		t.Fatalf("the member was replaced or the group rebalanced: %s (before: %s)", summary(now), summary(before))
	}
}

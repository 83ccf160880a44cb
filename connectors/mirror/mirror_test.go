package mirror

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy{}
	for _, c := range []struct{ topic, source, upstream, original string }{
		{"t", "", "", "t"},
		{"A.t", "A", "t", "t"},
		{"B.A.t", "B", "A.t", "t"},
		{"A.", "", "", "A."},
	} {
		if got := p.TopicSource(c.topic); got != c.source {
			t.Errorf("TopicSource(%q) = %q, want %q", c.topic, got, c.source)
		}
		if got := p.UpstreamTopic(c.topic); got != c.upstream {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", c.topic, got, c.upstream)
		}
		if got := OriginalTopic(p, c.topic); got != c.original {
			t.Errorf("OriginalTopic(%q) = %q, want %q", c.topic, got, c.original)
		}
	}
	if got := p.FormatRemoteTopic("A", "t"); got != "A.t" {
		t.Errorf("FormatRemoteTopic = %q", got)
	}
	if got := p.OffsetSyncsTopic("B"); got != "mm2-offset-syncs.B.internal" {
		t.Errorf("OffsetSyncsTopic = %q", got)
	}
	if got := p.CheckpointsTopic("A"); got != "A.checkpoints.internal" {
		t.Errorf("CheckpointsTopic = %q", got)
	}
	u := DefaultPolicy{Separator: "_"}
	if got := u.OffsetSyncsTopic("B"); got != "mm2-offset-syncs_B_internal" {
		t.Errorf("custom separator OffsetSyncsTopic = %q", got)
	}
	if got := (DefaultPolicy{Separator: "_", NoInternalSeparator: true}).CheckpointsTopic("A"); got != "A.checkpoints.internal" {
		t.Errorf("internal separator disabled: CheckpointsTopic = %q", got)
	}
	for topic, want := range map[string]bool{"__consumer_offsets": true, ".hidden": true, "connect-offsets-internal": false, "skip.internal": false,
		"mm2-offset-syncs.B.internal": true, "A.checkpoints.internal": true, "orders": false, "A.orders": false} {
		if got := p.IsInternalTopic(topic); got != want {
			t.Errorf("IsInternalTopic(%q) = %v", topic, got)
		}
	}
	// Active/active A<->B: B.A.t is already on A, A.t came from A.
	for topic, want := range map[string]bool{"t": false, "B.t": false, "A.t": true, "B.A.t": true, "C.B.t": false} {
		if got := IsCycle(p, topic, "A"); got != want {
			t.Errorf("IsCycle(%q, A) = %v, want %v", topic, got, want)
		}
	}
	for topic, want := range map[string]bool{"heartbeats": true, "A.heartbeats": true, "B.A.heartbeats": true, "myheartbeats": false} {
		if got := IsHeartbeatsTopic(p, topic); got != want {
			t.Errorf("IsHeartbeatsTopic(%q) = %v", topic, got)
		}
	}
}

func TestIdentityPolicy(t *testing.T) {
	p, err := NewPolicy("IdentityReplicationPolicy", ".", true, "A")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.FormatRemoteTopic("A", "orders"); got != "orders" {
		t.Errorf("FormatRemoteTopic = %q", got)
	}
	if got := p.FormatRemoteTopic("A", "heartbeats"); got != "A.heartbeats" {
		t.Errorf("heartbeats FormatRemoteTopic = %q", got)
	}
	if got := p.TopicSource("orders"); got != "A" {
		t.Errorf("TopicSource = %q", got)
	}
	if IsCycle(p, "orders", "B") {
		t.Error("identity: orders is a cycle to B")
	}
	if !IsCycle(p, "B.heartbeats", "B") {
		t.Error("identity: B.heartbeats is not a cycle to B")
	}
	if _, err := NewPolicy("com.example.Custom", ".", true, "A"); err == nil {
		t.Error("unknown policy class accepted")
	}
}

func TestFilters(t *testing.T) {
	topics, err := NewFilter(SplitList(DefaultTopics), SplitList(DefaultTopicsExclude))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"orders": true, "a.internal": true, "a-internal": true, "mm2-configs.A.internal": false, "x.replica": false,
		"__consumer_offsets": false, "internal": true, "orders.replica.x": true} {
		if got := topics.Accepts(name); got != want {
			t.Errorf("default topic filter %q = %v, want %v", name, got, want)
		}
	}
	groups, err := NewFilter(SplitList(DefaultGroups), SplitList(DefaultGroupsExclude))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"app": true, "console-consumer-123": false, "connect-sink": false, "__x": false} {
		if got := groups.Accepts(name); got != want {
			t.Errorf("default group filter %q = %v, want %v", name, got, want)
		}
	}
	// Java's matches(): the whole name, every alternative anchored.
	f, _ := NewFilter([]string{"ord", "pay.*"}, nil)
	for name, want := range map[string]bool{"ord": true, "orders": false, "xord": false, "payments": true} {
		if got := f.Accepts(name); got != want {
			t.Errorf("filter ord,pay.* %q = %v", name, got)
		}
	}
	// An empty list matches nothing (Kafka's compilePatternList).
	if (Filter{}).Accepts("x") {
		t.Error("empty include accepts")
	}
	if _, err := CompilePattern([]string{"(?=x)a"}); err == nil {
		t.Error("lookahead accepted")
	}
	ex, _ := CompilePattern(SplitList(DefaultConfigPropertiesExclude))
	if !ex.Matches("min.insync.replicas") || ex.Matches("retention.ms") || ex.Matches("minxinsync.replicas") {
		t.Error("config property exclude list")
	}
}

func TestFormats(t *testing.T) {
	s := OffsetSync{Topic: "t", Partition: 1, Upstream: 5, Downstream: 7}
	if got := hex.EncodeToString(s.Key()); got != "00017400000001" {
		t.Errorf("offset sync key %s", got)
	}
	if got := hex.EncodeToString(s.Value()); got != "00000000000000050000000000000007" {
		t.Errorf("offset sync value %s", got)
	}
	c := Checkpoint{Group: "g", Topic: "A.t", Partition: 2, Upstream: 10, Downstream: 8, Metadata: "md"}
	if got := hex.EncodeToString(c.Key()); got != "00016700034"+"12e7400000002" {
		t.Errorf("checkpoint key %s", got)
	}
	if got := hex.EncodeToString(c.Value()); got != "0000"+"000000000000000a"+"0000000000000008"+"0002"+"6d64" {
		t.Errorf("checkpoint value %s", got)
	}
	h := Heartbeat{Source: "A", Target: "B", Timestamp: 0x0102}
	if got := hex.EncodeToString(h.Key()) + "/" + hex.EncodeToString(h.Value()); got != "000141000142/00000000000000000102" {
		t.Errorf("heartbeat %s", got)
	}
	if back, err := DecodeOffsetSync(s.Key(), s.Value()); err != nil || back != s {
		t.Errorf("offset sync round trip %+v %v", back, err)
	}
	if back, err := DecodeCheckpoint(c.Key(), c.Value()); err != nil || back != c {
		t.Errorf("checkpoint round trip %+v %v", back, err)
	}
	if back, err := DecodeHeartbeat(h.Key(), h.Value()); err != nil || back != h {
		t.Errorf("heartbeat round trip %+v %v", back, err)
	}
	if _, err := DecodeCheckpoint(c.Key(), append([]byte{0, 1}, c.Value()[2:]...)); err == nil {
		t.Error("checkpoint version 1 accepted")
	}
	if _, err := DecodeOffsetSync(s.Key()[:3], s.Value()); err == nil {
		t.Error("short key accepted")
	}
}

func FuzzDecode(f *testing.F) {
	s := OffsetSync{Topic: "t", Partition: 1, Upstream: 5, Downstream: 7}
	c := Checkpoint{Group: "g", Topic: "A.t", Partition: 2, Upstream: 10, Downstream: 8, Metadata: "md"}
	f.Add(s.Key(), s.Value())
	f.Add(c.Key(), c.Value())
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if s, err := DecodeOffsetSync(k, v); err == nil {
			if back, err := DecodeOffsetSync(s.Key(), s.Value()); err != nil || back != s {
				t.Fatalf("offset sync does not round trip: %+v", s)
			}
		}
		if c, err := DecodeCheckpoint(k, v); err == nil {
			if back, err := DecodeCheckpoint(c.Key(), c.Value()); err != nil || back != c {
				t.Fatalf("checkpoint does not round trip: %+v", c)
			}
		}
		if h, err := DecodeHeartbeat(k, v); err == nil {
			if back, err := DecodeHeartbeat(h.Key(), h.Value()); err != nil || back != h {
				t.Fatalf("heartbeat does not round trip: %+v", h)
			}
		}
	})
}

func TestSyncRule(t *testing.T) {
	r := newSyncRule(3)
	var due []int64
	// Records 0..9 contiguous, then a gap upstream at 20, then a
	// downstream rewind.
	ups := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21}
	downs := []int64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 50}
	for i := range ups {
		if r.update(ups[i], downs[i]) {
			due = append(due, ups[i])
		}
	}
	// first (0); lag: downstream-(last+1) >= 3 at 104 (last 100) and 108
	// (last 104); gap at 20; rewind at 21.
	want := []int64{0, 4, 8, 20, 21}
	if len(due) != len(want) {
		t.Fatalf("due syncs %v, want %v", due, want)
	}
	for i := range want {
		if due[i] != want[i] {
			t.Fatalf("due syncs %v, want %v", due, want)
		}
	}
}

func TestSyncStoreTranslate(t *testing.T) {
	s := NewSyncStore(false)
	s.Add(OffsetSync{"t", 0, 100, 1000})
	if _, ok := s.Translate("t", 0, 100); ok {
		t.Fatal("translated before the initial read-to-end")
	}
	s.ReadToEnd()
	for u, want := range map[int64]int64{100: 1000, 101: 1001, 500: 1001, 99: -1} {
		if got, ok := s.Translate("t", 0, u); !ok || got != want {
			t.Errorf("Translate(%d) = %d %v, want %d", u, got, ok, want)
		}
	}
	if _, ok := s.Translate("t", 1, 100); ok {
		t.Error("translated a partition with no syncs")
	}
	s.Add(OffsetSync{"t", 0, 200, 2000})
	if got, _ := s.Translate("t", 0, 150); got != 1001 {
		t.Errorf("between syncs: %d, want 1001", got)
	}
	// An upstream rewind forgets the older syncs.
	s.Add(OffsetSync{"t", 0, 50, 3000})
	if got, _ := s.Translate("t", 0, 150); got != 3001 {
		t.Errorf("after rewind: %d, want 3001", got)
	}
	if got, _ := s.Translate("t", 0, 10); got != -1 {
		t.Errorf("after rewind, before the sync: %d, want -1", got)
	}
}

// TestSyncStoreInvariants feeds many syncs and checks, against the exact
// mapping, that translation never goes past the true downstream offset
// (no record skipped), keeps Kafka's invariants, and is monotonic in the
// upstream offset.
func TestSyncStoreInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := NewSyncStore(false)
	s.ReadToEnd()
	truth := map[int64]int64{} // upstream -> downstream of replicated records
	up, down := int64(0), int64(0)
	var syncs []OffsetSync
	for range 20000 {
		up += 1 + int64(rng.IntN(3)) // gaps upstream (compaction)
		down++
		truth[up] = down
		if rng.IntN(10) == 0 {
			sync := OffsetSync{"t", 0, up, down}
			syncs = append(syncs, sync)
			s.Add(sync)
			arr := s.syncs[partitionKey{"t", 0}]
			if *arr[0] != sync {
				t.Fatalf("invariant A: syncs[0] = %+v, want %+v", *arr[0], sync)
			}
			for i := 0; i+1 < syncsPerPartition; i++ {
				if !invariantB(arr[i], arr[i+1], i, i+1) || !invariantC(arr[i], arr[i+1], i) {
					t.Fatalf("invariants B/C broken at %d", i)
				}
			}
		}
	}
	prev := int64(-1)
	for u := int64(0); u <= up; u++ {
		d, ok := s.Translate("t", 0, u)
		if !ok {
			t.Fatal("no translation")
		}
		if d < prev && d != -1 {
			t.Fatalf("not monotonic at %d: %d after %d", u, d, prev)
		}
		if d != -1 {
			prev = d
			// The consumer resumes at d: every record at or after u
			// upstream must be at or after d downstream.
			for v := u; v <= u+3; v++ {
				if td, ok := truth[v]; ok && td < d {
					t.Fatalf("Translate(%d) = %d skips the record %d (downstream %d)", u, d, v, td)
				}
			}
		}
	}
	// Near the end the last sync is used exactly.
	last := syncs[len(syncs)-1]
	if d, _ := s.Translate("t", 0, last.Upstream); d != last.Downstream {
		t.Errorf("latest sync translates to %d, want %d", d, last.Downstream)
	}
}

func TestSyncStoreOnlyLatestBeforeReadToEnd(t *testing.T) {
	s := NewSyncStore(true)
	s.Add(OffsetSync{"t", 0, 100, 1000})
	s.Add(OffsetSync{"t", 0, 200, 2000})
	s.ReadToEnd()
	if d, _ := s.Translate("t", 0, 150); d != -1 {
		t.Errorf("older sync kept: %d", d)
	}
}

func TestCheckpointer(t *testing.T) {
	s := NewSyncStore(false)
	s.ReadToEnd()
	s.Add(OffsetSync{"t", 0, 10, 110})
	s.Add(OffsetSync{"B.u", 0, 5, 6})
	tf, _ := NewFilter([]string{".*"}, nil)
	c := &Checkpointer{Source: "A", Target: "B", Policy: DefaultPolicy{}, TopicFilter: tf, Syncs: s}
	cps := c.Checkpoints("g", []GroupOffset{{"t", 0, 12, "m"}, {"t", 1, 3, ""}, {"B.u", 0, 5, ""}})
	if len(cps) != 2 || cps[0] != (Checkpoint{"g", "A.t", 0, 12, 111, "m"}) || cps[1] != (Checkpoint{"g", "u", 0, 5, 6, ""}) {
		t.Fatalf("checkpoints %+v", cps)
	}
	// Same offsets again: nothing new.
	if cps := c.Checkpoints("g", []GroupOffset{{"t", 0, 12, "m"}}); len(cps) != 0 {
		t.Fatalf("repeated checkpoint %+v", cps)
	}
	// A newer sync moves the downstream offset forward.
	s.Add(OffsetSync{"t", 0, 12, 115})
	if cps := c.Checkpoints("g", []GroupOffset{{"t", 0, 12, "m"}}); len(cps) != 1 || cps[0].Downstream != 115 {
		t.Fatalf("forward checkpoint %+v", cps)
	}
	// A group before the oldest sync gets no checkpoint.
	if cps := c.Checkpoints("h", []GroupOffset{{"t", 0, 2, ""}}); len(cps) != 0 {
		t.Fatalf("untranslatable checkpoint %+v", cps)
	}
	// An upstream rewind is emitted even though downstream goes back.
	s.Add(OffsetSync{"t", 0, 1, 200})
	if cps := c.Checkpoints("g", []GroupOffset{{"t", 0, 1, ""}}); len(cps) != 1 || cps[0].Downstream != 200 {
		t.Fatalf("rewind checkpoint %+v", cps)
	}
}

func TestOffsetsToSync(t *testing.T) {
	k1, k2 := partitionKey{"A.t", 0}, partitionKey{"A.t", 1}
	tr := map[partitionKey]Checkpoint{k1: {Downstream: 10}, k2: {Downstream: 20}}
	if got := OffsetsToSync("", tr, nil); len(got) != 2 {
		t.Errorf("unknown group: %v", got)
	}
	if got := OffsetsToSync("Dead", tr, nil); len(got) != 2 {
		t.Errorf("dead group: %v", got)
	}
	got := OffsetsToSync("Empty", tr, map[partitionKey]int64{k1: 15, k2: 5})
	if len(got) != 1 || got[k2].Downstream != 20 {
		t.Errorf("empty group: never rewind: %v", got)
	}
	if got := OffsetsToSync("Stable", tr, nil); len(got) != 0 {
		t.Errorf("active group written: %v", got)
	}
}

func TestClientProps(t *testing.T) {
	raw := map[string]string{
		"source.cluster.bootstrap.servers": "a:9092", "source.cluster.security.protocol": "SSL",
		"source.cluster.linger.ms": "5", // not a common client key
		"consumer.fetch.max.bytes": "100", "source.consumer.fetch.max.bytes": "200",
		"consumer.poll.timeout.ms": "10", "target.cluster.bootstrap.servers": "b:9092",
	}
	got := ClientProps(raw, Role{"source", "consumer"})
	want := map[string]string{"bootstrap.servers": "a:9092", "security.protocol": "SSL", "fetch.max.bytes": "200"}
	if len(got) != len(want) {
		t.Fatalf("props %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("props %v, want %v", got, want)
		}
	}
	if got := ClientProps(raw, Role{"target", "admin"}); got["bootstrap.servers"] != "b:9092" || len(got) != 1 {
		t.Fatalf("target admin props %v", got)
	}
}

func TestParseTopicPartition(t *testing.T) {
	if topic, p, err := parseTopicPartition("my-topic-12"); err != nil || topic != "my-topic" || p != 12 {
		t.Errorf("%q %d %v", topic, p, err)
	}
	for _, bad := range []string{"t", "-1", "t-x", "t-"} {
		if _, _, err := parseTopicPartition(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

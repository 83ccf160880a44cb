package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzConsumerGroupRequests feeds the coordinator a sequence of
// ConsumerGroupHeartbeat, ConsumerGroupDescribe, OffsetCommit and
// OffsetFetch requests decoded from arbitrary bytes (each: one byte of
// kind, one of time step, an int16 length, a request body), with ticks in
// between. Nothing panics, every request is answered exactly once, no
// partition is held by two members of a group, and the records written
// replay into a coordinator that agrees on every group's epochs.
func FuzzConsumerGroupRequests(f *testing.F) {
	add := func(reqs ...kmsg.Request) {
		var in []byte
		for _, r := range reqs {
			body := r.AppendTo(nil)
			in = append(in, byte(r.Key()), 3, byte(len(body)>>8), byte(len(body)))
			in = append(in, body...)
		}
		f.Add(in)
	}
	join := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	join.Version, join.Group, join.MemberID, join.RebalanceTimeoutMillis = 1, "g", "a", 1000
	join.Topics, join.SubscribedTopicNames = []kmsg.ConsumerGroupHeartbeatRequestTopic{}, []string{"foo"}
	join2 := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	*join2 = *join
	join2.MemberID, join2.SubscribedTopicNames, join2.SubscribedTopicRegex = "b", nil, kmsg.StringPtr("f.*")
	beat := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	beat.Version, beat.Group, beat.MemberID, beat.MemberEpoch = 1, "g", "a", 1
	beat.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: topicID(1), Partitions: []int32{0, 1}}}
	leave := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	leave.Version, leave.Group, leave.MemberID, leave.MemberEpoch = 1, "g", "a", -1
	desc := kmsg.NewPtrConsumerGroupDescribeRequest()
	desc.Version, desc.Groups = 1, []string{"g"}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.MemberID, commit.Generation = 9, "g", "a", 1
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 3}}}}
	add(join, join2, beat, beat, commit, desc, leave, beat)
	add(join, leave)

	f.Fuzz(func(t *testing.T, in []byte) {
		cfg := DefaultConfig()
		cfg.ConsumerSessionTimeout = 10 * time.Second
		c := New(cfg)
		c.SetTopics([]TopicMeta{{Name: "foo", ID: topicID(1), Partitions: 3}, {Name: "far", ID: topicID(2), Partitions: 2}})
		var records []Record
		now := time.Unix(1000, 0)
		rd := kbin.Reader{Src: in}
		for n := 0; len(rd.Src) >= 4 && n < 64; n++ {
			kind, step, size := rd.Int8(), rd.Int8(), int(uint16(rd.Int16()))
			body := rd.Span(min(size, len(rd.Src)))
			now = now.Add(time.Duration(uint8(step)) * 100 * time.Millisecond)
			c.Tick(now)
			var req kmsg.Request
			switch uint8(kind) % 4 {
			case 0:
				req = kmsg.NewPtrConsumerGroupHeartbeatRequest()
			case 1:
				req = kmsg.NewPtrConsumerGroupDescribeRequest()
			case 2:
				req = kmsg.NewPtrOffsetCommitRequest()
			default:
				req = kmsg.NewPtrOffsetFetchRequest()
			}
			req.SetVersion(req.MaxVersion())
			if uint8(kind)&0x80 != 0 {
				req.SetVersion(0)
			}
			if req.ReadFrom(body) != nil {
				continue
			}
			switch r := req.(type) {
			case *kmsg.ConsumerGroupHeartbeatRequest:
				c.ConsumerHeartbeat(now, "t", r, "client", "/127.0.0.1")
			case *kmsg.ConsumerGroupDescribeRequest:
				c.ConsumerDescribe("t", r)
			case *kmsg.OffsetCommitRequest:
				c.Commit(now, "t", r)
			case *kmsg.OffsetFetchRequest:
				c.FetchOffsets("t", r)
			}
			out := c.Ready()
			if len(out.Replies) != 1 {
				t.Fatalf("request %d answered %d times", n, len(out.Replies))
			}
			out.Replies[0].Resp.AppendTo(nil)
			records = append(records, out.Records...)
			for id, g := range c.groups {
				if g.consumer == nil {
					continue
				}
				held := map[tp]string{}
				for _, m := range g.consumer.members {
					for _, p := range append(m.Assigned.list(), m.Revoking.list()...) {
						if o, dup := held[p]; dup && o != m.ID {
							t.Fatalf("group %s: %v held by %s and %s", id, p, o, m.ID)
						}
						held[p] = m.ID
					}
				}
			}
		}
		c.Tick(now.Add(time.Minute))
		records = append(records, c.Ready().Records...)
		c2 := New(cfg)
		for _, r := range records {
			if err := c2.Replay(r.Key, r.Value); err != nil {
				t.Fatalf("replay: %v", err)
			}
		}
		for id, g := range c.groups {
			g2 := c2.groups[id]
			if g.consumer == nil {
				continue
			}
			if g2 == nil || g2.consumer == nil || g2.consumer.epoch != g.consumer.epoch || len(g2.consumer.members) != len(g.consumer.members) {
				t.Fatalf("group %s replays differently", id)
			}
		}
	})
}

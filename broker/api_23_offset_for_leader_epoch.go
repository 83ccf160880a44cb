package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// OffsetForLeaderEpoch: v0-4. Every partition has had one leader epoch, 0,
// since it was created, so epoch 0 ends at the log end and later epochs are
// unknown.

func handleOffsetForLeaderEpoch(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			p := b.partition(rt.Topic, rp.Partition)
			switch {
			case !c.allowedTopic(acl.OpDescribe, rt.Topic):
				sp.ErrorCode = errTopicAuthorizationFailed
			case p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
			case req.Version >= 2 && rp.CurrentLeaderEpoch > 0:
				sp.ErrorCode = errUnknownLeaderEpoch
			case rp.LeaderEpoch == 0:
				sp.LeaderEpoch, sp.EndOffset = 0, p.log.HighWatermark()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}

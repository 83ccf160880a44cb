package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"errors"

	"github.com/tributary-dev/tributary/broker/log"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords: v0-2. Moves a partition's log start offset forward
// (-1: to the high watermark); whole segments below it are deleted.

func handleDeleteRecords(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			p := b.partition(rt.Topic, rp.Partition)
			if !c.allowedTopic(acl.OpDelete, rt.Topic) {
				sp.ErrorCode = errTopicAuthorizationFailed
			} else if p == nil {
				sp.ErrorCode = errUnknownTopicOrPartition
			} else if lw, err := p.log.DeleteRecordsBefore(rp.Offset); err != nil {
				sp.ErrorCode = errKafkaStorageError
				if errors.Is(err, log.ErrOffsetOutOfRange) {
					sp.ErrorCode = errOffsetOutOfRange
				}
			} else {
				sp.LowWatermark = lw
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}

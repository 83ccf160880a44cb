package broker

import (
	"github.com/tributary-dev/tributary/broker/acl"

	"github.com/tributary-dev/tributary/broker/log"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets: v1-8. Timestamps -2 (earliest; -4, earliest local, is the same), -1 (latest: the high
// watermark, or the last stable offset for read_committed, v2+), -3
// (the record with the largest timestamp, v7+) and ≥ 0 (the first record with
// a timestamp at or after it; -1 when there is none).

func handleListOffsets(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.ListOffsetsRequest)
	b := c.b
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	var dec log.Decompressor
	defer dec.Close()
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			p := b.partition(rt.Topic, rp.Partition)
			switch {
			case !c.allowedTopic(acl.OpDescribe, rt.Topic):
				sp.ErrorCode = errTopicAuthorizationFailed
			case p == nil:
				sp.ErrorCode = errUnknownTopicOrPartition
			case req.Version >= 4 && rp.CurrentLeaderEpoch > 0:
				sp.ErrorCode = errUnknownLeaderEpoch
			default:
				sp.LeaderEpoch = 0
				logStart, hwm, _ := p.log.Offsets()
				switch ts := rp.Timestamp; {
				case ts == -2, ts == -4 && req.Version >= 8: // -4: earliest local, the same without tiered storage
					sp.Offset = logStart
				case ts == -1 && req.IsolationLevel == 1:
					sp.Offset = p.log.LastStable()
				case ts == -1:
					sp.Offset = hwm
				case ts == -3 && req.Version >= 7:
					sp.Offset, sp.Timestamp = b.maxTimestampOffset(p, &dec)
				case ts >= 0:
					sp.Offset, sp.Timestamp = b.offsetForTime(p, ts, &dec)
				default:
					sp.ErrorCode = errInvalidRequest
				}
				if sp.Offset == -1 && sp.ErrorCode == errNone {
					sp.LeaderEpoch = -1
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return &reply{resp: resp}
}

// offsetForTime finds the first record with a timestamp ≥ ts.
func (b *Broker) offsetForTime(p *partition, ts int64, dec *log.Decompressor) (offset, timestamp int64) {
	base, batch, err := p.log.OffsetForTimestamp(ts)
	if err != nil || base < 0 {
		return -1, -1
	}
	h, _ := log.ParseHeader(batch)
	recs, err := dec.Records(batch)
	if err != nil {
		b.logger.Warn("cannot decode batch for a timestamp lookup", "topic", p.topic.name, "partition", p.index, "err", err)
		return base, h.MaxTimestamp
	}
	logStart, _, _ := p.log.Offsets()
	for _, r := range recs {
		rts := r.Timestamp
		if h.Attributes&0x08 != 0 {
			rts = h.MaxTimestamp // LogAppendTime: every record has the batch time
		}
		if rts >= ts && r.Offset >= logStart {
			return r.Offset, rts
		}
	}
	// The batch's max timestamp was from a record before log start.
	return -1, -1
}

// maxTimestampOffset finds the record with the largest timestamp.
func (b *Broker) maxTimestampOffset(p *partition, dec *log.Decompressor) (offset, timestamp int64) {
	maxTs := p.log.MaxTimestamp()
	if maxTs < 0 {
		return -1, -1
	}
	return b.offsetForTime(p, maxTs, dec)
}

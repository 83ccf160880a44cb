package group

import (
	"encoding/binary"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnCommit handles a TxnOffsetCommit request whose producer the caller
// has checked with the transaction coordinator (the group's offsets
// partition is part of its ongoing transaction). The offsets are written as
// a transactional batch (Ready.Txn) and take effect when the transaction
// commits (CompleteTxn). Members of a group commit with their generation
// and member id (v3+); -1 skips the check, as for a producer that is not a
// group member.
func (c *Coordinator) TxnCommit(now time.Time, to any, req *kmsg.TxnOffsetCommitRequest) {
	c.now = now
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	code := c.checkTxnCommit(req)
	var recs []Record
	for _, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			meta := ""
			if rp.Metadata != nil {
				meta = *rp.Metadata
			}
			switch {
			case code != 0:
			case c.cfg.PartitionExists != nil && !c.cfg.PartitionExists(rt.Topic, rp.Partition):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case len(meta) > c.cfg.MaxMetadataBytes:
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			default:
				epoch := int32(-1)
				if req.Version >= 2 {
					epoch = rp.LeaderEpoch
				}
				o := offset{offset: rp.Offset, leaderEpoch: epoch, metadata: meta, commitTime: now.UnixMilli()}
				c.setTxnOffset(req.ProducerID, req.Group, rt.Topic, rp.Partition, o)
				recs = append(recs, Record{Key: offsetKey(req.Group, rt.Topic, rp.Partition), Value: offsetValue(o)})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(recs) > 0 {
		c.ready.Txn = append(c.ready.Txn, TxnRecords{ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Records: recs})
	}
	c.reply(to, resp, len(recs) > 0)
}

func (c *Coordinator) checkTxnCommit(req *kmsg.TxnOffsetCommitRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g := c.groups[req.Group]
	if g == nil || req.Version < 3 || req.Generation < 0 {
		return 0
	}
	if g.consumer != nil {
		// A KIP-848 member commits with its member epoch as the
		// generation.
		m := g.consumer.members[req.MemberID]
		switch {
		case m == nil:
			return kerr.UnknownMemberID.Code
		case req.Generation != m.Epoch:
			return kerr.StaleMemberEpoch.Code
		}
		return 0
	}
	if code := g.checkInstance(req.InstanceID, req.MemberID); code != 0 {
		return code
	}
	m := g.members[req.MemberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case req.Generation != g.generation:
		return kerr.IllegalGeneration.Code
	}
	return 0
}

func (c *Coordinator) setTxnOffset(pid int64, group, topic string, partition int32, o offset) {
	byGroup := c.txnOffsets[pid]
	if byGroup == nil {
		byGroup = map[string]map[string]map[int32]offset{}
		c.txnOffsets[pid] = byGroup
	}
	byTopic := byGroup[group]
	if byTopic == nil {
		byTopic = map[string]map[int32]offset{}
		byGroup[group] = byTopic
	}
	ps := byTopic[topic]
	if ps == nil {
		ps = map[int32]offset{}
		byTopic[topic] = ps
	}
	ps[partition] = o
}

// CompleteTxn applies (commit) or drops (abort) the offsets committed by a
// producer's transaction; the caller calls it once the transaction's marker
// is in the group metadata log, and for every marker read back on start.
func (c *Coordinator) CompleteTxn(pid int64, commit bool) {
	byGroup := c.txnOffsets[pid]
	delete(c.txnOffsets, pid)
	if !commit {
		return
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, id := range groups {
		g := c.getOrNew(id)
		for topic, ps := range byGroup[id] {
			for p, o := range ps {
				g.setOffset(topic, p, o)
			}
		}
	}
}

// ReplayTxn applies one offset commit record of a transactional batch read
// back on start: it is pending until the producer's marker (CompleteTxn).
func (c *Coordinator) ReplayTxn(pid int64, key, value []byte) error {
	if len(key) < 2 || binary.BigEndian.Uint16(key) > 1 {
		return nil // not an offset commit: transactional batches hold nothing else
	}
	var k kmsg.OffsetCommitKey
	if err := k.ReadFrom(key); err != nil {
		return nil
	}
	var v kmsg.OffsetCommitValue
	if value == nil || v.ReadFrom(value) != nil {
		return nil
	}
	epoch := v.LeaderEpoch
	if v.Version < 3 {
		epoch = -1
	}
	c.setTxnOffset(pid, k.Group, k.Topic, k.Partition, offset{offset: v.Offset, leaderEpoch: epoch, metadata: v.Metadata, commitTime: v.CommitTimestamp})
	return nil
}

// unstable reports whether an open transaction has committed an offset for
// the group's partition (OffsetFetch with RequireStable, KIP-447).
func (c *Coordinator) unstable(group, topic string, partition int32) bool {
	for _, byGroup := range c.txnOffsets {
		if _, ok := byGroup[group][topic][partition]; ok {
			return true
		}
	}
	return false
}

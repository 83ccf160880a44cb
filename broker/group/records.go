package group

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The records of the group metadata log use Kafka's __consumer_offsets
// formats (kmsg.OffsetCommitKey/Value, kmsg.GroupMetadataKey/Value): the
// key's leading int16 version says what the record is.
const (
	offsetKeyVersion = 1 // OffsetCommitKey (0 and 1 are the same)
	groupKeyVersion  = 2 // GroupMetadataKey
)

func offsetKey(group, topic string, partition int32) []byte {
	k := kmsg.NewOffsetCommitKey()
	k.Version, k.Group, k.Topic, k.Partition = offsetKeyVersion, group, topic, partition
	return k.AppendTo(nil)
}

func offsetValue(o offset) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = 3
	v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp = o.offset, o.leaderEpoch, o.metadata, o.commitTime
	return v.AppendTo(nil)
}

func groupKey(group string) []byte {
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = groupKeyVersion, group
	return k.AppendTo(nil)
}

// persistGroup queues a GroupMetadata record with the group's generation,
// protocol and members.
func (c *Coordinator) persistGroup(g *group) {
	v := kmsg.NewGroupMetadataValue()
	v.Version = 3
	v.ProtocolType, v.Generation = g.protocolType, g.generation
	if g.protocol != "" {
		v.Protocol = strp(g.protocol)
	}
	if g.leader != "" {
		v.Leader = strp(g.leader)
	}
	v.CurrentStateTimestamp = c.now.UnixMilli()
	for _, m := range g.sortedMembers() {
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.InstanceID, vm.ClientID, vm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		vm.RebalanceTimeoutMillis, vm.SessionTimeoutMillis = ms(m.rebalanceTimeout), ms(m.sessionTimeout)
		vm.Subscription, vm.Assignment = m.metadata(g.protocol), m.assignment
		v.Members = append(v.Members, vm)
	}
	c.ready.Records = append(c.ready.Records, Record{Key: groupKey(g.id), Value: v.AppendTo(nil)})
}

// Replay applies one record of the group metadata log, read back on start.
// A nil value deletes. Records of unknown versions are ignored so that a log
// written by a newer broker still loads.
func (c *Coordinator) Replay(key, value []byte) error {
	if len(key) < 2 {
		return fmt.Errorf("group: record key of %d bytes is too short", len(key))
	}
	switch binary.BigEndian.Uint16(key) {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("group: bad offset commit key: %w", err)
		}
		if value == nil {
			if g := c.groups[k.Group]; g != nil {
				delete(g.offsets[k.Topic], k.Partition)
				if len(g.offsets[k.Topic]) == 0 {
					delete(g.offsets, k.Topic)
				}
			}
			return nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return fmt.Errorf("group: bad offset commit value for %s %s/%d: %w", k.Group, k.Topic, k.Partition, err)
		}
		epoch := v.LeaderEpoch
		if v.Version < 3 {
			epoch = -1
		}
		c.getOrNew(k.Group).setOffset(k.Topic, k.Partition, offset{offset: v.Offset, leaderEpoch: epoch, metadata: v.Metadata, commitTime: v.CommitTimestamp})
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("group: bad group metadata key: %w", err)
		}
		if value == nil {
			delete(c.groups, k.Group)
			return nil
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(value); err != nil {
			return fmt.Errorf("group: bad group metadata value for %s: %w", k.Group, err)
		}
		// Members are not restored: they rejoin, and the generation keeps
		// counting up from where it was.
		g := c.getOrNew(k.Group)
		g.protocolType, g.generation = v.ProtocolType, v.Generation
	}
	return nil
}

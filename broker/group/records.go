package group

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

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
		g.consumer = nil
	case consumerGroupKeyVersion:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("group: bad consumer group key: %w", err)
		}
		return c.replayConsumer(k.Group, value)
	}
	return nil
}

// consumerGroupKeyVersion marks the record holding a consumer-protocol
// (KIP-848) group's whole state: the key is an int16 version and the group
// id (as GroupMetadataKey), the value JSON. The version is outside the range
// Kafka uses (0-2 offsets and classic groups, 3-8 its own consumer group
// records), so neither reads the other's records.
const consumerGroupKeyVersion = 1000

func consumerGroupKey(group string) []byte {
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = consumerGroupKeyVersion, group
	return k.AppendTo(nil)
}

type storedPartitions struct {
	Topic      string  `json:"topic_id"`
	Partitions []int32 `json:"partitions"`
}

type storedMember struct {
	cmember
	Assigned []storedPartitions `json:"assigned,omitempty"`
	Revoking []storedPartitions `json:"revoking,omitempty"`
	Target   []storedPartitions `json:"target,omitempty"`
}

type storedTopic struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Partitions int32  `json:"partitions"`
}

type storedConsumerGroup struct {
	Epoch           int32          `json:"epoch"`
	AssignmentEpoch int32          `json:"assignment_epoch"`
	Members         []storedMember `json:"members"`
	Subscribed      []storedTopic  `json:"subscribed,omitempty"`
}

func storeParts(p parts) []storedPartitions {
	var out []storedPartitions
	for _, id := range sortedTopicIDs(p) {
		out = append(out, storedPartitions{Topic: hex.EncodeToString(id[:]), Partitions: p[id]})
	}
	return out
}

func loadParts(s []storedPartitions) (parts, error) {
	p := parts{}
	for _, t := range s {
		id, err := parseTopicID(t.Topic)
		if err != nil {
			return nil, err
		}
		for _, n := range t.Partitions {
			p.add(id, n)
		}
	}
	return p, nil
}

func parseTopicID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("bad topic id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// persistConsumer queues the record of a consumer group's state.
func (c *Coordinator) persistConsumer(g *group) {
	cg := g.consumer
	s := storedConsumerGroup{Epoch: cg.epoch, AssignmentEpoch: cg.assignmentEpoch}
	for _, m := range cg.sortedMembers() {
		s.Members = append(s.Members, storedMember{cmember: *m, Assigned: storeParts(m.Assigned), Revoking: storeParts(m.Revoking), Target: storeParts(cg.target[m.ID])})
	}
	ids := make([][16]byte, 0, len(cg.subscribed))
	for id := range cg.subscribed {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return string(ids[i][:]) < string(ids[j][:]) })
	for _, id := range ids {
		t := cg.subscribed[id]
		s.Subscribed = append(s.Subscribed, storedTopic{Name: t.Name, ID: hex.EncodeToString(id[:]), Partitions: t.Partitions})
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("group: encode consumer group %s: %v", g.id, err)) // plain data: cannot fail
	}
	c.ready.Records = append(c.ready.Records, Record{Key: consumerGroupKey(g.id), Value: raw})
}

// replayConsumer restores a consumer group from its record. Members come
// back with their epochs and partitions; their sessions restart at the
// first Tick.
func (c *Coordinator) replayConsumer(id string, value []byte) error {
	if value == nil {
		if g := c.groups[id]; g != nil && g.consumer != nil {
			g.consumer = nil
			g.protocolType = ""
		}
		return nil
	}
	var s storedConsumerGroup
	if err := json.Unmarshal(value, &s); err != nil {
		return fmt.Errorf("group: bad consumer group record for %s: %w", id, err)
	}
	cg := newCGroup()
	cg.epoch, cg.assignmentEpoch = s.Epoch, s.AssignmentEpoch
	for _, sm := range s.Members {
		m := sm.cmember
		var err error
		if m.Assigned, err = loadParts(sm.Assigned); err != nil {
			return fmt.Errorf("group: consumer group %s: %w", id, err)
		}
		if m.Revoking, err = loadParts(sm.Revoking); err != nil {
			return fmt.Errorf("group: consumer group %s: %w", id, err)
		}
		t, err := loadParts(sm.Target)
		if err != nil {
			return fmt.Errorf("group: consumer group %s: %w", id, err)
		}
		if m.ID == "" {
			return fmt.Errorf("group: consumer group %s: member without id", id)
		}
		cg.members[m.ID] = &m
		cg.target[m.ID] = t
		if m.InstanceID != nil {
			cg.static[*m.InstanceID] = m.ID
		}
	}
	for _, st := range s.Subscribed {
		tid, err := parseTopicID(st.ID)
		if err != nil {
			return fmt.Errorf("group: consumer group %s: %w", id, err)
		}
		cg.subscribed[tid] = TopicMeta{Name: st.Name, ID: tid, Partitions: st.Partitions}
	}
	g := c.getOrNew(id)
	g.consumer = cg
	g.protocolType = "consumer"
	g.state, g.generation = Empty, 0
	g.members, g.static, g.pending = map[string]*member{}, map[string]string{}, map[string]time.Time{}
	return nil
}

package group

import (
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---------------------------------------------------------------- OffsetCommit

// Commit handles an OffsetCommit request. Group members commit with their
// generation and member id; a simple (unmanaged) commit uses generation -1
// and is allowed while the group has no members.
func (c *Coordinator) Commit(now time.Time, to any, req *kmsg.OffsetCommitRequest) {
	c.now = now
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := c.checkCommit(now, req)
	var g *group
	if code == 0 {
		g = c.getOrNew(req.Group)
	}
	wrote := false
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code
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
				if req.Version >= 6 {
					epoch = rp.LeaderEpoch
				}
				o := offset{offset: rp.Offset, leaderEpoch: epoch, metadata: meta, commitTime: now.UnixMilli()}
				g.setOffset(rt.Topic, rp.Partition, o)
				c.ready.Records = append(c.ready.Records, Record{Key: offsetKey(g.id, rt.Topic, rp.Partition), Value: offsetValue(o)})
				wrote = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(to, resp, wrote)
}

func (c *Coordinator) checkCommit(now time.Time, req *kmsg.OffsetCommitRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	gen := req.Generation
	if req.Version == 0 {
		gen = -1
	}
	g := c.groups[req.Group]
	if g == nil {
		if gen < 0 {
			return 0
		}
		return kerr.IllegalGeneration.Code
	}
	if g.consumer != nil {
		return checkConsumerCommit(g.consumer, req.MemberID, gen, req.Version)
	}
	if code := g.checkInstance(req.InstanceID, req.MemberID); code != 0 {
		return code
	}
	if gen < 0 && g.state == Empty {
		return 0
	}
	m := g.members[req.MemberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case gen != g.generation:
		return kerr.IllegalGeneration.Code
	case g.state == CompletingRebalance:
		return kerr.RebalanceInProgress.Code
	}
	if m.join == nil && m.sync == nil {
		m.deadline = now.Add(m.sessionTimeout)
	}
	return 0
}

func (g *group) setOffset(topic string, partition int32, o offset) {
	ps := g.offsets[topic]
	if ps == nil {
		ps = map[int32]offset{}
		g.offsets[topic] = ps
	}
	ps[partition] = o
}

// ---------------------------------------------------------------- OffsetFetch

// FetchOffsets handles an OffsetFetch request: one group before v8, several
// after; null topics ask for every committed partition (v2+).
func (c *Coordinator) FetchOffsets(to any, req *kmsg.OffsetFetchRequest) {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group = rg.Group
			if g := c.groups[rg.Group]; g != nil && g.consumer != nil && req.Version >= 9 {
				if code := checkConsumerFetch(g.consumer, rg.MemberID, rg.MemberEpoch); code != 0 {
					sg.ErrorCode = code
					resp.Groups = append(resp.Groups, sg)
					continue
				}
			}
			var topics map[string][]int32
			if rg.Topics != nil {
				topics = map[string][]int32{}
				for _, t := range rg.Topics {
					topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
				}
			}
			for _, ft := range c.fetch(rg.Group, topics, orderOf8(rg.Topics)) {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic = ft.topic
				for _, fp := range ft.parts {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = fp.partition, fp.o.offset, fp.o.leaderEpoch, strp(fp.o.metadata)
					if req.RequireStable && c.unstable(rg.Group, ft.topic, fp.partition) {
						sp.ErrorCode, sp.Offset, sp.LeaderEpoch, sp.Metadata = kerr.UnstableOffsetCommit.Code, -1, -1, strp("")
					}
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		c.reply(to, resp, false)
		return
	}
	var topics map[string][]int32
	var order []string
	if req.Topics != nil || req.Version < 2 {
		topics = map[string][]int32{}
		for _, t := range req.Topics {
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
			order = append(order, t.Topic)
		}
	}
	for _, ft := range c.fetch(req.Group, topics, order) {
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = ft.topic
		for _, fp := range ft.parts {
			sp := kmsg.NewOffsetFetchResponseTopicPartition()
			sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = fp.partition, fp.o.offset, fp.o.leaderEpoch, strp(fp.o.metadata)
			if req.Version >= 7 && req.RequireStable && c.unstable(req.Group, ft.topic, fp.partition) {
				sp.ErrorCode, sp.Offset, sp.LeaderEpoch, sp.Metadata = kerr.UnstableOffsetCommit.Code, -1, -1, strp("")
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(to, resp, false)
}

func orderOf8(ts []kmsg.OffsetFetchRequestGroupTopic) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Topic)
	}
	return out
}

type fetchedTopic struct {
	topic string
	parts []fetchedPartition
}

type fetchedPartition struct {
	partition int32
	o         offset
}

// fetch returns the committed offsets asked for (offset -1 where none is
// committed), or every committed offset when topics is nil.
func (c *Coordinator) fetch(groupID string, topics map[string][]int32, order []string) []fetchedTopic {
	g := c.groups[groupID]
	none := offset{offset: -1, leaderEpoch: -1}
	var out []fetchedTopic
	if topics == nil {
		if g == nil {
			return nil
		}
		names := make([]string, 0, len(g.offsets))
		for t := range g.offsets {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			ft := fetchedTopic{topic: t}
			for p, o := range g.offsets[t] {
				ft.parts = append(ft.parts, fetchedPartition{p, o})
			}
			sort.Slice(ft.parts, func(i, j int) bool { return ft.parts[i].partition < ft.parts[j].partition })
			out = append(out, ft)
		}
		return out
	}
	seen := map[string]bool{}
	for _, t := range order {
		if seen[t] {
			continue
		}
		seen[t] = true
		ft := fetchedTopic{topic: t}
		for _, p := range topics[t] {
			o, ok := none, false
			if g != nil {
				o, ok = g.offsets[t][p]
			}
			if !ok {
				o = none
			}
			ft.parts = append(ft.parts, fetchedPartition{p, o})
		}
		out = append(out, ft)
	}
	return out
}

// ---------------------------------------------------------------- OffsetDelete

// DeleteOffsets handles an OffsetDelete request. An empty group's offsets
// may be deleted; a "consumer" group's only for topics no member subscribes
// to (GROUP_SUBSCRIBED_TO_TOPIC); other non-empty groups refuse
// (NON_EMPTY_GROUP).
func (c *Coordinator) DeleteOffsets(to any, req *kmsg.OffsetDeleteRequest) {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g := c.groups[req.Group]
	switch {
	case g == nil:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
	case g.state != Empty && g.protocolType != "consumer":
		resp.ErrorCode = kerr.NonEmptyGroup.Code
	}
	if resp.ErrorCode != 0 {
		c.reply(to, resp, false)
		return
	}
	subscribed := g.subscribedTopics()
	wrote := false
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetDeleteResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetDeleteResponseTopicPartition()
			sp.Partition = rp.Partition
			if subscribed[rt.Topic] {
				sp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else if _, ok := g.offsets[rt.Topic][rp.Partition]; ok {
				delete(g.offsets[rt.Topic], rp.Partition)
				if len(g.offsets[rt.Topic]) == 0 {
					delete(g.offsets, rt.Topic)
				}
				c.ready.Records = append(c.ready.Records, Record{Key: offsetKey(g.id, rt.Topic, rp.Partition)})
				wrote = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(to, resp, wrote)
}

// subscribedTopics decodes the consumer protocol subscriptions of a
// non-empty "consumer" group.
func (g *group) subscribedTopics() map[string]bool {
	out := map[string]bool{}
	if g.consumer != nil {
		for _, t := range g.consumer.subscribed {
			out[t.Name] = true
		}
		return out
	}
	if g.state == Empty || g.protocolType != "consumer" {
		return out
	}
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadata(g.protocol)); err != nil {
			continue
		}
		for _, t := range meta.Topics {
			out[t] = true
		}
	}
	return out
}

// ---------------------------------------------------------------- Describe, List, Delete

// groupAuthorizedOps is what Kafka without an authorizer reports as a
// group's authorized operations: READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS and
// ALTER_CONFIGS (bit n for ACL operation code n).
const groupAuthorizedOps int32 = 1<<3 | 1<<6 | 1<<8 | 1<<10 | 1<<11

// Describe handles a DescribeGroups request. Unknown groups are reported in
// state Dead, as Kafka does. Metadata and assignments are only given for
// stable groups.
func (c *Coordinator) Describe(to any, req *kmsg.DescribeGroupsRequest) {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		sg := kmsg.NewDescribeGroupsResponseGroup()
		sg.Group = id
		sg.AuthorizedOperations = -2147483648
		if req.IncludeAuthorizedOperations && req.Version >= 3 {
			sg.AuthorizedOperations = groupAuthorizedOps
		}
		g := c.groups[id]
		if g == nil {
			sg.State = Dead.String()
			if req.Version >= 6 {
				sg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "group " + id + " not found"
				sg.ErrorMessage = &msg
			}
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		if g.consumer != nil {
			c.describeConsumerAsClassic(&sg, g)
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		sg.State, sg.ProtocolType = g.state.String(), g.protocolType
		if g.state == Stable {
			sg.Protocol = g.protocol
		}
		for _, m := range g.sortedMembers() {
			sm := kmsg.NewDescribeGroupsResponseGroupMember()
			sm.MemberID, sm.InstanceID, sm.ClientID, sm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
			if g.state == Stable {
				sm.ProtocolMetadata, sm.MemberAssignment = m.metadata(g.protocol), m.assignment
			}
			sg.Members = append(sg.Members, sm)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	c.reply(to, resp, false)
}

// List handles a ListGroups request, with its states (v4+) and types (v5+)
// filters: classic groups, and consumer-protocol groups (type consumer).
func (c *Coordinator) List(to any, req *kmsg.ListGroupsRequest) {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := c.groups[id]
		state, typ := g.state.String(), "classic"
		if g.consumer != nil {
			state, typ = g.consumer.state(), "consumer"
		}
		if len(req.StatesFilter) > 0 && !slices.ContainsFunc(req.StatesFilter, func(s string) bool { return equalFold(s, state) }) {
			continue
		}
		if len(req.TypesFilter) > 0 && !slices.ContainsFunc(req.TypesFilter, func(s string) bool { return equalFold(s, typ) }) {
			continue
		}
		sg := kmsg.NewListGroupsResponseGroup()
		sg.Group, sg.ProtocolType, sg.GroupState, sg.GroupType = id, g.protocolType, state, typ
		resp.Groups = append(resp.Groups, sg)
	}
	c.reply(to, resp, false)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// DeleteGroups handles a DeleteGroups request: only groups without members
// can be deleted; their offsets and metadata are deleted with them.
func (c *Coordinator) DeleteGroups(to any, req *kmsg.DeleteGroupsRequest) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	wrote := false
	for _, id := range req.Groups {
		sg := kmsg.NewDeleteGroupsResponseGroup()
		sg.Group = id
		g := c.groups[id]
		switch {
		case id == "":
			sg.ErrorCode = kerr.InvalidGroupID.Code
		case g == nil:
			sg.ErrorCode = kerr.GroupIDNotFound.Code
		case g.state != Empty || len(g.members) > 0 || (g.consumer != nil && len(g.consumer.members) > 0):
			sg.ErrorCode = kerr.NonEmptyGroup.Code
		default:
			topics := make([]string, 0, len(g.offsets))
			for t := range g.offsets {
				topics = append(topics, t)
			}
			sort.Strings(topics)
			for _, t := range topics {
				parts := make([]int32, 0, len(g.offsets[t]))
				for p := range g.offsets[t] {
					parts = append(parts, p)
				}
				slices.Sort(parts)
				for _, p := range parts {
					c.ready.Records = append(c.ready.Records, Record{Key: offsetKey(id, t, p)})
				}
			}
			if g.consumer != nil {
				c.ready.Records = append(c.ready.Records, Record{Key: consumerGroupKey(id)})
			}
			c.ready.Records = append(c.ready.Records, Record{Key: groupKey(id)})
			delete(c.groups, id)
			wrote = true
		}
		resp.Groups = append(resp.Groups, sg)
	}
	c.reply(to, resp, wrote)
}

// EachOffset calls f with every committed offset of every group, in no
// particular order (the broker's metrics: group lag).
func (c *Coordinator) EachOffset(f func(group, topic string, partition int32, offset int64)) {
	for id, g := range c.groups {
		for topic, ps := range g.offsets {
			for p, o := range ps {
				f(id, topic, p, o.offset)
			}
		}
	}
}

// Groups returns the ids of every group, sorted.
func (c *Coordinator) Groups() []string {
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// GroupState returns a group's state and generation (Dead, -1 if unknown).
func (c *Coordinator) GroupState(id string) (State, int32) {
	g := c.groups[id]
	if g == nil {
		return Dead, -1
	}
	return g.state, g.generation
}

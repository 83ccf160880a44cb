package group

import (
	"slices"
	"sort"
)

// The server-side assignors of consumer-protocol groups (KIP-848), by the
// names Kafka gives them in group.consumer.assignors.
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

// TopicMeta is a topic as the consumer-protocol groups see it.
type TopicMeta struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// tp is a topic partition by topic id.
type tp struct {
	topic     [16]byte
	partition int32
}

// parts is a set of partitions by topic id; every slice is sorted.
type parts map[[16]byte][]int32

func (p parts) has(topic [16]byte, partition int32) bool {
	_, ok := slices.BinarySearch(p[topic], partition)
	return ok
}

func (p parts) add(topic [16]byte, partition int32) {
	s := p[topic]
	i, ok := slices.BinarySearch(s, partition)
	if !ok {
		p[topic] = slices.Insert(s, i, partition)
	}
}

func (p parts) count() int {
	n := 0
	for _, s := range p {
		n += len(s)
	}
	return n
}

func (p parts) clone() parts {
	out := make(parts, len(p))
	for t, s := range p {
		out[t] = slices.Clone(s)
	}
	return out
}

func (p parts) equal(o parts) bool {
	if len(p) != len(o) {
		return false
	}
	for t, s := range p {
		if !slices.Equal(s, o[t]) {
			return false
		}
	}
	return true
}

// list returns the partitions in (topic id, partition) order.
func (p parts) list() []tp {
	var out []tp
	for t, s := range p {
		for _, n := range s {
			out = append(out, tp{t, n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i], out[j]) })
	return out
}

func lessTP(a, b tp) bool {
	if a.topic != b.topic {
		return string(a.topic[:]) < string(b.topic[:])
	}
	return a.partition < b.partition
}

// assignMember is what an assignor knows of one member.
type assignMember struct {
	id     string
	topics [][16]byte // subscribed topics that exist, sorted
	prev   parts      // the member's previous target assignment
}

// assign computes a target assignment for members (sorted by id) over the
// topics' partitions with the named assignor.
func assign(name string, members []assignMember, topics map[[16]byte]TopicMeta) map[string]parts {
	if name == AssignorRange {
		return assignRange(members, topics)
	}
	return assignUniform(members, topics)
}

// assignRange is Kafka's range assignor: for each topic, the members
// subscribed to it, in member id order, get contiguous ranges of its
// partitions, the first (partitions mod members) one partition more.
func assignRange(members []assignMember, topics map[[16]byte]TopicMeta) map[string]parts {
	out := make(map[string]parts, len(members))
	for _, m := range members {
		out[m.id] = parts{}
	}
	subs := map[[16]byte][]string{}
	for _, m := range members {
		for _, t := range m.topics {
			subs[t] = append(subs[t], m.id)
		}
	}
	for t, ids := range subs {
		n := topics[t].Partitions
		k := int32(len(ids))
		quota, extra := n/k, n%k
		next := int32(0)
		for i, id := range ids {
			size := quota
			if int32(i) < extra {
				size++
			}
			for p := next; p < next+size; p++ {
				out[id].add(t, p)
			}
			next += size
		}
	}
	return out
}

// assignUniform is a sticky, balanced assignor in the spirit of Kafka's
// uniform assignor: every partition of a subscribed topic goes to one
// subscribed member; members keep what they had as long as the balance
// allows; counts differ by at most one between members that could take each
// other's partitions.
func assignUniform(members []assignMember, topics map[[16]byte]TopicMeta) map[string]parts {
	out := make(map[string]parts, len(members))
	subscribed := map[string]map[[16]byte]bool{}
	eligible := map[[16]byte]bool{}
	for _, m := range members {
		out[m.id] = parts{}
		subscribed[m.id] = map[[16]byte]bool{}
		for _, t := range m.topics {
			subscribed[m.id][t] = true
			eligible[t] = true
		}
	}
	if len(members) == 0 {
		return out
	}
	total := 0
	for t := range eligible {
		total += int(topics[t].Partitions)
	}
	// Ceiling share: no member keeps more than this.
	ceil := (total + len(members) - 1) / len(members)
	taken := map[tp]bool{}
	for _, m := range members {
		for _, p := range m.prev.list() {
			if !subscribed[m.id][p.topic] || p.partition >= topics[p.topic].Partitions || taken[p] {
				continue
			}
			if out[m.id].count() >= ceil {
				break
			}
			out[m.id].add(p.topic, p.partition)
			taken[p] = true
		}
	}
	// Hand out the rest, each to the least loaded subscribed member.
	ts := make([][16]byte, 0, len(eligible))
	for t := range eligible {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return string(ts[i][:]) < string(ts[j][:]) })
	for _, t := range ts {
		for p := int32(0); p < topics[t].Partitions; p++ {
			if taken[tp{t, p}] {
				continue
			}
			best := ""
			for _, m := range members {
				if subscribed[m.id][t] && (best == "" || out[m.id].count() < out[best].count()) {
					best = m.id
				}
			}
			out[best].add(t, p)
			taken[tp{t, p}] = true
		}
	}
	// Even out: move a partition from a member with two more than another
	// member subscribed to its topic. Bounded: each move lowers the spread.
	for range total {
		moved := false
		for _, from := range members {
			for _, to := range members {
				if out[from.id].count() <= out[to.id].count()+1 {
					continue
				}
				for _, p := range out[from.id].list() {
					if subscribed[to.id][p.topic] {
						out[from.id].remove(p.topic, p.partition)
						out[to.id].add(p.topic, p.partition)
						moved = true
						break
					}
				}
				if moved {
					break
				}
			}
			if moved {
				break
			}
		}
		if !moved {
			break
		}
	}
	return out
}

func (p parts) remove(topic [16]byte, partition int32) {
	s := p[topic]
	i, ok := slices.BinarySearch(s, partition)
	if !ok {
		return
	}
	s = slices.Delete(s, i, i+1)
	if len(s) == 0 {
		delete(p, topic)
		return
	}
	p[topic] = s
}

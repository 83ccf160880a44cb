package mirror

import "sort"

// GroupOffset is a consumer group's committed offset of one partition.
type GroupOffset struct {
	Topic     string
	Partition int32
	Offset    int64
	Metadata  string
}

// Checkpointer decides the checkpoints of consumer groups (the pure part
// of Kafka's MirrorCheckpointTask): it translates each committed offset
// through the offset syncs and emits a checkpoint only when it is new,
// moved forward downstream, or the group rewound upstream. It is not safe
// for concurrent use.
type Checkpointer struct {
	Source, Target string
	Policy         ReplicationPolicy
	TopicFilter    Filter
	Syncs          *SyncStore
	// last holds the latest checkpoint per group and downstream
	// partition (Kafka's CheckpointStore), loaded from the checkpoints
	// topic at start.
	last map[string]map[partitionKey]Checkpoint
}

// Load records a checkpoint read back from the checkpoints topic.
func (c *Checkpointer) Load(cp Checkpoint) {
	if c.last == nil {
		c.last = map[string]map[partitionKey]Checkpoint{}
	}
	if c.last[cp.Group] == nil {
		c.last[cp.Group] = map[partitionKey]Checkpoint{}
	}
	c.last[cp.Group][partitionKey{cp.Topic, cp.Partition}] = cp
}

// RenameTopic is the checkpoint's downstream topic for an upstream topic
// (MirrorCheckpointTask.renameTopicPartition): a topic that came from the
// target goes back to its original name, any other gets the remote name.
func (c *Checkpointer) RenameTopic(topic string) string {
	if c.Policy.TopicSource(topic) == c.Target {
		return OriginalTopic(c.Policy, topic)
	}
	return c.Policy.FormatRemoteTopic(c.Source, topic)
}

// Checkpoints returns the checkpoints to emit for group's committed
// offsets, sorted by topic and partition, and remembers them.
func (c *Checkpointer) Checkpoints(group string, offsets []GroupOffset) []Checkpoint {
	var out []Checkpoint
	for _, o := range offsets {
		if !c.TopicFilter.Accepts(o.Topic) {
			continue
		}
		d, ok := c.Syncs.Translate(o.Topic, o.Partition, o.Offset)
		if !ok || d < 0 {
			continue
		}
		cp := Checkpoint{Group: group, Topic: c.RenameTopic(o.Topic), Partition: o.Partition,
			Upstream: o.Offset, Downstream: d, Metadata: o.Metadata}
		if prev, ok := c.last[group][partitionKey{cp.Topic, cp.Partition}]; ok &&
			cp.Upstream >= prev.Upstream && cp.Downstream <= prev.Downstream {
			continue // repeated, or a downstream rewind
		}
		c.Load(cp)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Translated returns the latest downstream offsets of group: what group
// sync writes to the target.
func (c *Checkpointer) Translated(group string) map[partitionKey]Checkpoint { return c.last[group] }

// Groups lists the groups with checkpoints.
func (c *Checkpointer) Groups() []string {
	out := make([]string, 0, len(c.last))
	for g := range c.last {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// OffsetsToSync decides which translated offsets group sync writes to the
// target group (MirrorCheckpointTask.syncGroupOffset): all of them when
// the group is unknown or dead there, only those ahead of the group's own
// offsets when it is empty, none while it has members (its consumers own
// its offsets; they are never rewound).
func OffsetsToSync(state string, translated map[partitionKey]Checkpoint, current map[partitionKey]int64) map[partitionKey]Checkpoint {
	out := map[partitionKey]Checkpoint{}
	switch state {
	case "", "Dead":
		for k, cp := range translated {
			out[k] = cp
		}
	case "Empty":
		for k, cp := range translated {
			if cur, ok := current[k]; ok && cur >= cp.Downstream {
				continue
			}
			out[k] = cp
		}
	}
	return out
}

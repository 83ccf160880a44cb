package iceberg

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
)

// Snapshot summary properties the sink writes with every commit, after
// Apache Iceberg's sink (Coordinator.java): offsets under
// kafka.connect.offsets.<topic>.<group>, the commit's id, the task that
// made it, and the valid-through timestamp. Apache's key names the
// control topic; this sink has none, so the key names the consumed topic
// and its value holds that topic's offsets: {"<partition>": <next offset>}.
const (
	offsetsPrefix    = "kafka.connect.offsets."
	commitIDProp     = "kafka.connect.commit-id"
	taskIDProp       = "kafka.connect.task-id"
	validThroughProp = "kafka.connect.valid-through-ts"
)

// offsets is the Kafka position a table holds for one consumer group: per
// topic-partition, the next offset to consume.
type offsets map[sdk.TopicPartition]int64

// offsetsKey is the summary property of a topic's offsets.
func offsetsKey(topic, group string) string { return offsetsPrefix + topic + "." + group }

// parseOffsets reads the offsets of group from a snapshot summary. found
// is false when the summary has none of the group's keys (a snapshot
// another writer made). A malformed value is an error: the table's
// position cannot be trusted.
func parseOffsets(props map[string]string, group string) (o offsets, found bool, err error) {
	o = offsets{}
	suffix := "." + group
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !strings.HasPrefix(k, offsetsPrefix) || !strings.HasSuffix(k, suffix) || len(k) <= len(offsetsPrefix)+len(suffix) {
			continue
		}
		topic := k[len(offsetsPrefix) : len(k)-len(suffix)]
		var m map[string]int64
		if err := json.Unmarshal([]byte(props[k]), &m); err != nil {
			return nil, false, fmt.Errorf("iceberg: snapshot property %s: %w", k, err)
		}
		for ps, off := range m {
			p, err := strconv.ParseInt(ps, 10, 32)
			if err != nil || p < 0 || off < 0 {
				return nil, false, fmt.Errorf("iceberg: snapshot property %s: bad partition offset %q: %d", k, ps, off)
			}
			o[sdk.TopicPartition{Topic: topic, Partition: int32(p)}] = off
		}
		found = true
	}
	return o, found, nil
}

// summary renders offsets as summary properties, one per topic.
func (o offsets) summary(group string) map[string]string {
	byTopic := map[string]map[string]int64{}
	for tp, off := range o {
		if byTopic[tp.Topic] == nil {
			byTopic[tp.Topic] = map[string]int64{}
		}
		byTopic[tp.Topic][strconv.Itoa(int(tp.Partition))] = off
	}
	out := make(map[string]string, len(byTopic))
	for topic, m := range byTopic {
		b, _ := json.Marshal(m) // map keys are sorted: the same offsets give the same text
		out[offsetsKey(topic, group)] = string(b)
	}
	return out
}

// merged returns the table's offsets with a commit's advanced.
func (o offsets) merged(next map[sdk.TopicPartition]int64) offsets {
	m := maps.Clone(o)
	if m == nil {
		m = offsets{}
	}
	maps.Copy(m, next)
	return m
}

// staleError says that the table's offset of a partition is not where this
// task's changes for it start: another task (the partition's owner after a
// rebalance, or a zombie) committed it meanwhile.
type staleError struct {
	TP            sdk.TopicPartition
	Table, Expect int64 // -1: none
}

func (e *staleError) Error() string {
	return fmt.Sprintf("iceberg: stale offsets for %s: the table holds %d, this task's changes start after %d", e.TP, e.Table, e.Expect)
}

// checkBase is the commit's compare-and-set: for every partition the
// commit advances, the table's offset must still be the one this task
// started its changes from (base; absent in both when neither knows one).
// Commits are serialised by the catalog (each asserts the snapshot it was
// built on), so a partition's offsets move forward one commit at a time,
// and a commit built on changes another task already committed (or skipped
// past) is refused instead of applied twice.
func checkBase(table offsets, base offsets, next map[sdk.TopicPartition]int64) error {
	for _, tp := range slices.SortedFunc(maps.Keys(next), compareTP) {
		t, tok := table[tp]
		b, bok := base[tp]
		if tok != bok || t != b {
			if !tok {
				t = -1
			}
			if !bok {
				b = -1
			}
			return &staleError{TP: tp, Table: t, Expect: b}
		}
	}
	return nil
}

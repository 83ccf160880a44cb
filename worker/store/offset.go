package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OffsetStore is the offsets topic (Kafka Connect's KafkaOffsetBackingStore
// with OffsetStorageWriter's record format): key ["<connector>",{partition}],
// value {offset} or null, partitioned by murmur2 of the key bytes. Methods
// are safe for concurrent use.
type OffsetStore struct {
	l   *kafkaLog
	log *slog.Logger // set before the first record is applied

	mu sync.Mutex
	// by connector, then canonical partition encoding.
	data map[string]map[string]offsetEntry
	// bad holds, by connector and raw key, records that could not be read.
	bad map[string]map[string]badOffset
}

type offsetEntry struct {
	rawKey    []byte // the key as found in the topic, reused for tombstones
	partition sdk.Partition
	offset    sdk.Offset
}

// OpenOffsetStore creates or verifies the offsets topic (default 25
// partitions, compacted), reads it to the end and tails it.
func OpenOffsetStore(ctx context.Context, o Options) (*OffsetStore, error) {
	s := newOffsetStore(storeLogger(o))
	l, err := openLog(ctx, o, logSpec{partitions: 25}, s.apply)
	if err != nil {
		return nil, err
	}
	s.l = l
	return s, nil
}

// newOffsetStore is an empty store that applies records, not yet reading
// a topic.
func newOffsetStore(log *slog.Logger) *OffsetStore {
	return &OffsetStore{log: log, data: map[string]map[string]offsetEntry{}, bad: map[string]map[string]badOffset{}}
}

// Close stops tailing. It is idempotent.
func (s *OffsetStore) Close() { s.l.close() }

// EncodeOffsetKey is the offsets-topic key of a connector's source
// partition: the bytes Kafka's JsonConverter writes for
// [connector, partition] (partition keys sorted).
func EncodeOffsetKey(connector string, p sdk.Partition) ([]byte, error) {
	if err := validateOffsetMap("partition", p); err != nil {
		return nil, err
	}
	b := []byte{'['}
	b = jackson.AppendString(b, connector)
	b = append(b, ',')
	var err error
	if p == nil {
		b = append(b, "null"...)
	} else if b, err = appendJSON(b, map[string]any(p)); err != nil {
		return nil, fmt.Errorf("store: encode partition: %w", err)
	}
	return append(b, ']'), nil
}

// EncodeOffsetValue is the offsets-topic value of an offset; nil for a nil
// offset (a tombstone).
func EncodeOffsetValue(o sdk.Offset) ([]byte, error) {
	if o == nil {
		return nil, nil
	}
	if err := validateOffsetMap("offset", o); err != nil {
		return nil, err
	}
	b, err := appendJSON(nil, map[string]any(o))
	if err != nil {
		return nil, fmt.Errorf("store: encode offset: %w", err)
	}
	return b, nil
}

// validateOffsetMap is OffsetUtils.validateFormat: primitive values only.
func validateOffsetMap(what string, m map[string]any) error {
	for k, v := range m {
		switch v.(type) {
		case nil, bool, string, int, int8, int16, int32, int64, uint8, uint16, uint32, uint, uint64, float32, float64:
		case map[string]any:
			return fmt.Errorf("store: %s field %q holds a MAP; Kafka Connect allows only primitive values", what, k)
		case []any:
			return fmt.Errorf("store: %s field %q holds an ARRAY; Kafka Connect allows only primitive values", what, k)
		default:
			return fmt.Errorf("store: %s field %q holds a value of no Kafka Connect primitive type; Kafka Connect allows only primitive values", what, k)
		}
	}
	return nil
}

// Offsets reads the topic to its end and returns the stored offset of each
// partition (nil where none). It implements plugins.OffsetReader through
// Reader.
func (s *OffsetStore) Offsets(ctx context.Context, connector string, partitions []sdk.Partition) ([]sdk.Offset, error) {
	if err := s.l.readToEnd(ctx); err != nil {
		return nil, err
	}
	out := make([]sdk.Offset, len(partitions))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range partitions {
		k, err := EncodeOffsetKey(connector, p)
		if err != nil {
			return nil, err
		}
		if e, ok := s.data[connector][string(k)]; ok {
			out[i] = copyAny(e.offset)
		}
	}
	return out, nil
}

// Reader adapts the store to a connector's plugins.OffsetReader.
func (s *OffsetStore) Reader(connector string) plugins.OffsetReader {
	return plugins.OffsetReaderFunc(func(ctx context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
		return s.Offsets(ctx, connector, ps)
	})
}

// ConnectorOffsets reads the topic to its end and lists every partition of
// the connector with a (non-tombstoned) offset, sorted by key bytes
// (GET /connectors/{name}/offsets).
func (s *OffsetStore) ConnectorOffsets(ctx context.Context, connector string) ([]sdk.SourceOffset, error) {
	if err := s.l.readToEnd(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.data[connector]
	keys := sortedKeys(m)
	out := make([]sdk.SourceOffset, 0, len(keys))
	for _, k := range keys {
		e := m[k]
		out = append(out, sdk.SourceOffset{Partition: sdk.Partition(copyAny(e.partition)), Offset: copyAny(e.offset)})
	}
	return out, nil
}

// WriteOffsets writes the offsets (a nil Offset writes a tombstone) and
// returns after the broker acknowledged all of them. It does not wait for
// the store to read them back; Offsets and ConnectorOffsets do that.
func (s *OffsetStore) WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error {
	if len(offsets) == 0 {
		return nil
	}
	recs, err := s.records(connector, offsets)
	if err != nil {
		return err
	}
	return s.l.send(ctx, recs...)
}

// Topic is the offsets topic the store reads.
func (s *OffsetStore) Topic() string { return s.l.topic }

// Records returns the records that store the offsets (a nil Offset is a
// tombstone), with their topic and partition set, for another producer to
// write: a source task's transactional producer, in the transaction of
// the records the offsets are of.
func (s *OffsetStore) Records(connector string, offsets []sdk.SourceOffset) ([]*kgo.Record, error) {
	recs, err := s.records(connector, offsets)
	if err != nil {
		return nil, err
	}
	if err := s.l.checkSizes(recs); err != nil {
		return nil, err
	}
	for _, r := range recs {
		r.Topic = s.l.topic
	}
	return recs, nil
}

func (s *OffsetStore) records(connector string, offsets []sdk.SourceOffset) ([]*kgo.Record, error) {
	recs := make([]*kgo.Record, 0, len(offsets))
	for _, so := range offsets {
		k, err := EncodeOffsetKey(connector, so.Partition)
		if err != nil {
			return nil, err
		}
		v, err := EncodeOffsetValue(so.Offset)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if e, ok := s.data[connector][string(k)]; ok {
			k = e.rawKey // compact against the record already there
		} else if b, ok := s.bad[connector][string(k)]; ok {
			k = b.rawKey // and replace one that could not be read
		}
		s.mu.Unlock()
		recs = append(recs, &kgo.Record{Key: k, Value: v, Partition: KeyPartition(k, s.l.partitions)})
	}
	return recs, nil
}

// ResetOffsets tombstones every stored partition of the connector
// (DELETE /connectors/{name}/offsets) and returns once they are acked and
// read back.
func (s *OffsetStore) ResetOffsets(ctx context.Context, connector string) error {
	cur, err := s.ConnectorOffsets(ctx, connector)
	if err != nil {
		return err
	}
	for i := range cur {
		cur[i].Offset = nil
	}
	if err := s.WriteOffsets(ctx, connector, cur); err != nil {
		return err
	}
	return s.l.readToEnd(ctx)
}

func (s *OffsetStore) apply(r *kgo.Record) {
	kv, err := decodeJSON(r.Key)
	arr, ok := kv.([]any)
	if err != nil || !ok || len(arr) != 2 {
		s.log.Warn("ignoring offsets record with malformed key", "key", ClipKey(string(r.Key)), "partition", r.Partition, "offset", r.Offset)
		return
	}
	connector, ok1 := arr[0].(string)
	if !ok1 {
		s.log.Warn("ignoring offsets record with malformed key", "key", ClipKey(string(r.Key)), "partition", r.Partition, "offset", r.Offset)
		return
	}
	pm, ok2 := arr[1].(map[string]any)
	canon, err := EncodeOffsetKey(connector, sdk.Partition(pm))
	if !ok2 && arr[1] != nil {
		err = fmt.Errorf("the partition is not a JSON object")
	}
	if err != nil {
		canon = nil // the partition itself cannot be read
	}
	var off sdk.Offset
	if err == nil && r.Value != nil {
		v, verr := decodeJSON(r.Value)
		m, ok := v.(map[string]any)
		switch {
		case verr != nil:
			err = fmt.Errorf("the offset is not JSON: %w", verr)
		case !ok && v != nil:
			err = fmt.Errorf("the offset is not a JSON object")
		default:
			off = m
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		// The connector's tasks cannot know where that partition stands:
		// the connector is FAILED (Problem) until the record is replaced.
		s.log.Error("cannot read an offsets record; its connector is FAILED until its offsets are altered or reset", "key", ClipKey(string(r.Key)),
			"partition", r.Partition, "offset", r.Offset, "err", err)
		if s.bad[connector] == nil {
			s.bad[connector] = map[string]badOffset{}
		}
		k := string(canon) // a partition's value that cannot be read
		if k == "" {
			k = string(r.Key) // a partition that cannot be read
		}
		s.bad[connector][k] = badOffset{rawKey: append([]byte(nil), r.Key...), partition: r.Partition, reason: fmt.Sprintf(
			"An offsets record of this connector (offset %d of partition %d of the offsets topic %s) cannot be read: %v. "+
				"Stop the connector and reset its offsets (DELETE /connectors/{name}/offsets) or alter that partition's, or delete the connector.",
			r.Offset, r.Partition, r.Topic, err)}
		return
	}
	delete(s.bad[connector], string(canon))
	if len(s.bad[connector]) == 0 {
		delete(s.bad, connector)
	}
	if off == nil {
		delete(s.data[connector], string(canon))
		if len(s.data[connector]) == 0 {
			delete(s.data, connector)
		}
		return
	}
	if s.data[connector] == nil {
		s.data[connector] = map[string]offsetEntry{}
	}
	s.data[connector][string(canon)] = offsetEntry{rawKey: append([]byte(nil), r.Key...), partition: pm, offset: off}
}

// badOffset is an offsets record that could not be read.
type badOffset struct {
	rawKey    []byte
	partition int32 // of the offsets topic, for the tombstone
	reason    string
}

// Problem says why a connector's offsets cannot be trusted (records that
// could not be read), or "".
func (s *OffsetStore) Problem(connector string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	bad := s.bad[connector]
	if len(bad) == 0 {
		return ""
	}
	first := bad[sortedKeys(bad)[0]].reason
	if len(bad) > 1 {
		first += fmt.Sprintf(" (%d such records)", len(bad))
	}
	return first
}

// ClearProblems tombstones the connector's offsets records that could not
// be read and returns once they are read back.
func (s *OffsetStore) ClearProblems(ctx context.Context, connector string) error {
	s.mu.Lock()
	var recs []*kgo.Record
	for _, k := range sortedKeys(s.bad[connector]) {
		b := s.bad[connector][k]
		recs = append(recs, &kgo.Record{Key: b.rawKey, Partition: b.partition})
	}
	s.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	return s.l.sendAndWait(ctx, recs...)
}

func copyAny(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/tributary-dev/tributary/internal/jackson"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OffsetStore is the offsets topic (Kafka Connect's KafkaOffsetBackingStore
// with OffsetStorageWriter's record format): key ["<connector>",{partition}],
// value {offset} or null, partitioned by murmur2 of the key bytes. Methods
// are safe for concurrent use.
type OffsetStore struct {
	l *kafkaLog

	mu sync.Mutex
	// by connector, then canonical partition encoding.
	data map[string]map[string]offsetEntry
}

type offsetEntry struct {
	rawKey    []byte // the key as found in the topic, reused for tombstones
	partition sdk.Partition
	offset    sdk.Offset
}

// OpenOffsetStore creates or verifies the offsets topic (default 25
// partitions, compacted), reads it to the end and tails it.
func OpenOffsetStore(ctx context.Context, o Options) (*OffsetStore, error) {
	s := &OffsetStore{data: map[string]map[string]offsetEntry{}}
	l, err := openLog(ctx, o, logSpec{partitions: 25}, s.apply)
	if err != nil {
		return nil, err
	}
	s.l = l
	return s, nil
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
	recs := make([]*kgo.Record, 0, len(offsets))
	for _, so := range offsets {
		k, err := EncodeOffsetKey(connector, so.Partition)
		if err != nil {
			return err
		}
		v, err := EncodeOffsetValue(so.Offset)
		if err != nil {
			return err
		}
		s.mu.Lock()
		if e, ok := s.data[connector][string(k)]; ok {
			k = e.rawKey // compact against the record already there
		}
		s.mu.Unlock()
		recs = append(recs, &kgo.Record{Key: k, Value: v, Partition: KeyPartition(k, s.l.partitions)})
	}
	return s.l.send(ctx, recs...)
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
		s.l.log.Warn("ignoring offsets record with malformed key", "key", string(r.Key), "partition", r.Partition, "offset", r.Offset)
		return
	}
	connector, ok1 := arr[0].(string)
	pm, ok2 := arr[1].(map[string]any)
	if !ok1 || (!ok2 && arr[1] != nil) {
		s.l.log.Warn("ignoring offsets record with malformed key", "key", string(r.Key), "partition", r.Partition, "offset", r.Offset)
		return
	}
	canon, err := EncodeOffsetKey(connector, sdk.Partition(pm))
	if err != nil {
		s.l.log.Warn("ignoring offsets record with malformed key", "key", string(r.Key), "err", err)
		return
	}
	var off sdk.Offset
	if r.Value != nil {
		v, err := decodeJSON(r.Value)
		m, ok := v.(map[string]any)
		if err != nil || (!ok && v != nil) {
			s.l.log.Warn("ignoring offsets record with malformed value", "key", string(r.Key), "partition", r.Partition, "offset", r.Offset)
			return
		}
		off = m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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

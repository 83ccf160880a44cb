package sdk

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Partition identifies a slice of a source system (a file, a table, a
// replication slot), like Kafka Connect's source partition map. Values must
// be schemaless values: strings, bools, integers, floats, nested maps and
// slices. Keys and values are stored as JSON in the offsets topic.
type Partition map[string]any

// Offset is a position within a Partition, like Kafka Connect's source
// offset map. Integers round-trip exactly (an int64 LSN stays exact).
type Offset map[string]any

// Int64 returns an integer offset field, accepting any integer type, an
// integral float64 (from JSON) or a json.Number.
func (o Offset) Int64(key string) (int64, bool) {
	switch v := o[key].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
			return int64(v), true
		}
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// String returns a string offset field.
func (o Offset) String(key string) (string, bool) {
	s, ok := o[key].(string)
	return s, ok
}

// SourceOffset pairs a partition with an offset; used for committed-offset
// notifications.
type SourceOffset struct {
	Partition Partition
	Offset    Offset
}

// Header is a record header.
type Header struct {
	Key    string
	Schema *schema.Schema
	Value  any
}

// SourceRecord is a record produced by a source task.
type SourceRecord struct {
	// Partition and Offset locate the record in the source; the runtime
	// stores Offset once the record is acknowledged by Kafka. A record with
	// an empty Topic only advances the offset (a heartbeat).
	Partition Partition
	Offset    Offset
	Topic     string
	// KafkaPartition, when non-nil, overrides the producer's partitioner.
	KafkaPartition *int32
	KeySchema      *schema.Schema
	Key            any
	ValueSchema    *schema.Schema
	Value          any
	// Timestamp is the record time; zero means "let the producer decide".
	Timestamp time.Time
	Headers   []Header
}

// TopicPartition names a Kafka partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// SinkRecord is a record delivered to a sink task.
type SinkRecord struct {
	Topic       string
	Partition   int32
	Offset      int64
	KeySchema   *schema.Schema
	Key         any
	ValueSchema *schema.Schema
	Value       any
	Timestamp   time.Time
	Headers     []Header
}

// TopicPartition returns the record's Kafka partition.
func (r *SinkRecord) TopicPartition() TopicPartition {
	return TopicPartition{Topic: r.Topic, Partition: r.Partition}
}

// Validate checks the key, value and headers against their schemas.
func (r *SourceRecord) Validate() error {
	if err := schema.Validate(r.KeySchema, r.Key); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if err := schema.Validate(r.ValueSchema, r.Value); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	for _, h := range r.Headers {
		if err := schema.Validate(h.Schema, h.Value); err != nil {
			return fmt.Errorf("header %q: %w", h.Key, err)
		}
	}
	return nil
}

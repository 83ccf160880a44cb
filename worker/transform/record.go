package transform

import (
	"slices"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Record is what transformations and predicates see and change of a
// record: Kafka Connect's ConnectRecord. The chain works on a copy of the
// runner's record; transformations replace its fields and never modify the
// values they point to (a struct, map, slice or header list is replaced by
// a new one), so the record the connector handed over stays intact.
type Record struct {
	Topic string
	// Partition is the Kafka partition; HasPartition false is Java's null
	// (a source record that leaves the choice to the producer).
	Partition    int32
	HasPartition bool
	KeySchema    *schema.Schema
	Key          any
	ValueSchema  *schema.Schema
	Value        any
	// Timestamp is the record's time; the zero time is Java's null.
	Timestamp time.Time
	Headers   []sdk.Header
	// Sink is set for a sink record, whose Kafka offset is Offset
	// (InsertField's offset.field needs one).
	Sink   bool
	Offset int64
	// ownKey and ownValue are set while the key's or value's map was made
	// by a transformation of the chain's current pass: the next ones may
	// change it in place instead of copying it.
	ownKey, ownValue bool
}

// withHeader returns r's headers with h appended, in a new slice.
func (r *Record) withHeader(h ...sdk.Header) []sdk.Header {
	out := make([]sdk.Header, 0, len(r.Headers)+len(h))
	return append(append(out, r.Headers...), h...)
}

// FromSource is the Record of a source record.
func FromSource(s *sdk.SourceRecord) Record {
	r := Record{Topic: s.Topic, KeySchema: s.KeySchema, Key: s.Key, ValueSchema: s.ValueSchema, Value: s.Value,
		Timestamp: s.Timestamp, Headers: s.Headers}
	if s.KafkaPartition != nil {
		r.Partition, r.HasPartition = *s.KafkaPartition, true
	}
	return r
}

// ToSource writes r back into a source record; its source partition and
// offset stay.
func (r *Record) ToSource(s *sdk.SourceRecord) {
	s.Topic, s.KeySchema, s.Key, s.ValueSchema, s.Value = r.Topic, r.KeySchema, r.Key, r.ValueSchema, r.Value
	s.Timestamp, s.Headers = r.Timestamp, slices.Clip(r.Headers)
	if r.HasPartition {
		if s.KafkaPartition == nil || *s.KafkaPartition != r.Partition {
			p := r.Partition
			s.KafkaPartition = &p
		}
	} else {
		s.KafkaPartition = nil
	}
}

// FromSink is the Record of a sink record.
func FromSink(s *sdk.SinkRecord) Record {
	return Record{Topic: s.Topic, Partition: s.Partition, HasPartition: true, KeySchema: s.KeySchema, Key: s.Key,
		ValueSchema: s.ValueSchema, Value: s.Value, Timestamp: s.Timestamp, Headers: s.Headers, Sink: true, Offset: s.Offset}
}

// ToSink writes r back into a sink record; its offset stays.
func (r *Record) ToSink(s *sdk.SinkRecord) {
	s.Topic, s.Partition, s.KeySchema, s.Key, s.ValueSchema, s.Value = r.Topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value
	s.Timestamp, s.Headers = r.Timestamp, slices.Clip(r.Headers)
}

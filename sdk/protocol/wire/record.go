package wire

import "github.com/tributary-dev/tributary/sdk/schema"

// NoPartition marks a record without a Kafka partition.
const NoPartition int32 = -1

// NoTimestamp marks a record without a timestamp.
const NoTimestamp int64 = -1 << 63

// Record is the transport form of a source or sink record.
type Record struct {
	Partition      map[string]any
	Offset         map[string]any
	Topic          string
	KafkaPartition int32 // NoPartition if unset
	KafkaOffset    int64
	Timestamp      int64 // milliseconds since the epoch, or NoTimestamp
	KeySchema      *schema.Schema
	Key            any
	ValueSchema    *schema.Schema
	Value          any
	Headers        []Header
	// RawOffset is Offset still encoded, set instead of Offset by a
	// Decoder with RawOffsets (nil when the record has no offset); see
	// DecodeOffset.
	RawOffset []byte
}

// Header is a record header.
type Header struct {
	Key    string
	Schema *schema.Schema
	Value  any
}

// PartitionOffset pairs a source partition with an offset (nil when the
// offset store holds none).
type PartitionOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

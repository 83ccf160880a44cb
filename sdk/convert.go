package sdk

import (
	"time"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

func sourceToWire(r *SourceRecord, w *wire.Record) {
	*w = wire.Record{
		Partition: r.Partition, Offset: r.Offset, Topic: r.Topic,
		KafkaPartition: wire.NoPartition, Timestamp: wire.NoTimestamp,
		KeySchema: r.KeySchema, Key: r.Key, ValueSchema: r.ValueSchema, Value: r.Value,
	}
	if r.KafkaPartition != nil {
		w.KafkaPartition = *r.KafkaPartition
	}
	if !r.Timestamp.IsZero() {
		w.Timestamp = r.Timestamp.UnixMilli()
	}
	if len(r.Headers) > 0 {
		w.Headers = make([]wire.Header, len(r.Headers))
		for i, h := range r.Headers {
			w.Headers[i] = wire.Header{Key: h.Key, Schema: h.Schema, Value: h.Value}
		}
	}
}

func sinkFromWire(w *wire.Record) SinkRecord {
	r := SinkRecord{Topic: w.Topic, Partition: w.KafkaPartition, Offset: w.KafkaOffset,
		KeySchema: w.KeySchema, Key: w.Key, ValueSchema: w.ValueSchema, Value: w.Value}
	if w.Timestamp != wire.NoTimestamp {
		r.Timestamp = time.UnixMilli(w.Timestamp).UTC()
	}
	if len(w.Headers) > 0 {
		r.Headers = make([]Header, len(w.Headers))
		for i, h := range w.Headers {
			r.Headers[i] = Header{Key: h.Key, Schema: h.Schema, Value: h.Value}
		}
	}
	return r
}

func toPartitions(ps []Partition) []map[string]any {
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

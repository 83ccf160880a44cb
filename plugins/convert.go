package plugins

import (
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

func sourceFromWire(w *wire.Record, r *sdk.SourceRecord) {
	*r = sdk.SourceRecord{Partition: w.Partition, Offset: w.Offset, Topic: w.Topic,
		KeySchema: w.KeySchema, Key: w.Key, ValueSchema: w.ValueSchema, Value: w.Value}
	if w.KafkaPartition != wire.NoPartition {
		p := w.KafkaPartition
		r.KafkaPartition = &p
	}
	if w.Timestamp != wire.NoTimestamp {
		r.Timestamp = time.UnixMilli(w.Timestamp).UTC()
	}
	if len(w.Headers) > 0 {
		r.Headers = make([]sdk.Header, len(w.Headers))
		for i, h := range w.Headers {
			r.Headers[i] = sdk.Header{Key: h.Key, Schema: h.Schema, Value: h.Value}
		}
	}
}

func sinkToWire(r *sdk.SinkRecord, w *wire.Record) {
	*w = wire.Record{Topic: r.Topic, KafkaPartition: r.Partition, KafkaOffset: r.Offset,
		Timestamp: wire.NoTimestamp, KeySchema: r.KeySchema, Key: r.Key, ValueSchema: r.ValueSchema, Value: r.Value}
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

func taskError(f *pluginpb.Failure) *sdk.TaskError {
	return &sdk.TaskError{Message: f.GetMessage(), Trace: f.GetTrace()}
}

func tpsToProto(tps []sdk.TopicPartition) *pluginpb.Partitions {
	ps := &pluginpb.Partitions{}
	for _, tp := range tps {
		ps.Partitions = append(ps.Partitions, &pluginpb.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	return ps
}

// metricsFromProto is a plugin's metrics snapshot.
func metricsFromProto(m *pluginpb.Metrics) []sdk.MetricFamily {
	out := make([]sdk.MetricFamily, 0, len(m.GetFamilies()))
	for _, f := range m.GetFamilies() {
		mf := sdk.MetricFamily{Name: f.GetName(), Help: f.GetHelp(), Type: sdk.MetricType(f.GetType()), LabelNames: f.GetLabelNames(),
			Buckets: f.GetBuckets(), Metrics: make([]sdk.MetricSample, len(f.GetMetrics()))}
		for i, s := range f.GetMetrics() {
			mf.Metrics[i] = sdk.MetricSample{LabelValues: s.GetLabelValues(), Value: s.GetValue(), Count: s.GetCount(), Sum: s.GetSum(),
				BucketCounts: s.GetBucketCounts()}
		}
		out = append(out, mf)
	}
	return out
}

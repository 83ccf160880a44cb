package task

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/sdk"
)

// BenchmarkSource: datagen (1 KiB payload) → source runner → bundled broker.
func BenchmarkSource(b *testing.B) {
	addr := startBroker(b)
	createTopic(b, addr, "bench", 1)
	n := b.N
	info := sdk.TaskInfo{Connector: "bench", Task: 0}
	pt, err := loader(b).StartSourceTask(context.Background(), datagen.Class, info, map[string]string{
		"kafka.topic": "bench", "payload.bytes": "1024", "iterations": fmt.Sprint(n), "batch.size": "1000"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	adm := admin(b, addr)
	r, err := NewSource(SourceConfig{Info: info, Task: pt, Key: jsonConv(b, false), Value: jsonConv(b, false),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: &memOffsets{}, FlushInterval: time.Second, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	r.Start()
	for {
		if got, _ := endOffset(context.Background(), adm, "bench"); got >= int64(n) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/el.Seconds(), "records/s")
	if err := r.Stop(stopCtx(b)); err != nil {
		b.Fatal(err)
	}
}

// discardSink counts records.
type discardSink struct{ n atomic.Int64 }

func (d *discardSink) Put(_ context.Context, r []sdk.SinkRecord) error {
	d.n.Add(int64(len(r)))
	return nil
}
func (d *discardSink) Assigned(context.Context, []sdk.TopicPartition) error { return nil }
func (d *discardSink) Revoked(context.Context, []sdk.TopicPartition) error  { return nil }
func (d *discardSink) Flush(_ context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	return o, nil
}
func (d *discardSink) Rewinds() map[sdk.TopicPartition]int64 { return nil }
func (d *discardSink) Stop(context.Context) error            { return nil }

// BenchmarkSink: bundled broker → sink runner (JsonConverter, schemas
// enabled, 1 KiB payload) → a sink that discards.
func BenchmarkSink(b *testing.B) {
	addr := startBroker(b)
	createTopic(b, addr, "bench", 1)
	n := b.N
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"))
	if err != nil {
		b.Fatal(err)
	}
	val := jsonConv(b, true)
	cfg := datagen.Config{Topic: "bench", PayloadBytes: 1024, Keys: 1000}
	rec := datagen.Record(cfg, 0)
	v, err := val.FromConnect("bench", rec.ValueSchema, rec.Value)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), &kgo.Record{Value: v}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	cl.Close()
	d := &discardSink{}
	r, err := NewSink(SinkConfig{Info: sdk.TaskInfo{Connector: "bench"}, Task: d, Topics: []string{"bench"},
		Key: jsonConv(b, false), Value: val, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
		FlushInterval: time.Second, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	r.Start()
	for d.n.Load() < int64(n) {
		time.Sleep(2 * time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/el.Seconds(), "records/s")
	if err := r.Stop(stopCtx(b)); err != nil {
		b.Fatal(err)
	}
}

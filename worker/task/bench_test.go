package task

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// BenchmarkSource: datagen (1 KiB payload) → source runner → bundled
// broker, the task in process or in a plugin process (whose values the
// runner takes still encoded). Run:
//
//	go test -run '^$' -bench BenchmarkSource -benchtime 300000x ./worker/task
func BenchmarkSource(b *testing.B) {
	for _, kind := range []string{"inprocess", "plugin"} {
		b.Run("task="+kind, func(b *testing.B) { benchSource(b, kind) })
	}
}

func benchSource(b *testing.B, kind string) {
	addr := startBroker(b)
	createTopic(b, addr, "bench", 1)
	n := b.N
	info := sdk.TaskInfo{Connector: "bench", Task: 0}
	var l plugins.Loader = loader(b)
	if kind == "plugin" {
		l = pluginHost(b)
	}
	pt, err := l.StartSourceTask(context.Background(), datagen.Class, info, map[string]string{
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
func (d *discardSink) Sync(context.Context) error            { return nil }
func (d *discardSink) Ready(context.Context) error           { return nil }
func (d *discardSink) Stop(context.Context) error            { return nil }

// countingSink wraps a plugin sink task and counts the records Put to it,
// remembering when the first batch arrived (after the group join).
type countingSink struct {
	plugins.SinkTask
	n     atomic.Int64
	first atomic.Int64 // unix nanos of the first Put
}

func (c *countingSink) TakesEncodedValues() bool { return plugins.TakesEncodedValues(c.SinkTask) }

func (c *countingSink) Put(ctx context.Context, r []sdk.SinkRecord) error {
	c.first.CompareAndSwap(0, time.Now().UnixNano())
	err := c.SinkTask.Put(ctx, r)
	c.n.Add(int64(len(r)))
	return err
}

// BenchmarkSink: bundled broker → sink runner (JsonConverter, a 1 KiB
// datagen record, uncompressed) → a sink that discards: task=direct is a
// Go SinkTask in the runner, task=inprocess the DiscardSink connector
// through the in-process loader, task=plugin the DiscardSink connector in a
// plugin process (this test binary). json=envelope has schemas enabled,
// json=schemaless not (the values then reach the plugin written straight
// into the wire encoding). Timed from the first Put (the group join is
// excluded) until a Flush after the last record returned. Run:
//
//	go test -run '^$' -bench BenchmarkSink -benchtime 300000x ./worker/task
func BenchmarkSink(b *testing.B) {
	for _, json := range []string{"envelope", "schemaless"} {
		for _, kind := range []string{"direct", "inprocess", "plugin"} {
			b.Run("json="+json+"/task="+kind, func(b *testing.B) { benchSink(b, kind, json == "envelope") })
		}
	}
}

func benchSink(b *testing.B, kind string, schemas bool) {
	addr := startBroker(b)
	createTopic(b, addr, "bench", 1)
	n := b.N
	// Uncompressed, as the source runner produces by default.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	val := jsonConv(b, schemas)
	cfg := datagen.Config{Topic: "bench", PayloadBytes: 960, Keys: 1000}
	rec := datagen.NewGenerator(cfg).Record(0)
	v, err := val.FromConnect("bench", rec.ValueSchema, rec.Value)
	if err != nil {
		b.Fatal(err)
	}
	k, err := val.FromConnect("bench", rec.KeySchema, rec.Key)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), &kgo.Record{Key: k, Value: v}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	cl.Close()
	info := sdk.TaskInfo{Connector: "bench"}
	var pt plugins.SinkTask
	switch kind {
	case "direct":
		pt = &discardSink{}
	case "inprocess", "plugin":
		var l plugins.Loader = loader(b)
		if kind == "plugin" {
			l = pluginHost(b)
		}
		if pt, err = l.StartSinkTask(context.Background(), discard.Class, info, map[string]string{"topics": "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	d := &countingSink{SinkTask: pt}
	r, err := NewSink(SinkConfig{Info: info, Task: d, Topics: []string{"bench"},
		Key: val, Value: val, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)},
		FlushInterval: time.Minute, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(k) + len(v)))
	b.ReportAllocs()
	r.Start()
	for d.first.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	start := time.Unix(0, d.first.Load())
	for d.n.Load() < int64(n) {
		time.Sleep(2 * time.Millisecond)
	}
	r.mu.Lock()
	if err := r.flushCommit(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	r.mu.Unlock()
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/el.Seconds(), "records/s")
	if err := r.Stop(stopCtx(b)); err != nil {
		b.Fatal(err)
	}
}

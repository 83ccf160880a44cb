package plugins

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/wire"
)

// datagen1KiB is the benchmarks' Datagen configuration: payload.bytes=960
// plus id, key, amount, created and the envelope make each encoded record
// 1 KiB.
func datagen1KiB() map[string]string {
	return map[string]string{"kafka.topic": "bench", "payload.bytes": "960", "batch.size": "2000"}
}

// BenchmarkDatagen1KiB pulls 1 KiB datagen records through a source task and
// discards them, through the in-process loader and through a plugin process
// (encode, shared memory or gRPC stream, decode), the latter also with
// values left encoded as the source runner takes them for a JsonConverter,
// and logs the ratios and the CPU each way costs per record (both processes;
// on Linux). The loaders run one after the other, so on a shared machine
// their ratio moves with its load: BenchmarkDatagen1KiBAlternating measures
// it with both in one run. Run:
//
//	go test -run '^$' -bench 'BenchmarkDatagen1KiB$' -benchtime 1000000x ./plugins
func BenchmarkDatagen1KiB(b *testing.B) {
	cfg := datagen1KiB()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	// Per loader, the runs' records/s and CPU per record (both processes)
	// at the largest b.N, for the medians logged at the end (with -count;
	// smaller b.N are the framework's trial rounds).
	type result struct {
		n    int
		rate float64
		cpu  time.Duration
	}
	results := map[string][]result{}
	plugin := func(b *testing.B) Loader {
		h, err := NewHost(context.Background(), Config{Builtin: [][]string{{exe}}, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	loaders := []struct {
		name string
		make func(b *testing.B) Loader
		// encoded leaves values and source offsets in the wire encoding,
		// as the source runner takes them for a JsonConverter
		// (RawValueSource, EncodedOffsetSource).
		encoded bool
	}{
		{"inprocess", func(b *testing.B) Loader {
			l, err := NewInProcess(quiet, connectors.All()...)
			if err != nil {
				b.Fatal(err)
			}
			return l
		}, false},
		{"plugin", plugin, false},
		{"plugin-encoded", plugin, true},
	}
	for _, l := range loaders {
		b.Run("loader="+l.name, func(b *testing.B) {
			ctx := context.Background()
			task, err := l.make(b).StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "bench"}, cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			if l.encoded {
				task.(RawValueSource).KeepValuesEncoded()
			}
			if _, err := task.Poll(ctx); err != nil { // warm up: the pipeline is running
				b.Fatal(err)
			}
			b.SetBytes(1024)
			b.ReportAllocs()
			pid := 0
			if ht, ok := task.(*hostSourceTask); ok {
				pid = ht.p.pid()
			}
			selfCPU, pluginCPU := cpuTime(0), cpuTime(pid)
			b.ResetTimer()
			// As the source runner takes them for a JsonConverter: values
			// and offsets left encoded, and each batch's memory handed
			// back once done with.
			eo, _ := task.(EncodedOffsetSource)
			n := 0
			for n < b.N {
				var recs []sdk.SourceRecord
				var err error
				if l.encoded {
					recs, _, err = eo.PollEncodedOffsets(ctx)
					eo.ReleaseBatch(recs) // discarded: the memory may take the next batch
				} else {
					recs, err = task.Poll(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(recs)
			}
			b.StopTimer()
			rate := float64(n) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "records/s")
			// CPU per record, less noisy than the rate on a shared
			// machine: this process (the host, or everything in
			// process) and the plugin process.
			selfCPU = cpuTime(0) - selfCPU
			b.ReportMetric(float64(selfCPU.Nanoseconds())/float64(n), "host-cpu-ns/record")
			cpu := selfCPU
			if pid != 0 {
				pluginCPU = cpuTime(pid) - pluginCPU
				b.ReportMetric(float64(pluginCPU.Nanoseconds())/float64(n), "plugin-cpu-ns/record")
				cpu += pluginCPU
			}
			results[l.name] = append(results[l.name], result{b.N, rate, cpu / time.Duration(n)})
			if err := task.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
	rates, cpus := map[string]float64{}, map[string]time.Duration{}
	runs := 0
	for name, rs := range results {
		top := slices.MaxFunc(rs, func(a, b result) int { return cmp.Compare(a.n, b.n) }).n
		var rate []float64
		var cpu []time.Duration
		for _, r := range rs {
			if r.n == top {
				rate, cpu = append(rate, r.rate), append(cpu, r.cpu)
			}
		}
		rates[name], cpus[name], runs = median(rate), median(cpu), len(rate)
	}
	if in := rates["inprocess"]; in > 0 && rates["plugin"] > 0 {
		b.Logf("datagen 1 KiB, medians of %d runs: in-process %.0f records/s; plugin %.0f records/s (%.2f of in-process), values left encoded %.0f records/s (%.2f)",
			runs, in, rates["plugin"], rates["plugin"]/in, rates["plugin-encoded"], rates["plugin-encoded"]/in)
		b.Logf("CPU per record (both processes): in-process %v; plugin %v; values left encoded %v",
			cpus["inprocess"], cpus["plugin"], cpus["plugin-encoded"])
	}
}

// BenchmarkDatagen1KiBAlternating measures BenchmarkDatagen1KiB's ratio in
// one run that alternates between the two loaders, so that both see the
// same state of a shared machine (separate runs minutes apart can differ by
// half here). Both tasks run side by side: the in-process loader, and a
// plugin process with values and offsets left encoded, as the source
// runner takes them. The benchmark takes records from one at a time, in
// rounds of a chunk each. A chunk's first records are not timed: they
// drain what the loader's pipeline (a few batches deep) prepared while the
// other one was timed, and meanwhile the other's refill ends. b.N is the
// number of timed records per loader; it reports both rates, their ratio,
// and the CPU per timed record (both processes, on Linux). Run:
//
//	go test -run '^$' -bench BenchmarkDatagen1KiBAlternating -benchtime 3000000x ./plugins
func BenchmarkDatagen1KiBAlternating(b *testing.B) {
	const chunk, untimed = 250_000, 25_000
	cfg := datagen1KiB()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	in, err := NewInProcess(quiet, connectors.All()...)
	if err != nil {
		b.Fatal(err)
	}
	h, err := NewHost(ctx, Config{Builtin: [][]string{{exe}}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	inTask, err := in.StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "bench"}, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = inTask.Stop(ctx) }()
	plTask, err := h.StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "bench"}, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = plTask.Stop(ctx) }()
	plTask.(RawValueSource).KeepValuesEncoded()
	eo := plTask.(EncodedOffsetSource)
	pid := plTask.(*hostSourceTask).p.pid()
	type side struct {
		poll    func() (int, error)
		n       int
		elapsed time.Duration
		cpu     time.Duration
	}
	sides := []*side{
		{poll: func() (int, error) {
			recs, err := inTask.Poll(ctx)
			return len(recs), err
		}},
		{poll: func() (int, error) {
			recs, _, err := eo.PollEncodedOffsets(ctx)
			eo.ReleaseBatch(recs)
			return len(recs), err
		}},
	}
	take := func(s *side, n int) int {
		got := 0
		for got < n {
			k, err := s.poll()
			if err != nil {
				b.Fatal(err)
			}
			got += k
		}
		return got
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		for _, s := range sides {
			take(s, untimed)
			cpu, start := cpuTime(0)+cpuTime(pid), time.Now()
			s.n += take(s, min(chunk, b.N-done))
			s.elapsed += time.Since(start)
			s.cpu += cpuTime(0) + cpuTime(pid) - cpu
		}
	}
	b.StopTimer()
	rate := func(s *side) float64 { return float64(s.n) / s.elapsed.Seconds() }
	b.ReportMetric(rate(sides[0]), "inprocess-records/s")
	b.ReportMetric(rate(sides[1]), "plugin-records/s")
	b.ReportMetric(rate(sides[1])/rate(sides[0]), "ratio")
	b.ReportMetric(float64(sides[0].cpu.Nanoseconds())/float64(sides[0].n), "inprocess-cpu-ns/record")
	b.ReportMetric(float64(sides[1].cpu.Nanoseconds())/float64(sides[1].n), "plugin-cpu-ns/record")
}

// median returns the median of xs (the lower middle one of an even
// number), zero for none.
func median[T cmp.Ordered](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Sorted(slices.Values(xs))
	return s[(len(s)-1)/2]
}

// BenchmarkWireDatagen1KiB measures the two halves of the plugin transport's
// per-record CPU cost on the benchmark's records: the plugin's encoding
// and the host's decoding (wire → sdk).
func BenchmarkWireDatagen1KiB(b *testing.B) {
	cfg := datagen1KiB()
	l, err := NewInProcess(slog.New(slog.DiscardHandler), connectors.All()...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	task, err := l.StartSourceTask(ctx, "Datagen", sdk.TaskInfo{Connector: "bench"}, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	var recs []sdk.SourceRecord
	for len(recs) < 2000 {
		r, err := task.Poll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, r...)
	}
	if err := task.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	recs = recs[:2000]
	// The encoder's input: the records as wire.Records. (The SDK's field
	// by field sdk → wire copy is left out of the measurement.)
	wrecs := make([]wire.Record, len(recs))
	for i, r := range recs {
		wrecs[i] = wire.Record{Partition: r.Partition, Offset: r.Offset, Topic: r.Topic,
			KafkaPartition: wire.NoPartition, Timestamp: r.Timestamp.UnixMilli(),
			KeySchema: r.KeySchema, Key: r.Key, ValueSchema: r.ValueSchema, Value: r.Value}
	}
	// As the plugin's SDK encodes for this host: one partition map per
	// poll, values with their lengths.
	enc := wire.Encoder{ReusePartitions: true, ValueLengths: true}
	encode := func() {
		enc.Reset()
		enc.ForgetPartition()
		for i := range wrecs {
			if err := enc.Append(&wrecs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(1024)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(recs) == 0 {
				encode()
			}
		}
	})
	encode()
	data := append([]byte(nil), enc.Bytes()...)
	for _, raw := range []bool{false, true} {
		name := "decode"
		if raw {
			// values and offsets left encoded, as the source runner takes
			// them for a JsonConverter
			name = "decode-encoded"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(1024)
			b.ReportAllocs()
			dec := wire.Decoder{AliasInput: true, RawValues: raw, RawOffsets: raw}
			for i := 0; b.Loop(); i++ {
				if i%len(recs) == 0 {
					wrecs, err := dec.Decode(data, len(recs))
					if err != nil {
						b.Fatal(err)
					}
					out := make([]sdk.SourceRecord, len(wrecs))
					for i := range wrecs {
						sourceFromWire(&wrecs[i], &out[i])
					}
				}
			}
		})
	}
}

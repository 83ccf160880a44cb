package datagen

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAcceptance(t *testing.T) {
	sdktest.RunSource(t, sdktest.SourceDriver{
		Deterministic: true,
		Connector:     Connector(),
		Config: func(*testing.T) map[string]string {
			return map[string]string{"kafka.topic": "gen", "payload.bytes": "32", "seed": "42"}
		},
	})
}

func TestIterationsAndRate(t *testing.T) {
	sp := Connector().(sdk.SourcePlugin)
	task, err := sp.NewSourceTask(map[string]string{"kafka.topic": "t", "iterations": "25", "records.per.sec": "200"})
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Open(context.Background(), noOffsets{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n := 0
	for n < 25 {
		recs, err := task.Poll(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if r.Key == nil || !schema.Equal(r.ValueSchema, ValueSchema) {
				t.Fatalf("record %+v", r)
			}
		}
		n += len(recs)
	}
	// 25 records at 200/s take about 120 ms; a generous lower bound keeps
	// this from being a timing test while proving the limiter works.
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("25 records at 200/s took only %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if recs, _ := task.Poll(ctx, 1000); len(recs) != 0 {
		t.Fatalf("generated %d records past iterations", len(recs))
	}
}

func TestTaskConfigsSplit(t *testing.T) {
	rc, err := Connector().Start(context.Background(), map[string]string{"kafka.topic": "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := rc.TaskConfigs(context.Background(), 4)
	if err != nil || len(cfgs) != 4 || cfgs[3]["datagen.task"] != "3" || cfgs[0]["kafka.topic"] != "t" {
		t.Fatalf("task configs %v %v", cfgs, err)
	}
	_ = rc.Stop(context.Background())
}

type noOffsets struct{ sdk.SourceTaskContext }

func (noOffsets) Offset(context.Context, sdk.Partition) (sdk.Offset, error) { return nil, nil }

// BenchmarkRecord measures the generation of one 1 KiB-ish record (900
// payload bytes, as `tributary-bench connect` uses).
func BenchmarkRecord(b *testing.B) {
	cfg := Config{Topic: "t", PayloadBytes: 900, Keys: 1000, BatchSize: 1000}
	g := NewGenerator(cfg)
	var r sdk.SourceRecord
	b.SetBytes(900)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.record(int64(i), &r)
	}
}

func BenchmarkRandomText(b *testing.B) {
	rng := splitmix(1)
	b.SetBytes(960)
	for b.Loop() {
		_ = randomText(&rng, 960)
	}
}

// TestPayloads: payloads have payload.bytes base64url letters, differ
// between records, are a function of (seed, task, seq) whether they are
// windows of the task's random text (up to 64 KiB) or drawn one by one, and
// differ between tasks and seeds.
func TestPayloads(t *testing.T) {
	payload := func(g *Generator, seq int64) string {
		return g.Record(seq).Value.(*schema.Struct).Get("payload").(string)
	}
	for _, n := range []int32{1, 9, 960, maxPooled, maxPooled + 1} {
		cfg := Config{Topic: "t", PayloadBytes: n, Keys: 10, Seed: 3}
		g := NewGenerator(cfg)
		seen := map[string]bool{}
		for seq := range int64(50) {
			p := payload(g, seq)
			if len(p) != int(n) || strings.Trim(p, letters) != "" {
				t.Fatalf("payload.bytes=%d: payload %d is %q", n, seq, p[:min(len(p), 20)])
			}
			if p != payload(NewGenerator(cfg), seq) {
				t.Fatalf("payload.bytes=%d: payload %d differs between two generators of the same config", n, seq)
			}
			seen[p] = true
		}
		if n >= 9 && len(seen) < 50 {
			t.Errorf("payload.bytes=%d: only %d distinct payloads in 50 records", n, len(seen))
		}
		other := cfg
		other.TaskIndex = 1
		if payload(g, 7) == payload(NewGenerator(other), 7) {
			t.Errorf("payload.bytes=%d: tasks 0 and 1 generate the same payload", n)
		}
		other = cfg
		other.Seed = 4
		if payload(g, 7) == payload(NewGenerator(other), 7) {
			t.Errorf("payload.bytes=%d: seeds 3 and 4 generate the same payload", n)
		}
	}
}

// TestKeys: keys are "key-<k>" with k below key.cardinality, from the
// generator's table (up to 4096 keys) or formatted per record, and the
// record's id is its sequence number.
func TestKeys(t *testing.T) {
	for _, keys := range []int64{1, 10, maxKeyTable, maxKeyTable + 1, 1 << 40} {
		g := NewGenerator(Config{Topic: "t", PayloadBytes: 4, Keys: keys})
		for seq := range int64(100) {
			r := g.Record(seq)
			k, ok := r.Key.(string)
			n, err := strconv.ParseInt(strings.TrimPrefix(k, "key-"), 10, 64)
			if !ok || !strings.HasPrefix(k, "key-") || err != nil || n < 0 || n >= keys {
				t.Fatalf("key.cardinality=%d: key %v", keys, r.Key)
			}
			v := r.Value.(*schema.Struct)
			if v.Get("key") != k || v.Get("id") != seq || r.Offset["seq"] != seq {
				t.Fatalf("key.cardinality=%d: record %d: value %v, offset %v", keys, seq, v, r.Offset)
			}
		}
	}
}

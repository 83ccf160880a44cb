package broker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(fi.Name(), ".log") {
			n += fi.Size()
		}
		return nil
	})
	return n
}

type kv struct {
	key, value string
	tombstone  bool
}

// readAll consumes a topic partition 0 from the start to its end.
func readAll(t *testing.T, b *Broker, topic string) map[int64]kv {
	t.Helper()
	ctx := testCtx(t)
	adm := kadm.NewClient(newClient(t, b))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := map[int64]kv{}
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Offset] = kv{string(r.Key), string(r.Value), r.Value == nil}
			done = done || r.Offset+1 >= end.Offset
		})
		if done {
			return out
		}
	}
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	manual := func(c *Config) { c.CleanerBackoff = time.Hour } // this test runs the cleaner by hand first
	fast := func(c *Config) { c.CleanerBackoff = 50 * time.Millisecond }
	b := startBroker(t, dir, manual)
	ratio, segMs, delRet := "0.01", "100", "3600000"
	createTopic(t, b, "state", 1, map[string]*string{
		"cleanup.policy": strPtr("compact"), "segment.ms": &segMs,
		"min.cleanable.dirty.ratio": &ratio, "delete.retention.ms": &delRet,
	})
	ctx := testCtx(t)
	p := newClient(t, b, kgo.DefaultProduceTopic("state"), kgo.ProducerBatchCompression(kgo.NoCompression()))

	// A keyless record is refused on a compacted topic.
	err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("no key")}).FirstErr()
	if err != kerr.InvalidRecord {
		t.Fatalf("keyless record: got %v, want INVALID_RECORD", err)
	}

	latest := map[string]int64{}
	want := map[string]kv{}
	for round := 0; round < 10; round++ {
		for k := 0; k < 20; k++ {
			key := fmt.Sprintf("key-%02d", k)
			r := &kgo.Record{Key: []byte(key), Value: []byte(fmt.Sprintf("v%d-%s", round, strings.Repeat("x", 500)))}
			if round == 9 && k < 5 {
				r.Value = nil // tombstones for five keys
			}
			res := p.ProduceSync(ctx, r)
			if err := res.FirstErr(); err != nil {
				t.Fatal(err)
			}
			latest[key] = res[0].Record.Offset
			want[key] = kv{key, string(r.Value), r.Value == nil}
		}
		time.Sleep(120 * time.Millisecond) // let segment.ms roll the segment
	}
	// A last record on another key puts everything above in closed segments.
	if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte("marker"), Value: []byte("m")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	partDir := filepath.Join(dir, "state-0")
	before := dirSize(t, partDir)

	check := func(wantTombstones bool) bool {
		got := readAll(t, b, "state")
		if len(got) != len(latest)+1-map[bool]int{true: 0, false: 5}[wantTombstones] {
			return false
		}
		for key, off := range latest {
			w := want[key]
			if w.tombstone && !wantTombstones {
				if _, ok := got[off]; ok {
					return false
				}
				continue
			}
			if got[off] != w {
				t.Fatalf("offset %d: got %+v, want %+v", off, got[off], w)
			}
		}
		return true
	}
	b.compactAll(ctx, time.Now())
	if !check(true) {
		t.Fatal("after compaction the log does not hold exactly the latest value per key")
	}
	after := dirSize(t, partDir)
	t.Logf("log bytes before compaction %d, after %d", before, after)
	if after*3 > before {
		t.Errorf("compaction should shrink the log well below a third: %d -> %d bytes", before, after)
	}

	// The compacted log survives a restart.
	b.Close()
	b = startBroker(t, dir, fast)
	if !check(true) {
		t.Fatal("compacted log changed across a restart")
	}

	// Tombstones go once delete.retention.ms has passed.
	adm := kadm.NewClient(newClient(t, b))
	zero := "0"
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "delete.retention.ms", Value: &zero},
		{Op: kadm.SetConfig, Name: "min.cleanable.dirty.ratio", Value: strPtr("0")}}, "state"); err != nil {
		t.Fatal(err)
	}
	// Force a new dirty segment so the background cleaner runs again.
	time.Sleep(120 * time.Millisecond)
	p = newClient(t, b, kgo.DefaultProduceTopic("state"))
	if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte("marker2"), Value: []byte("m")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	latest["marker"] = -1 // not checked by offset
	delete(latest, "marker")
	waitFor(t, 20*time.Second, "tombstones to be removed", func() bool {
		got := readAll(t, b, "state")
		for key, off := range latest {
			if want[key].tombstone {
				if _, ok := got[off]; ok {
					return false
				}
			} else if got[off] != want[key] {
				t.Fatalf("offset %d: got %+v, want %+v", off, got[off], want[key])
			}
		}
		return true
	})
}

func strPtr(s string) *string { return &s }

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

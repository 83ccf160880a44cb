package sdktest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Test-only connectors for the kit's own tests: an in-memory source with
// several source partitions and an in-memory sink, each with defects to
// switch on.

var (
	ids  atomic.Int64
	mu   sync.Mutex
	data = map[string]int{}      // source id → records seeded
	out  = map[string][]string{} // sink id → values written, in order
)

func newID(t *testing.T) string { return fmt.Sprintf("%s#%d", t.Name(), ids.Add(1)) }

func seedSource(_ *testing.T, cfg map[string]string, n int) {
	mu.Lock()
	defer mu.Unlock()
	data[cfg["id"]] += n
}

func readBack(_ *testing.T, cfg map[string]string) []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(out[cfg["id"]])
}

type sourceConfig struct {
	ID         string `key:"id" importance:"high" validate:"nonempty" doc:"Names the seeded records."`
	Partitions int32  `key:"partitions" default:"2" validate:"min=1" doc:"Number of source partitions; seeded record j belongs to partition j mod partitions."`
	Interleave string `key:"interleave" default:"alternate" validate:"enum=alternate|blocks" doc:"alternate: one record of each partition in turn; blocks: each Poll reads one partition."`
	Defect     string `key:"defect" default:"none" validate:"enum=none|lose|repeat|lose-last|repeat-first" doc:"After a restart: lose skips the first record of the last resumed partition, repeat emits its committed record again, lose-last never emits the last partition's last record, repeat-first repeats the first partition's committed record."`
}

func testSource() sdk.Connector {
	return sdk.SourceConnector[sourceConfig]{
		Class:   "dev.tributary.sdktest.TestSourceConnector",
		Version: "0.1.0",
		NewTask: func(c sourceConfig) sdk.SourceTask { return &sourceTask{cfg: c} },
	}
}

type sourceTask struct {
	cfg     sourceConfig
	next    []int64
	resumed []bool
	turn    int
	short   int // partition whose last record is never emitted, or -1
}

func partition(i int) sdk.Partition { return sdk.Partition{"p": fmt.Sprintf("p%d", i)} }

func (t *sourceTask) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	n := int(t.cfg.Partitions)
	t.next, t.resumed, t.short = make([]int64, n), make([]bool, n), -1
	for i := range n {
		off, err := tc.Offset(ctx, partition(i))
		if err != nil {
			return err
		}
		if seq, ok := off.Int64("n"); ok {
			t.next[i], t.resumed[i] = seq+1, true
		}
	}
	lastResumed := -1
	for i := range n {
		if t.resumed[i] {
			lastResumed = i
		}
	}
	switch {
	case lastResumed < 0:
	case t.cfg.Defect == "lose":
		t.next[lastResumed]++
	case t.cfg.Defect == "repeat":
		t.next[lastResumed]--
	case t.cfg.Defect == "lose-last":
		t.short = n - 1
	case t.cfg.Defect == "repeat-first" && t.resumed[0]:
		t.next[0]--
	}
	return nil
}

// limit is how many records partition i has.
func (t *sourceTask) limit(i int) int64 {
	mu.Lock()
	total := int64(data[t.cfg.ID])
	mu.Unlock()
	p := int64(t.cfg.Partitions)
	n := max(0, (total-int64(i)+p-1)/p)
	if i == t.short {
		n = max(0, n-1)
	}
	return n
}

func (t *sourceTask) record(i int) sdk.SourceRecord {
	seq := t.next[i]
	t.next[i]++
	return sdk.SourceRecord{Partition: partition(i), Offset: sdk.Offset{"n": seq}, Topic: "sdktest",
		ValueSchema: schema.String, Value: fmt.Sprintf("p%d-%d", i, seq)}
}

func (t *sourceTask) fill(max int) []sdk.SourceRecord {
	var recs []sdk.SourceRecord
	n := len(t.next)
	if t.cfg.Interleave == "blocks" {
		for range n {
			i := t.turn
			t.turn = (t.turn + 1) % n
			if t.next[i] < t.limit(i) {
				for t.next[i] < t.limit(i) && len(recs) < max {
					recs = append(recs, t.record(i))
				}
				break
			}
		}
		return recs
	}
	for len(recs) < max {
		emitted := false
		for range n {
			i := t.turn
			t.turn = (t.turn + 1) % n
			if t.next[i] < t.limit(i) {
				recs = append(recs, t.record(i))
				emitted = true
				break
			}
		}
		if !emitted {
			break
		}
	}
	return recs
}

func (t *sourceTask) Poll(ctx context.Context, max int) ([]sdk.SourceRecord, error) {
	for {
		if recs := t.fill(max); len(recs) > 0 {
			return recs, nil
		}
		timer := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil
		case <-timer.C:
		}
	}
}

func (t *sourceTask) Close(context.Context) error { return nil }

type sinkConfig struct {
	ID   string `key:"id" importance:"high" validate:"nonempty" doc:"Names the in-memory external system."`
	Mode string `key:"mode" default:"sync" validate:"enum=sync|async|none|partial|liar" doc:"sync: write in Put, report everything; async: write a few records per Flush once 100 ms passed, report what is written; none: write and report nothing; partial: write in Put, report only topic sdktest-a; liar: report everything, write nothing."`
}

func testSink() sdk.Connector {
	return sdk.SinkConnector[sinkConfig]{
		Class:   "dev.tributary.sdktest.TestSinkConnector",
		Version: "0.1.0",
		NewTask: func(c sinkConfig) sdk.SinkTask { return &sinkTask{cfg: c} },
	}
}

type sinkTask struct {
	cfg      sinkConfig
	buffered []sdk.SinkRecord
	since    time.Time
	written  map[sdk.TopicPartition]int64 // offset after the last record written
}

func (t *sinkTask) Open(context.Context, sdk.SinkTaskContext) error {
	t.written = map[sdk.TopicPartition]int64{}
	return nil
}

func (t *sinkTask) write(recs []sdk.SinkRecord) {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range recs {
		out[t.cfg.ID] = append(out[t.cfg.ID], r.Value.(string))
		t.written[r.TopicPartition()] = r.Offset + 1
	}
}

func (t *sinkTask) Put(_ context.Context, recs []sdk.SinkRecord) error {
	switch t.cfg.Mode {
	case "sync", "partial":
		t.write(recs)
	case "async":
		if len(t.buffered) == 0 {
			t.since = time.Now()
		}
		t.buffered = append(t.buffered, recs...)
	}
	return nil
}

func (t *sinkTask) Flush(_ context.Context, given map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	switch t.cfg.Mode {
	case "sync", "liar":
		return given, nil
	case "none":
		return nil, nil
	case "partial":
		durable := map[sdk.TopicPartition]int64{}
		for tp, o := range given {
			if tp.Topic == "sdktest-a" {
				durable[tp] = o
			}
		}
		return durable, nil
	}
	// async: nothing for 100 ms, then five records per Flush.
	if len(t.buffered) > 0 && time.Since(t.since) >= 100*time.Millisecond {
		n := min(5, len(t.buffered))
		t.write(t.buffered[:n])
		t.buffered = t.buffered[n:]
	}
	durable := map[sdk.TopicPartition]int64{}
	for tp, o := range given {
		if w, ok := t.written[tp]; ok {
			durable[tp] = min(w, o)
		}
	}
	return durable, nil
}

func (t *sinkTask) Close(context.Context) error { return nil }

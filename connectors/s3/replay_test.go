package s3

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// replayContext is the SinkTaskContext of a task run by hand.
type replayContext struct{}

func (replayContext) Info() sdk.TaskInfo                  { return sdk.TaskInfo{Connector: "lake"} }
func (replayContext) Rewind(map[sdk.TopicPartition]int64) {}
func (replayContext) Logger() *slog.Logger                { return slog.New(slog.DiscardHandler) }

// A task that uploaded a file on its rotation schedule and died before its
// offsets were committed is replayed from the file's first offset; the
// replay's file of the same name holds more records (the schedule fell
// elsewhere). The store must end up with every record: the replayed
// object replaces the smaller one (a conditional create that kept it lost
// the difference: the lake test's "4 missing" in CI).
func TestReplayAfterScheduledRotationKeepsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tp := sdk.TopicPartition{Topic: "orders", Partition: 0}
	records := func(from, to int64) []sdk.SinkRecord {
		var rs []sdk.SinkRecord
		for o := from; o < to; o++ {
			rs = append(rs, sdk.SinkRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: o,
				ValueSchema: schema.String, Value: fmt.Sprintf("r%d", o), Timestamp: time.Now()})
		}
		return rs
	}
	open := func() *sinkTask {
		st, err := Connector().(connector).NewSinkTask(map[string]string{"store.url": "file://" + dir, "topics": tp.Topic,
			"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "10", "rotate.schedule.interval.ms": "1000", "timezone": "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		task := st.(*sinkTask)
		if err := task.Open(ctx, replayContext{}); err != nil {
			t.Fatal(err)
		}
		if err := task.Assigned(ctx, []sdk.TopicPartition{tp}); err != nil {
			t.Fatal(err)
		}
		return task
	}

	// The first task: four records, then the schedule rotates them into
	// orders+0+0000000000 and they are uploaded; the task dies before
	// the worker commits offset 4.
	first := open()
	if err := first.Put(ctx, records(0, 4)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past the next scheduled rotation
	if got, err := first.Flush(ctx, map[sdk.TopicPartition]int64{tp: 4}); err != nil || got[tp] != 4 {
		t.Fatalf("first Flush = %v, %v; want offset 4 durable", got, err)
	}
	first.Close(ctx)

	// The replay from offset 0: ten records, rotated by flush.size into a
	// file of the same name.
	second := open()
	defer second.Close(ctx)
	if err := second.Put(ctx, records(0, 10)); err != nil {
		t.Fatal(err)
	}
	if got, err := second.Flush(ctx, map[sdk.TopicPartition]int64{tp: 10}); err != nil || got[tp] != 10 {
		t.Fatalf("replay Flush = %v, %v; want offset 10 durable", got, err)
	}

	st := &fileStore{root: dir}
	keys, err := st.list(ctx, "topics/")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		b, err := st.get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			seen[strings.Trim(l, `"`)] = true
		}
	}
	var missing []string
	for o := range 10 {
		if r := fmt.Sprintf("r%d", o); !seen[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		slices.Sort(keys)
		t.Fatalf("records %v are in no object after the replay (objects %v)", missing, keys)
	}
}

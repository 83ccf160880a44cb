package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

const rewindingSinkClass = "test.RewindingSink"

type rewindingConfig struct {
	File string `key:"file" doc:"Where delivered offsets are appended."`
	At   int64  `key:"rewind.at" doc:"The first time a record at or past this offset arrives, rewind to it."`
}

// rewindingSink writes the partition and offset of every record it keeps,
// one per line.
// The first time a batch reaches offset At it keeps the records before it,
// drops the rest and asks to be given them again from At (Kafka Connect's
// SinkTaskContext.offset), as a sink does whose write failed half way.
func rewindingSink() sdk.Connector {
	return sdk.SinkConnector[rewindingConfig]{
		Class:   rewindingSinkClass,
		Version: "0.0.1",
		NewTask: func(c rewindingConfig) sdk.SinkTask { return &rewindingTask{cfg: c} },
	}
}

type rewindingTask struct {
	cfg     rewindingConfig
	tc      sdk.SinkTaskContext
	rewound bool
	out     *os.File
}

func (t *rewindingTask) Open(_ context.Context, tc sdk.SinkTaskContext) error {
	t.tc = tc
	var err error
	t.out, err = os.OpenFile(t.cfg.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	return err
}

func (t *rewindingTask) Put(_ context.Context, recs []sdk.SinkRecord) error {
	for _, r := range recs {
		if !t.rewound && r.Offset >= t.cfg.At {
			t.rewound = true
			// Let a pipelining host send its next batches (carrying
			// records past the rewind) before the request reaches it.
			time.Sleep(200 * time.Millisecond)
			t.tc.Rewind(map[sdk.TopicPartition]int64{{Topic: r.Topic, Partition: r.Partition}: t.cfg.At})
			return nil
		}
		if _, err := fmt.Fprintf(t.out, "%d:%d\n", r.Partition, r.Offset); err != nil {
			return err
		}
	}
	return nil
}

func (t *rewindingTask) Flush(_ context.Context, o map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	return o, nil
}

func (t *rewindingTask) Close(context.Context) error { return t.out.Close() }

// TestSinkRewind: a task's rewind request takes effect before anything
// past it is delivered, also when the task is a plugin process whose Put
// returns before the batch is processed (the runner converts the next
// batch meanwhile and must drop what it holds of the rewound partition).
// The output is every offset of every partition once, in order: the
// rewound partition's and the others', whose records travel in the same
// batches.
func TestSinkRewind(t *testing.T) {
	const n, at = 600, 55
	for _, kind := range []string{"inprocess", "plugin"} {
		t.Run(kind, func(t *testing.T) {
			addr := startBroker(t)
			createTopic(t, addr, "in", 3)
			produceLines(t, addr, "in", 0, n)
			var l plugins.Loader
			if kind == "plugin" {
				l = pluginHost(t)
			} else {
				in, err := plugins.NewInProcess(quietLogger(), rewindingSink())
				if err != nil {
					t.Fatal(err)
				}
				l = in
			}
			out := filepath.Join(t.TempDir(), "offsets.txt")
			info := sdk.TaskInfo{Connector: "rewind"}
			pt, err := l.StartSinkTask(context.Background(), rewindingSinkClass, info,
				map[string]string{"file": out, "rewind.at": strconv.Itoa(at), "topics": "in"})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewSink(SinkConfig{Info: info, Task: pt, Topics: []string{"in"}, Key: stringConv(t), Value: stringConv(t),
				ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr), kgo.FetchMaxBytes(4 << 10)}, MaxPollRecords: 10,
				Status: &statuses{}, FlushInterval: 20 * time.Millisecond, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			waitFor(t, 20*time.Second, "every record written", func() bool { return len(readLines(t, out)) >= n })
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			next := map[string]int{} // partition -> next offset expected
			for i, line := range readLines(t, out) {
				p, off, _ := strings.Cut(line, ":")
				if off != strconv.Itoa(next[p]) {
					t.Fatalf("line %d is partition %s offset %s, want offset %d (a record was lost, repeated or delivered past a rewind)", i, p, off, next[p])
				}
				next[p]++
			}
			total := 0
			for _, c := range next {
				total += c
			}
			if total != n {
				t.Fatalf("%d records written, want %d (%v)", total, n, next)
			}
			if c := committedTotal(t, addr, "connect-rewind"); c != n {
				t.Errorf("committed %d, want %d", c, n)
			}
		})
	}
}

package task

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// produceValues writes one record per value to topic, keyed by its index.
func produceValues(t testing.TB, addr, topic string, values []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i, v := range values {
		r := &kgo.Record{Key: fmt.Append(nil, i), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// With errors.tolerance=all a sink skips the records its converter refuses,
// writes them as read to the dead letter queue (with Kafka Connect's
// context headers), and commits past them; without it the first one fails
// the task (TestSinkConfigErrors and the worker tests cover that).
func TestSinkToleratesRecordsItCannotConvert(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	values := []string{`"good-0"`, `{not json`, `"good-1"`, `[1,`, `"good-2"`}
	produceValues(t, addr, "in", values)
	out := filepath.Join(t.TempDir(), "out.txt")
	r, _, st := startFileSink(t, addr, "tol", 0, out, func(c *SinkConfig) {
		c.Value = jsonConv(t, false)
		c.Errors = ErrorPolicy{TolerateAll: true, Log: true, LogMessages: true, DLQTopic: "dlq", DLQReplication: 1,
			DLQContextHeaders: true, ValueConverter: "org.apache.kafka.connect.json.JsonConverter"}
	})
	waitFor(t, 15*time.Second, "the good records", func() bool { return len(readLines(t, out)) == 3 })
	if got := readLines(t, out); !slices.Equal(got, []string{"good-0", "good-1", "good-2"}) {
		t.Errorf("sink wrote %q", got)
	}
	waitFor(t, 15*time.Second, "all five offsets committed", func() bool { return committedTotal(t, addr, "connect-tol") == 5 })
	dlq := consumeAll(t, addr, "dlq", 2)
	for i, want := range []struct {
		value  string
		offset string
	}{{`{not json`, "1"}, {`[1,`, "3"}} {
		kr := dlq[i]
		h := map[string]string{}
		for _, rh := range kr.Headers {
			h[rh.Key] = string(rh.Value)
		}
		if string(kr.Value) != want.value || string(kr.Key) != want.offset || h["h"] != "x" {
			t.Errorf("dlq record %d: key %q value %q headers %v", i, kr.Key, kr.Value, h)
		}
		for k, v := range map[string]string{"topic": "in", "partition": "0", "offset": want.offset, "connector.name": "tol",
			"task.id": "0", "stage": "VALUE_CONVERTER", "class.name": "org.apache.kafka.connect.json.JsonConverter",
			"exception.class.name": "org.apache.kafka.connect.errors.DataException"} {
			if h["__connect.errors."+k] != v {
				t.Errorf("dlq record %d: header __connect.errors.%s = %q, want %q", i, k, h["__connect.errors."+k], v)
			}
		}
		if !strings.Contains(h["__connect.errors.exception.message"], "convert record in-0@"+want.offset) {
			t.Errorf("dlq record %d: exception message %q", i, h["__connect.errors.exception.message"])
		}
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
	if want := []State{StateRunning}; fmt.Sprint(st.all) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", st.all, want)
	}
}

// A dead letter queue that cannot be created (a replication factor the
// cluster cannot give) stops the task from starting, as in Kafka Connect.
func TestSinkDeadLetterQueueMustBeCreatable(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	pt, err := loader(t).StartSinkTask(context.Background(), "FileStreamSink", sdk.TaskInfo{Connector: "dlq3"},
		map[string]string{"file": filepath.Join(t.TempDir(), "o"), "topics": "in"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pt.Stop(stopCtx(t)) }()
	_, err = NewSink(SinkConfig{Info: sdk.TaskInfo{Connector: "dlq3"}, Task: pt, Topics: []string{"in"}, Key: stringConv(t), Value: stringConv(t),
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Logger: quietLogger(),
		Errors: ErrorPolicy{TolerateAll: true, DLQTopic: "dlq", DLQReplication: 3}})
	if err == nil || !strings.Contains(err.Error(), "could not initialize dead letter queue with topic=dlq") {
		t.Fatalf("NewSink: %v", err)
	}
}

// With errors.tolerance=all a source skips a record its converter refuses
// and commits its source offset as if it had been produced (Kafka
// Connect's recordDropped); without it the record fails the task.
func TestSourceToleratesRecordsItCannotConvert(t *testing.T) {
	for _, tolerate := range []bool{true, false} {
		t.Run(fmt.Sprintf("tolerate=%v", tolerate), func(t *testing.T) {
			addr := startBroker(t)
			createTopic(t, addr, "t", 1)
			p := sdk.Partition{"p": "a"}
			task := &scriptedTask{batches: [][]sdk.SourceRecord{{
				{Partition: p, Offset: sdk.Offset{"n": int64(1)}, Topic: "t", Value: "a"},
				{Partition: p, Offset: sdk.Offset{"n": int64(2)}, Topic: "t", ValueSchema: schema.Int32, Value: "not an int32"},
				{Partition: p, Offset: sdk.Offset{"n": int64(3)}, Topic: "t", Value: "c"},
			}}}
			st, offsets := &statuses{}, &memOffsets{}
			r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: task, Key: jsonConv(t, false),
				Value: jsonConv(t, true), ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets, Status: st,
				FlushInterval: 50 * time.Millisecond, Logger: quietLogger(), Errors: ErrorPolicy{TolerateAll: tolerate, Log: true}})
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			if !tolerate {
				<-r.Done()
				if st.last() != StateFailed || st.err == nil || !strings.Contains(st.err.Message, "convert value for topic t") {
					t.Fatalf("status %v %v", st.all, st.err)
				}
				_ = r.Stop(stopCtx(t))
				return
			}
			recs := consumeAll(t, addr, "t", 2)
			waitFor(t, 15*time.Second, "offset 3 committed", func() bool {
				offsets.mu.Lock()
				defer offsets.mu.Unlock()
				n, _ := offsets.latest[partitionKey(p)].Int64("n")
				return n == 3
			})
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kr := range recs {
				got = append(got, string(kr.Value))
			}
			if len(got) != 2 || !strings.Contains(got[0], `"payload":"a"`) || !strings.Contains(got[1], `"payload":"c"`) {
				t.Errorf("produced %q, want the payloads a and c", got)
			}
			if st.last() == StateFailed {
				t.Errorf("task failed: %v", st.err)
			}
		})
	}
}

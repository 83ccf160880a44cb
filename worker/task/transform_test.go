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
	"github.com/tributary-dev/tributary/worker/transform"
)

func chain(t testing.TB, props map[string]string) *transform.Chain {
	t.Helper()
	c, err := transform.New(props)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A sink's transformations run after its converters: a record a
// transformation refuses is, with errors.tolerance=all, written as read to
// the dead letter queue with Kafka Connect's TRANSFORMATION stage and the
// transformation's class, and committed past; the others reach the task
// transformed (here renamed: the file sink sees the new topic's records).
func TestSinkToleratesRecordsATransformationRefuses(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "in", 1)
	produceValues(t, addr, "in", []string{`{"n":1}`, `"not a map"`, `{"n":2}`})
	out := filepath.Join(t.TempDir(), "out.txt")
	c := chain(t, map[string]string{"transforms": "ins,hoist",
		"transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value", "transforms.ins.static.field": "tag",
		"transforms.ins.static.value": "x",
		"transforms.hoist.type":       "org.apache.kafka.connect.transforms.ExtractField$Value", "transforms.hoist.field": "tag"})
	r, _, _ := startFileSink(t, addr, "tr", 0, out, func(c2 *SinkConfig) {
		c2.Value = jsonConv(t, false)
		c2.Transform = c.Sink
		c2.Errors = ErrorPolicy{TolerateAll: true, DLQTopic: "dlq", DLQReplication: 1, DLQContextHeaders: true,
			ValueConverter: "org.apache.kafka.connect.json.JsonConverter"}
	})
	waitFor(t, 15*time.Second, "the two good records", func() bool { return len(readLines(t, out)) == 2 })
	if got := readLines(t, out); !slices.Equal(got, []string{"x", "x"}) {
		t.Errorf("sink wrote %q, want the extracted tags", got)
	}
	waitFor(t, 15*time.Second, "all three offsets committed", func() bool { return committedTotal(t, addr, "connect-tr") == 3 })
	dlq := consumeAll(t, addr, "dlq", 1)
	h := map[string]string{}
	for _, rh := range dlq[0].Headers {
		h[rh.Key] = string(rh.Value)
	}
	if string(dlq[0].Value) != `"not a map"` {
		t.Errorf("dlq value %q", dlq[0].Value)
	}
	for k, v := range map[string]string{"stage": "TRANSFORMATION", "class.name": "org.apache.kafka.connect.transforms.InsertField$Value",
		"exception.class.name": "org.apache.kafka.connect.errors.DataException", "offset": "1"} {
		if h["__connect.errors."+k] != v {
			t.Errorf("header __connect.errors.%s = %q, want %q", k, h["__connect.errors."+k], v)
		}
	}
	if msg := h["__connect.errors.exception.message"]; !strings.Contains(msg, "Only Map objects supported in absence of schema for [field insertion], found: java.lang.String") {
		t.Errorf("exception message %q", msg)
	}
	if err := r.Stop(stopCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// A source's transformations run before its converters: they rename
// topics, a predicate picks the records, a dropped record's offset still
// advances, and a record a transformation refuses fails the task unless
// errors.tolerance=all skips it (its offset committed).
func TestSourceTransformations(t *testing.T) {
	for _, tolerate := range []bool{false, true} {
		t.Run(fmt.Sprintf("tolerate=%v", tolerate), func(t *testing.T) {
			addr := startBroker(t)
			for _, tp := range []string{"db.users", "routed.users", "db.skip"} {
				createTopic(t, addr, tp, 1)
			}
			p := sdk.Partition{"p": "a"}
			task := &scriptedTask{batches: [][]sdk.SourceRecord{{
				{Partition: p, Offset: sdk.Offset{"n": int64(1)}, Topic: "db.users", Value: map[string]any{"id": int64(1)}},
				{Partition: p, Offset: sdk.Offset{"n": int64(2)}, Topic: "db.skip", Value: map[string]any{"id": int64(2)}},
				{Partition: p, Offset: sdk.Offset{"n": int64(3)}, Topic: "db.users", Value: "refused"},
				{Partition: p, Offset: sdk.Offset{"n": int64(4)}, Topic: "db.users", Value: map[string]any{"id": int64(4)}},
			}}}
			c := chain(t, map[string]string{"transforms": "drop,route,mask",
				"transforms.drop.type": "org.apache.kafka.connect.transforms.Filter", "transforms.drop.predicate": "skip",
				"transforms.route.type":  "org.apache.kafka.connect.transforms.RegexRouter",
				"transforms.route.regex": `db\.(.*)`, "transforms.route.replacement": "routed.$1",
				"transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value", "transforms.mask.fields": "id",
				"transforms.mask.predicate": "skip", "transforms.mask.negate": "true",
				"predicates": "skip", "predicates.skip.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
				"predicates.skip.pattern": `.*\.skip`})
			st, offsets := &statuses{}, &memOffsets{}
			r, err := NewSource(SourceConfig{Info: sdk.TaskInfo{Connector: "c"}, Task: task, Key: jsonConv(t, false),
				Value: jsonConv(t, false), Transform: c.Source, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Offsets: offsets,
				Status: st, FlushInterval: 50 * time.Millisecond, Logger: quietLogger(), Errors: ErrorPolicy{TolerateAll: tolerate}})
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			if !tolerate {
				<-r.Done()
				if st.last() != StateFailed || st.err == nil || !strings.Contains(st.err.Message, "transformation mask (org.apache.kafka.connect.transforms.MaskField$Value): Only Map objects supported") {
					t.Fatalf("status %v %v", st.all, st.err)
				}
				_ = r.Stop(stopCtx(t))
				return
			}
			recs := consumeAll(t, addr, "routed.users", 2)
			waitFor(t, 15*time.Second, "offset 4 committed", func() bool {
				offsets.mu.Lock()
				defer offsets.mu.Unlock()
				n, _ := offsets.latest[partitionKey(p)].Int64("n")
				return n == 4
			})
			if err := r.Stop(stopCtx(t)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kr := range recs {
				got = append(got, string(kr.Value))
			}
			if !slices.Equal(got, []string{`{"id":0}`, `{"id":0}`}) {
				t.Errorf("routed.users holds %q, want the two masked records", got)
			}
			for _, tp := range []string{"db.skip", "db.users"} {
				if n, err := endOffset(context.Background(), admin(t, addr), tp); err != nil || n != 0 {
					t.Errorf("%s holds %d records (%v), want every record routed or dropped", tp, n, err)
				}
			}
		})
	}
}

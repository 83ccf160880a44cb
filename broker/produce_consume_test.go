package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestProduceConsumeAcrossPartitions(t *testing.T) {
	b := startBroker(t, "")
	createTopic(t, b, "orders", 4, nil)
	ctx := testCtx(t)
	p := newClient(t, b, kgo.DefaultProduceTopic("orders"))
	const n = 5000
	for i := 0; i < n; i++ {
		r := &kgo.Record{
			Key:     []byte(fmt.Sprintf("key-%d", i%37)),
			Value:   []byte(fmt.Sprintf("value-%d", i)),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}},
		}
		p.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, b, kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	lastOffset := map[int32]int64{}
	for len(seen) < n {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v (have %d of %d)", err, len(seen), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Errorf("duplicate %s", r.Value)
			}
			seen[string(r.Value)] = true
			var i int
			fmt.Sscanf(string(r.Value), "value-%d", &i)
			if string(r.Key) != fmt.Sprintf("key-%d", i%37) {
				t.Errorf("record %d: key %q", i, r.Key)
			}
			if len(r.Headers) != 1 || r.Headers[0].Key != "h" || string(r.Headers[0].Value) != fmt.Sprint(i) {
				t.Errorf("record %d: headers %v", i, r.Headers)
			}
			if last, ok := lastOffset[r.Partition]; ok && r.Offset != last+1 {
				t.Errorf("partition %d: offset %d after %d", r.Partition, r.Offset, last)
			}
			lastOffset[r.Partition] = r.Offset
		})
	}
	if len(lastOffset) != 4 {
		t.Errorf("records landed in %d partitions, want 4", len(lastOffset))
	}
}

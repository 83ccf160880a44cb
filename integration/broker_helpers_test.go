package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newClient returns a franz-go client for bootstrap, closed in t.Cleanup.
func newClient(t *testing.T, bootstrap string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

type kadmListedOffset = kadm.ListedOffset

// newAdmin returns a kadm client for bootstrap.
func newAdmin(t *testing.T, bootstrap string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(newClient(t, bootstrap))
}

// createTopic creates topic with parts partitions and configs, failing t on error.
func createTopic(ctx context.Context, t *testing.T, bootstrap, topic string, parts int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, bootstrap))
	resp, err := adm.CreateTopic(ctx, parts, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s at %s: %v", topic, bootstrap, err)
	}
	// Apache Kafka answers CreateTopics before its broker hosts the new
	// partitions (KRaft propagates them a moment later); a request to a
	// partition in between fails with UNKNOWN_TOPIC_OR_PARTITION. Wait
	// until every partition answers ListOffsets.
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil && ends.Error() == nil {
			n := 0
			ends.Each(func(kadm.ListedOffset) { n++ })
			if n == int(parts) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s at %s: partitions not ready: %v %v", topic, bootstrap, err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// consumeRecords reads n records of topic from the start with a fresh
// franz-go consumer (read_uncommitted unless opts say otherwise).
func consumeRecords(ctx context.Context, t *testing.T, bootstrap, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl := newClient(t, bootstrap, append([]kgo.Opt{kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s at %s: got %d of %d records: %v", topic, bootstrap, len(got), n, err)
		}
		if err := fs.Err(); err != nil {
			t.Fatalf("consume %s at %s: %v", topic, bootstrap, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	return got
}

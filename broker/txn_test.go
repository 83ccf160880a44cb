package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProduce runs one transaction of n records on topic and ends it.
func txnProduce(ctx context.Context, t *testing.T, cl *kgo.Client, topic, prefix string, n int, commit bool) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(prefix), Value: fmt.Appendf(nil, "%s-%d", prefix, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce in transaction: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit=%v): %v", commit, err)
	}
}

func readValues(ctx context.Context, t *testing.T, b *Broker, topic string, want int, opts ...kgo.Opt) []string {
	t.Helper()
	cl := newClient(t, b, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	var got []string
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Nothing more arrives.
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	fs := cl.PollFetches(short)
	fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	return got
}

func TestTransactionsCommitAbortIsolation(t *testing.T) {
	b := startBroker(t, "")
	createTopic(t, b, "tx", 3, nil)
	ctx := testCtx(t)
	cl := newClient(t, b, kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("tx"))
	txnProduce(ctx, t, cl, "tx", "a", 10, true)
	txnProduce(ctx, t, cl, "tx", "b", 5, false)
	txnProduce(ctx, t, cl, "tx", "c", 3, true)

	committed := readValues(ctx, t, b, "tx", 13, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if len(committed) != 13 {
		t.Fatalf("read_committed got %d records %v, want 13", len(committed), committed)
	}
	for _, v := range committed {
		if v[0] == 'b' {
			t.Fatalf("read_committed saw aborted record %s", v)
		}
	}
	if all := readValues(ctx, t, b, "tx", 18); len(all) != 18 {
		t.Fatalf("read_uncommitted got %d records, want 18", len(all))
	}

	// LSO equals HWM once every transaction ended.
	adm := kmsg.NewPtrListOffsetsRequest()
	adm.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "tx"
	for p := range int32(3) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	adm.Topics = append(adm.Topics, rt)
	resp, err := adm.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[0].Partitions {
		if hwm := b.partition("tx", p.Partition).log.HighWatermark(); p.Offset != hwm {
			t.Errorf("partition %d: read_committed latest %d, high watermark %d", p.Partition, p.Offset, hwm)
		}
	}

	// DescribeTransactions and ListTransactions.
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"tx-1", "nope"}
	dresp, err := dt.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if s := dresp.TransactionStates; len(s) != 2 || s[0].State != "CompleteCommit" || s[1].ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Errorf("DescribeTransactions: %+v", s)
	}
	lt := kmsg.NewPtrListTransactionsRequest()
	lresp, err := lt.RequestWith(ctx, cl)
	if err != nil || len(lresp.TransactionStates) != 1 || lresp.TransactionStates[0].TransactionalID != "tx-1" {
		t.Errorf("ListTransactions: %v %+v", err, lresp)
	}
}

func TestTransactionsFencingAndTimeout(t *testing.T) {
	b := startBroker(t, "", func(c *Config) { c.TransactionAbortInterval = 100 * time.Millisecond })
	createTopic(t, b, "fence", 1, nil)
	ctx := testCtx(t)

	zombie := newClient(t, b, kgo.TransactionalID("f"), kgo.DefaultProduceTopic("fence"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, kgo.StringRecord("zombie")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A new producer with the same transactional id fences the zombie and
	// aborts its transaction.
	fresh := newClient(t, b, kgo.TransactionalID("f"), kgo.DefaultProduceTopic("fence"))
	txnProduce(ctx, t, fresh, "fence", "fresh", 2, true)
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("zombie committed after being fenced")
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.InvalidProducerIDMapping) {
		t.Logf("zombie commit failed with %v", err)
	}
	got := readValues(ctx, t, b, "fence", 2, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if len(got) != 2 {
		t.Fatalf("read_committed after fencing: %v, want the fresh producer's 2 records", got)
	}

	// Transaction timeout: the coordinator aborts it.
	slow := newClient(t, b, kgo.TransactionalID("slow"), kgo.DefaultProduceTopic("fence"), kgo.TransactionTimeout(time.Second))
	if err := slow.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := slow.ProduceSync(ctx, kgo.StringRecord("late")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	l := b.partition("fence", 0).log
	if l.LastStable() == l.HighWatermark() {
		t.Fatal("LSO did not stop at the open transaction")
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.LastStable() != l.HighWatermark() {
		if time.Now().After(deadline) {
			t.Fatalf("timed-out transaction not aborted: LSO %d HWM %d", l.LastStable(), l.HighWatermark())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := slow.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("commit of a timed-out transaction succeeded")
	}
	if got := readValues(ctx, t, b, "fence", 2, kgo.FetchIsolationLevel(kgo.ReadCommitted())); len(got) != 2 {
		t.Fatalf("read_committed after the timeout: %v", got)
	}
	if got := readValues(ctx, t, b, "fence", 4); len(got) != 4 {
		t.Fatalf("read_uncommitted after the timeout: %v, want 4 records", got)
	}
}

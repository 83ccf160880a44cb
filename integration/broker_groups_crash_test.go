package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupOffsetsSurviveKill9 commits offsets (as a group consumer and as a
// stream of simple commits), kills the broker with SIGKILL while commits are
// in flight, restarts it on the same data and checks that every acknowledged
// commit is there and that the group consumer resumes where it committed.
func TestGroupOffsetsSurviveKill9(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	port := harness.FreePort(t)
	overrides := []string{"group.initial.rebalance.delay.ms=100", "group.min.session.timeout.ms=100"}
	p := harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	createTopicAt(t, p.Addr(), "crash-offsets", 2)

	prod := crashClient(t, p.Addr(), kgo.DefaultProduceTopic("crash-offsets"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 40; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// A group consumer reads 20 records and commits them.
	groupOpts := []kgo.Opt{kgo.ConsumerGroup("crash-group"), kgo.ConsumeTopics("crash-offsets"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.SessionTimeout(4 * time.Second), kgo.HeartbeatInterval(200 * time.Millisecond)}
	cons := crashClient(t, p.Addr(), groupOpts...)
	committed := commitPolled(ctx, t, cons, pollGroup(ctx, t, cons, 20, nil))

	// Simple commits keep going while the broker is killed.
	adm := kadm.NewClient(crashClient(t, p.Addr()))
	var acked atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cctx, ccancel := context.WithTimeout(context.Background(), time.Second)
			resp, err := adm.CommitOffsets(cctx, "crash-simple", kadm.OffsetsFromRecords(kgo.Record{Topic: "crash-offsets", Partition: 0, Offset: i - 1}))
			ccancel()
			if err == nil && resp.Ok() {
				acked.Store(i)
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	p.Kill()
	close(stop)
	<-done
	cons.Close()
	if acked.Load() == 0 {
		t.Fatal("no simple commit was acknowledged before the kill")
	}

	p = harness.StartBrokerProcess(t, bin, dir, port, overrides...)
	adm = kadm.NewClient(crashClient(t, p.Addr()))
	offs, err := adm.FetchOffsets(ctx, "crash-simple")
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup("crash-offsets", 0)
	if !ok || o.At < acked.Load() {
		t.Fatalf("after kill -9 the simple group's offset is %+v, but %d was acknowledged", o, acked.Load())
	}
	t.Logf("%d simple commits acknowledged before the kill; recovered offset %d", acked.Load(), o.At)

	offs, err = adm.FetchOffsets(ctx, "crash-group")
	if err != nil {
		t.Fatal(err)
	}
	for part, want := range committed {
		if o, _ := offs.Lookup("crash-offsets", part); o.At != want {
			t.Fatalf("partition %d: recovered group offset %d, want %d", part, o.At, want)
		}
	}
	// The group consumer resumes after what it committed.
	cons = crashClient(t, p.Addr(), groupOpts...)
	pollGroup(ctx, t, cons, 20, committed)
}

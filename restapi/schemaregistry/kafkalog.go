package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaLogConfig configures a KafkaLog.
type KafkaLogConfig struct {
	// Brokers is the bootstrap list.
	Brokers []string
	// Topic is the schemas topic [_schemas] (Confluent's kafkastore.topic).
	Topic string
	// ReplicationFactor of the topic when it is created [-1: the broker's
	// default] (kafkastore.topic.replication.factor).
	ReplicationFactor int16
	// WriterID names the writer: instances with the same WriterID fence one
	// another, so at most one appends at a time [schema-registry]
	// (Confluent's schema.registry.group.id). It is the Kafka transactional
	// id "tributary-schema-registry-" + WriterID + "-" + Topic.
	WriterID string
	// ClientOpts are added to every franz-go client (TLS, SASL).
	ClientOpts []kgo.Opt
	// Logger receives the reader's warnings.
	Logger *slog.Logger
}

// KafkaLog is the _schemas topic: a reader that applies every committed
// record to the registry's state in offset order, and a transactional
// writer.
//
// Writes are linearizable across instances: a writer's transactional id is
// shared, so a writer that starts fences the others (Kafka aborts their
// open transactions and refuses their commits). A write is: catch the reader
// up to the end of the topic, decide, append the records in a transaction,
// commit; if the commit is refused because another instance took over, the
// client is remade (which fences that one in turn) and the write is decided
// again. A committed write's records are thus decided on a state that held
// every earlier committed record, and schema ids, taken as the largest id
// the topic ever held plus one, are never handed out twice, also after a
// kill -9 (the state is rebuilt from the topic).
//
// The reader reads committed records only, and keeps control records to
// know its position exactly.
type KafkaLog struct {
	cfg   KafkaLogConfig
	apply func(Record) error
	log   *slog.Logger

	reader *kgo.Client
	admin  *kadm.Client

	mu   sync.Mutex
	cond *sync.Cond
	next int64 // the offset after the last one the reader processed
	err  error // the reader's terminal error

	wmu    sync.Mutex // guards writer
	writer *kgo.Client

	stop context.CancelFunc
	done chan struct{}
}

// OpenKafkaLog creates the topic if it is missing (one partition,
// cleanup.policy=compact), refuses one with other than one partition,
// starts the reader and waits until it has read to the end.
func OpenKafkaLog(ctx context.Context, cfg KafkaLogConfig, apply func(Record) error) (*KafkaLog, error) {
	if cfg.Topic == "" {
		cfg.Topic = "_schemas"
	}
	if cfg.WriterID == "" {
		cfg.WriterID = "schema-registry"
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = -1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	adminClient, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("schemaregistry: kafka client: %w", err)
	}
	l := &KafkaLog{cfg: cfg, apply: apply, log: cfg.Logger, admin: kadm.NewClient(adminClient), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	if err := l.ensureTopic(ctx); err != nil {
		adminClient.Close()
		return nil, err
	}
	l.reader, err = kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(500 * time.Millisecond),
	}, cfg.ClientOpts...)...)
	if err != nil {
		adminClient.Close()
		return nil, fmt.Errorf("schemaregistry: kafka reader: %w", err)
	}
	rctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	go l.read(rctx)
	if err := l.Sync(ctx); err != nil {
		l.Close()
		return nil, fmt.Errorf("schemaregistry: reading %s: %w", cfg.Topic, err)
	}
	return l, nil
}

func (l *KafkaLog) ensureTopic(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		details, err := l.admin.ListTopics(ctx, l.cfg.Topic)
		if err != nil {
			return fmt.Errorf("schemaregistry: describe %s: %w", l.cfg.Topic, err)
		}
		if d, ok := details[l.cfg.Topic]; ok && d.Err == nil {
			if n := len(d.Partitions); n != 1 {
				return fmt.Errorf("schemaregistry: topic %s has %d partitions; the schemas topic must have exactly 1", l.cfg.Topic, n)
			}
			return nil
		}
		_, err = l.admin.CreateTopic(ctx, 1, l.cfg.ReplicationFactor, map[string]*string{"cleanup.policy": new("compact")}, l.cfg.Topic)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			err = nil // another instance made it: describe it again
		}
		if err != nil && (attempt >= 20 || ctx.Err() != nil) {
			return fmt.Errorf("schemaregistry: create %s: %w", l.cfg.Topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// read applies records until ctx ends.
func (l *KafkaLog) read(ctx context.Context) {
	defer close(l.done)
	for {
		fetches := l.reader.PollFetches(ctx)
		if ctx.Err() != nil {
			l.mu.Lock()
			l.err = errors.New("schemaregistry: reader stopped")
			l.cond.Broadcast()
			l.mu.Unlock()
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			l.log.Warn("schema registry: fetch failed", "topic", t, "partition", p, "err", err)
		})
		var last int64 = -1
		fetches.EachRecord(func(r *kgo.Record) {
			last = r.Offset
			if r.Attrs.IsControl() {
				return
			}
			if err := l.applyRaw(r); err != nil {
				l.log.Warn("schema registry: skipping a record it cannot read", "topic", r.Topic, "offset", r.Offset, "err", err)
			}
		})
		if last >= 0 {
			l.mu.Lock()
			l.next = max(l.next, last+1)
			l.cond.Broadcast()
			l.mu.Unlock()
		}
	}
}

func (l *KafkaLog) applyRaw(r *kgo.Record) error {
	k, err := DecodeKey(r.Key)
	if err != nil {
		return err
	}
	return l.apply(Record{Key: k, Value: r.Value})
}

// waitFor blocks until the reader has processed every offset below end.
func (l *KafkaLog) waitFor(ctx context.Context, end int64) error {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.next < end {
		if l.err != nil {
			return l.err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for the reader to reach offset %d (at %d): %w", end, l.next, err)
		}
		l.cond.Wait()
	}
	return nil
}

// Sync waits until the reader has read every record committed before the
// call.
func (l *KafkaLog) Sync(ctx context.Context) error {
	offs, err := l.admin.ListCommittedOffsets(ctx, l.cfg.Topic)
	if err != nil {
		return fmt.Errorf("schemaregistry: end of %s: %w", l.cfg.Topic, err)
	}
	o, ok := offs.Lookup(l.cfg.Topic, 0)
	if !ok {
		return fmt.Errorf("schemaregistry: end of %s: no partition 0", l.cfg.Topic)
	}
	if o.Err != nil {
		return fmt.Errorf("schemaregistry: end of %s: %w", l.cfg.Topic, o.Err)
	}
	return l.waitFor(ctx, o.Offset)
}

func (l *KafkaLog) writerClient() (*kgo.Client, error) {
	if l.writer != nil {
		return l.writer, nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(l.cfg.Brokers...),
		kgo.TransactionalID("tributary-schema-registry-" + l.cfg.WriterID + "-" + l.cfg.Topic),
		kgo.DefaultProduceTopic(l.cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(30 * time.Second),
	}, l.cfg.ClientOpts...)...)
	if err != nil {
		return nil, err
	}
	l.writer = cl
	return cl, nil
}

func (l *KafkaLog) dropWriter() {
	if l.writer != nil {
		l.writer.Close()
		l.writer = nil
	}
}

// Write implements Log.
func (l *KafkaLog) Write(ctx context.Context, decide func() ([]Record, error)) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		if ctx.Err() != nil {
			break
		}
		done, err := l.writeOnce(ctx, decide)
		if done {
			return err
		}
		lastErr = err
		l.log.Info("schema registry: write retried", "err", err)
		l.dropWriter()
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt*50) * time.Millisecond):
		}
	}
	if lastErr == nil {
		lastErr = ctx.Err()
	}
	return fmt.Errorf("schemaregistry: write to %s: %w", l.cfg.Topic, lastErr)
}

// writeOnce makes one attempt; done false means try again with a new
// writer.
func (l *KafkaLog) writeOnce(ctx context.Context, decide func() ([]Record, error)) (done bool, err error) {
	cl, err := l.writerClient()
	if err != nil {
		return true, err
	}
	// Take over first (the first transaction of a new client fences the
	// others), then read to the end: nothing another writer commits from
	// here on can be committed without fencing us.
	if err := cl.BeginTransaction(); err != nil {
		return false, err
	}
	end := func(commit kgo.TransactionEndTry) error {
		return cl.EndTransaction(ctx, commit)
	}
	noop := &kgo.Record{Key: NoopKey().Encode(), Partition: 0}
	if err := cl.ProduceSync(ctx, noop).FirstErr(); err != nil {
		_ = end(kgo.TryAbort)
		return false, err
	}
	// The reader stops at our open transaction's first offset (its
	// committed view), which is after every earlier committed record.
	if err := l.waitFor(ctx, noop.Offset); err != nil {
		_ = end(kgo.TryAbort)
		return true, err
	}
	recs, derr := decide()
	if derr != nil || len(recs) == 0 {
		if err := end(kgo.TryAbort); err != nil {
			l.dropWriter()
		}
		return true, derr
	}
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Key: r.Key.Encode(), Value: r.Value, Partition: 0}
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		_ = end(kgo.TryAbort)
		return false, err
	}
	if err := end(kgo.TryCommit); err != nil {
		return false, err
	}
	// The commit marker follows the last record.
	return true, l.waitFor(ctx, krs[len(krs)-1].Offset+1)
}

// Close stops the reader and the clients.
func (l *KafkaLog) Close() {
	if l.stop != nil {
		l.stop()
		<-l.done
	}
	if l.reader != nil {
		l.reader.Close()
	}
	l.wmu.Lock()
	l.dropWriter()
	l.wmu.Unlock()
	l.admin.Close()
}

package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrClosed is returned by a store's methods after Close.
var ErrClosed = errors.New("store: closed")

// Options configure one internal-topic store. Brokers and Topic are
// required.
type Options struct {
	// Brokers are the bootstrap servers (bootstrap.servers).
	Brokers []string
	// Topic is the internal topic (config.storage.topic, …).
	Topic string
	// Partitions used when creating the topic; 0 means the store's default
	// (config 1, offsets 25, status 5). The config store refuses anything
	// but 1.
	Partitions int32
	// ReplicationFactor used when creating the topic; 0 or -1 means the
	// broker's default (Kafka Connect's own default is 3).
	ReplicationFactor int16
	// TopicConfigs are extra topic configs used when creating the topic
	// (the config.storage.* … prefixed worker settings); cleanup.policy is
	// always forced to compact.
	TopicConfigs map[string]string
	// ClientOpts are extra franz-go options (TLS, SASL, client id, …) for
	// the store's client.
	ClientOpts []kgo.Opt
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// ReadCommitted reads the topic read_committed (a worker with
	// exactly-once source support, for the config and offsets topics):
	// records of open transactions are read once committed, those of
	// aborted ones never. Reading to the end then waits for the
	// transactions open on the topic to end, as Kafka Connect's
	// KafkaBasedLog does.
	ReadCommitted bool
	// TransactionalID, for the config store, makes the leader's writes go
	// through a transactional producer with this id
	// (connect-cluster-<group.id>; see ConfigStore.ClaimWritePrivileges).
	TransactionalID string
}

// kafkaLog is Kafka Connect's KafkaBasedLog: one topic, every partition
// consumed from the start; Open returns once everything present is read,
// after which a goroutine tails the topic and hands every record to apply
// (serially, in partition order).
type kafkaLog struct {
	topic      string
	partitions int32
	cl         *kgo.Client
	adm        *kadm.Client
	log        *slog.Logger
	apply      func(*kgo.Record)
	// maxRecordBytes is the topic's max.message.bytes: the largest record
	// batch the broker takes (and the producer's batch limit).
	maxRecordBytes int

	mu       sync.Mutex
	pos      map[int32]int64 // next offset to read, per partition
	progress chan struct{}   // closed and replaced whenever pos moves
	closed   bool

	cancel context.CancelFunc
	done   chan struct{}
}

// storeLogger is a store's logger, carrying its topic. Stores apply the
// records of their first read-to-end before openLog returns, so they log
// through this, not through their kafkaLog.
func storeLogger(o Options) *slog.Logger {
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return lg.With("topic", o.Topic)
}

// logSpec is what a store asks of its topic.
type logSpec struct {
	partitions int32 // default partition count
	exact      bool  // the topic must have exactly that many (the config topic)
	// defaults are topic configs used when creating the topic unless the
	// worker's settings (Options.TopicConfigs) name them.
	defaults map[string]string
}

// openLog creates or verifies the topic, reads it to the end and starts
// tailing.
func openLog(ctx context.Context, o Options, spec logSpec, apply func(*kgo.Record)) (*kafkaLog, error) {
	if len(o.Brokers) == 0 {
		return nil, errors.New("store: no brokers")
	}
	if o.Topic == "" {
		return nil, errors.New("store: no topic")
	}
	parts := o.Partitions
	if parts == 0 {
		parts = spec.partitions
	}
	if spec.exact && parts != spec.partitions {
		return nil, fmt.Errorf("store: topic %s must have exactly %d partition(s), %d configured", o.Topic, spec.partitions, parts)
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	topicConfigs := maps.Clone(spec.defaults)
	if topicConfigs == nil {
		topicConfigs = map[string]string{}
	}
	maps.Copy(topicConfigs, o.TopicConfigs)
	base := append([]kgo.Opt{kgo.SeedBrokers(o.Brokers...), kgo.MetadataMinAge(100 * time.Millisecond)}, o.ClientOpts...)

	// The topic is created or checked first, with a client of its own: the
	// producer's batch limit must be the topic's max.message.bytes, which
	// is known only then.
	acl, err := kgo.NewClient(base...)
	if err != nil {
		return nil, fmt.Errorf("store: client for %s: %w", o.Topic, err)
	}
	l := &kafkaLog{
		topic:    o.Topic,
		adm:      kadm.NewClient(acl),
		log:      lg.With("topic", o.Topic),
		apply:    apply,
		pos:      map[int32]int64{},
		progress: make(chan struct{}),
		done:     make(chan struct{}),
	}
	n, err := l.ensureTopic(ctx, parts, o.ReplicationFactor, topicConfigs)
	if err == nil {
		l.maxRecordBytes, err = l.describeMaxRecordBytes(ctx)
	}
	acl.Close()
	if err != nil {
		return nil, err
	}
	if spec.exact && n != spec.partitions {
		return nil, fmt.Errorf("store: topic %s has %d partitions but must have exactly %d (Kafka Connect requires a single-partition config topic)", o.Topic, n, spec.partitions)
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableIdempotentWrite(),
		kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytes(int32(l.maxRecordBytes)),
		// Close waits for an in-flight fetch; keep it short. Tailing latency
		// does not depend on it (the broker answers as soon as data arrives).
		kgo.FetchMaxWait(500 * time.Millisecond),
		// Metadata answers are cached for this long; a topic just created
		// must become visible quickly.
		kgo.MetadataMinAge(100 * time.Millisecond),
		// Transaction markers come as records, so that the position
		// passes them: a topic written by a transactional producer (a
		// Kafka Connect leader with exactly-once support, a task's offsets)
		// ends with one, and reading to the end waits for the position to
		// reach the end offset.
		kgo.KeepControlRecords(),
	}, o.ClientOpts...)
	if o.ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("store: client for %s: %w", o.Topic, err)
	}
	l.cl, l.adm = cl, kadm.NewClient(cl)
	l.partitions = n
	offs := make(map[int32]kgo.Offset, n)
	for p := int32(0); p < n; p++ {
		offs[p] = kgo.NewOffset().AtStart()
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: offs})
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(runCtx)
	if err := l.readToEnd(ctx); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// describeMaxRecordBytes reads the topic's max.message.bytes (the
// broker's message.max.bytes when the topic does not set it).
func (l *kafkaLog) describeMaxRecordBytes(ctx context.Context) (int, error) {
	rc, err := l.describeConfigs(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range rc.Configs {
		if c.Key == "max.message.bytes" {
			if n, perr := strconv.Atoi(c.MaybeValue()); perr == nil && n > 0 {
				return n, nil
			}
		}
	}
	return defaultMaxRecordBytes, nil
}

// describeConfigs describes the topic's configs, retrying retriable errors:
// a topic just created on a cluster of several brokers may not be known to
// the one asked yet (UNKNOWN_TOPIC_OR_PARTITION).
func (l *kafkaLog) describeConfigs(ctx context.Context) (kadm.ResourceConfig, error) {
	for attempt := 0; ; attempt++ {
		rcs, err := l.adm.DescribeTopicConfigs(ctx, l.topic)
		var rc kadm.ResourceConfig
		if err == nil {
			if rc, err = rcs.On(l.topic, nil); err == nil {
				err = rc.Err
			}
		}
		if err == nil {
			return rc, nil
		}
		if !kerr.IsRetriable(err) || attempt >= 50 {
			return rc, fmt.Errorf("store: describe configs of %s: %w", l.topic, err)
		}
		select {
		case <-ctx.Done():
			return rc, fmt.Errorf("store: describe configs of %s: %w", l.topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// defaultMaxRecordBytes is Kafka's default message.max.bytes, assumed when
// a broker does not say.
const defaultMaxRecordBytes = 1048588

// recordBatchOverhead bounds what a record batch of one record adds to its
// key and value: the batch header (61 bytes) and the record's own framing
// (length, attributes, deltas, key and value lengths, header count).
const recordBatchOverhead = 61 + 30

// RecordTooLargeError is a write refused because its record is larger
// than the topic takes (its max.message.bytes); nothing was written.
type RecordTooLargeError struct {
	Topic string
	// Bytes is the record's size in a batch; Limit the topic's
	// max.message.bytes.
	Bytes, Limit int
}

func (e *RecordTooLargeError) Error() string {
	return fmt.Sprintf("store: a record of %d bytes is larger than the %d bytes topic %s takes (max.message.bytes)", e.Bytes, e.Limit, e.Topic)
}

// checkSizes refuses records that the topic would refuse, before any of
// them is sent.
func (l *kafkaLog) checkSizes(recs []*kgo.Record) error {
	for _, r := range recs {
		if n := recordBatchOverhead + len(r.Key) + len(r.Value); n > l.maxRecordBytes {
			return &RecordTooLargeError{Topic: l.topic, Bytes: n, Limit: l.maxRecordBytes}
		}
	}
	return nil
}

// ensureTopic creates the topic if missing and verifies it: compact-only
// cleanup policy. It returns the partition count.
func (l *kafkaLog) ensureTopic(ctx context.Context, parts int32, rf int16, configs map[string]string) (int32, error) {
	if rf == 0 {
		rf = -1
	}
	for attempt := 0; ; attempt++ {
		tds, err := l.adm.ListTopics(ctx, l.topic)
		if err != nil {
			return 0, fmt.Errorf("store: describe topic %s: %w", l.topic, err)
		}
		td, ok := tds[l.topic]
		switch {
		case ok && td.Err == nil && len(td.Partitions) > 0:
			if err := l.verifyCompact(ctx); err != nil {
				return 0, err
			}
			return int32(len(td.Partitions)), nil
		case ok && td.Err != nil && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) && !errors.Is(td.Err, kerr.LeaderNotAvailable):
			return 0, fmt.Errorf("store: describe topic %s: %w", l.topic, td.Err)
		}
		if attempt == 0 && (!ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition)) {
			cfg := map[string]*string{}
			for k, v := range configs {
				cfg[k] = &v
			}
			compact := "compact"
			cfg["cleanup.policy"] = &compact
			resp, err := l.adm.CreateTopic(ctx, parts, rf, cfg, l.topic)
			if err == nil {
				err = resp.Err
			}
			if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				return 0, fmt.Errorf("store: create topic %s: %w", l.topic, err)
			}
			if err == nil {
				l.log.Info("created internal topic", "partitions", parts, "replication_factor", rf)
				// Not listed again: franz-go caches metadata answers for a
				// few seconds, and the broker just confirmed the layout.
				if resp.NumPartitions > 0 {
					return resp.NumPartitions, nil
				}
				return parts, nil
			}
		}
		if attempt > 50 {
			return 0, fmt.Errorf("store: topic %s has no partitions after creation", l.topic)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// verifyCompact is TopicAdmin.verifyTopicCleanupPolicyOnlyCompact.
func (l *kafkaLog) verifyCompact(ctx context.Context) error {
	rc, err := l.describeConfigs(ctx)
	if err != nil {
		return err
	}
	policy := ""
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" {
			policy = c.MaybeValue()
		}
	}
	var set []string
	for _, p := range strings.Split(policy, ",") {
		if p = strings.TrimSpace(strings.ToLower(p)); p != "" {
			set = append(set, p)
		}
	}
	if len(set) != 1 || set[0] != "compact" {
		return fmt.Errorf("store: topic %s has cleanup.policy=%q; Kafka Connect's internal topics must use cleanup.policy=compact only", l.topic, policy)
	}
	return nil
}

func (l *kafkaLog) run(ctx context.Context) {
	defer close(l.done)
	for {
		fs := l.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				l.log.Warn("fetch error", "partition", p, "err", err)
			}
		})
		moved := false
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				l.apply(r)
			}
			l.mu.Lock()
			l.pos[r.Partition] = r.Offset + 1
			l.mu.Unlock()
			moved = true
		})
		if moved {
			l.mu.Lock()
			close(l.progress)
			l.progress = make(chan struct{})
			l.mu.Unlock()
		}
	}
}

// readToEnd waits until every record present in the topic now has been
// applied.
func (l *kafkaLog) readToEnd(ctx context.Context) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}
	var ends kadm.ListedOffsets
	for attempt := 0; ; attempt++ {
		var err error
		ends, err = l.adm.ListEndOffsets(ctx, l.topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			break
		}
		// A just-created topic may not be in metadata yet, or its
		// partitions' leaders not elected everywhere (a replicated topic:
		// NOT_LEADER_FOR_PARTITION); any retriable error is retried.
		if !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.LeaderNotAvailable) && !kerr.IsRetriable(err) || attempt >= 100 {
			return fmt.Errorf("store: end offsets of %s: %w", l.topic, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: end offsets of %s: %w", l.topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if len(want) > 0 {
		// A partition whose records were all deleted has start == end.
		starts, err := l.adm.ListStartOffsets(ctx, l.topic)
		if err == nil {
			starts.Each(func(o kadm.ListedOffset) {
				if o.Err == nil && o.Offset >= want[o.Partition] {
					delete(want, o.Partition)
				}
			})
		}
	}
	return l.waitApplied(ctx, want)
}

// waitApplied waits until the records before want's offsets (by
// partition) have been applied.
func (l *kafkaLog) waitApplied(ctx context.Context, want map[int32]int64) error {
	for {
		l.mu.Lock()
		behind := false
		for p, end := range want {
			if l.pos[p] < end {
				behind = true
				break
			}
		}
		ch, closed := l.progress, l.closed
		l.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: read %s to end: %w", l.topic, ctx.Err())
		case <-ch:
		case <-l.done:
			return ErrClosed
		}
	}
}

// sendAndWait produces the records and waits until the store has applied
// them, and so everything acknowledged before them: a writer reads its
// own write. It needs no round trip of its own to learn where the topic
// ends (readToEnd asks the broker), so concurrent writers share the
// fetches that bring their records back.
func (l *kafkaLog) sendAndWait(ctx context.Context, recs ...*kgo.Record) error {
	if err := l.send(ctx, recs...); err != nil {
		return err
	}
	want := make(map[int32]int64, 1)
	for _, r := range recs {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
	}
	return l.waitApplied(ctx, want)
}

// send produces the records (partition already set) and waits for the
// broker's acks. A record larger than the topic takes is a
// *RecordTooLargeError, and then none is sent.
func (l *kafkaLog) send(ctx context.Context, recs ...*kgo.Record) error {
	if err := l.checkSizes(recs); err != nil {
		return err
	}
	for _, r := range recs {
		r.Topic = l.topic
	}
	if err := l.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		if errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) {
			// The broker's limit is lower than described (a broker-wide
			// setting changed since): nothing of the batch was written.
			size := 0
			for _, r := range recs {
				size = max(size, recordBatchOverhead+len(r.Key)+len(r.Value))
			}
			return &RecordTooLargeError{Topic: l.topic, Bytes: size, Limit: l.maxRecordBytes}
		}
		return fmt.Errorf("store: write to %s: %w", l.topic, err)
	}
	return nil
}

// keyed builds a record partitioned like the Java default partitioner.
func (l *kafkaLog) keyed(key string, value []byte) *kgo.Record {
	k := []byte(key)
	return &kgo.Record{Key: k, Value: value, Partition: KeyPartition(k, l.partitions)}
}

func (l *kafkaLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	<-l.done
	l.cl.Close()
}

// ClipKey shortens a record key (or a name in one) for a log line: keys
// of any length can be found in a topic.
func ClipKey(k string) string {
	const keep = 200
	if len(k) <= keep {
		return k
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", k[:cut], len(k))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

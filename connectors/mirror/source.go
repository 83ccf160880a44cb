package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// SourceConnector returns MirrorSourceConnector: it replicates the topics
// of the source cluster to the target (the worker's cluster) byte for
// byte, and keeps the remote topics' partitions, configs and ACLs in
// step.
func SourceConnector() sdk.Connector {
	base := sdk.SourceConnector[SourceConfig]{
		Class: SourceClass, Version: version,
		Doc: "Replicate data, configuration, and ACLs between clusters (MirrorMaker 2).",
		AlterOffsets: func(_ context.Context, _ SourceConfig, offs []sdk.SourceOffset) error {
			return validateOffsetShapes(offs, []string{"cluster", "topic", "partition"}, "partition", false)
		},
	}
	return connector[SourceConfig]{
		SourceConnector: base,
		newInstance: func(cfg SourceConfig, raw map[string]string, name string) (instance, error) {
			return newSourceInstance(cfg, raw, name)
		},
		newTask: func(cfg SourceConfig, raw map[string]string) (sdk.SourceTask, error) {
			return &sourceTask{cfg: cfg, raw: raw}, nil
		},
		eos: func(raw map[string]string) sdk.ExactlyOnceSupport {
			// Exactly once only if the records of aborted transactions are
			// not copied (MirrorSourceConnector.exactlyOnceSupport).
			if ClientProps(raw, Role{"source", "consumer"})["isolation.level"] == "read_committed" {
				return sdk.ExactlyOnceSupported
			}
			return sdk.ExactlyOnceUnsupported
		},
	}
}

type sourceInstance struct {
	cfg     SourceConfig
	raw     map[string]string
	clients clients
	syncer  *topicSyncer
	logger  *slog.Logger
	syncAdm *kadm.Client // on the cluster of the offset-syncs topic

	mu    sync.Mutex
	known topicPartitions // the source topics last given to tasks
}

func newSourceInstance(cfg SourceConfig, raw map[string]string, name string) (*sourceInstance, error) {
	s := &sourceInstance{cfg: cfg, raw: raw, logger: slog.Default().With("connector", name)}
	s.clients = clients{cfg: &s.cfg.CommonConfig, raw: raw, name: name}
	src, err := s.clients.admin("source", "source-admin")
	if err != nil {
		s.clients.close()
		return nil, err
	}
	tgt, err := s.clients.admin("target", "target-admin")
	if err != nil {
		s.clients.close()
		return nil, err
	}
	s.syncAdm = src
	if cfg.OffsetSyncsLoc == "target" {
		s.syncAdm = tgt
	}
	ex, _ := CompilePattern(cfg.ConfigExclude)
	s.syncer = &topicSyncer{cfg: &s.cfg, policy: cfg.Policy(), filter: cfg.TopicFilter(), configExclude: ex,
		source: src, target: tgt, logger: s.logger}
	return s, nil
}

func (s *sourceInstance) close() { s.clients.close() }

func (s *sourceInstance) taskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	if !s.cfg.Enabled {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.adminTimeout())
	defer cancel()
	src, err := s.syncer.sourceTopics(ctx)
	if err != nil {
		return nil, sdk.Retriable(err)
	}
	if err := s.syncer.ensureRemote(ctx, src); err != nil {
		return nil, sdk.Retriable(err)
	}
	s.mu.Lock()
	s.known = src
	s.mu.Unlock()
	var tps []string
	for _, t := range slices.Sorted(mapsKeys(src)) {
		for p := range src[t] {
			tps = append(tps, t+"-"+strconv.Itoa(p))
		}
	}
	if len(tps) == 0 {
		return nil, nil
	}
	n := min(maxTasks, len(tps))
	assigned := make([][]string, n)
	for i, tp := range tps {
		assigned[i%n] = append(assigned[i%n], tp)
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = taskConfig(s.raw, map[string]string{"task.assigned.partitions": strings.Join(assigned[i], ","), "task.index": strconv.Itoa(i)})
	}
	return out, nil
}

func (s *sourceInstance) run(ctx context.Context, cc sdk.ConnectorContext) error {
	if !s.cfg.Enabled {
		<-ctx.Done()
		return nil
	}
	s.logger = cc.Logger()
	s.syncer.logger = s.logger
	if s.cfg.EmitOffsetSyncs {
		actx, cancel := context.WithTimeout(ctx, s.cfg.adminTimeout())
		err := createCompactedTopic(actx, s.syncAdm, s.cfg.OffsetSyncsTopic(), s.cfg.SyncsRF, s.logger)
		cancel()
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("offset-syncs topic", "error", err)
		}
	}
	every := func(on bool, sec int64) <-chan time.Time {
		if !on || sec <= 0 {
			return nil
		}
		return time.NewTicker(time.Duration(sec) * time.Second).C
	}
	// Config and ACL syncs run at once, then every interval (Kafka's
	// scheduleRepeating); the topic refresh waits an interval first.
	now := func(on bool) <-chan time.Time {
		if !on {
			return nil
		}
		return time.After(0)
	}
	refresh := every(s.cfg.RefreshTopics, s.cfg.RefreshTopicsSec)
	syncCfg := every(s.cfg.SyncConfigs, s.cfg.SyncConfigsSec)
	syncACL := every(s.cfg.SyncACLs, s.cfg.SyncACLsSec)
	firstCfg, firstACL := now(s.cfg.SyncConfigs), now(s.cfg.SyncACLs)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-firstACL:
			firstACL = nil
			s.syncACLs(ctx)
		case <-syncACL:
			s.syncACLs(ctx)
		case <-firstCfg:
			firstCfg = nil
			s.syncConfigs(ctx)
		case <-syncCfg:
			s.syncConfigs(ctx)
		case <-refresh:
			s.refresh(ctx, cc)
		}
	}
}

func (s *sourceInstance) syncACLs(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, s.cfg.adminTimeout())
	defer cancel()
	if err := s.syncer.syncACLs(actx); err != nil && ctx.Err() == nil {
		s.logger.Warn("topic ACL sync failed", "error", err)
	}
}

func (s *sourceInstance) syncConfigs(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, s.cfg.adminTimeout())
	defer cancel()
	src, err := s.syncer.sourceTopics(actx)
	if err == nil {
		err = s.syncer.syncConfigs(actx, src)
	}
	if err != nil && ctx.Err() == nil {
		s.logger.Warn("topic config sync failed", "error", err)
	}
}

// refresh looks for new topics and partitions on the source and for
// remote ones missing on the target (as Kafka's refreshTopicPartitions
// does): it creates what is missing on the target, and when the source's
// set changed it asks for new task configs.
func (s *sourceInstance) refresh(ctx context.Context, cc sdk.ConnectorContext) {
	actx, cancel := context.WithTimeout(ctx, s.cfg.adminTimeout())
	defer cancel()
	src, err := s.syncer.sourceTopics(actx)
	if err != nil {
		s.logger.Warn("topic refresh failed", "error", err)
		return
	}
	if err := s.syncer.ensureRemote(actx, src); err != nil {
		s.logger.Warn("creating remote topics failed", "error", err)
		return
	}
	s.mu.Lock()
	same := mapsEqual(src, s.known)
	s.mu.Unlock()
	if same {
		return
	}
	s.logger.Info("source topics changed: reconfiguring tasks", "topics", len(src))
	cc.RequestTaskReconfiguration()
}

// parseTopicPartition reads TopicPartition.toString's "topic-partition".
func parseTopicPartition(s string) (string, int32, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("task.assigned.partitions: %q is not topic-partition", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("task.assigned.partitions: %q is not topic-partition", s)
	}
	return s[:i], int32(p), nil
}

// sourceTask copies its partitions' records and writes the offset syncs.
type sourceTask struct {
	cfg     SourceConfig
	raw     map[string]string
	policy  ReplicationPolicy
	clients clients
	cons    *kgo.Client // source consumer
	syncs   *kgo.Client // offset-syncs producer, nil when disabled
	logger  *slog.Logger
	remote  map[string]string // upstream topic → remote topic

	mu    sync.Mutex
	parts map[partitionKey]*partSyncs
}

// partSyncs follows one replicated partition: the downstream offset of
// the next record and the records sent whose offsets are not committed.
type partSyncs struct {
	next    int64
	rule    *syncRule
	pending []pendingSync
}

type pendingSync struct {
	upstream, downstream int64
	now                  bool // sent without waiting for a commit
}

func (t *sourceTask) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.logger = tc.Logger()
	t.policy = t.cfg.Policy()
	t.clients = clients{cfg: &t.cfg.CommonConfig, raw: t.raw, name: tc.Info().Connector}
	t.remote = map[string]string{}
	t.parts = map[partitionKey]*partSyncs{}
	var keys []partitionKey
	var parts []sdk.Partition
	for _, s := range t.cfg.AssignedPartitions {
		topic, p, err := parseTopicPartition(s)
		if err != nil {
			return err
		}
		keys = append(keys, partitionKey{topic, p})
		parts = append(parts, sdk.Partition{"cluster": t.cfg.SourceAlias, "topic": topic, "partition": p})
		t.remote[topic] = t.policy.FormatRemoteTopic(t.cfg.SourceAlias, topic)
	}
	stored, err := tc.Offsets(ctx, parts)
	if err != nil {
		return fmt.Errorf("read stored offsets: %w", err)
	}
	consProps := ClientProps(t.raw, Role{"source", "consumer"})
	reset := kgo.NewOffset().AtStart()
	switch consProps["auto.offset.reset"] {
	case "latest":
		reset = kgo.NewOffset().AtEnd()
	case "none":
		reset = kgo.NoResetOffset()
	}
	assign := map[string]map[int32]kgo.Offset{}
	for i, k := range keys {
		if assign[k.topic] == nil {
			assign[k.topic] = map[int32]kgo.Offset{}
		}
		if n, ok := stored[i].Int64("offset"); ok && stored[i] != nil {
			assign[k.topic][k.partition] = kgo.NewOffset().At(n + 1)
		} else {
			assign[k.topic][k.partition] = reset
		}
	}
	// The downstream offset of each partition's next record: the remote
	// partition's end, since this task is its only writer and the
	// worker's idempotent producer neither reorders nor duplicates
	// within the task's lifetime. Records another writer slips in only
	// move the real offsets up, so a sync can be late, never ahead.
	tgt, err := t.clients.admin("target", "target-admin")
	if err != nil {
		return err
	}
	remotes := make([]string, 0, len(t.remote))
	for _, r := range t.remote {
		remotes = append(remotes, r)
	}
	// A remote partition the connector has just added (the source topic
	// grew) can take a moment to appear in the target's metadata (Apache
	// Kafka's brokers learn it from the controller): wait for it a while
	// rather than fail the task.
	var missing error
	for wait, deadline := 100*time.Millisecond, time.Now().Add(remotePartitionWait); ; wait = min(2*wait, 2*time.Second) {
		ends, err := tgt.ListEndOffsets(ctx, remotes...)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return sdk.Retriable(fmt.Errorf("end offsets of the remote topics on %s: %w", t.cfg.TargetAlias, err))
		}
		missing = nil
		for _, k := range keys {
			end, ok := ends.Lookup(t.remote[k.topic], k.partition)
			if !ok {
				missing = fmt.Errorf("remote partition %s-%d does not exist on %s after %v", t.remote[k.topic], k.partition, t.cfg.TargetAlias, remotePartitionWait)
				break
			}
			t.parts[k] = &partSyncs{next: end.Offset, rule: newSyncRule(t.cfg.OffsetLagMax)}
		}
		if missing == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	if missing != nil {
		return sdk.Retriable(missing)
	}
	props := []kgo.Opt{kgo.ConsumePartitions(assign)}
	if t.cons, err = t.clients.client(Role{"source", "consumer"}, "replication-consumer", props...); err != nil {
		return err
	}
	if t.cfg.EmitOffsetSyncs {
		loc := "source"
		if t.cfg.OffsetSyncsLoc == "target" {
			loc = "target"
		}
		if t.syncs, err = t.clients.client(Role{loc, "producer"}, "offset-syncs-producer",
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(10000)); err != nil {
			return err
		}
	}
	t.logger.Info("replicating partitions", "partitions", len(keys), "source", t.cfg.SourceAlias, "target", t.cfg.TargetAlias)
	return nil
}

// remotePartitionWait is how long a starting task waits for its remote
// partitions to appear on the target.
const remotePartitionWait = 30 * time.Second

func (t *sourceTask) Poll(ctx context.Context, maxRecs int) ([]sdk.SourceRecord, error) {
	if len(t.parts) == 0 {
		<-ctx.Done()
		return nil, nil
	}
	pctx, cancel := context.WithTimeout(ctx, time.Duration(max(t.cfg.PollTimeoutMs, 1))*time.Millisecond)
	fetches := t.cons.PollRecords(pctx, maxRecs)
	cancel()
	var err error
	fetches.EachError(func(topic string, p int32, e error) {
		if errors.Is(e, context.DeadlineExceeded) || errors.Is(e, context.Canceled) {
			return
		}
		err = errors.Join(err, fmt.Errorf("consume %s-%d from %s: %w", topic, p, t.cfg.SourceAlias, e))
	})
	if err != nil {
		return nil, sdk.Retriable(err)
	}
	out := make([]sdk.SourceRecord, 0, fetches.NumRecords())
	t.mu.Lock()
	defer t.mu.Unlock()
	fetches.EachRecord(func(r *kgo.Record) {
		k := partitionKey{r.Topic, r.Partition}
		ps := t.parts[k]
		if ps == nil {
			return
		}
		ps.pending = append(ps.pending, pendingSync{upstream: r.Offset, downstream: ps.next, now: ps.rule.update(r.Offset, ps.next)})
		ps.next++
		p := r.Partition
		var hs []sdk.Header
		if len(r.Headers) > 0 {
			hs = make([]sdk.Header, len(r.Headers))
			for i, h := range r.Headers {
				hs[i] = sdk.Header{Key: h.Key, Schema: schema.OptionalBytes, Value: bytesOrNil(h.Value)}
			}
		}
		out = append(out, sdk.SourceRecord{
			Partition: sdk.Partition{"cluster": t.cfg.SourceAlias, "topic": r.Topic, "partition": r.Partition},
			Offset:    sdk.Offset{"offset": r.Offset},
			Topic:     t.remote[r.Topic], KafkaPartition: &p,
			KeySchema: schema.OptionalBytes, Key: bytesOrNil(r.Key),
			ValueSchema: schema.OptionalBytes, Value: bytesOrNil(r.Value),
			Timestamp: r.Timestamp, Headers: hs,
		})
	})
	return out, nil
}

// OffsetsCommitted implements sdk.OffsetsCommitter: the records up to
// each offset are on the target, so their offset syncs may go out (Kafka's
// commitRecord and commit): every sync that was due, then the latest
// record's if it was waiting for a commit.
func (t *sourceTask) OffsetsCommitted(ctx context.Context, offsets []sdk.SourceOffset) error {
	var out []*kgo.Record
	t.mu.Lock()
	for _, o := range offsets {
		topic, _ := o.Partition["topic"].(string)
		p, ok1 := intField(o.Partition, "partition")
		u, ok2 := intField(o.Offset, "offset")
		ps := t.parts[partitionKey{topic, int32(p)}]
		if !ok1 || !ok2 || ps == nil {
			continue
		}
		n := 0
		for n < len(ps.pending) && ps.pending[n].upstream <= u {
			n++
		}
		for i, s := range ps.pending[:n] {
			if s.now || i == n-1 {
				sync := OffsetSync{Topic: topic, Partition: int32(p), Upstream: s.upstream, Downstream: s.downstream}
				out = append(out, &kgo.Record{Topic: t.cfg.OffsetSyncsTopic(), Partition: 0, Key: sync.Key(), Value: sync.Value()})
			}
		}
		ps.pending = append(ps.pending[:0], ps.pending[n:]...)
	}
	t.mu.Unlock()
	if t.syncs == nil || len(out) == 0 {
		return nil
	}
	// Kafka's writer is not transactional and never blocks the task: a
	// lost sync only makes translation coarser until the next one.
	for _, r := range out {
		t.syncs.Produce(context.WithoutCancel(ctx), r, func(r *kgo.Record, err error) {
			if err != nil {
				t.logger.Error("failure sending offset sync", "error", err)
			}
		})
	}
	return nil
}

func (t *sourceTask) Close(context.Context) error {
	if t.syncs != nil {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = t.syncs.Flush(fctx)
		cancel()
	}
	t.clients.close()
	return nil
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func mapsEqual(a, b topicPartitions) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// bytesOrNil keeps a null key, value or header null: a nil []byte in an
// interface is not a nil interface, and would become empty bytes.
func bytesOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

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

// CheckpointConnector returns MirrorCheckpointConnector: it translates
// the committed offsets of the source's consumer groups through the
// offset syncs and writes them as checkpoints to
// <source>.checkpoints.internal on the target, and with
// sync.group.offsets.enabled into the target's idle groups.
func CheckpointConnector() sdk.Connector {
	base := sdk.SourceConnector[CheckpointConfig]{
		Class: CheckpointClass, Version: version,
		Doc: "Replicate consumer group offsets between clusters (MirrorMaker 2).",
		AlterOffsets: func(_ context.Context, _ CheckpointConfig, offs []sdk.SourceOffset) error {
			return validateOffsetShapes(offs, []string{"group", "topic", "partition"}, "partition", true)
		},
	}
	return connector[CheckpointConfig]{
		SourceConnector: base,
		newInstance: func(cfg CheckpointConfig, raw map[string]string, name string) (instance, error) {
			c := &checkpointInstance{cfg: cfg, raw: raw, logger: slog.Default()}
			c.clients = clients{cfg: &c.cfg.CommonConfig, raw: raw, name: name}
			var err error
			if c.source, err = c.clients.admin("source", "source-admin"); err == nil {
				c.target, err = c.clients.admin("target", "target-admin")
			}
			if err != nil {
				c.clients.close()
				return nil, err
			}
			return c, nil
		},
		newTask: func(cfg CheckpointConfig, raw map[string]string) (sdk.SourceTask, error) {
			return &checkpointTask{cfg: cfg, raw: raw}, nil
		},
	}
}

type checkpointInstance struct {
	cfg            CheckpointConfig
	raw            map[string]string
	clients        clients
	source, target *kadm.Client
	logger         *slog.Logger

	mu     sync.Mutex
	groups []string // as last given to tasks
}

func (c *checkpointInstance) close() { c.clients.close() }

// findGroups lists the source's groups the group filter accepts and that
// have offsets on a topic the topic filter accepts.
func (c *checkpointInstance) findGroups(ctx context.Context) ([]string, error) {
	listed, err := c.source.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list consumer groups on %s: %w", c.cfg.SourceAlias, err)
	}
	gf, tf := c.cfg.GroupFilter(), c.cfg.TopicFilter()
	var out []string
	for _, g := range listed.Groups() {
		if !gf.Accepts(g) {
			continue
		}
		offs, err := c.source.FetchOffsets(ctx, g)
		if err != nil {
			c.logger.Warn("could not read the offsets of a consumer group", "group", g, "error", err)
			continue
		}
		keep := false
		offs.Each(func(o kadm.OffsetResponse) { keep = keep || (o.Err == nil && tf.Accepts(o.Topic)) })
		if keep {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (c *checkpointInstance) taskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	if !c.cfg.Enabled || (!c.cfg.EmitCheckpoints && !c.cfg.SyncGroupOffsets) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.adminTimeout())
	defer cancel()
	groups, err := c.findGroups(ctx)
	if err != nil {
		return nil, sdk.Retriable(err)
	}
	c.mu.Lock()
	c.groups = groups
	c.mu.Unlock()
	if len(groups) == 0 {
		return nil, nil
	}
	// ConnectorUtils.groupPartitions: contiguous runs, the first ones one
	// longer.
	n := min(maxTasks, len(groups))
	out := make([]map[string]string, 0, n)
	per, extra := len(groups)/n, len(groups)%n
	at := 0
	for i := range n {
		size := per
		if i < extra {
			size++
		}
		out = append(out, taskConfig(c.raw, map[string]string{"task.assigned.groups": strings.Join(groups[at:at+size], ","), "task.index": strconv.Itoa(i)}))
		at += size
	}
	return out, nil
}

func (c *checkpointInstance) run(ctx context.Context, cc sdk.ConnectorContext) error {
	c.logger = cc.Logger()
	if !c.cfg.Enabled {
		<-ctx.Done()
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.adminTimeout())
	err := createCompactedTopic(actx, c.target, c.cfg.Policy().CheckpointsTopic(c.cfg.SourceAlias), c.cfg.CheckpointsRF, c.logger)
	cancel()
	if err != nil && ctx.Err() == nil {
		c.logger.Warn("checkpoints topic", "error", err)
	}
	if !c.cfg.RefreshGroups || c.cfg.RefreshGroupsSec <= 0 {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(time.Duration(c.cfg.RefreshGroupsSec) * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		actx, cancel := context.WithTimeout(ctx, c.cfg.adminTimeout())
		groups, err := c.findGroups(actx)
		cancel()
		if err != nil {
			c.logger.Warn("group refresh failed", "error", err)
			continue
		}
		c.mu.Lock()
		changed := !slices.Equal(groups, c.groups)
		c.mu.Unlock()
		if changed {
			c.logger.Info("consumer groups changed: reconfiguring tasks", "groups", len(groups))
			cc.RequestTaskReconfiguration()
		}
	}
}

// checkpointTask emits the checkpoints of its groups.
type checkpointTask struct {
	cfg     CheckpointConfig
	raw     map[string]string
	clients clients
	source  *kadm.Client
	target  *kadm.Client
	logger  *slog.Logger
	topic   string

	mu   sync.Mutex // guards cp (the offset-syncs reader adds syncs)
	cp   *Checkpointer
	stop context.CancelFunc
	done chan struct{}

	nextEmit, nextSync time.Time
}

func (t *checkpointTask) Open(ctx context.Context, tc sdk.SourceTaskContext) error {
	t.logger = tc.Logger()
	t.clients = clients{cfg: &t.cfg.CommonConfig, raw: t.raw, name: tc.Info().Connector}
	var err error
	if t.source, err = t.clients.admin("source", "checkpoint-source-admin"); err != nil {
		return err
	}
	if t.target, err = t.clients.admin("target", "checkpoint-target-admin"); err != nil {
		return err
	}
	policy := t.cfg.Policy()
	t.topic = policy.CheckpointsTopic(t.cfg.SourceAlias)
	// The checkpoints written before (CheckpointStore): without them, the
	// sync store keeps only the latest sync of its first read, so that no
	// checkpoint goes backwards.
	t.cp = &Checkpointer{Source: t.cfg.SourceAlias, Target: t.cfg.TargetAlias, Policy: policy, TopicFilter: t.cfg.TopicFilter()}
	mine := map[string]bool{}
	for _, g := range t.cfg.AssignedGroups {
		mine[g] = true
	}
	loaded := t.readToEnd(ctx, Role{"target", "consumer"}, t.topic, func(r *kgo.Record) {
		if cp, err := DecodeCheckpoint(r.Key, r.Value); err == nil && mine[cp.Group] {
			t.cp.Load(cp)
		}
	}, nil)
	t.cp.Syncs = NewSyncStore(loaded != nil)
	if loaded != nil {
		t.logger.Warn("could not read the checkpoints topic; translating from the latest offset syncs only", "error", loaded)
	}
	// The offset syncs, read to the end before any translation, then
	// followed.
	loc := "source"
	if t.cfg.OffsetSyncsLoc == "target" {
		loc = "target"
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.stop, t.done = cancel, make(chan struct{})
	go func() {
		defer close(t.done)
		add := func(r *kgo.Record) {
			s, err := DecodeOffsetSync(r.Key, r.Value)
			if err != nil {
				t.logger.Warn("bad offset sync", "offset", r.Offset, "error", err)
				return
			}
			t.mu.Lock()
			t.cp.Syncs.Add(s)
			t.mu.Unlock()
		}
		mustReadToEnd := loaded != nil
		for first := true; rctx.Err() == nil; first = false {
			if !first {
				// Read again from the start into a fresh index: replaying
				// old syncs into this one would look like rewinds.
				t.mu.Lock()
				t.cp.Syncs = NewSyncStore(mustReadToEnd)
				t.mu.Unlock()
			}
			err := t.readToEnd(rctx, Role{loc, "consumer"}, t.cfg.OffsetSyncsTopic(), add, func() {
				t.mu.Lock()
				t.cp.Syncs.ReadToEnd()
				t.mu.Unlock()
			})
			if err != nil && rctx.Err() == nil {
				t.logger.Warn("reading the offset syncs failed; retrying", "error", err)
				select {
				case <-rctx.Done():
				case <-time.After(5 * time.Second):
				}
			}
		}
	}()
	now := time.Now()
	t.nextEmit = now.Add(t.interval(t.cfg.EmitCheckpointsSec))
	t.nextSync = now.Add(t.interval(t.cfg.SyncGroupSec))
	t.logger.Info("checkpointing consumer groups", "groups", len(t.cfg.AssignedGroups), "source", t.cfg.SourceAlias, "target", t.cfg.TargetAlias)
	return nil
}

func (t *checkpointTask) interval(sec int64) time.Duration {
	return time.Duration(max(sec, 0)) * time.Second
}

// readToEnd reads partition 0 of topic from the start to its end offset
// at the time of the call. With atEnd set, it then calls atEnd and keeps
// following the topic until ctx ends. Transaction markers and compacted
// records can leave the last offset below the end: a poll that finds
// nothing more also counts as the end.
func (t *checkpointTask) readToEnd(ctx context.Context, r Role, topic string, each func(*kgo.Record), atEnd func()) error {
	cl, err := t.clients.client(r, "internal-topic-consumer", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("end offset of %s: %w", topic, err)
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok {
		return fmt.Errorf("topic %s has no partition 0", topic)
	}
	pos := int64(0)
	follow := atEnd != nil
	atEndNow := pos >= end.Offset
	for {
		if atEndNow {
			if !follow {
				return nil
			}
			if atEnd != nil {
				atEnd()
				atEnd = nil
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, e error) {
			if !errors.Is(e, context.DeadlineExceeded) {
				ferr = errors.Join(ferr, e)
			}
		})
		if ferr != nil {
			return ferr
		}
		n := 0
		fs.EachRecord(func(rec *kgo.Record) {
			each(rec)
			pos = rec.Offset + 1
			n++
		})
		atEndNow = atEndNow || pos >= end.Offset || n == 0
	}
}

func (t *checkpointTask) Poll(ctx context.Context, _ int) ([]sdk.SourceRecord, error) {
	wait := t.nextEmit
	if t.cfg.SyncGroupOffsets && t.nextSync.Before(wait) {
		wait = t.nextSync
	}
	if !t.cfg.EmitCheckpoints && !t.cfg.SyncGroupOffsets {
		<-ctx.Done()
		return nil, nil
	}
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(time.Until(wait)):
	}
	now := time.Now()
	var out []sdk.SourceRecord
	if !now.Before(t.nextEmit) {
		t.nextEmit = now.Add(max(t.interval(t.cfg.EmitCheckpointsSec), time.Second))
		for _, g := range t.cfg.AssignedGroups {
			cps, err := t.checkpoints(ctx, g)
			if err != nil {
				t.logger.Warn("could not checkpoint consumer group", "group", g, "error", err)
				continue
			}
			if !t.cfg.EmitCheckpoints {
				continue
			}
			for _, cp := range cps {
				zero := int32(0)
				out = append(out, sdk.SourceRecord{
					Partition: sdk.Partition{"group": cp.Group, "topic": cp.Topic, "partition": cp.Partition},
					Offset:    sdk.Offset{"offset": int64(0)},
					Topic:     t.topic, KafkaPartition: &zero,
					KeySchema: schema.Bytes, Key: cp.Key(),
					ValueSchema: schema.Bytes, Value: cp.Value(),
					Timestamp: now,
				})
			}
		}
	}
	if t.cfg.SyncGroupOffsets && !now.Before(t.nextSync) {
		t.nextSync = now.Add(max(t.interval(t.cfg.SyncGroupSec), time.Second))
		t.syncGroups(ctx)
	}
	return out, nil
}

// checkpoints translates group's committed offsets on the source.
func (t *checkpointTask) checkpoints(ctx context.Context, group string) ([]Checkpoint, error) {
	actx, cancel := context.WithTimeout(ctx, t.cfg.adminTimeout())
	defer cancel()
	offs, err := t.source.FetchOffsets(actx, group)
	if err != nil {
		return nil, err
	}
	var gos []GroupOffset
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			gos = append(gos, GroupOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.At, Metadata: o.Metadata})
		}
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cp.Checkpoints(group, gos), nil
}

// syncGroups writes the translated offsets into the target's groups that
// have no members (sync.group.offsets.enabled).
func (t *checkpointTask) syncGroups(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, t.cfg.adminTimeout())
	defer cancel()
	t.mu.Lock()
	groups := t.cp.Groups()
	translated := map[string]map[partitionKey]Checkpoint{}
	for _, g := range groups {
		translated[g] = t.cp.Translated(g)
	}
	t.mu.Unlock()
	if len(groups) == 0 {
		return
	}
	described, err := t.target.DescribeGroups(actx, groups...)
	if err != nil && len(described) == 0 {
		t.logger.Warn("describe consumer groups on the target failed", "error", err)
		return
	}
	for _, g := range groups {
		state := ""
		if d, ok := described[g]; ok && d.Err == nil {
			state = d.State
		}
		current := map[partitionKey]int64{}
		if state == "Empty" {
			offs, err := t.target.FetchOffsets(actx, g)
			if err != nil {
				t.logger.Warn("could not read a consumer group's offsets on the target", "group", g, "error", err)
				continue
			}
			offs.Each(func(o kadm.OffsetResponse) {
				if o.Err == nil {
					current[partitionKey{o.Topic, o.Partition}] = o.At
				}
			})
		}
		sync := OffsetsToSync(state, translated[g], current)
		if len(sync) == 0 {
			continue
		}
		os := kadm.Offsets{}
		for k, cp := range sync {
			os.Add(kadm.Offset{Topic: k.topic, Partition: k.partition, At: cp.Downstream, LeaderEpoch: -1, Metadata: cp.Metadata})
		}
		resp, err := t.target.CommitOffsets(actx, g, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.logger.Warn("unable to sync offsets for consumer group (likely consumers are using it on the target)", "group", g, "error", err)
			continue
		}
		t.logger.Debug("synced consumer group offsets", "group", g, "partitions", len(sync))
	}
}

func (t *checkpointTask) Close(context.Context) error {
	if t.stop != nil {
		t.stop()
		<-t.done
	}
	t.clients.close()
	return nil
}

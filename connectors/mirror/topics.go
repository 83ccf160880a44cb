package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createCompactedTopic creates a single-partition compacted internal topic
// if it is missing (MirrorUtils.createSinglePartitionCompactedTopic). An
// existing topic is fine; so is a refusal to create it (an ACL or a
// cluster that creates topics some other way): the writes will tell.
func createCompactedTopic(ctx context.Context, adm *kadm.Client, name string, rf int16, logger *slog.Logger) error {
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &compact}, name)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		logger.Info("created internal topic", "topic", name, "replication.factor", rf)
	case errors.Is(err, kerr.TopicAlreadyExists):
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.UnsupportedVersion), errors.Is(err, kerr.InvalidReplicationFactor):
		logger.Warn("could not create internal topic", "topic", name, "error", err)
	default:
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

// topicPartitions maps topic names to partition counts.
type topicPartitions map[string]int

func listTopics(ctx context.Context, adm *kadm.Client) (topicPartitions, error) {
	details, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	out := topicPartitions{}
	for _, d := range details {
		if d.Err != nil {
			continue
		}
		out[d.Topic] = len(d.Partitions)
	}
	return out, nil
}

// topicSyncer keeps the remote topics of a MirrorSourceConnector in step
// with the source: created with the same partition count and the
// source's configs, partitions added when the source grows, configs and
// ACLs synced.
type topicSyncer struct {
	cfg            *SourceConfig
	policy         ReplicationPolicy
	filter         Filter
	configExclude  Pattern
	source, target *kadm.Client
	logger         *slog.Logger
	noAuthorizer   bool // the source answered SECURITY_DISABLED to DescribeAcls (and it was logged)
}

// sourceTopics lists the source topics to replicate.
func (s *topicSyncer) sourceTopics(ctx context.Context) (topicPartitions, error) {
	all, err := listTopics(ctx, s.source)
	if err != nil {
		return nil, fmt.Errorf("source cluster %s: %w", s.cfg.SourceAlias, err)
	}
	out := topicPartitions{}
	for t, n := range all {
		if s.cfg.shouldReplicateTopic(s.policy, s.filter, t) {
			out[t] = n
		}
	}
	return out, nil
}

// ensureRemote creates the missing remote topics and partitions of the
// source topics src.
func (s *topicSyncer) ensureRemote(ctx context.Context, src topicPartitions) error {
	tgt, err := listTopics(ctx, s.target)
	if err != nil {
		return fmt.Errorf("target cluster %s: %w", s.cfg.TargetAlias, err)
	}
	var create []string
	grow := map[string]int{}
	for t, n := range src {
		remote := s.policy.FormatRemoteTopic(s.cfg.SourceAlias, t)
		have, ok := tgt[remote]
		switch {
		case !ok:
			create = append(create, t)
		case have < n:
			grow[remote] = n
		}
	}
	slices.Sort(create)
	if len(create) > 0 {
		configs, err := s.describe(ctx, create)
		if err != nil {
			return err
		}
		for _, t := range create {
			remote := s.policy.FormatRemoteTopic(s.cfg.SourceAlias, t)
			cfgs := map[string]*string{}
			for _, c := range s.replicable(configs[t]) {
				if c.Source != kmsg.ConfigSourceDefaultConfig || s.cfg.UseDefaultsFrom == "source" {
					cfgs[c.Key] = c.Value
				}
			}
			resp, err := s.target.CreateTopic(ctx, int32(src[t]), int16(s.cfg.ReplicationFactor), cfgs, remote)
			if err == nil {
				err = resp.Err
			}
			if errors.Is(err, kerr.InvalidConfig) || errors.Is(err, kerr.PolicyViolation) {
				// A setting the target does not take: create the topic
				// without them; the config sync reports what it cannot set.
				s.logger.Warn("the target refused the source topic's configs; creating the remote topic without them", "topic", remote, "error", err)
				cfgs = nil
				if resp, err = s.target.CreateTopic(ctx, int32(src[t]), int16(s.cfg.ReplicationFactor), nil, remote); err == nil {
					err = resp.Err
				}
			}
			if errors.Is(err, kerr.TopicAlreadyExists) {
				// The listing missed it (a topic the target's metadata
				// answered with an error is left out): it may still have
				// fewer partitions than the source.
				grow[remote] = src[t]
				continue
			}
			if err != nil {
				return fmt.Errorf("create remote topic %s on %s: %w", remote, s.cfg.TargetAlias, err)
			}
			s.logger.Info("created remote topic", "topic", remote, "partitions", src[t], "configs", len(cfgs))
		}
	}
	for remote, n := range grow {
		resp, err := s.target.UpdatePartitions(ctx, n, remote)
		if err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.InvalidPartitions) {
			continue // it has them already (or more)
		}
		if err != nil {
			return fmt.Errorf("add partitions to %s on %s: %w", remote, s.cfg.TargetAlias, err)
		}
		s.logger.Info("added partitions to remote topic", "topic", remote, "partitions", n)
	}
	return nil
}

func (s *topicSyncer) describe(ctx context.Context, topics []string) (map[string][]kadm.Config, error) {
	rcs, err := s.source.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topic configs on %s: %w", s.cfg.SourceAlias, err)
	}
	out := map[string][]kadm.Config{}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		out[rc.Name] = rc.Configs
	}
	return out, nil
}

// replicable filters configs like MirrorSourceConnector.targetConfig:
// no sensitive or static broker settings, none the property filter
// excludes.
func (s *topicSyncer) replicable(cs []kadm.Config) []kadm.Config {
	var out []kadm.Config
	for _, c := range cs {
		if c.Sensitive || c.Source == kmsg.ConfigSourceStaticBrokerConfig || s.configExclude.Matches(c.Key) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// syncConfigs applies the configs of the replicated source topics src to
// their remote topics with IncrementalAlterConfigs: SET for a value set on
// the source, DELETE (back to the target's default) for a default, unless
// use.defaults.from=source.
func (s *topicSyncer) syncConfigs(ctx context.Context, src topicPartitions) error {
	tgt, err := listTopics(ctx, s.target)
	if err != nil {
		return err
	}
	var topics []string
	for t := range src {
		if _, ok := tgt[s.policy.FormatRemoteTopic(s.cfg.SourceAlias, t)]; ok {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	configs, err := s.describe(ctx, topics)
	if err != nil {
		return err
	}
	for _, t := range topics {
		var ops []kadm.AlterConfig
		for _, c := range s.replicable(configs[t]) {
			if c.Source == kmsg.ConfigSourceDefaultConfig && s.cfg.UseDefaultsFrom != "source" {
				ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: c.Key})
			} else {
				ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: c.Key, Value: c.Value})
			}
		}
		if len(ops) == 0 {
			continue
		}
		remote := s.policy.FormatRemoteTopic(s.cfg.SourceAlias, t)
		resps, err := s.target.AlterTopicConfigs(ctx, ops, remote)
		if err == nil {
			for _, r := range resps {
				err = errors.Join(err, r.Err)
			}
		}
		if errors.Is(err, kerr.UnsupportedVersion) {
			return fmt.Errorf("the target cluster '%s' is not compatible with IncrementalAlterConfigs API: %w", s.cfg.TargetAlias, err)
		}
		if err != nil {
			s.logger.Warn("could not alter configuration of topic", "topic", remote, "error", err)
		}
	}
	return nil
}

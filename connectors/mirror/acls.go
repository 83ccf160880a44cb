package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// remoteTopicACLs maps the topic ACLs of the source cluster to the ACLs
// of their remote topics, as MirrorSourceConnector.syncTopicAcls does:
// only TOPIC ACLs with a LITERAL pattern on a replicated topic are kept;
// ALLOW WRITE is left out (only the mirror writes the remote topic); ALLOW
// ALL becomes ALLOW READ; the resource is the remote topic, LITERAL.
// Everything else (the principal, the host, DENY entries) is copied as is.
func (c *SourceConfig) remoteTopicACLs(p ReplicationPolicy, f Filter, src []kadm.DescribedACL) []kadm.DescribedACL {
	var out []kadm.DescribedACL
	for _, a := range src {
		if a.Type != kmsg.ACLResourceTypeTopic || a.Pattern != kadm.ACLPatternLiteral {
			continue
		}
		if a.Permission == kmsg.ACLPermissionTypeAllow && a.Operation == kadm.OpWrite {
			continue
		}
		if !c.shouldReplicateTopic(p, f, a.Name) {
			continue
		}
		if a.Permission == kmsg.ACLPermissionTypeAllow && a.Operation == kadm.OpAll {
			a.Operation = kadm.OpRead
		}
		a.Name = p.FormatRemoteTopic(c.SourceAlias, a.Name)
		out = append(out, a)
	}
	return out
}

// syncACLs copies the source's topic ACLs to the remote topics on the
// target. Creating an ACL the target already has changes nothing, so the
// sync runs again and again; ACLs removed from the source stay on the
// target (Kafka never deletes them either). Without an authorizer on the
// source the sync is skipped, and said once at info level.
func (s *topicSyncer) syncACLs(ctx context.Context) error {
	src, ok, err := s.sourceTopicACLs(ctx)
	if err != nil || !ok {
		return err
	}
	acls := s.cfg.remoteTopicACLs(s.policy, s.filter, src)
	// One CreateACLs request per principal, host, permission and
	// operation, naming every remote topic it applies to.
	type entry struct {
		principal, host string
		perm            kmsg.ACLPermissionType
		op              kadm.ACLOperation
	}
	topics := map[entry][]string{}
	var order []entry
	for _, a := range acls {
		e := entry{a.Principal, a.Host, a.Permission, a.Operation}
		if _, ok := topics[e]; !ok {
			order = append(order, e)
		}
		if !slices.Contains(topics[e], a.Name) {
			topics[e] = append(topics[e], a.Name)
		}
	}
	s.logger.Debug("syncing topic ACL bindings", "bindings", len(acls))
	for _, e := range order {
		b := kadm.NewACLs().Topics(topics[e]...).Operations(e.op).ResourcePatternType(kadm.ACLPatternLiteral)
		if e.perm == kmsg.ACLPermissionTypeAllow {
			b.Allow(e.principal).AllowHosts(e.host)
		} else {
			b.Deny(e.principal).DenyHosts(e.host)
		}
		res, err := s.target.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("create ACLs on %s cluster: %w", s.cfg.TargetAlias, err)
		}
		for _, r := range res {
			if r.Err != nil {
				s.logger.Warn("could not sync ACL of topic", "topic", r.Name, "principal", r.Principal,
					"operation", r.Operation, "permission", r.Permission, "error", r.Err, "message", r.ErrMessage)
			}
		}
	}
	return nil
}

// sourceTopicACLs lists every topic ACL of the source cluster, of any
// pattern, principal, host, operation and permission (Kafka's
// ANY_TOPIC_ACL filter). ok is false when the source has no authorizer.
func (s *topicSyncer) sourceTopicACLs(ctx context.Context) (acls []kadm.DescribedACL, ok bool, err error) {
	filter := kadm.NewACLs().Topics().ResourcePatternType(kadm.ACLPatternAny).Operations().
		Allow().AllowHosts().Deny().DenyHosts()
	res, err := s.source.DescribeACLs(ctx, filter)
	if err == nil {
		for _, r := range res {
			err = errors.Join(err, r.Err)
		}
	}
	if errors.Is(err, kerr.SecurityDisabled) {
		if !s.noAuthorizer {
			s.noAuthorizer = true
			s.logger.Info("No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing will take place. " +
				"Consider disabling topic ACL syncing by setting sync.topic.acls.enabled to 'false'.")
		} else {
			s.logger.Debug("source-side ACL authorizer still not found; skipping topic ACL sync")
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("describe ACLs on %s cluster: %w", s.cfg.SourceAlias, err)
	}
	for _, r := range res {
		acls = append(acls, r.Described...)
	}
	return acls, true, nil
}

package kafkarest

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func (c v3) groupJSON(g kadm.DescribedGroup) map[string]any {
	state := g.State
	if state == "" {
		state = "UNKNOWN"
	}
	return map[string]any{
		"kind":               "KafkaConsumerGroup",
		"metadata":           resourceMeta{Self: c.url("consumer-groups", g.Group), ResourceName: c.crn("consumer-group=" + g.Group)},
		"cluster_id":         c.cluster,
		"consumer_group_id":  g.Group,
		"is_simple":          g.ProtocolType == "",
		"partition_assignor": g.Protocol,
		"state":              upper(state),
		"coordinator":        related{c.url("brokers", strconv.Itoa(int(g.Coordinator.NodeID)))},
		"consumers":          related{c.url("consumer-groups", g.Group, "consumers")},
		"lag_summary":        related{c.url("consumer-groups", g.Group, "lag-summary")},
	}
}

// upper is Kafka's group state as Confluent's enum spells it
// (PreparingRebalance → PREPARING_REBALANCE).
func upper(s string) string {
	out := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'A' && ch <= 'Z' && i > 0 {
			out = append(out, '_')
		}
		if ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		out = append(out, ch)
	}
	return string(out)
}

func (p *Proxy) v3Groups(w http.ResponseWriter, r *http.Request, c v3) {
	lg, err := p.admin.ListGroups(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	if names := lg.Groups(); len(names) > 0 {
		dg, err := p.admin.DescribeGroups(r.Context(), names...)
		if err != nil {
			v3Fail(w, err)
			return
		}
		for _, g := range dg.Sorted() {
			if g.Err == nil && (g.ProtocolType == "consumer" || g.ProtocolType == "") {
				data = append(data, c.groupJSON(g))
			}
		}
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaConsumerGroupList", c.url("consumer-groups"), data))
}

// describeGroup describes the path's group, a 404 when it does not exist.
func (p *Proxy) describeGroup(r *http.Request) (kadm.DescribedGroup, error) {
	name := chi.URLParam(r, "group")
	dg, err := p.admin.DescribeGroups(r.Context(), name)
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	g, ok := dg[name]
	if !ok || g.State == "Dead" || (g.Err != nil && (g.Err == kerr.GroupIDNotFound)) {
		return g, v3NotFound("Consumer group %s cannot be found.", name)
	}
	if g.Err != nil {
		return g, g.Err
	}
	return g, nil
}

func (p *Proxy) v3Group(w http.ResponseWriter, r *http.Request, c v3) {
	g, err := p.describeGroup(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.groupJSON(g))
}

func (c v3) consumerJSON(group string, m kadm.DescribedGroupMember) map[string]any {
	return map[string]any{
		"kind":              "KafkaConsumer",
		"metadata":          resourceMeta{Self: c.url("consumer-groups", group, "consumers", m.MemberID), ResourceName: c.crn("consumer-group="+group, "consumer="+m.MemberID)},
		"cluster_id":        c.cluster,
		"consumer_group_id": group,
		"consumer_id":       m.MemberID,
		"instance_id":       m.InstanceID,
		"client_id":         m.ClientID,
		"assignments":       related{c.url("consumer-groups", group, "consumers", m.MemberID, "assignments")},
	}
}

func (p *Proxy) v3Consumers(w http.ResponseWriter, r *http.Request, c v3) {
	g, err := p.describeGroup(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	for _, m := range g.Members {
		data = append(data, c.consumerJSON(g.Group, m))
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaConsumerList", c.url("consumer-groups", g.Group, "consumers"), data))
}

func (p *Proxy) v3Consumer(w http.ResponseWriter, r *http.Request, c v3) {
	g, err := p.describeGroup(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	for _, m := range g.Members {
		if m.MemberID == chi.URLParam(r, "consumer") {
			writeJSON(w, http.StatusOK, v3ContentType, c.consumerJSON(g.Group, m))
			return
		}
	}
	v3Fail(w, v3NotFound("Consumer %s cannot be found.", chi.URLParam(r, "consumer")))
}

// groupLag is the path's group's lag, a 404 when it does not exist.
func (p *Proxy) groupLag(r *http.Request) (kadm.DescribedGroupLag, error) {
	name := chi.URLParam(r, "group")
	if _, err := p.describeGroup(r); err != nil {
		return kadm.DescribedGroupLag{}, err
	}
	lags, err := p.admin.Lag(r.Context(), name)
	if err != nil {
		return kadm.DescribedGroupLag{}, err
	}
	l, ok := lags[name]
	if !ok {
		return l, v3NotFound("Consumer group %s cannot be found.", name)
	}
	if l.FetchErr != nil {
		return l, l.FetchErr
	}
	return l, nil
}

func memberIDs(m *kadm.DescribedGroupMember) (consumer, instance, client any) {
	if m == nil {
		return "", nil, ""
	}
	return m.MemberID, m.InstanceID, m.ClientID
}

func (c v3) lagJSON(group string, l kadm.GroupMemberLag) map[string]any {
	id := strconv.Itoa(int(l.Partition))
	consumer, instance, client := memberIDs(l.Member)
	return map[string]any{
		"kind":              "KafkaConsumerLag",
		"metadata":          resourceMeta{Self: c.url("consumer-groups", group, "lags", l.Topic, "partitions", id), ResourceName: c.crn("consumer-group="+group, "lag="+l.Topic, "partition="+id)},
		"cluster_id":        c.cluster,
		"consumer_group_id": group,
		"topic_name":        l.Topic,
		"partition_id":      l.Partition,
		"current_offset":    l.Commit.At,
		"log_end_offset":    l.End.Offset,
		"lag":               l.Lag,
		"consumer_id":       consumer,
		"instance_id":       instance,
		"client_id":         client,
	}
}

func (p *Proxy) v3Lags(w http.ResponseWriter, r *http.Request, c v3) {
	l, err := p.groupLag(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	for _, ml := range l.Lag.Sorted() {
		if ml.Commit.At >= 0 || ml.Member != nil {
			data = append(data, c.lagJSON(l.Group, ml))
		}
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaConsumerLagList", c.url("consumer-groups", l.Group, "lags"), data))
}

func (p *Proxy) v3Lag(w http.ResponseWriter, r *http.Request, c v3) {
	l, err := p.groupLag(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	n, perr := strconv.ParseInt(chi.URLParam(r, "partition"), 10, 32)
	ml, ok := l.Lag.Lookup(chi.URLParam(r, "topic"), int32(n))
	if perr != nil || !ok {
		v3Fail(w, v3NotFound("Consumer lag cannot be found for partition %s-%s.", chi.URLParam(r, "topic"), chi.URLParam(r, "partition")))
		return
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.lagJSON(l.Group, ml))
}

func (p *Proxy) v3LagSummary(w http.ResponseWriter, r *http.Request, c v3) {
	l, err := p.groupLag(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	var maxLag *kadm.GroupMemberLag
	var total int64
	for _, ml := range l.Lag.Sorted() {
		if ml.Lag < 0 {
			continue
		}
		total += ml.Lag
		if maxLag == nil || ml.Lag > maxLag.Lag {
			m := ml
			maxLag = &m
		}
	}
	out := map[string]any{
		"kind":                 "KafkaConsumerGroupLagSummary",
		"metadata":             resourceMeta{Self: c.url("consumer-groups", l.Group, "lag-summary"), ResourceName: c.crn("consumer-group="+l.Group, "lag-summary")},
		"cluster_id":           c.cluster,
		"consumer_group_id":    l.Group,
		"max_lag_consumer_id":  "",
		"max_lag_instance_id":  nil,
		"max_lag_client_id":    "",
		"max_lag_topic_name":   "",
		"max_lag_partition_id": 0,
		"max_lag":              0,
		"total_lag":            total,
	}
	if maxLag != nil {
		consumer, instance, client := memberIDs(maxLag.Member)
		out["max_lag_consumer_id"], out["max_lag_instance_id"], out["max_lag_client_id"] = consumer, instance, client
		out["max_lag_topic_name"], out["max_lag_partition_id"], out["max_lag"] = maxLag.Topic, maxLag.Partition, maxLag.Lag
		out["max_lag_consumer"] = related{c.url("consumer-groups", l.Group, "consumers", consumer.(string))}
		out["max_lag_partition"] = related{c.url("topics", maxLag.Topic, "partitions", strconv.Itoa(int(maxLag.Partition)))}
	}
	writeJSON(w, http.StatusOK, v3ContentType, out)
}

func (p *Proxy) v3ConsumerAssignments(w http.ResponseWriter, r *http.Request, c v3) {
	g, err := p.describeGroup(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	id := chi.URLParam(r, "consumer")
	for _, m := range g.Members {
		if m.MemberID != id {
			continue
		}
		data := []any{}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				for _, pt := range t.Partitions {
					ps := strconv.Itoa(int(pt))
					data = append(data, map[string]any{
						"kind":              "KafkaConsumerAssignment",
						"metadata":          resourceMeta{Self: c.url("consumer-groups", g.Group, "consumers", id, "assignments", t.Topic, "partitions", ps), ResourceName: c.crn("consumer-group="+g.Group, "consumer="+id, "assignment="+t.Topic, "partition="+ps)},
						"cluster_id":        c.cluster,
						"consumer_group_id": g.Group,
						"consumer_id":       id,
						"topic_name":        t.Topic,
						"partition_id":      pt,
						"partition":         related{c.url("topics", t.Topic, "partitions", ps)},
						"lag":               related{c.url("consumer-groups", g.Group, "lags", t.Topic, "partitions", ps)},
					})
				}
			}
		}
		writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaConsumerAssignmentList", c.url("consumer-groups", g.Group, "consumers", id, "assignments"), data))
		return
	}
	v3Fail(w, v3NotFound("Consumer %s cannot be found.", id))
}

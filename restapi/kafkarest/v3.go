package kafkarest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

const v3ContentType = "application/json"

func v3Fail(w http.ResponseWriter, err error) {
	e := asError(err)
	// v3 error codes are HTTP statuses, or Confluent's five digits that
	// start with one (40002 topic exists).
	writeJSON(w, e.Status, v3ContentType, e)
}

func v3NotFound(format string, args ...any) *Error {
	return errorf(http.StatusNotFound, http.StatusNotFound, format, args...)
}

// related is a v3 link.
type related struct {
	Related string `json:"related"`
}

// resourceMeta is the metadata of a v3 resource.
type resourceMeta struct {
	Self         string `json:"self"`
	ResourceName string `json:"resource_name,omitempty"`
}

// listMeta is the metadata of a v3 collection.
type listMeta struct {
	Self string  `json:"self"`
	Next *string `json:"next"`
}

type list struct {
	Kind     string   `json:"kind"`
	Metadata listMeta `json:"metadata"`
	Data     any      `json:"data"`
}

// v3 carries what a v3 request's answers link to.
type v3 struct {
	base    string // scheme://host/v3/clusters/{id}
	cluster string
}

func (c v3) url(parts ...string) string {
	return c.base + "/" + strings.Join(parts, "/")
}

func (c v3) crn(parts ...string) string {
	return "crn:///kafka=" + c.cluster + "/" + strings.Join(parts, "/")
}

func (c v3) list(kind, self string, data any) list {
	return list{Kind: kind, Metadata: listMeta{Self: self}, Data: data}
}

func (p *Proxy) routesV3(r chi.Router) {
	r.Get("/v3/clusters", p.v3Clusters)
	r.Route("/v3/clusters/{cluster}", func(r chi.Router) {
		r.Get("/", p.withCluster(p.v3Cluster))
		r.Get("/brokers", p.withCluster(p.v3Brokers))
		r.Get("/brokers/{broker}", p.withCluster(p.v3Broker))
		r.Get("/topics", p.withCluster(p.v3Topics))
		r.Post("/topics", p.withCluster(p.v3CreateTopic))
		r.Get("/topics/{topic}", p.withCluster(p.v3Topic))
		r.Delete("/topics/{topic}", p.withCluster(p.v3DeleteTopic))
		r.Get("/topics/{topic}/configs", p.withCluster(p.v3TopicConfigs))
		r.Post("/topics/{topic}/configs:alter", p.withCluster(p.v3AlterTopicConfigs))
		r.Get("/topics/{topic}/configs/{name}", p.withCluster(p.v3TopicConfig))
		r.Put("/topics/{topic}/configs/{name}", p.withCluster(p.v3SetTopicConfig))
		r.Delete("/topics/{topic}/configs/{name}", p.withCluster(p.v3ResetTopicConfig))
		r.Get("/topics/{topic}/partitions", p.withCluster(p.v3Partitions))
		r.Get("/topics/{topic}/partitions/{partition}", p.withCluster(p.v3Partition))
		r.Get("/topics/{topic}/partitions/{partition}/replicas", p.withCluster(p.v3Replicas))
		r.Post("/topics/{topic}/records", p.withCluster(p.v3Produce))
		r.Get("/consumer-groups", p.withCluster(p.v3Groups))
		r.Get("/consumer-groups/{group}", p.withCluster(p.v3Group))
		r.Get("/consumer-groups/{group}/consumers", p.withCluster(p.v3Consumers))
		r.Get("/consumer-groups/{group}/consumers/{consumer}", p.withCluster(p.v3Consumer))
		r.Get("/consumer-groups/{group}/consumers/{consumer}/assignments", p.withCluster(p.v3ConsumerAssignments))
		r.Get("/consumer-groups/{group}/lag-summary", p.withCluster(p.v3LagSummary))
		r.Get("/consumer-groups/{group}/lags", p.withCluster(p.v3Lags))
		r.Get("/consumer-groups/{group}/lags/{topic}/partitions/{partition}", p.withCluster(p.v3Lag))
		r.Get("/acls", p.withCluster(p.v3SearchACLs))
		r.Post("/acls", p.withCluster(p.v3CreateACL))
		r.Post("/acls:batch", p.withCluster(p.v3CreateACLBatch))
		r.Delete("/acls", p.withCluster(p.v3DeleteACLs))
	})
}

// clusterMeta is the cluster's id, controller and brokers, asked at most
// once a second.
func (p *Proxy) clusterMeta(ctx context.Context) (kadm.Metadata, error) {
	p.metaMu.Lock()
	m, at := p.cluster, p.clusterAt
	p.metaMu.Unlock()
	if !at.IsZero() && time.Since(at) < time.Second {
		return m, nil
	}
	m, err := p.admin.BrokerMetadata(ctx)
	if err != nil {
		return m, err
	}
	p.metaMu.Lock()
	p.cluster, p.clusterAt = m, time.Now()
	p.metaMu.Unlock()
	return m, nil
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withCluster checks the {cluster} of the path is this cluster's id.
func (p *Proxy) withCluster(h func(http.ResponseWriter, *http.Request, v3)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "cluster")
		m, err := p.clusterMeta(r.Context())
		if err != nil {
			v3Fail(w, err)
			return
		}
		if id != m.Cluster {
			v3Fail(w, v3NotFound("Cluster %s cannot be found.", id))
			return
		}
		h(w, r, v3{base: baseURL(r) + "/v3/clusters/" + id, cluster: id})
	}
}

func (c v3) clusterJSON(m kadm.Metadata) map[string]any {
	return map[string]any{
		"kind":                    "KafkaCluster",
		"metadata":                resourceMeta{Self: c.base, ResourceName: "crn:///kafka=" + c.cluster},
		"cluster_id":              c.cluster,
		"controller":              related{c.url("brokers", strconv.Itoa(int(m.Controller)))},
		"acls":                    related{c.url("acls")},
		"brokers":                 related{c.url("brokers")},
		"broker_configs":          related{c.url("broker-configs")},
		"consumer_groups":         related{c.url("consumer-groups")},
		"topics":                  related{c.url("topics")},
		"partition_reassignments": related{c.url("topics", "-", "partitions", "-", "reassignment")},
	}
}

func (p *Proxy) v3Clusters(w http.ResponseWriter, r *http.Request) {
	m, err := p.clusterMeta(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	c := v3{base: baseURL(r) + "/v3/clusters/" + m.Cluster, cluster: m.Cluster}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaClusterList", baseURL(r)+"/v3/clusters", []any{c.clusterJSON(m)}))
}

func (p *Proxy) v3Cluster(w http.ResponseWriter, r *http.Request, c v3) {
	m, err := p.clusterMeta(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.clusterJSON(m))
}

func (c v3) brokerJSON(b kadm.BrokerDetail) map[string]any {
	id := strconv.Itoa(int(b.NodeID))
	return map[string]any{
		"kind":               "KafkaBroker",
		"metadata":           resourceMeta{Self: c.url("brokers", id), ResourceName: c.crn("broker=" + id)},
		"cluster_id":         c.cluster,
		"broker_id":          b.NodeID,
		"host":               b.Host,
		"port":               b.Port,
		"rack":               b.Rack,
		"configs":            related{c.url("brokers", id, "configs")},
		"partition_replicas": related{c.url("brokers", id, "partition-replicas")},
	}
}

func (p *Proxy) v3Brokers(w http.ResponseWriter, r *http.Request, c v3) {
	m, err := p.clusterMeta(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	bs := slices.Clone(m.Brokers)
	slices.SortFunc(bs, func(a, b kadm.BrokerDetail) int { return int(a.NodeID - b.NodeID) })
	for _, b := range bs {
		data = append(data, c.brokerJSON(b))
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaBrokerList", c.url("brokers"), data))
}

func (p *Proxy) v3Broker(w http.ResponseWriter, r *http.Request, c v3) {
	m, err := p.clusterMeta(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	for _, b := range m.Brokers {
		if strconv.Itoa(int(b.NodeID)) == chi.URLParam(r, "broker") {
			writeJSON(w, http.StatusOK, v3ContentType, c.brokerJSON(b))
			return
		}
	}
	v3Fail(w, v3NotFound("Broker %s cannot be found.", chi.URLParam(r, "broker")))
}

func (c v3) topicJSON(d kadm.TopicDetail) map[string]any {
	rf := 0
	for _, pd := range d.Partitions {
		rf = max(rf, len(pd.Replicas))
	}
	return map[string]any{
		"kind":                    "KafkaTopic",
		"metadata":                resourceMeta{Self: c.url("topics", d.Topic), ResourceName: c.crn("topic=" + d.Topic)},
		"cluster_id":              c.cluster,
		"topic_name":              d.Topic,
		"is_internal":             d.IsInternal,
		"replication_factor":      rf,
		"partitions_count":        len(d.Partitions),
		"partitions":              related{c.url("topics", d.Topic, "partitions")},
		"configs":                 related{c.url("topics", d.Topic, "configs")},
		"partition_reassignments": related{c.url("topics", d.Topic, "partitions", "-", "reassignment")},
		"authorized_operations":   []string{},
	}
}

// v3TopicNotFound is Confluent's v3 404 for a topic.
func v3TopicNotFound(topic string) *Error {
	return v3NotFound("This server does not host this topic-partition.")
}

// v3TopicDetail is topicDetail with v3's not-found body.
func (p *Proxy) v3TopicDetail(ctx context.Context, topic string) (kadm.TopicDetail, error) {
	d, err := p.topicDetail(ctx, topic)
	if errors.Is(err, errTopicNotFound) {
		return d, v3TopicNotFound(topic)
	}
	return d, err
}

func (p *Proxy) v3Topics(w http.ResponseWriter, r *http.Request, c v3) {
	td, err := p.admin.ListTopics(r.Context())
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	for _, d := range td.Sorted() {
		data = append(data, c.topicJSON(d))
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaTopicList", c.url("topics"), data))
}

func (p *Proxy) v3Topic(w http.ResponseWriter, r *http.Request, c v3) {
	d, err := p.v3TopicDetail(r.Context(), chi.URLParam(r, "topic"))
	if err != nil {
		v3Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.topicJSON(d))
}

// v3KafkaError maps a Kafka error code of an admin answer to v3's body:
// the client's mistakes are 400s (40002 for an existing topic), the rest
// Kafka errors.
func v3KafkaError(err error, msg string) *Error {
	if msg == "" {
		msg = err.Error()
	}
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		return errorf(http.StatusBadRequest, 40002, "%s", msg)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return v3NotFound("This server does not host this topic-partition.")
	case errors.Is(err, kerr.InvalidTopicException), errors.Is(err, kerr.InvalidPartitions),
		errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidConfig),
		errors.Is(err, kerr.InvalidRequest), errors.Is(err, kerr.PolicyViolation),
		errors.Is(err, kerr.InvalidReplicaAssignment):
		return errorf(http.StatusBadRequest, http.StatusBadRequest, "%s", msg)
	case errors.Is(err, kerr.TopicDeletionDisabled):
		return errorf(http.StatusForbidden, http.StatusForbidden, "%s", msg)
	case errors.Is(err, kerr.SecurityDisabled):
		return errorf(http.StatusBadRequest, http.StatusBadRequest, "%s", msg)
	}
	return kafkaError(err)
}

func (p *Proxy) v3CreateTopic(w http.ResponseWriter, r *http.Request, c v3) {
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return
	}
	req, perr := parseCreateTopic(body)
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	configs := map[string]*string{}
	for _, kv := range req.Configs {
		configs[kv.Name] = kv.Value
	}
	if req.ValidateOnly {
		resp, err := p.admin.ValidateCreateTopics(r.Context(), req.Partitions, req.Replication, configs, req.Name)
		if err != nil {
			v3Fail(w, err)
			return
		}
		if cr, ok := resp[req.Name]; ok && cr.Err != nil {
			v3Fail(w, v3KafkaError(cr.Err, cr.ErrMessage))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	resp, err := p.admin.CreateTopic(r.Context(), req.Partitions, req.Replication, configs, req.Name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		msg := resp.ErrMessage
		if errors.Is(err, kerr.TopicAlreadyExists) {
			msg = fmt.Sprintf("Topic '%s' already exists.", req.Name)
		}
		v3Fail(w, v3KafkaError(err, msg))
		return
	}
	p.forgetTopic(req.Name)
	d, derr := p.v3TopicDetail(r.Context(), req.Name)
	if derr != nil {
		// Created; the metadata may lag behind.
		d = kadm.TopicDetail{Topic: req.Name, Partitions: kadm.PartitionDetails{}}
	}
	w.Header().Set("Location", c.url("topics", req.Name))
	writeJSON(w, http.StatusCreated, v3ContentType, c.topicJSON(d))
}

func (p *Proxy) v3DeleteTopic(w http.ResponseWriter, r *http.Request, c v3) {
	topic := chi.URLParam(r, "topic")
	if _, err := p.v3TopicDetail(r.Context(), topic); err != nil {
		v3Fail(w, err)
		return
	}
	resp, err := p.admin.DeleteTopic(r.Context(), topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		v3Fail(w, v3KafkaError(err, resp.ErrMessage))
		return
	}
	p.forgetTopic(topic)
	w.WriteHeader(http.StatusNoContent)
}

// configSource is v3's name for a config source.
func configSource(s string) string {
	if s == "" || s == "UNKNOWN" {
		return "UNKNOWN"
	}
	return s
}

func (c v3) topicConfigJSON(topic string, cf kadm.Config) map[string]any {
	syn := []map[string]any{}
	for _, s := range cf.Synonyms {
		syn = append(syn, map[string]any{"name": s.Key, "value": s.Value, "source": configSource(s.Source.String())})
	}
	source := configSource(cf.Source.String())
	return map[string]any{
		"kind":         "KafkaTopicConfig",
		"metadata":     resourceMeta{Self: c.url("topics", topic, "configs", cf.Key), ResourceName: c.crn("topic="+topic, "config="+cf.Key)},
		"cluster_id":   c.cluster,
		"topic_name":   topic,
		"name":         cf.Key,
		"value":        cf.Value,
		"is_default":   source == "DEFAULT_CONFIG",
		"is_read_only": false,
		"is_sensitive": cf.Sensitive,
		"source":       source,
		"synonyms":     syn,
	}
}

// topicConfigs describes topic's configs; a 404 when there is no topic.
func (p *Proxy) topicConfigs(ctx context.Context, topic string) ([]kadm.Config, error) {
	if _, err := p.v3TopicDetail(ctx, topic); err != nil {
		return nil, err
	}
	rc, err := p.admin.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	if len(rc) != 1 {
		return nil, v3TopicNotFound(topic)
	}
	if rc[0].Err != nil {
		return nil, v3KafkaError(rc[0].Err, rc[0].ErrMessage)
	}
	cs := slices.Clone(rc[0].Configs)
	slices.SortFunc(cs, func(a, b kadm.Config) int { return strings.Compare(a.Key, b.Key) })
	return cs, nil
}

func (p *Proxy) v3TopicConfigs(w http.ResponseWriter, r *http.Request, c v3) {
	topic := chi.URLParam(r, "topic")
	cs, err := p.topicConfigs(r.Context(), topic)
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	for _, cf := range cs {
		data = append(data, c.topicConfigJSON(topic, cf))
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaTopicConfigList", c.url("topics", topic, "configs"), data))
}

func (p *Proxy) v3TopicConfig(w http.ResponseWriter, r *http.Request, c v3) {
	topic, name := chi.URLParam(r, "topic"), chi.URLParam(r, "name")
	cs, err := p.topicConfigs(r.Context(), topic)
	if err != nil {
		v3Fail(w, err)
		return
	}
	for _, cf := range cs {
		if cf.Key == name {
			writeJSON(w, http.StatusOK, v3ContentType, c.topicConfigJSON(topic, cf))
			return
		}
	}
	v3Fail(w, v3NotFound("Config %s cannot be found for topic %s.", name, topic))
}

// alterTopicConfigs applies ops incrementally, after checking the topic
// and every name exist.
func (p *Proxy) alterTopicConfigs(ctx context.Context, topic string, ops []kadm.AlterConfig, validateOnly bool) error {
	cs, err := p.topicConfigs(ctx, topic)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !slices.ContainsFunc(cs, func(cf kadm.Config) bool { return cf.Key == op.Name }) {
			return v3NotFound("Config %s cannot be found for topic %s.", op.Name, topic)
		}
	}
	alter := p.admin.AlterTopicConfigs
	if validateOnly {
		alter = p.admin.ValidateAlterTopicConfigs
	}
	resp, err := alter(ctx, ops, topic)
	if err != nil {
		return err
	}
	for _, ar := range resp {
		if ar.Err != nil {
			return v3KafkaError(ar.Err, ar.ErrMessage)
		}
	}
	return nil
}

func (p *Proxy) v3SetTopicConfig(w http.ResponseWriter, r *http.Request, c v3) {
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return
	}
	v, perr := parseConfigValue(body)
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	op := kadm.AlterConfig{Op: kadm.SetConfig, Name: chi.URLParam(r, "name"), Value: v}
	if err := p.alterTopicConfigs(r.Context(), chi.URLParam(r, "topic"), []kadm.AlterConfig{op}, false); err != nil {
		v3Fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) v3ResetTopicConfig(w http.ResponseWriter, r *http.Request, c v3) {
	op := kadm.AlterConfig{Op: kadm.DeleteConfig, Name: chi.URLParam(r, "name")}
	if err := p.alterTopicConfigs(r.Context(), chi.URLParam(r, "topic"), []kadm.AlterConfig{op}, false); err != nil {
		v3Fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) v3AlterTopicConfigs(w http.ResponseWriter, r *http.Request, c v3) {
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return
	}
	ops, validate, perr := parseAlterConfigs(body)
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	if err := p.alterTopicConfigs(r.Context(), chi.URLParam(r, "topic"), ops, validate); err != nil {
		v3Fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c v3) partitionJSON(pd kadm.PartitionDetail) map[string]any {
	id := strconv.Itoa(int(pd.Partition))
	return map[string]any{
		"kind":         "KafkaPartition",
		"metadata":     resourceMeta{Self: c.url("topics", pd.Topic, "partitions", id), ResourceName: c.crn("topic="+pd.Topic, "partition="+id)},
		"cluster_id":   c.cluster,
		"topic_name":   pd.Topic,
		"partition_id": pd.Partition,
		"leader":       related{c.url("topics", pd.Topic, "partitions", id, "replicas", strconv.Itoa(int(pd.Leader)))},
		"replicas":     related{c.url("topics", pd.Topic, "partitions", id, "replicas")},
		"reassignment": related{c.url("topics", pd.Topic, "partitions", id, "reassignment")},
	}
}

func (p *Proxy) v3Partitions(w http.ResponseWriter, r *http.Request, c v3) {
	topic := chi.URLParam(r, "topic")
	d, err := p.v3TopicDetail(r.Context(), topic)
	if err != nil {
		v3Fail(w, err)
		return
	}
	data := []any{}
	for _, pd := range d.Partitions.Sorted() {
		data = append(data, c.partitionJSON(pd))
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaPartitionList", c.url("topics", topic, "partitions"), data))
}

// v3PartitionDetail finds the path's partition, with v3's 404s.
func (p *Proxy) v3PartitionDetail(r *http.Request) (kadm.PartitionDetail, error) {
	d, err := p.v3TopicDetail(r.Context(), chi.URLParam(r, "topic"))
	if err != nil {
		return kadm.PartitionDetail{}, err
	}
	n, perr := strconv.ParseInt(chi.URLParam(r, "partition"), 10, 32)
	pd, ok := d.Partitions[int32(n)]
	if perr != nil || !ok {
		return pd, v3NotFound("This server does not host this topic-partition.")
	}
	return pd, nil
}

func (p *Proxy) v3Partition(w http.ResponseWriter, r *http.Request, c v3) {
	pd, err := p.v3PartitionDetail(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.partitionJSON(pd))
}

func (p *Proxy) v3Replicas(w http.ResponseWriter, r *http.Request, c v3) {
	pd, err := p.v3PartitionDetail(r)
	if err != nil {
		v3Fail(w, err)
		return
	}
	id := strconv.Itoa(int(pd.Partition))
	data := []any{}
	for _, b := range pd.Replicas {
		bid := strconv.Itoa(int(b))
		data = append(data, map[string]any{
			"kind":         "KafkaReplica",
			"metadata":     resourceMeta{Self: c.url("topics", pd.Topic, "partitions", id, "replicas", bid), ResourceName: c.crn("topic="+pd.Topic, "partition="+id, "replica="+bid)},
			"cluster_id":   c.cluster,
			"topic_name":   pd.Topic,
			"partition_id": pd.Partition,
			"broker_id":    b,
			"is_leader":    b == pd.Leader,
			"is_in_sync":   slices.Contains(pd.ISR, b),
			"broker":       related{c.url("brokers", bid)},
		})
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaReplicaList", c.url("topics", pd.Topic, "partitions", id, "replicas"), data))
}

package kafkarest

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func (p *Proxy) routesV2(r chi.Router) {
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, v2ContentType, struct{}{}) })
	r.Get("/topics", p.v2Topics)
	r.Get("/topics/{topic}", p.v2Topic)
	r.Post("/topics/{topic}", p.v2Produce)
	r.Get("/topics/{topic}/partitions", p.v2Partitions)
	r.Get("/topics/{topic}/partitions/{partition}", p.v2Partition)
	r.Post("/topics/{topic}/partitions/{partition}", p.v2Produce)
	r.Get("/topics/{topic}/partitions/{partition}/offsets", p.v2PartitionOffsets)
	r.Get("/brokers", p.v2Brokers)
	p.routesV2Consumers(r)
}

func isUnknownTopic(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID)
}

func v2Fail(w http.ResponseWriter, err error) { writeError(w, v2ContentType, err) }

func (p *Proxy) v2Topics(w http.ResponseWriter, r *http.Request) {
	td, err := p.admin.ListTopics(r.Context())
	if err != nil {
		v2Fail(w, err)
		return
	}
	names := []string{}
	for _, d := range td.Sorted() {
		if !d.IsInternal {
			names = append(names, d.Topic)
		}
	}
	writeJSON(w, http.StatusOK, v2ContentType, names)
}

// v2Replica and v2PartitionJSON are the v2 partition entity.
type v2Replica struct {
	Broker int32 `json:"broker"`
	Leader bool  `json:"leader"`
	InSync bool  `json:"in_sync"`
}

type v2PartitionJSON struct {
	Partition int32       `json:"partition"`
	Leader    int32       `json:"leader"`
	Replicas  []v2Replica `json:"replicas"`
}

func v2PartitionOf(pd kadm.PartitionDetail) v2PartitionJSON {
	out := v2PartitionJSON{Partition: pd.Partition, Leader: pd.Leader, Replicas: []v2Replica{}}
	for _, b := range pd.Replicas {
		out.Replicas = append(out.Replicas, v2Replica{Broker: b, Leader: b == pd.Leader, InSync: slices.Contains(pd.ISR, b)})
	}
	return out
}

// topicDetail is one topic's metadata; errTopicNotFound when it does not
// exist.
func (p *Proxy) topicDetail(ctx context.Context, topic string) (kadm.TopicDetail, error) {
	td, err := p.admin.ListTopics(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	d, ok := td[topic]
	if !ok || (d.Err != nil && isUnknownTopic(d.Err)) {
		return d, errTopicNotFound
	}
	if d.Err != nil {
		return d, d.Err
	}
	return d, nil
}

func (p *Proxy) v2Topic(w http.ResponseWriter, r *http.Request) {
	topic := chi.URLParam(r, "topic")
	d, err := p.topicDetail(r.Context(), topic)
	if err != nil {
		v2Fail(w, err)
		return
	}
	configs := map[string]string{}
	rc, err := p.admin.DescribeTopicConfigs(r.Context(), topic)
	if err == nil && len(rc) == 1 && rc[0].Err == nil {
		for _, c := range rc[0].Configs {
			if c.Value != nil {
				configs[c.Key] = *c.Value
			}
		}
	}
	parts := []v2PartitionJSON{}
	for _, pd := range d.Partitions.Sorted() {
		parts = append(parts, v2PartitionOf(pd))
	}
	writeJSON(w, http.StatusOK, v2ContentType, map[string]any{"name": topic, "configs": configs, "partitions": parts})
}

func (p *Proxy) v2Partitions(w http.ResponseWriter, r *http.Request) {
	d, err := p.topicDetail(r.Context(), chi.URLParam(r, "topic"))
	if err != nil {
		v2Fail(w, err)
		return
	}
	parts := []v2PartitionJSON{}
	for _, pd := range d.Partitions.Sorted() {
		parts = append(parts, v2PartitionOf(pd))
	}
	writeJSON(w, http.StatusOK, v2ContentType, parts)
}

// partitionDetail is one partition's metadata, or the not-found errors.
func (p *Proxy) partitionDetail(r *http.Request) (kadm.PartitionDetail, error) {
	part, perr := pathPartition(r)
	if perr != nil {
		return kadm.PartitionDetail{}, perr
	}
	d, err := p.topicDetail(r.Context(), chi.URLParam(r, "topic"))
	if err != nil {
		return kadm.PartitionDetail{}, err
	}
	pd, ok := d.Partitions[part]
	if !ok {
		return pd, errPartitionNotFound
	}
	return pd, nil
}

func (p *Proxy) v2Partition(w http.ResponseWriter, r *http.Request) {
	pd, err := p.partitionDetail(r)
	if err != nil {
		v2Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v2ContentType, v2PartitionOf(pd))
}

func (p *Proxy) v2PartitionOffsets(w http.ResponseWriter, r *http.Request) {
	pd, err := p.partitionDetail(r)
	if err != nil {
		v2Fail(w, err)
		return
	}
	start, end, err := p.partitionOffsets(r.Context(), pd.Topic, pd.Partition)
	if err != nil {
		v2Fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v2ContentType, map[string]int64{"beginning_offset": start, "end_offset": end})
}

// partitionOffsets are a partition's log start and end offsets.
func (p *Proxy) partitionOffsets(ctx context.Context, topic string, part int32) (start, end int64, err error) {
	so, err := p.admin.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	eo, err := p.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	s, ok1 := so.Lookup(topic, part)
	e, ok2 := eo.Lookup(topic, part)
	if !ok1 || !ok2 {
		return 0, 0, errPartitionNotFound
	}
	if s.Err != nil {
		return 0, 0, s.Err
	}
	if e.Err != nil {
		return 0, 0, e.Err
	}
	return s.Offset, e.Offset, nil
}

func (p *Proxy) v2Brokers(w http.ResponseWriter, r *http.Request) {
	bs, err := p.admin.ListBrokers(r.Context())
	if err != nil {
		v2Fail(w, err)
		return
	}
	ids := []int32{}
	for _, b := range bs {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	writeJSON(w, http.StatusOK, v2ContentType, map[string][]int32{"brokers": ids})
}

// v2Offset is one record's result in a v2 produce response.
type v2Offset struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

// v2Produce answers POST /topics/{t} and POST /topics/{t}/partitions/{p}:
// every record of the body is produced with acks=all and reported with its
// offset, or its error, once the broker answered for all of them.
func (p *Proxy) v2Produce(w http.ResponseWriter, r *http.Request) {
	f, ok := parseV2MediaType(r.Header.Get("Content-Type"))
	if !ok {
		v2Fail(w, errorf(http.StatusUnsupportedMediaType, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type"))
		return
	}
	topic := chi.URLParam(r, "topic")
	forced := int32(-1)
	if chi.URLParam(r, "partition") != "" {
		part, perr := pathPartition(r)
		if perr != nil {
			v2Fail(w, perr)
			return
		}
		forced = part
	}
	body, berr := p.readBody(r)
	if berr != nil {
		v2Fail(w, berr)
		return
	}
	var recs []v2Record
	var perr *Error
	var keyID, valueID *int
	if f.needsRegistry() {
		recs, keyID, valueID, perr = p.parseSchemaProduce(r.Context(), f, topic, body)
	} else {
		recs, perr = parseV2Produce(f, body)
	}
	if perr != nil {
		v2Fail(w, perr)
		return
	}
	n, err := p.produceTarget(r.Context(), topic)
	if err != nil {
		v2Fail(w, err)
		return
	}
	if forced >= 0 && int(forced) >= n {
		v2Fail(w, errPartitionNotFound)
		return
	}
	for i := range recs {
		if forced >= 0 {
			recs[i].Partition = forced
		}
		if int(recs[i].Partition) >= n {
			v2Fail(w, unprocessable("records[%d].partition: topic %s has %d partitions", i, topic, n))
			return
		}
	}
	offsets := make([]v2Offset, len(recs))
	var wg sync.WaitGroup
	wg.Add(len(recs))
	for i, rec := range recs {
		kr := &kgo.Record{Topic: topic, Key: rec.Key, Value: rec.Value}
		cl := p.prod
		if rec.Partition >= 0 {
			kr.Partition = rec.Partition
			cl = p.manual
		}
		cl.Produce(context.WithoutCancel(r.Context()), kr, func(kr *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				e := kafkaError(err)
				offsets[i] = v2Offset{ErrorCode: &e.Code, Error: &e.Message}
				return
			}
			part, off := kr.Partition, kr.Offset
			offsets[i] = v2Offset{Partition: &part, Offset: &off}
		})
	}
	wg.Wait()
	writeJSON(w, http.StatusOK, v2ContentType, map[string]any{"key_schema_id": keyID, "value_schema_id": valueID, "offsets": offsets})
}

package broker

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The broker's Prometheus series are named as the Prometheus JMX
// exporter names Apache Kafka's broker MBeans with Strimzi's rules
// (packaging/examples/metrics/kafka-metrics.yaml), so that Strimzi's Kafka
// dashboard reads them, and the consumer groups' lag as kafka_exporter
// names it (Strimzi's Kafka Exporter dashboard): what they measure,
// bytes and messages per topic, requests and their latency per API, logs
// per partition, group lag, is the same.

// topicMetrics are a topic's BrokerTopicMetrics counters.
type topicMetrics struct {
	bytesIn, bytesOut, messagesIn, messagesOut atomic.Int64
}

// maxKey bounds the API keys counted.
const maxKey = 128

// requestMetrics count requests per API key and version, and time them.
type requestMetrics struct {
	counts  [maxKey][32]atomic.Int64
	latency [maxKey]prometheus.Observer // nil: an API the broker does not serve
	vec     *prometheus.SummaryVec
}

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{vec: prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Name:       "kafka_network_requestmetrics_totaltimems",
		Help:       "Time from the request being read to its response written, in milliseconds (Kafka's RequestMetrics TotalTimeMs), by API.",
		Objectives: map[float64]float64{0.5: 0.05, 0.75: 0.02, 0.95: 0.005, 0.98: 0.002, 0.99: 0.001, 0.999: 0.0001},
		MaxAge:     time.Minute, AgeBuckets: 5,
	}, []string{"request"})}
	for key := range apiByKey {
		if key >= 0 && int(key) < maxKey {
			m.latency[key] = m.vec.WithLabelValues(kmsg.NameForKey(key))
		}
	}
	return m
}

// request counts a request of key at version.
func (m *requestMetrics) request(key, version int16) {
	if m != nil && key >= 0 && int(key) < maxKey && version >= 0 && int(version) < len(m.counts[key]) {
		m.counts[key][version].Add(1)
	}
}

// answered observes the time a request of key took, until its response
// was written.
func (m *requestMetrics) answered(key int16, since time.Time) {
	if m != nil && key >= 0 && int(key) < maxKey && m.latency[key] != nil {
		m.latency[key].Observe(float64(time.Since(since).Microseconds()) / 1000)
	}
}

// brokerCollector writes the series computed when scraped.
type brokerCollector struct{ b *Broker }

func (brokerCollector) Describe(chan<- *prometheus.Desc) {}

var (
	descBytesIn     = prometheus.NewDesc("kafka_server_brokertopicmetrics_bytesin_total", "Bytes of record batches produced to the topic (all topics without the label).", []string{"topic"}, nil)
	descBytesOut    = prometheus.NewDesc("kafka_server_brokertopicmetrics_bytesout_total", "Bytes of record batches fetched from the topic (all topics without the label).", []string{"topic"}, nil)
	descMessagesIn  = prometheus.NewDesc("kafka_server_brokertopicmetrics_messagesin_total", "Records produced to the topic (all topics without the label).", []string{"topic"}, nil)
	descMessagesOut = prometheus.NewDesc("kafka_server_brokertopicmetrics_messagesout_total", "Records in the batches fetched from the topic, as their batch headers count them (Tributary's; Kafka has no MessagesOutPerSec).", []string{"topic"}, nil)
	descBytesInAll  = prometheus.NewDesc("kafka_server_brokertopicmetrics_bytesin_total", "Bytes of record batches produced to the topic (all topics without the label).", nil, nil)
	descBytesOutAll = prometheus.NewDesc("kafka_server_brokertopicmetrics_bytesout_total", "Bytes of record batches fetched from the topic (all topics without the label).", nil, nil)
	descMsgsInAll   = prometheus.NewDesc("kafka_server_brokertopicmetrics_messagesin_total", "Records produced to the topic (all topics without the label).", nil, nil)
	descMsgsOutAll  = prometheus.NewDesc("kafka_server_brokertopicmetrics_messagesout_total", "Records in the batches fetched from the topic, as their batch headers count them (Tributary's; Kafka has no MessagesOutPerSec).", nil, nil)
	descRequests    = prometheus.NewDesc("kafka_network_requestmetrics_requests_total", "Requests received, by API and version (Kafka's RequestMetrics RequestsPerSec).", []string{"request", "version"}, nil)
	descLogSize     = prometheus.NewDesc("kafka_log_log_size", "Bytes of the partition's log segments.", []string{"topic", "partition"}, nil)
	descLogEnd      = prometheus.NewDesc("kafka_log_log_logendoffset", "The partition's log end offset.", []string{"topic", "partition"}, nil)
	descLogStart    = prometheus.NewDesc("kafka_log_log_logstartoffset", "The partition's log start offset.", []string{"topic", "partition"}, nil)
	descSegments    = prometheus.NewDesc("kafka_log_log_numlogsegments", "The partition's number of log segments.", []string{"topic", "partition"}, nil)
	descURP         = prometheus.NewDesc("kafka_server_replicamanager_underreplicatedpartitions", "Partitions with fewer in-sync replicas than replicas: always 0 for a single-node broker.", nil, nil)
	descPartitions  = prometheus.NewDesc("kafka_server_replicamanager_partitioncount", "Partitions on this broker.", nil, nil)
	descLeaders     = prometheus.NewDesc("kafka_server_replicamanager_leadercount", "Partitions this broker leads: all of them.", nil, nil)
	descController  = prometheus.NewDesc("kafka_controller_kafkacontroller_activecontrollercount", "Whether this broker is the active controller: always 1.", nil, nil)
	descOffline     = prometheus.NewDesc("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a leader: always 0.", nil, nil)
	descConns       = prometheus.NewDesc("kafka_server_socket_server_metrics_connection_count", "Open client connections.", []string{"listener", "networkProcessor"}, nil)
	descTopicParts  = prometheus.NewDesc("kafka_topic_partitions", "The topic's number of partitions (kafka_exporter).", []string{"topic"}, nil)
	descPartCurrent = prometheus.NewDesc("kafka_topic_partition_current_offset", "The partition's high watermark (kafka_exporter).", []string{"topic", "partition"}, nil)
	descPartOldest  = prometheus.NewDesc("kafka_topic_partition_oldest_offset", "The partition's log start offset (kafka_exporter).", []string{"topic", "partition"}, nil)
	descGroupOffset = prometheus.NewDesc("kafka_consumergroup_current_offset", "The group's committed offset of the partition (kafka_exporter).", []string{"consumergroup", "topic", "partition"}, nil)
	descGroupLag    = prometheus.NewDesc("kafka_consumergroup_lag", "The partition's high watermark minus the group's committed offset (kafka_exporter).", []string{"consumergroup", "topic", "partition"}, nil)
	descGroupLagSum = prometheus.NewDesc("kafka_consumergroup_lag_sum", "The group's lag summed over the partitions of the topic (kafka_exporter).", []string{"consumergroup", "topic"}, nil)
)

func (c brokerCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	counter := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	b.mu.RLock()
	topics := make([]*topic, 0, len(b.topics))
	for _, t := range b.topics {
		topics = append(topics, t)
	}
	b.mu.RUnlock()
	var in, out, msgsIn, msgsOut int64
	parts := 0
	hwms := map[string]map[int32]int64{}
	for _, t := range topics {
		bi, bo, mi, mo := t.m.bytesIn.Load(), t.m.bytesOut.Load(), t.m.messagesIn.Load(), t.m.messagesOut.Load()
		in, out, msgsIn, msgsOut = in+bi, out+bo, msgsIn+mi, msgsOut+mo
		counter(descBytesIn, bi, t.name)
		counter(descBytesOut, bo, t.name)
		counter(descMessagesIn, mi, t.name)
		counter(descMessagesOut, mo, t.name)
		ps := t.partitions()
		parts += len(ps)
		gauge(descTopicParts, float64(len(ps)), t.name)
		hwms[t.name] = make(map[int32]int64, len(ps))
		for _, p := range ps {
			pi := strconv.Itoa(int(p.index))
			start, hwm, leo := p.log.Offsets()
			hwms[t.name][p.index] = hwm
			gauge(descLogSize, float64(p.log.Size()), t.name, pi)
			gauge(descLogEnd, float64(leo), t.name, pi)
			gauge(descLogStart, float64(start), t.name, pi)
			gauge(descSegments, float64(p.log.NumSegments()), t.name, pi)
			gauge(descPartCurrent, float64(hwm), t.name, pi)
			gauge(descPartOldest, float64(start), t.name, pi)
		}
	}
	counter(descBytesInAll, in)
	counter(descBytesOutAll, out)
	counter(descMsgsInAll, msgsIn)
	counter(descMsgsOutAll, msgsOut)
	gauge(descURP, 0)
	gauge(descPartitions, float64(parts))
	gauge(descLeaders, float64(parts))
	gauge(descController, 1)
	gauge(descOffline, 0)
	b.connMu.Lock()
	conns := len(b.conns)
	b.connMu.Unlock()
	gauge(descConns, float64(conns), "PLAINTEXT", "0")
	if rm := b.requests; rm != nil {
		for key := range rm.counts {
			for v := range rm.counts[key] {
				if n := rm.counts[key][v].Load(); n > 0 {
					counter(descRequests, n, kmsg.NameForKey(int16(key)), strconv.Itoa(v))
				}
			}
		}
		rm.vec.Collect(ch)
	}
	if b.groups != nil {
		type key struct{ group, topic string }
		sums := map[key]int64{}
		b.groups.mu.Lock()
		b.groups.c.EachOffset(func(group, topic string, partition int32, offset int64) {
			hwm, ok := hwms[topic][partition]
			if !ok || offset < 0 {
				return
			}
			pi := strconv.Itoa(int(partition))
			lag := max(hwm-offset, 0)
			gauge(descGroupOffset, float64(offset), group, topic, pi)
			gauge(descGroupLag, float64(lag), group, topic, pi)
			sums[key{group, topic}] += lag
		})
		b.groups.mu.Unlock()
		for k, s := range sums {
			gauge(descGroupLagSum, float64(s), k.group, k.topic)
		}
	}
}

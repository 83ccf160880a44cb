package metrics

import (
	"math"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/internal/stats"
)

// Client kinds: the JMX domain of a Kafka client's MBeans.
const (
	ClientProducer = "producer"
	ClientConsumer = "consumer"
	ClientAdmin    = "admin.client"
	ClientConnect  = "connect" // the worker's group member
)

// Client is one Kafka client's metrics, as Kafka's Java clients expose
// them (their network, node, coordinator, producer and fetch-manager
// groups), fed by franz-go's hooks (kgo.WithHooks(c)) once per request,
// batch or connection, never per record. What franz-go does not have (a
// buffer pool, SASL, record retries) is 0, and what it does differently
// is measured the closest way (docs/monitoring.md says how). A nil
// *Client records nothing.
type Client struct {
	kind, id        string
	now             func() time.Time
	start           time.Time
	version, commit string

	conns                     atomic.Int64
	connCreate, connClose     *stats.Sampled
	netIO, out, in, reqs, rsp *stats.Sampled
	reqSize, ioTime, ioWait   *stats.Sampled

	nodes sync.Map // int32 → *nodeStats

	// coordinator
	joins, syncs, heartbeats, commits   *stats.Sampled // durations in ms; Rate and count
	rebalances, failedRebalances        *stats.Sampled
	lastHeartbeat, lastRebalance        atomic.Int64 // ms
	assignedPartitions                  atomic.Int64
	partAssigned, partRevoked, partLost *stats.Sampled

	// consumer
	polls                                 *stats.Sampled // time between polls, ms
	pollIdle                              *stats.Sampled // idle ratio per poll
	lastPoll, lastPollEnd                 atomic.Int64   // ms
	commitSyncNs, committedNs             atomic.Int64
	fetches, fetchSize, fetchThrottle     *stats.Sampled
	consumedBytes, consumedRecs, perFetch *stats.Sampled
	topics                                sync.Map // string → *topicStats
	parts                                 sync.Map // topicPartition → *partStats

	// producer
	batchBytes, compression, recordSize, perRequest *stats.Sampled
	sends, errs                                     *stats.Sampled
	produceLatency, queueTime, produceThrottle      *stats.Sampled
	flushNs                                         atomic.Int64
	metadataAt                                      atomic.Int64 // ms
	buffer                                          atomic.Pointer[func() (available, total int64)]
}

type nodeStats struct {
	out, in, reqs, rsp, reqSize, latency *stats.Sampled
}

type topicStats struct {
	bytes, records, size, perRequest, errs *stats.Sampled
	compression                            *stats.Sampled
}

type topicPartition struct {
	topic string
	part  int32
}

type partStats struct {
	lag, lead       atomic.Int64
	lagS, leadS     *stats.Sampled
	known, leadKnow atomic.Bool
}

// newClient returns the metrics of a client of kind (ClientProducer, …)
// with Kafka client id id, to give its franz-go client as
// kgo.WithHooks(c).
func newClient(kind, id string, cfg *Config) *Client {
	now := cfg.Now
	s := func() *stats.Sampled { return stats.NewSampled(cfg.Window) }
	return &Client{kind: kind, id: id, now: now, start: now(), version: cfg.Version, commit: cfg.Commit,
		connCreate: s(), connClose: s(), netIO: s(), out: s(), in: s(), reqs: s(), rsp: s(), reqSize: s(), ioTime: s(), ioWait: s(),
		joins: s(), syncs: s(), heartbeats: s(), commits: s(), rebalances: s(), failedRebalances: s(),
		partAssigned: s(), partRevoked: s(), partLost: s(),
		polls: s(), pollIdle: s(), fetches: s(), fetchSize: s(), fetchThrottle: s(), consumedBytes: s(), consumedRecs: s(), perFetch: s(),
		batchBytes: s(), compression: s(), recordSize: s(), perRequest: s(), sends: s(), errs: s(),
		produceLatency: s(), queueTime: s(), produceThrottle: s()}
}

// ID is the client id.
func (c *Client) ID() string { return c.id }

// Opt is the kgo option that feeds c (none for a nil c).
func (c *Client) Opt() []kgo.Opt {
	if c == nil {
		return nil
	}
	return []kgo.Opt{kgo.WithHooks(c)}
}

var (
	_ kgo.HookBrokerConnect       = (*Client)(nil)
	_ kgo.HookBrokerDisconnect    = (*Client)(nil)
	_ kgo.HookBrokerE2E           = (*Client)(nil)
	_ kgo.HookBrokerThrottle      = (*Client)(nil)
	_ kgo.HookProduceBatchWritten = (*Client)(nil)
	_ kgo.HookFetchBatchRead      = (*Client)(nil)
)

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (c *Client) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.conns.Add(1)
		c.connCreate.Record(c.now(), 1)
	}
}

// OnBrokerDisconnect implements kgo.HookBrokerDisconnect.
func (c *Client) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) {
	c.conns.Add(-1)
	c.connClose.Record(c.now(), 1)
}

func (c *Client) node(id int32) *nodeStats {
	if id < 0 {
		id = -1 // the bootstrap servers, as Kafka's node--1
	}
	if n, ok := c.nodes.Load(id); ok {
		return n.(*nodeStats)
	}
	w := c.window()
	s := func() *stats.Sampled { return stats.NewSampled(w) }
	n, _ := c.nodes.LoadOrStore(id, &nodeStats{out: s(), in: s(), reqs: s(), rsp: s(), reqSize: s(), latency: s()})
	return n.(*nodeStats)
}

func (c *Client) window() stats.Window { return c.reqs.Window() }

// Kafka request keys the hooks tell apart.
const (
	keyProduce   = 0
	keyFetch     = 1
	keyMetadata  = 3
	keyCommit    = 8
	keyJoin      = 11
	keyHeartbeat = 12
	keySync      = 14
)

// OnBrokerE2E implements kgo.HookBrokerE2E: one call per request, with its
// bytes and timings.
func (c *Client) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	now := c.now()
	n := c.node(meta.NodeID)
	out, in := float64(e2e.BytesWritten), float64(e2e.BytesRead)
	c.out.Record(now, out)
	n.out.Record(now, out)
	c.reqs.Record(now, 1)
	n.reqs.Record(now, 1)
	c.reqSize.Record(now, out)
	n.reqSize.Record(now, out)
	c.netIO.Record(now, 1)
	c.ioTime.Record(now, float64((e2e.TimeToWrite + e2e.TimeToRead).Nanoseconds()))
	c.ioWait.Record(now, float64(e2e.ReadWait.Nanoseconds()))
	failed := e2e.Err() != nil
	if e2e.WriteErr == nil {
		c.netIO.Record(now, 1)
		c.in.Record(now, in)
		n.in.Record(now, in)
		if !failed {
			c.rsp.Record(now, 1)
			n.rsp.Record(now, 1)
		}
	}
	lat := msOf(e2e.DurationE2E())
	if !failed {
		n.latency.Record(now, lat)
	}
	switch key {
	case keyProduce:
		if !failed {
			c.produceLatency.Record(now, lat)
		}
		c.queueTime.Record(now, msOf(e2e.WriteWait))
	case keyFetch:
		c.fetches.Record(now, lat)
		c.fetchSize.Record(now, in)
	case keyMetadata:
		if !failed {
			c.metadataAt.Store(now.UnixMilli())
		}
	case keyCommit:
		c.commits.Record(now, lat)
	case keyJoin:
		c.joins.Record(now, lat)
		if failed {
			c.failedRebalances.Record(now, 1)
		}
	case keySync:
		c.syncs.Record(now, lat)
		if failed {
			c.failedRebalances.Record(now, 1)
		} else {
			c.rebalances.Record(now, lat)
			c.lastRebalance.Store(now.UnixMilli())
		}
	case keyHeartbeat:
		c.heartbeats.Record(now, lat)
		c.lastHeartbeat.Store(now.UnixMilli())
	}
}

// OnBrokerThrottle implements kgo.HookBrokerThrottle.
func (c *Client) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if c.kind == ClientProducer {
		c.produceThrottle.Record(c.now(), msOf(d))
	} else {
		c.fetchThrottle.Record(c.now(), msOf(d))
	}
}

func (c *Client) topic(name string) *topicStats {
	if t, ok := c.topics.Load(name); ok {
		return t.(*topicStats)
	}
	w := c.window()
	s := func() *stats.Sampled { return stats.NewSampled(w) }
	t, _ := c.topics.LoadOrStore(name, &topicStats{bytes: s(), records: s(), size: s(), perRequest: s(), errs: s(), compression: s()})
	return t.(*topicStats)
}

// OnProduceBatchWritten implements kgo.HookProduceBatchWritten.
func (c *Client) OnProduceBatchWritten(_ kgo.BrokerMetadata, topic string, _ int32, m kgo.ProduceBatchMetrics) {
	now := c.now()
	t := c.topic(topic)
	n, comp, unc := float64(m.NumRecords), float64(m.CompressedBytes), float64(m.UncompressedBytes)
	c.sends.Record(now, n)
	t.records.Record(now, n)
	c.batchBytes.Record(now, comp)
	t.bytes.Record(now, comp)
	c.perRequest.Record(now, n)
	if unc > 0 {
		c.compression.Record(now, comp/unc)
		t.compression.Record(now, comp/unc)
	}
	if n > 0 {
		c.recordSize.Record(now, unc/n)
	}
}

// OnFetchBatchRead implements kgo.HookFetchBatchRead.
func (c *Client) OnFetchBatchRead(_ kgo.BrokerMetadata, topic string, _ int32, m kgo.FetchBatchMetrics) {
	now := c.now()
	t := c.topic(topic)
	n, b := float64(m.NumRecords), float64(m.CompressedBytes)
	c.consumedRecs.Record(now, n)
	c.consumedBytes.Record(now, b)
	c.perFetch.Record(now, n)
	t.records.Record(now, n)
	t.bytes.Record(now, b)
	t.size.Record(now, b)
	t.perRequest.Record(now, n)
}

// What the runners report, that the hooks do not see.

// SetAssignedPartitions sets a consumer's assigned-partitions.
func (c *Client) SetAssignedPartitions(n int) {
	if c != nil {
		c.assignedPartitions.Store(int64(n))
	}
}

// PartitionsCallback records the time a partitions callback took:
// kind is "assigned", "revoked" or "lost".
func (c *Client) PartitionsCallback(kind string, d time.Duration) {
	if c == nil {
		return
	}
	switch kind {
	case "assigned":
		c.partAssigned.Record(c.now(), msOf(d))
	case "revoked":
		c.partRevoked.Record(c.now(), msOf(d))
	case "lost":
		c.partLost.Record(c.now(), msOf(d))
	}
}

// Poll records a consumer's poll that began at start and returned at end.
func (c *Client) Poll(start, end time.Time) {
	if c == nil {
		return
	}
	if last := c.lastPollEnd.Load(); last != 0 {
		between := float64(start.UnixMilli() - last)
		c.polls.Record(end, between)
		if total := float64(end.UnixMilli() - last); total > 0 {
			c.pollIdle.Record(end, float64(end.Sub(start).Milliseconds())/total)
		}
	}
	c.lastPoll.Store(start.UnixMilli())
	c.lastPollEnd.Store(end.UnixMilli())
}

// CommitSync records a synchronous offset commit's duration.
func (c *Client) CommitSync(d time.Duration) {
	if c != nil {
		c.commitSyncNs.Add(d.Nanoseconds())
	}
}

// Committed records the duration of a read of committed offsets.
func (c *Client) Committed(d time.Duration) {
	if c != nil {
		c.committedNs.Add(d.Nanoseconds())
	}
}

// Lag records a partition's lag (high watermark less the position) and
// lead (position less the log start), as the consumer's records-lag and
// records-lead.
func (c *Client) Lag(topic string, partition int32, lag, lead int64) {
	if c == nil {
		return
	}
	k := topicPartition{topic, partition}
	p, ok := c.parts.Load(k)
	if !ok {
		w := c.window()
		p, _ = c.parts.LoadOrStore(k, &partStats{lagS: stats.NewSampled(w), leadS: stats.NewSampled(w)})
	}
	ps := p.(*partStats)
	now := c.now()
	ps.lag.Store(lag)
	ps.lagS.Record(now, float64(lag))
	ps.known.Store(true)
	if lead >= 0 {
		ps.lead.Store(lead)
		ps.leadS.Record(now, float64(lead))
		ps.leadKnow.Store(true)
	}
}

// ForgetPartition drops a partition's lag (revoked).
func (c *Client) ForgetPartition(topic string, partition int32) {
	if c != nil {
		c.parts.Delete(topicPartition{topic, partition})
	}
}

// RecordError counts a record a producer could not write.
func (c *Client) RecordError(topic string) {
	if c == nil {
		return
	}
	now := c.now()
	c.errs.Record(now, 1)
	c.topic(topic).errs.Record(now, 1)
}

// Flush records the time a producer's flush took.
func (c *Client) Flush(d time.Duration) {
	if c != nil {
		c.flushNs.Add(d.Nanoseconds())
	}
}

// SetBuffer gives a producer its buffer's free and total bytes.
func (c *Client) SetBuffer(f func() (available, total int64)) {
	if c != nil && f != nil {
		c.buffer.Store(&f)
	}
}

// groupPrefix is the MBean type prefix of the client's groups.
func (c *Client) groupPrefix() string {
	switch c.kind {
	case ClientAdmin:
		return "admin-client"
	}
	return c.kind
}

// collect writes the client's groups; extra are attributes of its
// coordinator group (the worker's assigned-connectors and -tasks).
func (c *Client) collect(w *writer, now time.Time, extra func(w *writer)) {
	p := c.groupPrefix()
	id := []tag{{"client-id", c.id}}
	a := func(name string, v float64) { w.attr(name, num(v), clientHelp(name)) }
	meter := func(name string, s *stats.Sampled) {
		a(name+"-total", s.Total())
		a(name+"-rate", s.Rate(now))
	}
	count := func(name string, s *stats.Sampled) { // counts of events recorded with their durations
		a(name+"-total", float64(s.Count()))
		a(name+"-rate", s.CountRate(now))
	}

	w.begin(bean{c.kind, "app-info", id})
	w.attr("commit-id", str(c.commit), clientHelp("commit-id"))
	w.attr("start-time-ms", num(float64(c.start.UnixMilli())), clientHelp("start-time-ms"))
	w.attr("version", str(c.version), clientHelp("version"))

	w.begin(bean{c.kind, p + "-metrics", id})
	meter("connection-close", c.connClose)
	meter("connection-creation", c.connCreate)
	for _, n := range []string{"successful-authentication", "successful-reauthentication", "failed-authentication", "failed-reauthentication"} {
		a(n+"-total", 0)
		a(n+"-rate", 0)
	}
	a("successful-authentication-no-reauth-total", 0)
	a("reauthentication-latency-max", math.NaN())
	a("reauthentication-latency-avg", math.NaN())
	meter("network-io", c.netIO)
	meter("outgoing-byte", c.out)
	meter("request", c.reqs)
	a("request-size-avg", c.reqSize.Avg(now))
	a("request-size-max", c.reqSize.Max(now))
	meter("incoming-byte", c.in)
	meter("response", c.rsp)
	meter("select", c.netIO)
	a("io-wait-time-ns-avg", c.ioWait.Avg(now))
	a("io-wait-time-ns-total", c.ioWait.Total())
	a("io-wait-ratio", c.ioWait.Rate(now)/1e9)
	a("io-time-ns-avg", c.ioTime.Avg(now))
	a("io-time-ns-total", c.ioTime.Total())
	a("io-ratio", c.ioTime.Rate(now)/1e9)
	a("connection-count", float64(c.conns.Load()))
	switch c.kind {
	case ClientConsumer:
		a("commit-sync-time-ns-total", float64(c.commitSyncNs.Load()))
		a("committed-time-ns-total", float64(c.committedNs.Load()))
		if last := c.lastPoll.Load(); last > 0 {
			a("last-poll-seconds-ago", float64((now.UnixMilli()-last)/1000))
		} else {
			a("last-poll-seconds-ago", -1)
		}
		a("poll-idle-ratio-avg", c.pollIdle.Avg(now))
		a("time-between-poll-avg", c.polls.Avg(now))
		a("time-between-poll-max", c.polls.Max(now))
	case ClientProducer:
		a("batch-size-avg", c.batchBytes.Avg(now))
		a("batch-size-max", c.batchBytes.Max(now))
		a("batch-split-total", 0)
		a("batch-split-rate", 0)
		avail, total := 0.0, 0.0
		if f := c.buffer.Load(); f != nil {
			av, tot := (*f)()
			avail, total = float64(av), float64(tot)
		}
		a("buffer-available-bytes", avail)
		a("buffer-total-bytes", total)
		a("buffer-exhausted-total", 0)
		a("buffer-exhausted-rate", 0)
		a("bufferpool-wait-ratio", 0)
		a("bufferpool-wait-time-ns-total", 0)
		a("compression-rate-avg", c.compression.Avg(now))
		a("flush-time-ns-total", float64(c.flushNs.Load()))
		if at := c.metadataAt.Load(); at > 0 {
			a("metadata-age", float64(now.UnixMilli()-at)/1000)
		} else {
			a("metadata-age", 0)
		}
		a("metadata-wait-time-ns-total", 0)
		a("produce-throttle-time-avg", c.produceThrottle.Avg(now))
		a("produce-throttle-time-max", c.produceThrottle.Max(now))
		meter("record-error", c.errs)
		a("record-queue-time-avg", c.queueTime.Avg(now))
		a("record-queue-time-max", c.queueTime.Max(now))
		a("record-retry-total", 0)
		a("record-retry-rate", 0)
		meter("record-send", c.sends)
		a("record-size-avg", c.recordSize.Avg(now))
		a("record-size-max", c.recordSize.Max(now))
		a("records-per-request-avg", c.perRequest.Avg(now))
		a("request-latency-avg", c.produceLatency.Avg(now))
		a("request-latency-max", c.produceLatency.Max(now))
		a("requests-in-flight", 0) // franz-go's are not counted
		for _, t := range []string{"abort", "begin", "commit", "init", "prepare", "send-offsets"} {
			a("txn-"+t+"-time-ns-total", 0)
		}
		a("waiting-threads", 0)
	}

	var nodes []int32
	c.nodes.Range(func(k, _ any) bool { nodes = append(nodes, k.(int32)); return true })
	slices.Sort(nodes)
	for _, id := range nodes {
		v, _ := c.nodes.Load(id)
		n := v.(*nodeStats)
		w.begin(bean{c.kind, p + "-node-metrics", []tag{{"client-id", c.id}, {"node-id", "node-" + strconv.Itoa(int(id))}}})
		meter("outgoing-byte", n.out)
		meter("request", n.reqs)
		a("request-size-avg", n.reqSize.Avg(now))
		a("request-size-max", n.reqSize.Max(now))
		meter("incoming-byte", n.in)
		a("request-latency-avg", n.latency.Avg(now))
		a("request-latency-max", n.latency.Max(now))
		meter("response", n.rsp)
	}

	if c.kind == ClientConnect || c.kind == ClientConsumer {
		w.begin(bean{c.kind, p + "-coordinator-metrics", id})
		if extra != nil {
			extra(w)
		}
		count("heartbeat", c.heartbeats)
		a("heartbeat-response-time-max", c.heartbeats.Max(now))
		count("join", c.joins)
		a("join-time-avg", c.joins.Avg(now))
		a("join-time-max", c.joins.Max(now))
		count("sync", c.syncs)
		a("sync-time-avg", c.syncs.Avg(now))
		a("sync-time-max", c.syncs.Max(now))
		a("rebalance-total", float64(c.rebalances.Count()))
		a("rebalance-rate-per-hour", c.rebalances.CountRate(now)*3600)
		a("rebalance-latency-avg", c.rebalances.Avg(now))
		a("rebalance-latency-max", c.rebalances.Max(now))
		a("rebalance-latency-total", c.rebalances.Total())
		a("failed-rebalance-total", float64(c.failedRebalances.Count()))
		a("failed-rebalance-rate-per-hour", c.failedRebalances.CountRate(now)*3600)
		ago := func(name string, at *atomic.Int64) {
			if t := at.Load(); t > 0 {
				a(name, float64((now.UnixMilli()-t)/1000))
			} else {
				a(name, -1)
			}
		}
		ago("last-heartbeat-seconds-ago", &c.lastHeartbeat)
		ago("last-rebalance-seconds-ago", &c.lastRebalance)
		if c.kind == ClientConsumer {
			a("assigned-partitions", float64(c.assignedPartitions.Load()))
			count("commit", c.commits)
			a("commit-latency-avg", c.commits.Avg(now))
			a("commit-latency-max", c.commits.Max(now))
			for _, k := range []struct {
				name string
				s    *stats.Sampled
			}{{"assigned", c.partAssigned}, {"revoked", c.partRevoked}, {"lost", c.partLost}} {
				a("partition-"+k.name+"-latency-avg", k.s.Avg(now))
				a("partition-"+k.name+"-latency-max", k.s.Max(now))
			}
		}
	}

	var topics []string
	c.topics.Range(func(k, _ any) bool { topics = append(topics, k.(string)); return true })
	slices.Sort(topics)
	switch c.kind {
	case ClientConsumer:
		var parts []topicPartition
		c.parts.Range(func(k, _ any) bool { parts = append(parts, k.(topicPartition)); return true })
		slices.SortFunc(parts, func(x, y topicPartition) int {
			if x.topic != y.topic {
				if x.topic < y.topic {
					return -1
				}
				return 1
			}
			return int(x.part - y.part)
		})
		lagMax, leadMin := math.NaN(), math.NaN()
		for _, tp := range parts {
			v, _ := c.parts.Load(tp)
			ps := v.(*partStats)
			if ps.known.Load() {
				lagMax = nanMax(lagMax, float64(ps.lag.Load()))
			}
			if ps.leadKnow.Load() {
				leadMin = nanMin(leadMin, float64(ps.lead.Load()))
			}
		}
		w.begin(bean{c.kind, "consumer-fetch-manager-metrics", id})
		meter("bytes-consumed", c.consumedBytes)
		a("fetch-latency-avg", c.fetches.Avg(now))
		a("fetch-latency-max", c.fetches.Max(now))
		count("fetch", c.fetches)
		a("fetch-size-avg", c.fetchSize.Avg(now))
		a("fetch-size-max", c.fetchSize.Max(now))
		a("fetch-throttle-time-avg", c.fetchThrottle.Avg(now))
		a("fetch-throttle-time-max", c.fetchThrottle.Max(now))
		meter("records-consumed", c.consumedRecs)
		a("records-lag-max", lagMax)
		a("records-lead-min", leadMin)
		a("records-per-request-avg", c.perFetch.Avg(now))
		for _, name := range topics {
			v, _ := c.topics.Load(name)
			t := v.(*topicStats)
			w.begin(bean{c.kind, "consumer-fetch-manager-metrics", []tag{{"client-id", c.id}, {"topic", name}}})
			meter("bytes-consumed", t.bytes)
			a("fetch-size-avg", t.size.Avg(now))
			a("fetch-size-max", t.size.Max(now))
			meter("records-consumed", t.records)
			a("records-per-request-avg", t.perRequest.Avg(now))
		}
		for _, tp := range parts {
			v, _ := c.parts.Load(tp)
			ps := v.(*partStats)
			w.begin(bean{c.kind, "consumer-fetch-manager-metrics", []tag{{"client-id", c.id}, {"topic", tp.topic}, {"partition", strconv.Itoa(int(tp.part))}}})
			a("preferred-read-replica", -1)
			a("records-lag", float64(ps.lag.Load()))
			a("records-lag-avg", ps.lagS.Avg(now))
			a("records-lag-max", ps.lagS.Max(now))
			a("records-lead", float64(ps.lead.Load()))
			a("records-lead-avg", ps.leadS.Avg(now))
			a("records-lead-min", ps.leadS.Min(now))
		}
	case ClientProducer:
		for _, name := range topics {
			v, _ := c.topics.Load(name)
			t := v.(*topicStats)
			w.begin(bean{c.kind, "producer-topic-metrics", []tag{{"client-id", c.id}, {"topic", name}}})
			meter("byte", t.bytes)
			a("compression-rate", t.compression.Avg(now))
			meter("record-error", t.errs)
			a("record-retry-total", 0)
			a("record-retry-rate", 0)
			meter("record-send", t.records)
		}
	}
	w.flush()
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return max(a, b)
}

func nanMin(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return min(a, b)
}

// clientDocs describe the client attributes (Kafka's descriptions, and
// what Tributary measures where it differs).
var clientDocs = map[string]string{
	"connection-count":          "The current number of active connections.",
	"connection-creation-total": "The total number of new connections established.",
	"connection-close-total":    "The total number of connections closed.",
	"network-io-total":          "The total number of network operations (reads or writes) on all connections.",
	"outgoing-byte-total":       "The total number of outgoing bytes sent to all servers.",
	"incoming-byte-total":       "The total number of bytes read off all sockets.",
	"request-total":             "The total number of requests sent.",
	"response-total":            "The total number of responses received.",
	"select-total":              "The number of times the I/O layer waited for a read or a write (Go's poller: one per network operation).",
	"io-time-ns-total":          "The total time the I/O thread spent doing I/O, in nanoseconds (writing requests and reading responses).",
	"io-wait-time-ns-total":     "The total time the I/O thread spent waiting, in nanoseconds (from a request written to its response's first byte).",
	"record-send-total":         "The total number of records sent.",
	"record-error-total":        "The total number of record sends that resulted in errors.",
	"records-consumed-total":    "The total number of records consumed.",
	"bytes-consumed-total":      "The total number of bytes consumed.",
	"records-lag":               "The latest lag of the partition (high watermark less the consumer's position).",
	"records-lag-max":           "The maximum lag in terms of number of records for any partition in this window.",
	"records-lead":              "The latest lead of the partition (the consumer's position less the log start offset).",
	"assigned-partitions":       "The number of partitions currently assigned to this consumer.",
	"start-time-ms":             "When the client started, in milliseconds since the epoch.",
	"version":                   "The client's version (Tributary's).",
	"commit-id":                 "The commit the client was built from.",
}

func clientHelp(name string) string {
	if d, ok := clientDocs[name]; ok {
		return d
	}
	return "Kafka client metric " + name + " (Kafka's Java client attribute; Tributary's franz-go clients measure the same where they can, 0 where they have no such thing)."
}

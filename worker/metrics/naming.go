package metrics

import (
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tributary-dev/tributary/sdk"
)

// Style is how Kafka Connect's MBean attributes are named as Prometheus
// series: as the JMX exporter names them with the rules users' dashboards
// and alerts were written against.
type Style int

// Naming styles.
const (
	// Strimzi names series as the Prometheus JMX exporter does with
	// Strimzi's rules (packaging/examples/metrics/kafka-connect-metrics.yaml):
	// kafka_connect_source_task_source_record_poll_rate{connector,task},
	// kafka_connect_connector_status{connector,status="running"} 1. Strimzi's
	// Grafana dashboard and PrometheusRule work with it unchanged. The default.
	Strimzi Style = iota
	// Confluent names series as the JMX exporter does with Confluent's
	// jmx-monitoring-stacks rules (shared-assets/jmx-exporter/kafka_connect.yml),
	// which Aiven documents too: kafka_<domain>_<group>_<attribute>, e.g.
	// kafka_connect_source_task_metrics_source_record_poll_rate,
	// kafka_connect_connect_worker_metrics_connector_count{connector="aggregate"}.
	Confluent
)

// ParseStyle reads the worker setting tributary.metrics.naming.
func ParseStyle(s string) (Style, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "strimzi":
		return Strimzi, nil
	case "confluent":
		return Confluent, nil
	}
	return 0, fmt.Errorf("metrics: unknown naming style %q: want strimzi or confluent", s)
}

func (s Style) String() string {
	if s == Confluent {
		return "confluent"
	}
	return "strimzi"
}

// tag is one key property of an MBean name after type=.
type tag struct{ k, v string }

// bean is a JMX MBean: kafka.<domain>:type=<group>,<tags...>.
type bean struct {
	domain string // "connect", "producer", "consumer", "admin.client"
	group  string // the type= property
	tags   []tag
}

// value is an attribute's value: a number, or a string (str set).
type value struct {
	num   float64
	str   string
	isStr bool
}

func num(v float64) value  { return value{num: v} }
func str(s string) value   { return value{str: s, isStr: true} }
func boolean(b bool) value { return value{num: b2f(b)} }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// series is one Prometheus sample a style makes of an attribute.
type series struct {
	name   string
	labels []string // names
	values []string
	typ    prometheus.ValueType
	value  float64
	help   string
}

// jmxQuote is the value of an MBean key property as Kafka writes it
// (Sanitizer.jmxSanitize): as is when it is made of word characters and
// -%. space and tab, else quoted with ObjectName.quote. The JMX exporter
// keeps the quotes in the label value, so do these series: Strimzi's MM2
// dashboard selects connector=~"\".*SourceConnector\"".
func jmxQuote(v string) string {
	plain := true
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-%. \t", r)) {
			plain = false
			break
		}
	}
	if plain {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch r {
		case '\\', '"', '*', '?':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// snake makes an MBean word a Prometheus name part: lower case, '-' and
// other non-name characters as '_' (the exporter's lowercaseOutputName and
// safeName).
func snake(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == ':') {
			b[i] = '_'
		}
	}
	return string(b)
}

// capture is the JMX exporter's match of an alternation of ".+<suffix>"
// groups against an attribute name (its rules are unanchored at the end,
// "^.*?" + pattern + ".*$"): the first alternative that occurs after at
// least one character, captured up to its last occurrence. For
// source-record-active-count-max, ".+-count" comes first and captures
// source-record-active-count, as the exporter does with Strimzi's rules.
func capture(attr string, suffixes []string) (string, bool) {
	for _, s := range suffixes {
		if i := strings.LastIndex(attr, s); i >= 1 {
			return attr[:i+len(s)], true
		}
	}
	return "", false
}

// Strimzi's task-group gauge alternatives, in its rule's order.
var strimziTaskGauges = []string{"-count", "-ms", "-ratio", "-seq-no", "-rate", "-max", "-avg", "-failures",
	"-requests", "-timestamp", "-logged", "-errors", "-retries", "-skipped"}

// Strimzi's client-id gauge alternatives (connect-metrics,
// connect-coordinator-metrics, the clients' groups).
var strimziClientGauges = []string{"-avg", "-bytes", "-count", "-ratio", "-age", "-flight", "-threads", "-connectors", "-tasks", "-ago"}

// Strimzi's node-id gauge alternatives.
var strimziNodeGauges = []string{"-avg", "-rate"}

func (b bean) tag(k string) (string, bool) {
	for _, t := range b.tags {
		if t.k == k {
			return t.v, true
		}
	}
	return "", false
}

// objectName is the exporter's rendering of an attribute's MBean, which it
// puts in the _objectname label of series that would otherwise collide.
func (b bean) objectName(attr string) string {
	var s strings.Builder
	s.WriteString("kafka." + b.domain + "<type=" + b.group)
	for _, t := range b.tags {
		s.WriteString(", " + t.k + "=" + jmxQuote(t.v))
	}
	s.WriteString("><>" + attr)
	return s.String()
}

// name returns the series style s makes of the attribute attr of b, as the
// JMX exporter would with the style's rules; ok false when the rules
// export no such series.
func (s Style) name(b bean, attr string, v value, help string) (series, bool) {
	if s == Confluent {
		return confluentName(b, attr, v, help)
	}
	return strimziName(b, attr, v, help)
}

func mk(name string, typ prometheus.ValueType, val float64, help string, kv ...string) series {
	x := series{name: name, typ: typ, value: val, help: help}
	for i := 0; i+1 < len(kv); i += 2 {
		x.labels = append(x.labels, kv[i])
		x.values = append(x.values, kv[i+1])
	}
	return x
}

// strimziName applies Strimzi's rules (lowercaseOutputName and
// lowercaseOutputLabelNames) in their order.
func strimziName(b bean, attr string, v value, help string) (series, bool) {
	clientID, hasClient := b.tag("client-id")
	connector, hasConn := b.tag("connector")
	task, hasTask := b.tag("task")
	nodeID, hasNode := b.tag("node-id")
	topic, hasTopic := b.tag("topic")
	partition, hasPart := b.tag("partition")
	dom := snake(b.domain)
	grp := strings.TrimSuffix(b.group, "-metrics")
	switch {
	case b.group == "app-info" && hasClient:
		switch {
		case attr == "start-time-ms" && !v.isStr:
			return mk("kafka_"+dom+"_start_time_seconds", prometheus.GaugeValue, v.num*0.001, help, "clientid", jmxQuote(clientID)), true
		case (attr == "commit-id" || attr == "version") && v.isStr:
			// The rule names it kafka_$1_$3_info; the exporter drops
			// the _info of an untyped series.
			return mk("kafka_"+dom+"_"+snake(attr), prometheus.UntypedValue, 1, help, "clientid", jmxQuote(clientID), snake(attr), v.str), true
		}
		return series{}, false
	case b.group == "consumer-fetch-manager-metrics" && hasClient && hasTopic && hasPart:
		if v.isStr {
			return series{}, false
		}
		lv := []string{"clientid", jmxQuote(clientID), "topic", jmxQuote(topic), "partition", jmxQuote(partition)}
		if strings.HasSuffix(attr, "-total") || strings.Contains(attr, "-total") {
			if n, ok := capture(attr, []string{"-total"}); ok {
				return mk("kafka_consumer_fetch_manager_"+snake(n), prometheus.CounterValue, v.num, help, lv...), true
			}
		}
		for _, alt := range []string{"compression-rate"} {
			if strings.HasPrefix(attr, alt) {
				return mk("kafka_consumer_fetch_manager_"+snake(alt), prometheus.GaugeValue, v.num, help, lv...), true
			}
		}
		if n, ok := capture(attr, []string{"-avg", "-replica", "-lag", "-lead"}); ok {
			return mk("kafka_consumer_fetch_manager_"+snake(n), prometheus.GaugeValue, v.num, help, lv...), true
		}
		return series{}, false
	case b.group == "producer-topic-metrics" && hasClient && hasTopic:
		if v.isStr {
			return series{}, false
		}
		lv := []string{"clientid", jmxQuote(clientID), "topic", jmxQuote(topic)}
		if n, ok := capture(attr, []string{"-total"}); ok {
			return mk("kafka_producer_topic_"+snake(n), prometheus.CounterValue, v.num, help, lv...), true
		}
		if strings.HasPrefix(attr, "compression-rate") {
			return mk("kafka_producer_topic_compression_rate", prometheus.GaugeValue, v.num, help, lv...), true
		}
		if n, ok := capture(attr, []string{"-avg", "rate"}); ok {
			return mk("kafka_producer_topic_"+snake(n), prometheus.GaugeValue, v.num, help, lv...), true
		}
		return series{}, false
	case strings.HasSuffix(b.group, "-metrics") && hasClient && hasNode:
		if v.isStr {
			return series{}, false
		}
		lv := []string{"clientid", jmxQuote(clientID), "nodeid", jmxQuote(nodeID)}
		if n, ok := capture(attr, []string{"-total"}); ok {
			return mk("kafka_"+snake(grp)+"_"+snake(n), prometheus.CounterValue, v.num, help, lv...), true
		}
		if n, ok := capture(attr, strimziNodeGauges); ok {
			return mk("kafka_"+snake(grp)+"_"+snake(n), prometheus.GaugeValue, v.num, help, lv...), true
		}
		return series{}, false
	case strings.HasSuffix(b.group, "-metrics") && hasClient && b.tags[0].k == "client-id":
		// The generic client-id rule: its client-id=(.*) takes the
		// properties after client-id too (a consumer's per-topic
		// fetch-manager bean: clientid="…, topic=…").
		if v.isStr {
			return series{}, false
		}
		cv := jmxQuote(clientID)
		for _, t := range b.tags[1:] {
			cv += ", " + t.k + "=" + jmxQuote(t.v)
		}
		lv := []string{"clientid", cv}
		if n, ok := capture(attr, []string{"-total"}); ok {
			return mk("kafka_"+snake(grp)+"_"+snake(n), prometheus.CounterValue, v.num, help, lv...), true
		}
		if n, ok := capture(attr, strimziClientGauges); ok {
			return mk("kafka_"+snake(grp)+"_"+snake(n), prometheus.GaugeValue, v.num, help, lv...), true
		}
		return series{}, false
	case b.domain != "connect":
		return series{}, false
	case b.group == "connector-metrics" && hasConn:
		if v.isStr && (attr == "connector-class" || attr == "connector-type" || attr == "connector-version" || attr == "status") {
			return mk("kafka_connect_connector_"+snake(attr), prometheus.GaugeValue, 1, help, "connector", jmxQuote(connector), snake(attr), v.str), true
		}
		return series{}, false
	case b.group == "connector-task-metrics" && hasConn && hasTask && attr == "status":
		if v.isStr && isLowerDash(v.str) {
			return mk("kafka_connect_connector_task_status", prometheus.GaugeValue, 1, help,
				"connector", jmxQuote(connector), "task", jmxQuote(task), "status", v.str), true
		}
		return series{}, false
	case strings.HasSuffix(b.group, "-metrics") && hasConn && hasTask:
		if v.isStr {
			return series{}, false
		}
		lv := []string{"connector", jmxQuote(connector), "task", jmxQuote(task)}
		if n, ok := capture(attr, []string{"-total"}); ok {
			return mk("kafka_connect_"+snake(grp)+"_"+snake(n), prometheus.CounterValue, v.num, help, lv...), true
		}
		if n, ok := capture(attr, strimziTaskGauges); ok {
			return mk("kafka_connect_"+snake(grp)+"_"+snake(n), prometheus.GaugeValue, v.num, help, lv...), true
		}
		return series{}, false
	case b.group == "connect-worker-metrics" && hasConn:
		if v.isStr || !isLowerDash(attr) {
			return series{}, false
		}
		return mk("kafka_connect_worker_"+snake(attr), prometheus.GaugeValue, v.num, help, "connector", jmxQuote(connector)), true
	case b.group == "connect-worker-metrics" && len(b.tags) == 0:
		if v.isStr || !isLowerDash(attr) {
			return series{}, false
		}
		if strings.HasSuffix(attr, "-total") {
			return mk("kafka_connect_worker_"+snake(attr), prometheus.CounterValue, v.num, help), true
		}
		return mk("kafka_connect_worker_"+snake(attr), prometheus.GaugeValue, v.num, help), true
	case b.group == "connect-worker-rebalance-metrics" && len(b.tags) == 0:
		if attr == "leader-name" || attr == "connect-protocol" {
			if !v.isStr || v.str == "" {
				return series{}, false
			}
			return mk("kafka_connect_worker_rebalance_"+snake(attr), prometheus.UntypedValue, 1, help, snake(attr), v.str), true
		}
		if v.isStr || !isLowerDash(attr) {
			return series{}, false
		}
		if strings.HasSuffix(attr, "-total") {
			return mk("kafka_connect_worker_rebalance_"+snake(attr), prometheus.CounterValue, v.num, help), true
		}
		return mk("kafka_connect_worker_rebalance_"+snake(attr), prometheus.GaugeValue, v.num, help), true
	}
	return series{}, false
}

func isLowerDash(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '-') {
			return false
		}
	}
	return true
}

// untypedName is how the exporter writes a series that is not a counter:
// without a _total suffix.
func untypedName(n string) string { return strings.TrimSuffix(n, "_total") }

// confluentName applies Confluent's rules (lowercase label names; names
// keep their case, and Kafka's are lowercase; no type: untyped, which the
// exporter writes without _total).
func confluentName(b bean, attr string, v value, help string) (series, bool) {
	clientID, hasClient := b.tag("client-id")
	connector, hasConn := b.tag("connector")
	task, hasTask := b.tag("task")
	untyped := func(name string, val float64, kv ...string) (series, bool) {
		return mk(untypedName(name), prometheus.UntypedValue, val, help, kv...), true
	}
	gauge := func(name string, val float64, kv ...string) (series, bool) {
		return mk(untypedName(name), prometheus.GaugeValue, val, help, kv...), true
	}
	if b.domain != "connect" {
		// kafka.producer, kafka.consumer (kafka.admin.client is not
		// exported): app-info as labels, every other numeric attribute
		// as kafka_<domain>_<group>_<attr>{client_type, <tags>}.
		if b.domain == "admin.client" {
			return series{}, false
		}
		if b.group == "app-info" && hasClient {
			if v.isStr {
				return untyped("kafka_"+snake(b.domain)+"_app", 1, "client_type", b.domain, "client_id", jmxQuote(clientID), snake(attr), v.str)
			}
			return untyped("kafka_"+snake(b.domain)+"_app", 1, "client_type", b.domain, "client_id", jmxQuote(clientID), snake(attr), fmt.Sprint(int64(v.num)))
		}
		if v.isStr || len(b.tags) == 0 || len(b.tags) > 3 {
			return series{}, false
		}
		kv := []string{"client_type", b.domain}
		for _, t := range b.tags {
			kv = append(kv, snake(t.k), jmxQuote(t.v))
		}
		return gauge("kafka_"+snake(b.domain)+"_"+snake(b.group)+"_"+snake(attr), v.num, kv...)
	}
	switch {
	case b.group == "app-info" && hasClient:
		val := v.str
		if !v.isStr {
			val = fmt.Sprint(int64(v.num))
		}
		return untyped("kafka_connect_app", 1, "client_id", jmxQuote(clientID), snake(attr), val)
	case b.group == "connect-worker-rebalance-metrics" && len(b.tags) == 0:
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_connect_worker_rebalance_metrics_"+snake(attr), v.num)
	case hasClient && len(b.tags) == 1:
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_"+snake(b.group)+"_"+snake(attr), v.num, "client_id", jmxQuote(clientID))
	case b.group == "connect-worker-metrics" && len(b.tags) == 0:
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_connect_worker_metrics_"+snake(attr), v.num, "connector", "aggregate")
	case b.group == "connect-worker-metrics" && hasConn:
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_connect_worker_metrics_"+snake(attr), v.num, "connector", jmxQuote(connector))
	case b.group == "connector-metrics" && hasConn:
		if !v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_connector_metrics", 1, "connector", jmxQuote(connector), snake(attr), v.str)
	case strings.HasSuffix(b.group, "-task-metrics") && hasConn && hasTask && isDigits(task):
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_"+snake(b.group)+"_"+snake(attr), v.num, "connector", jmxQuote(connector), "task", task)
	case b.group == "task-error-metrics" && hasConn && hasTask && isDigits(task):
		if v.isStr {
			return series{}, false
		}
		return untyped("kafka_connect_task_error_metrics_"+snake(attr), v.num, "connector", jmxQuote(connector), "task", task)
	}
	return series{}, false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// writer turns attributes into Prometheus metrics for one scrape: it names
// them by its style, adds the exporter's _objectname label to series of
// one MBean that would otherwise collide, and caches descriptions.
type writer struct {
	style Style
	descs *descCache
	ch    chan<- prometheus.Metric

	cur     bean
	pending []pendingSeries
	// seen, when set, receives every attribute instead of the channel
	// (Describe).
	seen func(b bean, attr string, v value, help string)
}

type pendingSeries struct {
	s    series
	attr string
}

// descCache keeps the Descs of the series names and label sets seen, and
// one help text per name (a family's series must share it).
type descCache struct {
	mu    sync.Mutex
	m     map[string]*prometheus.Desc
	help  map[string]string
	types map[string]sdk.MetricType // plugins' families
}

// typeOK reports whether a plugin's family name has typ, the type the
// first plugin to report it gave it: one name has one type.
func (c *descCache) typeOK(name string, typ sdk.MetricType) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.types == nil {
		c.types = map[string]sdk.MetricType{}
	}
	if t, ok := c.types[name]; ok {
		return t == typ
	}
	c.types[name] = typ
	return true
}

func (c *descCache) get(s *series) *prometheus.Desc {
	key := s.name + "\x00" + strings.Join(s.labels, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.m[key]; ok {
		return d
	}
	if c.m == nil {
		c.m, c.help = map[string]*prometheus.Desc{}, map[string]string{}
	}
	help, ok := c.help[s.name]
	if !ok {
		help = s.help
		c.help[s.name] = help
	}
	d := prometheus.NewDesc(s.name, help, s.labels, nil)
	c.m[key] = d
	return d
}

// begin starts the attributes of b.
func (w *writer) begin(b bean) {
	w.flush()
	w.cur = b
}

// attr adds one attribute of the current bean.
func (w *writer) attr(attr string, v value, help string) {
	if w.seen != nil {
		w.seen(w.cur, attr, v, help)
		return
	}
	s, ok := w.style.name(w.cur, attr, v, help)
	if !ok {
		return
	}
	w.pending = append(w.pending, pendingSeries{s, attr})
}

// flush writes the current bean's series.
func (w *writer) flush() {
	if len(w.pending) == 0 {
		return
	}
	keys := make(map[string]int, len(w.pending))
	for _, p := range w.pending {
		keys[p.s.name+"\x00"+strings.Join(p.s.values, "\x00")]++
	}
	for _, p := range w.pending {
		s := p.s
		if keys[s.name+"\x00"+strings.Join(s.values, "\x00")] > 1 {
			// The exporter's answer to a collision.
			s.labels = append([]string{"_objectname"}, s.labels...)
			s.values = append([]string{w.cur.objectName(p.attr)}, s.values...)
		}
		w.emit(s)
	}
	w.pending = w.pending[:0]
}

func (w *writer) emit(s series) {
	m, err := prometheus.NewConstMetric(w.descs.get(&s), s.typ, s.value, s.values...)
	if err != nil {
		return // a label value that is not UTF-8: no such series
	}
	w.ch <- m
}

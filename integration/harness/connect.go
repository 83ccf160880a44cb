package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connectMainClass is Kafka Connect's distributed-mode entry point.
const connectMainClass = "org.apache.kafka.connect.cli.ConnectDistributed"

// Connect is a running Kafka Connect 4.4 distributed worker whose REST API
// listens on 127.0.0.1.
type Connect struct {
	client  *http.Client
	access  WorkerSetup
	url     string
	groupID string
	dir     string
	proc    *process
	startup time.Duration
	// metricsURLs are the /metrics URLs of the JMX exporter agents
	// (WithJMXExporter), in the order of their configurations.
	metricsURLs []string
}

// ConnectOption configures KafkaConnect and StartKafkaConnect.
type ConnectOption func(*connectConfig)

type connectConfig struct {
	props   map[string]string
	jvmArgs []string
	timeout time.Duration
	group   string
	access  WorkerSetup
	// exporters are the rules files of the JMX exporter agents to attach.
	exporters []string
}

// WithConnectAccess tells the harness how to reach a worker whose REST
// API is secured (HTTPS, client certificates, basic authentication) while
// it waits for it; Connect.Client gives a client for it.
func WithConnectAccess(a WorkerSetup) ConnectOption {
	return func(c *connectConfig) { c.access = a }
}

// WithJMXExporter attaches the Prometheus JMX exporter's Java agent
// (jmx_prometheus_javaagent, which fetch-jars.sh copies to the jars
// directory's agents/) with the rules file at config: it serves the
// worker's MBeans as Prometheus series, named by those rules, at
// MetricsURLs()[i] for the i-th such option. The metrics tests take
// their golden lists of series from it. A relative config is the test's
// (its package directory's).
func WithJMXExporter(config string) ConnectOption {
	if abs, err := filepath.Abs(config); err == nil {
		config = abs // the JVM runs in another directory
	}
	return func(c *connectConfig) { c.exporters = append(c.exporters, config) }
}

// JMXExporterAgent returns the path of the JMX exporter's Java agent jar
// in the jars directory, or an error wrapping ErrUnavailable.
func JMXExporterAgent() (string, error) {
	m, _ := filepath.Glob(filepath.Join(JarsDir(), "agents", "jmx_prometheus_javaagent-*.jar"))
	if len(m) == 0 {
		return "", fmt.Errorf("harness: no jmx_prometheus_javaagent jar in %s/agents (run: bash integration/fetch-jars.sh): %w", JarsDir(), ErrUnavailable)
	}
	return m[len(m)-1], nil
}

// WithConnectGroup makes the worker a member of group, with the internal
// topics group-configs, group-offsets and group-status (the names
// WorkerProps gives Tributary workers), instead of a group of its own: so
// that it can join a cluster of Tributary workers or of other Kafka
// Connect workers.
func WithConnectGroup(group string) ConnectOption {
	return func(c *connectConfig) { c.group = group }
}

// WithWorkerProperty sets a connect-distributed.properties entry,
// overriding the harness's default, for example
// WithWorkerProperty("offset.flush.interval.ms", "1000").
func WithWorkerProperty(key, value string) ConnectOption {
	return func(c *connectConfig) { c.props[key] = value }
}

// WithConnectJVMArgs appends JVM flags after the defaults.
func WithConnectJVMArgs(args ...string) ConnectOption {
	return func(c *connectConfig) { c.jvmArgs = append(c.jvmArgs, args...) }
}

// WithConnectStartTimeout bounds the time the worker may take to serve its
// REST API (default 3 minutes).
func WithConnectStartTimeout(d time.Duration) ConnectOption {
	return func(c *connectConfig) { c.timeout = d }
}

// KafkaConnect starts a Kafka Connect 4.4 distributed worker against the
// Kafka cluster at bootstrap (Apache Kafka or Tributary's broker), in a
// directory under t.TempDir, and kills it in t.Cleanup. Skip and failure
// rules, and the start-up tuned JVM in tests, are those of ApacheKafka.
func KafkaConnect(t testing.TB, bootstrap string, opts ...ConnectOption) *Connect {
	t.Helper()
	requireJava(t)
	requireJars(t)
	dir := t.TempDir()
	if !isBenchmark(t) {
		opts = append([]ConnectOption{WithConnectJVMArgs(quickStartJVMArgs()...)}, opts...)
	}
	c, err := StartKafkaConnect(context.Background(), dir, bootstrap, nil, opts...)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatalf("start Kafka Connect: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Kafka Connect log tail (%s):\n%s", c.LogPath(), c.proc.tail(40))
		}
		if err := c.Close(); err != nil {
			t.Errorf("stop Kafka Connect: %v", err)
		}
	})
	t.Logf("Kafka Connect at %s started in %v (dir %s)", c.URL(), c.StartupTime().Round(time.Millisecond), dir)
	return c
}

// StartKafkaConnect starts a Kafka Connect 4.4 distributed worker against
// bootstrap with its configuration and log (connect.log) in dir, which must
// exist, and waits until both GET / and GET /connectors answer 200. The
// worker gets a group id and internal topic names unique to this start,
// JsonConverter for keys and values, replication factor 1 for its internal
// topics, and the FileStream connectors on its class path. props are extra
// connect-distributed.properties entries, applied after opts. ctx bounds
// only the start-up. The error wraps ErrUnavailable when java or the jars
// are missing.
func StartKafkaConnect(ctx context.Context, dir, bootstrap string, props map[string]string, opts ...ConnectOption) (*Connect, error) {
	begin := time.Now()
	cfg := connectConfig{props: map[string]string{}, timeout: defaultStartTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	maps.Copy(cfg.props, props)

	java, jars, err := javaAndJars()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	c, err := startRetrying(func() (*Connect, error) { return startConnectOnce(ctx, dir, bootstrap, java, jars, &cfg) })
	if err != nil {
		return nil, err
	}
	c.startup = time.Since(begin)
	return c, nil
}

// startConnectOnce starts the worker with its REST API on a new free port.
func startConnectOnce(ctx context.Context, dir, bootstrap, java, jars string, cfg *connectConfig) (*Connect, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	id, err := newClusterID()
	if err != nil {
		return nil, err
	}
	group := "tributary-it-connect-" + id[:8]
	if cfg.group != "" {
		group = cfg.group
	}
	c := &Connect{
		url:     "http://127.0.0.1:" + strconv.Itoa(port),
		groupID: group,
		dir:     dir,
	}
	worker := map[string]string{
		"bootstrap.servers":                 bootstrap,
		"group.id":                          group,
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":      "true",
		"value.converter.schemas.enable":    "true",
		"config.storage.topic":              group + "-configs",
		"offset.storage.topic":              group + "-offsets",
		"status.storage.topic":              group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.storage.partitions":         "1",
		"status.storage.partitions":         "1",
		"listeners":                         c.url,
		"rest.advertised.host.name":         "127.0.0.1",
		"rest.advertised.port":              strconv.Itoa(port),
		"rest.advertised.listener":          "http",
		"plugin.discovery":                  "service_load",
		"scheduled.rebalance.max.delay.ms":  "0",
	}
	maps.Copy(worker, cfg.props)
	if l, ok := cfg.props["listeners"]; ok {
		// The test's own listeners: the first is the URL.
		scheme, hp, err := parseListenerURL(l)
		if err != nil {
			return nil, fmt.Errorf("harness: listeners: %w", err)
		}
		c.url = scheme + "://" + hp
		if _, ok := cfg.props["rest.advertised.listener"]; !ok {
			worker["rest.advertised.listener"] = scheme
		}
		if _, port, err := net.SplitHostPort(hp); err == nil {
			worker["rest.advertised.port"] = port
		}
	}
	var agentArgs []string
	if len(cfg.exporters) > 0 {
		agent, err := JMXExporterAgent()
		if err != nil {
			return nil, err
		}
		ports, err := freePorts(len(cfg.exporters))
		if err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		for i, rules := range cfg.exporters {
			agentArgs = append(agentArgs, fmt.Sprintf("-javaagent:%s=127.0.0.1:%d:%s", agent, ports[i], rules))
			c.metricsURLs = append(c.metricsURLs, fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[i]))
		}
	}
	propsPath := filepath.Join(dir, "connect-distributed.properties")
	if err := writeProperties(propsPath, worker); err != nil {
		return nil, err
	}
	logCfg := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, []byte(log4j2Config("info", "SYSTEM_OUT")), 0o644); err != nil {
		return nil, fmt.Errorf("harness: write connect log config: %w", err)
	}
	argv := append(defaultJVMArgs(), cfg.jvmArgs...)
	archive, dump := classArchive(java, jars, connectMainClass)
	if len(agentArgs) > 0 {
		archive, dump = "", "" // the archive is of the class path without the agent
	}
	argv = append(argv, archiveArgs(archive, dump)...)
	argv = append(argv, agentArgs...)
	argv = append(argv, "-Dlog4j2.configurationFile="+logCfg, "-cp", classpath(jars), connectMainClass, propsPath)

	proc, err := startProcess("Kafka Connect", java, argv, dir, filepath.Join(dir, "connect.log"))
	if err != nil {
		discardDump(dump)
		return nil, err
	}
	proc.archive, proc.dump = archive, dump
	c.proc = proc
	c.client = cfg.access.client()
	c.access = cfg.access
	if err := waitConnect(ctx, proc, c.url, c.client, cfg.access); err != nil {
		_ = proc.Close()
		return nil, startError(proc, fmt.Errorf("harness: Kafka Connect at %s did not start: %w", c.url, err))
	}
	return c, nil
}

// waitConnect polls the worker's REST API until GET / and GET /connectors
// answer 200, the process exits or ctx ends.
func waitConnect(ctx context.Context, p *process, url string, client *http.Client, access WorkerSetup) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if done, werr := p.exited(); done {
			return fmt.Errorf("process exited: %v", werr)
		}
		lastErr = getOK(ctx, client, url+"/", access)
		if lastErr == nil {
			lastErr = getOK(ctx, client, url+"/connectors", access)
			if lastErr == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// getOK GETs url and returns an error unless the status is 200.
func getOK(ctx context.Context, client *http.Client, url string, access WorkerSetup) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if access.User != "" {
		req.SetBasicAuth(access.User, access.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// Client returns an HTTP client for the worker's REST API (trusting the
// CA of WithConnectAccess, sending its client certificate).
func (c *Connect) Client() *http.Client { return c.client }

// URL returns the base URL of the worker's REST API, without a trailing
// slash.
func (c *Connect) URL() string { return c.url }

// MetricsURLs returns the /metrics URLs of the JMX exporter agents
// attached with WithJMXExporter, in the order of the options.
func (c *Connect) MetricsURLs() []string { return c.metricsURLs }

// GroupID returns the worker's group.id; its internal topics are named
// GroupID()+"-configs", "-offsets" and "-status".
func (c *Connect) GroupID() string { return c.groupID }

// Dir returns the directory holding the worker's configuration and log.
func (c *Connect) Dir() string { return c.dir }

// LogPath returns the path of the worker's log file.
func (c *Connect) LogPath() string { return c.proc.logPath }

// StartupTime returns how long StartKafkaConnect took, from the call until
// the REST API answered.
func (c *Connect) StartupTime() time.Duration { return c.startup }

// joinedRE matches the line Kafka Connect logs at the end of each
// rebalance (DistributedHerder.RebalanceListener.onAssigned): "Joined
// group at generation N with protocol version V and got assignment:
// Assignment{..., leaderUrl='URL', ...} with rebalance delay: D".
var joinedRE = regexp.MustCompile(`Joined group at generation (\d+) .*leaderUrl='([^']*)'`)

// LastJoin reads the worker's log for the last rebalance it completed:
// its generation (-1 before the first) and the leader's REST URL, without
// a trailing slash.
func (c *Connect) LastJoin() (generation int, leaderURL string, err error) {
	b, err := os.ReadFile(c.proc.logPath)
	if err != nil {
		return -1, "", fmt.Errorf("harness: read Kafka Connect's log: %w", err)
	}
	m := joinedRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return -1, "", nil
	}
	last := m[len(m)-1]
	gen, err := strconv.Atoi(string(last[1]))
	if err != nil {
		return -1, "", fmt.Errorf("harness: generation in %q: %w", last[0], err)
	}
	return gen, strings.TrimSuffix(string(last[2]), "/"), nil
}

// Close kills the worker's process group with SIGKILL and waits for it to
// exit. It is safe to call more than once.
func (c *Connect) Close() error { return c.proc.Close() }

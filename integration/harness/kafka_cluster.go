package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// KafkaCluster is a running Apache Kafka 4.4 KRaft cluster of several
// nodes on 127.0.0.1, each a combined broker and controller (so a
// three-node cluster keeps its quorum when one node dies).
type KafkaCluster struct {
	nodes   []*kafkaNode
	startup time.Duration
}

type kafkaNode struct {
	id         int
	bootstrap  string
	controller string
	dir        string
	proc       *process
	killOnce   sync.Once
}

// ApacheKafkaCluster starts an n-node KRaft Apache Kafka 4.4 cluster in
// directories under t.TempDir, with replication factor min(n, 3) for
// Kafka's internal topics and as the default, min.insync.replicas 2 when
// n >= 3, and a broker session of 3 s (a dead node is fenced and its
// partitions move within a few seconds instead of Kafka's default 9 s). It
// kills the nodes in t.Cleanup. Skip and failure rules are ApacheKafka's.
func ApacheKafkaCluster(t testing.TB, n int, opts ...KafkaOption) *KafkaCluster {
	t.Helper()
	requireJava(t)
	requireJars(t)
	dir := t.TempDir()
	c, err := StartApacheKafkaCluster(context.Background(), dir, n, opts...)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatalf("start Apache Kafka cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, nd := range c.nodes {
				t.Logf("Apache Kafka node %d log tail (%s):\n%s", nd.id, nd.proc.logPath, nd.proc.tail(20))
			}
		}
		c.Close()
	})
	t.Logf("Apache Kafka cluster of %d nodes at %s started in %v (dir %s)", n, c.Bootstrap(), c.startup.Round(time.Millisecond), dir)
	return c
}

// StartApacheKafkaCluster starts an n-node cluster with its nodes'
// configuration, data and logs in dir/node-<id> (see ApacheKafkaCluster)
// and waits until every node answers Metadata. The error wraps
// ErrUnavailable when java or the jars are missing.
func StartApacheKafkaCluster(ctx context.Context, dir string, n int, opts ...KafkaOption) (*KafkaCluster, error) {
	begin := time.Now()
	cfg := kafkaConfig{props: map[string]string{}, timeout: defaultStartTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	java, jars, err := javaAndJars()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	c, err := startRetrying(func() (*KafkaCluster, error) { return startClusterOnce(ctx, dir, n, java, jars, &cfg) })
	if err != nil {
		return nil, err
	}
	c.startup = time.Since(begin)
	return c, nil
}

func startClusterOnce(ctx context.Context, dir string, n int, java, jars string, cfg *kafkaConfig) (*KafkaCluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	clusterID, err := newClusterID()
	if err != nil {
		return nil, err
	}
	c := &KafkaCluster{}
	var voters []string
	for i := 0; i < n; i++ {
		nd := &kafkaNode{id: i + 1, bootstrap: "127.0.0.1:" + strconv.Itoa(ports[2*i]), controller: "127.0.0.1:" + strconv.Itoa(ports[2*i+1]),
			dir: filepath.Join(dir, "node-"+strconv.Itoa(i+1))}
		c.nodes = append(c.nodes, nd)
		voters = append(voters, fmt.Sprintf("%d@%s", nd.id, nd.controller))
	}
	rf := strconv.Itoa(min(n, 3))
	minISR := "1"
	if n >= 3 {
		minISR = "2"
	}
	// Each node's storage is formatted and the node started in parallel:
	// a JVM start costs seconds.
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, nd := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = startNode(ctx, nd, java, jars, cfg, clusterID, voters, rf, minISR)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	for _, nd := range c.nodes {
		if err := waitKafka(ctx, nd.proc, nd.bootstrap); err != nil {
			c.Close()
			return nil, startError(nd.proc, fmt.Errorf("harness: Apache Kafka node %d at %s did not start: %w", nd.id, nd.bootstrap, err))
		}
	}
	return c, nil
}

// Bootstrap returns every node's host:port, comma-separated.
func (c *KafkaCluster) Bootstrap() string {
	var b []string
	for _, nd := range c.nodes {
		b = append(b, nd.bootstrap)
	}
	return strings.Join(b, ",")
}

// Size is the number of nodes.
func (c *KafkaCluster) Size() int { return len(c.nodes) }

// NodeBootstrap returns node i's (0-based) host:port.
func (c *KafkaCluster) NodeBootstrap(i int) string { return c.nodes[i].bootstrap }

// Kill sends SIGKILL to node i (0-based) and waits for it to exit. It is
// safe to call more than once.
func (c *KafkaCluster) Kill(i int) {
	nd := c.nodes[i]
	nd.killOnce.Do(func() { _ = nd.proc.Close() })
}

// StartupTime returns how long the cluster took to start.
func (c *KafkaCluster) StartupTime() time.Duration { return c.startup }

// Close kills every node. It is safe to call more than once.
func (c *KafkaCluster) Close() {
	for i, nd := range c.nodes {
		if nd.proc != nil {
			c.Kill(i)
		}
	}
}

// startNode formats a node's storage and starts it.
func startNode(ctx context.Context, nd *kafkaNode, java, jars string, cfg *kafkaConfig, clusterID string, voters []string, rf, minISR string) error {
	if err := os.RemoveAll(nd.dir); err != nil {
		return fmt.Errorf("harness: clear %s: %w", nd.dir, err)
	}
	if err := os.MkdirAll(nd.dir, 0o755); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	server := map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          strconv.Itoa(nd.id),
		"controller.quorum.voters":                         strings.Join(voters, ","),
		"listeners":                                        "PLAINTEXT://" + nd.bootstrap + ",CONTROLLER://" + nd.controller,
		"advertised.listeners":                             "PLAINTEXT://" + nd.bootstrap,
		"controller.listener.names":                        "CONTROLLER",
		"inter.broker.listener.name":                       "PLAINTEXT",
		"listener.security.protocol.map":                   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                                         filepath.Join(nd.dir, "data"),
		"num.partitions":                                   "1",
		"default.replication.factor":                       rf,
		"min.insync.replicas":                              minISR,
		"offsets.topic.replication.factor":                 rf,
		"offsets.topic.num.partitions":                     "3",
		"transaction.state.log.replication.factor":         rf,
		"transaction.state.log.min.isr":                    minISR,
		"transaction.state.log.num.partitions":             "1",
		"share.coordinator.state.topic.replication.factor": rf,
		"share.coordinator.state.topic.min.isr":            minISR,
		"group.initial.rebalance.delay.ms":                 "0",
		"auto.create.topics.enable":                        "true",
		"broker.heartbeat.interval.ms":                     "500",
		"broker.session.timeout.ms":                        "3000",
	}
	maps.Copy(server, cfg.props)
	propsPath := filepath.Join(nd.dir, "server.properties")
	if err := writeProperties(propsPath, server); err != nil {
		return err
	}
	logCfg := filepath.Join(nd.dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, []byte(log4j2Config("info", "SYSTEM_OUT")), 0o644); err != nil {
		return fmt.Errorf("harness: write kafka log config: %w", err)
	}
	jvm := append(defaultJVMArgs(), cfg.jvmArgs...)
	jvm = append(jvm, "-Dlog4j2.configurationFile="+logCfg, "-cp", classpath(jars))
	format := append(slices.Clone(jvm), "-XX:TieredStopAtLevel=1", storageToolClass,
		"format", "--cluster-id", clusterID, "--config", propsPath, "--ignore-formatted")
	fcmd := exec.CommandContext(ctx, java, format...)
	fcmd.Dir = nd.dir
	setProcAttr(fcmd)
	fcmd.Cancel = func() error { return killGroup(fcmd) }
	if out, err := fcmd.CombinedOutput(); err != nil {
		return fmt.Errorf("harness: format Kafka storage of node %d: %w\n%s", nd.id, err, tailLines(out, 30))
	}
	proc, err := startProcess(fmt.Sprintf("Apache Kafka node %d", nd.id), java, append(jvm, kafkaMainClass, propsPath), nd.dir, filepath.Join(nd.dir, "kafka.log"))
	if err != nil {
		return err
	}
	nd.proc = proc
	return nil
}

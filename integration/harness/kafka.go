package harness

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Class names of the Apache Kafka entry points the harness uses.
const (
	kafkaMainClass   = "kafka.Kafka"
	storageToolClass = "kafka.tools.StorageTool"
)

// defaultStartTimeout bounds how long a component may take to become ready.
// It is generous because CI runs several JVMs at once on two cores.
const defaultStartTimeout = 3 * time.Minute

// Kafka is a running single-node KRaft Apache Kafka broker (combined broker
// and controller) listening on 127.0.0.1.
type Kafka struct {
	bootstrap  string
	controller string
	// secured are the addresses of the secured listeners (see
	// WithSecurity), by name.
	secured map[string]string
	dir     string
	java    string
	jars    string
	proc    *process
	startup time.Duration
}

// KafkaOption configures ApacheKafka and StartApacheKafka.
type KafkaOption func(*kafkaConfig)

type kafkaConfig struct {
	props    map[string]string
	jvmArgs  []string
	timeout  time.Duration
	security *KafkaSecurity
}

// Names of the secured listeners WithSecurity adds.
const (
	// ListenerSASLSSL is SASL_SSL with PLAIN and SCRAM-SHA-512.
	ListenerSASLSSL = "SASLSSL"
	// ListenerMTLS is SSL requiring a client certificate signed by the
	// PKI's CA.
	ListenerMTLS = "MTLS"
	// ListenerOAuth is SASL_PLAINTEXT with OAUTHBEARER, the tokens
	// checked by Kafka's default (unsecured JWT) validator.
	ListenerOAuth = "OAUTH"
)

// KafkaSecurity describes the secured listeners of a broker, beside its
// PLAINTEXT one (which the harness itself uses).
type KafkaSecurity struct {
	// PKI gives the broker its certificate (PKI.Server) and the CA it
	// trusts for client certificates.
	PKI *PKI
	// PlainUsers are the PLAIN users (name → password).
	PlainUsers map[string]string
	// ScramUsers are the SCRAM-SHA-512 users, created when the storage
	// is formatted (kafka-storage format --add-scram).
	ScramUsers map[string]string
}

// WithSecurity adds the listeners ListenerSASLSSL, ListenerMTLS and
// ListenerOAuth; Kafka.Listener gives their addresses.
func WithSecurity(s KafkaSecurity) KafkaOption {
	return func(c *kafkaConfig) { c.security = &s }
}

// WithServerProperty sets a server.properties entry, overriding the
// harness's default, for example
// WithServerProperty("log.flush.interval.messages", "1").
func WithServerProperty(key, value string) KafkaOption {
	return func(c *kafkaConfig) { c.props[key] = value }
}

// WithServerProperties sets several server.properties entries.
func WithServerProperties(props map[string]string) KafkaOption {
	return func(c *kafkaConfig) { maps.Copy(c.props, props) }
}

// WithKafkaJVMArgs appends JVM flags (after the defaults, so that for
// example "-Xmx1g" wins over the default -Xmx512m).
func WithKafkaJVMArgs(args ...string) KafkaOption {
	return func(c *kafkaConfig) { c.jvmArgs = append(c.jvmArgs, args...) }
}

// WithKafkaStartTimeout bounds the time the broker may take to answer
// Metadata (default 3 minutes).
func WithKafkaStartTimeout(d time.Duration) KafkaOption {
	return func(c *kafkaConfig) { c.timeout = d }
}

// ApacheKafka starts a single-node KRaft Apache Kafka 4.4 broker in a
// directory under t.TempDir and kills it in t.Cleanup. In a test (not a
// benchmark) the JVM is tuned for start-up (quickStartJVMArgs). It skips the test
// when java or the jars are unavailable (see the package documentation)
// and fails it when the broker does not start.
func ApacheKafka(t testing.TB, opts ...KafkaOption) *Kafka {
	t.Helper()
	requireJava(t)
	requireJars(t)
	dir := t.TempDir()
	if !isBenchmark(t) {
		opts = append([]KafkaOption{WithKafkaJVMArgs(quickStartJVMArgs()...)}, opts...)
	}
	k, err := StartApacheKafka(context.Background(), dir, nil, opts...)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatalf("start Apache Kafka: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Apache Kafka log tail (%s):\n%s", k.LogPath(), k.proc.tail(40))
		}
		if err := k.Close(); err != nil {
			t.Errorf("stop Apache Kafka: %v", err)
		}
	})
	t.Logf("Apache Kafka at %s started in %v (dir %s)", k.Bootstrap(), k.StartupTime().Round(time.Millisecond), dir)
	return k
}

// StartApacheKafka starts a single-node KRaft Apache Kafka 4.4 broker with
// its configuration, data and log (kafka.log) in dir, which must exist, and
// waits until it answers a Metadata request. props are extra
// server.properties entries, applied after opts. ctx bounds only the
// start-up; the broker runs until Close. The error wraps ErrUnavailable
// when java or the jars are missing.
func StartApacheKafka(ctx context.Context, dir string, props map[string]string, opts ...KafkaOption) (*Kafka, error) {
	begin := time.Now()
	cfg := kafkaConfig{props: map[string]string{}, timeout: defaultStartTimeout}
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
	k, err := startRetrying(func() (*Kafka, error) { return startKafkaOnce(ctx, dir, java, jars, &cfg) })
	if err != nil {
		return nil, err
	}
	k.startup = time.Since(begin)
	return k, nil
}

// startKafkaOnce formats fresh storage in dir and starts the broker on new
// free ports.
func startKafkaOnce(ctx context.Context, dir, java, jars string, cfg *kafkaConfig) (*Kafka, error) {
	nports := 2
	if cfg.security != nil {
		nports += 3
	}
	ports, err := freePorts(nports)
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	k := &Kafka{
		bootstrap:  "127.0.0.1:" + strconv.Itoa(ports[0]),
		controller: "127.0.0.1:" + strconv.Itoa(ports[1]),
		dir:        dir,
		java:       java,
		jars:       jars,
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.RemoveAll(dataDir); err != nil {
		return nil, fmt.Errorf("harness: clear %s: %w", dataDir, err)
	}

	server := map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          "1",
		"controller.quorum.voters":                         "1@" + k.controller,
		"listeners":                                        "PLAINTEXT://" + k.bootstrap + ",CONTROLLER://" + k.controller,
		"advertised.listeners":                             "PLAINTEXT://" + k.bootstrap,
		"controller.listener.names":                        "CONTROLLER",
		"inter.broker.listener.name":                       "PLAINTEXT",
		"listener.security.protocol.map":                   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                                         dataDir,
		"num.partitions":                                   "1",
		"default.replication.factor":                       "1",
		"offsets.topic.replication.factor":                 "1",
		"offsets.topic.num.partitions":                     "1",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"transaction.state.log.num.partitions":             "1",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
		"auto.create.topics.enable":                        "true",
	}
	var formatArgs []string
	if sec := cfg.security; sec != nil {
		k.secured = map[string]string{}
		for i, name := range []string{ListenerSASLSSL, ListenerMTLS, ListenerOAuth} {
			k.secured[name] = "127.0.0.1:" + strconv.Itoa(ports[2+i])
			server["listeners"] += "," + name + "://" + k.secured[name]
			server["advertised.listeners"] += "," + name + "://" + k.secured[name]
		}
		server["listener.security.protocol.map"] += ",SASLSSL:SASL_SSL,MTLS:SSL,OAUTH:SASL_PLAINTEXT"
		var users strings.Builder
		for _, u := range slices.Sorted(maps.Keys(sec.PlainUsers)) {
			fmt.Fprintf(&users, " user_%s=%q", u, sec.PlainUsers[u])
		}
		maps.Copy(server, map[string]string{
			"ssl.keystore.type":                                    "PEM",
			"ssl.keystore.location":                                sec.PKI.Server,
			"ssl.truststore.type":                                  "PEM",
			"ssl.truststore.location":                              sec.PKI.CA,
			"listener.name.saslssl.sasl.enabled.mechanisms":        "PLAIN,SCRAM-SHA-512",
			"listener.name.saslssl.plain.sasl.jaas.config":         "org.apache.kafka.common.security.plain.PlainLoginModule required" + users.String() + ";",
			"listener.name.saslssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.name.mtls.ssl.client.auth":                   "required",
			"listener.name.oauth.sasl.enabled.mechanisms":          "OAUTHBEARER",
			"listener.name.oauth.oauthbearer.sasl.jaas.config":     "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"broker\";",
			"sasl.enabled.mechanisms":                              "PLAIN,SCRAM-SHA-512,OAUTHBEARER",
		})
		for _, u := range slices.Sorted(maps.Keys(sec.ScramUsers)) {
			formatArgs = append(formatArgs, "--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", u, sec.ScramUsers[u]))
		}
	}
	maps.Copy(server, cfg.props)
	propsPath := filepath.Join(dir, "server.properties")
	if err := writeProperties(propsPath, server); err != nil {
		return nil, err
	}
	logCfg := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, []byte(log4j2Config("info", "SYSTEM_OUT")), 0o644); err != nil {
		return nil, fmt.Errorf("harness: write kafka log config: %w", err)
	}
	jvm := append(defaultJVMArgs(), cfg.jvmArgs...)
	cp := []string{"-Dlog4j2.configurationFile=" + logCfg, "-cp", classpath(jars)}

	// Format the storage directory (a short-lived JVM: favour start-up speed).
	clusterID, err := newClusterID()
	if err != nil {
		return nil, err
	}
	fArchive, fDump := classArchive(java, jars, storageToolClass)
	defer discardDump(fDump)
	format := append(slices.Clone(jvm), "-XX:TieredStopAtLevel=1")
	format = append(format, archiveArgs(fArchive, fDump)...)
	format = append(format, cp...)
	format = append(format, storageToolClass,
		"format", "--cluster-id", clusterID, "--config", propsPath, "--ignore-formatted")
	format = append(format, formatArgs...)
	fcmd := exec.CommandContext(ctx, java, format...)
	fcmd.Dir = dir
	setProcAttr(fcmd)
	fcmd.Cancel = func() error { return killGroup(fcmd) }
	if out, err := fcmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("harness: format Kafka storage: %w\n%s", err, tailLines(out, 30))
	}
	keepArchive(fArchive, fDump)

	archive, dump := classArchive(java, jars, kafkaMainClass)
	argv := append(slices.Clone(jvm), archiveArgs(archive, dump)...)
	argv = append(argv, cp...)
	proc, err := startProcess("Apache Kafka", java, append(argv, kafkaMainClass, propsPath), dir, filepath.Join(dir, "kafka.log"))
	if err != nil {
		discardDump(dump)
		return nil, err
	}
	proc.archive, proc.dump = archive, dump
	k.proc = proc
	if err := waitKafka(ctx, proc, k.bootstrap); err != nil {
		_ = proc.Close()
		return nil, startError(proc, fmt.Errorf("harness: Apache Kafka at %s did not start: %w", k.bootstrap, err))
	}
	return k, nil
}

// waitKafka polls bootstrap with Metadata requests until the broker lists
// itself, the process exits or ctx ends.
func waitKafka(ctx context.Context, p *process, bootstrap string) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.DialTimeout(time.Second),
		kgo.RequestRetries(0),
		kgo.RetryTimeout(time.Second),
	)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	defer cl.Close()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if done, werr := p.exited(); done {
			return fmt.Errorf("process exited: %v", werr)
		}
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(actx, cl)
		acancel()
		switch {
		case err != nil:
			lastErr = err
		case len(resp.Brokers) == 0:
			lastErr = errors.New("metadata lists no brokers")
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// newClusterID returns a random Kafka cluster id: 16 random bytes in
// unpadded URL-safe base64, not starting with '-' (as Kafka's
// Uuid.randomUuid).
func newClusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("harness: random cluster id: %w", err)
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

// writeProperties writes props as a Java properties file, sorted by key.
func writeProperties(path string, props map[string]string) error {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", escapeProperty(k, true), escapeProperty(props[k], false))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("harness: write %s: %w", path, err)
	}
	return nil
}

// escapeProperty escapes s for a Java properties file.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case key && (r == '=' || r == ':' || r == ' ' || r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case !key && i == 0 && r == ' ':
			b.WriteString(`\ `)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Bootstrap returns the broker's host:port.
func (k *Kafka) Bootstrap() string { return k.bootstrap }

// Listener returns the host:port of a secured listener (ListenerSASLSSL,
// ListenerMTLS, ListenerOAuth); "" without WithSecurity.
func (k *Kafka) Listener(name string) string { return k.secured[name] }

// Pid returns the broker's java process id (benchmarks read its CPU time).
func (k *Kafka) Pid() int { return k.proc.cmd.Process.Pid }

// Dir returns the directory holding the broker's configuration, data and
// log.
func (k *Kafka) Dir() string { return k.dir }

// LogPath returns the path of the broker's log file.
func (k *Kafka) LogPath() string { return k.proc.logPath }

// StartupTime returns how long StartApacheKafka took, from the call to the
// first successful Metadata request (storage formatting included).
func (k *Kafka) StartupTime() time.Duration { return k.startup }

// Close kills the broker's process group with SIGKILL and waits for it to
// exit. It does not remove the directory. It is safe to call more than once.
func (k *Kafka) Close() error { return k.proc.Close() }

// RunTool runs a Kafka command-line tool class with the jars and java this
// broker uses and returns its standard output; see JavaTool. The arguments
// are passed unchanged, so the tool may target any bootstrap address, not
// only k.Bootstrap().
func (k *Kafka) RunTool(ctx context.Context, class string, args ...string) ([]byte, error) {
	return runTool(ctx, k.java, k.jars, nil, class, args)
}

// RunToolWithInput is RunTool with stdin as the tool's standard input.
func (k *Kafka) RunToolWithInput(ctx context.Context, stdin io.Reader, class string, args ...string) ([]byte, error) {
	return runTool(ctx, k.java, k.jars, stdin, class, args)
}

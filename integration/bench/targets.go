package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/broker"
	"github.com/tributary-dev/tributary/integration/harness"
)

// Target names one broker set-up the benchmark runs against.
type Target string

// The targets, in the order they run.
const (
	Tributary    Target = "tributary"
	KfakeMemory  Target = "kfake-memory"
	KfakeSync    Target = "kfake-sync"
	Kafka        Target = "kafka"
	KafkaDurable Target = "kafka-durable"
)

// AllTargets lists every target in run order.
var AllTargets = []Target{Tributary, KfakeMemory, KfakeSync, Kafka, KafkaDurable}

// Describe says in a few words how a target is set up.
func (t Target) Describe() string {
	switch t {
	case Tributary:
		return "Tributary broker in-process, fsync (group commit) before acking acks=all"
	case KfakeMemory:
		return "franz-go kfake, 1 broker, in memory"
	case KfakeSync:
		return "franz-go kfake, 1 broker, DataDir + SyncWrites (fsync every batch)"
	case Kafka:
		return "Apache Kafka 4.4 KRaft, defaults (flush left to the page cache)"
	case KafkaDurable:
		return "Apache Kafka 4.4 KRaft, log.flush.interval.messages=1 (fsync every append)"
	case TributaryTLS:
		return "Tributary broker in-process, SSL listener (TLS, no client authentication)"
	case TributarySASLSSL:
		return "Tributary broker in-process, SASL_SSL listener, SCRAM-SHA-512"
	case KafkaSASLSSL:
		return "Apache Kafka 4.4 KRaft, SASL_SSL listener, SCRAM-SHA-512"
	}
	return "unknown"
}

// IsApacheKafka reports whether t runs Apache Kafka (java).
func (t Target) IsApacheKafka() bool { return t == Kafka || t == KafkaDurable || t == KafkaSASLSSL }

// ParseTargets parses a comma-separated list of target names. "all" or an
// empty string selects every target.
func ParseTargets(s string) ([]Target, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return append([]Target(nil), AllTargets...), nil
	}
	want := map[Target]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		t := Target(f)
		known := false
		for _, k := range append(AllTargets[:len(AllTargets):len(AllTargets)], SecureTargets...) {
			known = known || k == t
		}
		if !known {
			return nil, fmt.Errorf("unknown target %q (known: %s)", f, joinTargets(append(AllTargets[:len(AllTargets):len(AllTargets)], SecureTargets...)))
		}
		want[t] = true
	}
	var out []Target
	for _, t := range append(AllTargets[:len(AllTargets):len(AllTargets)], SecureTargets...) { // keep run order
		if want[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no targets selected")
	}
	return out, nil
}

func joinTargets(ts []Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// ErrSkipped wraps the reason a target could not run on this machine (no
// java or no jars for Apache Kafka).
var ErrSkipped = errors.New("target skipped")

// kafkaJVMArgs are the heap and GC settings of Kafka's own
// kafka-server-start.sh / kafka-run-class.sh (KAFKA_HEAP_OPTS and
// KAFKA_JVM_PERFORMANCE_OPTS), replacing the harness's small-CI defaults so
// that Apache Kafka runs as shipped.
var kafkaJVMArgs = []string{
	"-Xms1g", "-Xmx1g",
	"-XX:-UseSerialGC", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
}

// running is a started target.
type running struct {
	bootstrap string
	// opts are the client options the target needs (TLS, SASL).
	opts  []kgo.Opt
	close func() error
	// brokerPid is the process id of an out-of-process broker (Apache
	// Kafka), whose CPU time counts with this process's; 0 for in-process
	// brokers.
	brokerPid int
}

// cpu returns the CPU time used so far by this process (the client, and an
// in-process broker) and the target's broker process.
func (r *running) cpu() time.Duration {
	return selfCPU() + procCPU(r.brokerPid)
}

// start starts target t with its data in a new directory under baseDir.
func start(ctx context.Context, t Target, baseDir string) (*running, error) {
	dir, err := os.MkdirTemp(baseDir, "tributary-bench-"+string(t)+"-")
	if err != nil {
		return nil, err
	}
	cleanup := func(err error) error {
		if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
			err = rerr
		}
		return err
	}
	switch t {
	case Tributary:
		cfg := broker.DefaultConfig()
		cfg.Listener = "127.0.0.1:0"
		cfg.LogDir = filepath.Join(dir, "data")
		cfg.GroupInitialRebalanceDelay = InitialRebalanceDelay * time.Millisecond
		b, err := broker.Open(cfg)
		if err != nil {
			return nil, cleanup(err)
		}
		done := make(chan error, 1)
		go func() { done <- b.Serve(context.Background()) }()
		return &running{bootstrap: b.Addr(), close: func() error {
			err := b.Close()
			if serr := <-done; err == nil {
				err = serr
			}
			return cleanup(err)
		}}, nil

	case KfakeMemory, KfakeSync:
		opts := []kfake.Opt{kfake.NumBrokers(1)}
		if t == KfakeSync {
			opts = append(opts, kfake.DataDir(filepath.Join(dir, "data")), kfake.SyncWrites())
		}
		c, err := kfake.NewCluster(opts...)
		if err != nil {
			return nil, cleanup(err)
		}
		return &running{bootstrap: c.ListenAddrs()[0], close: func() error {
			c.Close()
			return cleanup(nil)
		}}, nil

	case Kafka, KafkaDurable:
		props := map[string]string{
			"group.initial.rebalance.delay.ms": strconv.Itoa(InitialRebalanceDelay),
		}
		if t == KafkaDurable {
			props["log.flush.interval.messages"] = "1"
		}
		k, err := harness.StartApacheKafka(ctx, dir, props, harness.WithKafkaJVMArgs(kafkaJVMArgs...))
		if errors.Is(err, harness.ErrUnavailable) {
			return nil, cleanup(fmt.Errorf("%w: %v (install a JDK %d+ and run integration/fetch-jars.sh, or pass --no-kafka)",
				ErrSkipped, err, harness.MinJavaVersion))
		}
		if err != nil {
			return nil, cleanup(err)
		}
		return &running{bootstrap: k.Bootstrap(), brokerPid: k.Pid(), close: func() error {
			return cleanup(k.Close())
		}}, nil

	case TributaryTLS, TributarySASLSSL, KafkaSASLSSL:
		return startSecure(ctx, t, dir, cleanup)
	}
	return nil, cleanup(fmt.Errorf("unknown target %q", t))
}

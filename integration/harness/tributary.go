package harness

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-dev/tributary/broker"
)

// Broker is Tributary's bundled broker running inside the test process.
type Broker struct {
	*broker.Broker
	Dir string
}

// TributaryBroker starts Tributary's broker in-process on a free 127.0.0.1
// port with its data in a temp dir; mutate may adjust the config. It is
// closed in t.Cleanup.
func TributaryBroker(t testing.TB, mutate ...func(*broker.Config)) *Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.Listener = "127.0.0.1:0"
	cfg.LogDir = t.TempDir()
	cfg.GroupInitialRebalanceDelay = 0 // as the harness's Apache Kafka: no 3 s wait for a group's first member
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	for _, m := range mutate {
		m(&cfg)
	}
	b, err := broker.Open(cfg)
	if err != nil {
		t.Fatalf("start tributary broker: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Serve(context.Background()) }()
	t.Cleanup(func() {
		b.Close()
		if err := <-done; err != nil {
			t.Errorf("tributary broker: %v", err)
		}
	})
	return &Broker{Broker: b, Dir: cfg.LogDir}
}

// Bootstrap is the address clients bootstrap from.
func (b *Broker) Bootstrap() string { return b.Addr() }

// KFake starts franz-go's kfake, one broker in memory with topic
// auto-creation, on a free port, as an independent Kafka implementation,
// and closes it in t.Cleanup. It returns the bootstrap address.
// Auto-created topics have one partition, as with Kafka's default
// num.partitions (kfake's own default is 10, across which a keyless
// producer's batches, and so the order of what a sink reads, scatter).
func KFake(t testing.TB) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

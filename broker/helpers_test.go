package broker

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startBroker runs a broker on a free port in dir (a temp dir if empty).
func startBroker(t testing.TB, dir string, mutate ...func(*Config)) *Broker {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := DefaultConfig()
	cfg.Listener = "127.0.0.1:0"
	cfg.LogDir = dir
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	for _, m := range mutate {
		m(&cfg)
	}
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Serve(context.Background()) }()
	t.Cleanup(func() {
		b.Close()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return b
}

func newClient(t testing.TB, b *Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t testing.TB, b *Broker, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

package harness

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/restapi/schemaregistry"
)

// SchemaRegistry starts Tributary's schema registry in-process on a free
// 127.0.0.1 port, storing in the topic (default _schemas when "") of the
// broker at bootstrap, and returns its URL (Confluent's REST API). It
// stops at the end of the test.
func SchemaRegistry(t testing.TB, bootstrap, topic string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := schemaregistry.New(ctx, schemaregistry.Config{Brokers: []string{bootstrap}, Topic: topic})
	if err != nil {
		t.Fatalf("harness: schema registry: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close(context.Background())
		t.Fatalf("harness: schema registry listener: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		<-done
	})
	return "http://" + ln.Addr().String()
}

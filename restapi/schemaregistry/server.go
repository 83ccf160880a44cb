package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Config configures a Server.
type Config struct {
	// Brokers is the Kafka bootstrap list the registry stores through.
	Brokers []string
	// Topic is the schemas topic [_schemas].
	Topic string
	// WriterID names the group of instances that share the topic
	// [schema-registry].
	WriterID string
	// ClientOpts are added to the franz-go clients (TLS, SASL).
	ClientOpts []kgo.Opt
	// Logger gets the registry's logs.
	Logger *slog.Logger
}

// Server is a schema registry: the REST API over a Registry stored in the
// schemas topic.
type Server struct {
	reg  *Registry
	log  *KafkaLog
	http *http.Server
	l    *slog.Logger
}

// New opens the schemas topic (creating it if needed), reads it to the end
// and returns a server ready to Serve.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	reg := NewRegistry(nil)
	kl, err := OpenKafkaLog(ctx, KafkaLogConfig{
		Brokers: cfg.Brokers, Topic: cfg.Topic, WriterID: cfg.WriterID, ClientOpts: cfg.ClientOpts, Logger: cfg.Logger,
	}, reg.Apply)
	if err != nil {
		return nil, err
	}
	reg.SetLog(kl)
	s := &Server{reg: reg, log: kl, l: cfg.Logger}
	s.http = &http.Server{Handler: Handler(reg, cfg.Logger), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Registry returns the server's registry.
func (s *Server) Registry() *Registry { return s.reg }

// Serve answers on ln until Close; it returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("schemaregistry: serve: %w", err)
	}
	return nil
}

// Close stops serving (waiting for requests in flight until ctx ends) and
// closes the Kafka clients.
func (s *Server) Close(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	s.log.Close()
	return err
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/restapi/schemaregistry"
)

// Broker properties of the bundled schema registry (Tributary's own; the
// names after "schema.registry." are those of Confluent Schema Registry's
// schema-registry.properties).
const (
	propRegistryListeners = "schema.registry.listeners"
	propRegistryTopic     = "schema.registry.kafkastore.topic"
	propRegistryGroup     = "schema.registry.group.id"
)

// takeRegistryProps removes the schema registry's properties from props
// (the broker does not know them) and returns them.
func takeRegistryProps(props properties.Properties) properties.Properties {
	out := properties.Properties{}
	for k, v := range props {
		if strings.HasPrefix(k, "schema.registry.") {
			out[k] = v
			delete(props, k)
		}
	}
	return out
}

// parseRegistryListener reads schema.registry.listeners: one
// http://host:port (or host:port); "" means no registry.
func parseRegistryListener(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if strings.Contains(v, ",") {
		return "", fmt.Errorf("%s: one listener, not a list: %q", propRegistryListeners, v)
	}
	addr := strings.TrimPrefix(v, "http://")
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("%s: only http:// is supported: %q", propRegistryListeners, v)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("%s: %q: %w", propRegistryListeners, v, err)
	}
	return addr, nil
}

// startRegistry binds the schema registry's listener (an error now if the
// port is taken) and, in the background, opens the schemas topic on the
// broker at bootstrap and serves Confluent's REST API. stop closes it.
func startRegistry(ctx context.Context, addr, bootstrap string, props properties.Properties, logger *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("schema registry: %w", err)
	}
	url = "http://" + dialable(ln.Addr())
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var srv *schemaregistry.Server
	wg.Add(1)
	go func() {
		defer wg.Done()
		s, err := schemaregistry.New(rctx, schemaregistry.Config{
			Brokers:  []string{bootstrap},
			Topic:    props[propRegistryTopic],
			WriterID: props[propRegistryGroup],
			Logger:   logger,
		})
		if err != nil {
			if rctx.Err() == nil {
				logger.Error("schema registry did not start", "err", err)
			}
			ln.Close()
			return
		}
		mu.Lock()
		if rctx.Err() != nil { // stopped while starting
			mu.Unlock()
			s.Close(context.Background())
			ln.Close()
			return
		}
		srv = s
		mu.Unlock()
		logger.Info("serving the schema registry", "url", url)
		if err := s.Serve(ln); err != nil {
			logger.Error("schema registry failed", "err", err)
		}
		ln.Close()
	}()
	return url, func() {
		cancel()
		mu.Lock()
		s := srv
		mu.Unlock()
		if s != nil {
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			s.Close(sctx)
		} else {
			ln.Close()
		}
		wg.Wait()
	}, nil
}

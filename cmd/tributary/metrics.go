package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tributary-dev/tributary/worker/metrics"
)

// newRegistry is the process's metrics registry, the one every part that
// records metrics (worker, broker) is given (metrics.NewRegistry).
func newRegistry() *prometheus.Registry {
	return metrics.NewRegistry(version, buildCommit())
}

// metricsHandler serves reg's series as Prometheus text (or OpenMetrics
// when asked): GET /metrics. A collector's error leaves its series out
// rather than failing the whole scrape.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
}

// serveMetrics serves reg's /metrics (and nothing else) on addr until the
// returned stop is called. A listener that cannot be bound is logged, not
// fatal: the broker runs without its /metrics rather than not at all.
func serveMetrics(addr string, reg *prometheus.Registry, logger *slog.Logger) (stop func()) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Warn("metrics listener not bound: GET /metrics is not served (set tributary.metrics.listener to a free address, or empty)",
			"listener", addr, "err", err)
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(reg))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("metrics listener failed", "err", err)
		}
	}()
	logger.Info("serving metrics", "url", "http://"+dialable(ln.Addr())+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}
}

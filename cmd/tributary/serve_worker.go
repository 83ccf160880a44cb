package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/worker"
)

// runningWorker is a worker with its REST API being served.
type runningWorker struct {
	w    *worker.Worker
	url  string
	done chan error
}

// startWorker binds the REST listener, starts the worker and serves its REST
// API. The worker stops when ctx is cancelled; done then yields Run's error.
// portFix says how the user picks another REST port.
// reg receives the worker's metrics, served with the rest of reg on GET
// /metrics.
func startWorker(ctx context.Context, cfg worker.Config, logger *slog.Logger, loggers *loglevel.Registry, reg *prometheus.Registry, portFix string) (*runningWorker, error) {
	ln, err := net.Listen("tcp", cfg.Listener)
	if err != nil {
		return nil, fmt.Errorf("REST listener %s: %w%s", cfg.Listener, err, portHint(err, portFix))
	}
	w, err := worker.New(cfg, worker.Options{Logger: logger, Loggers: loggers, RESTAddr: ln.Addr(), Metrics: reg})
	if err != nil {
		ln.Close()
		return nil, err
	}
	restLog := loglevel.Named(logger, "dev.tributary.restapi")
	srv := restapi.NewServer(restapi.New(w.Herder(), restapi.Options{Logger: restLog, Metrics: metricsHandler(reg)}), restLog)
	srv.Start(ln)
	rw := &runningWorker{w: w, url: "http://" + dialable(ln.Addr()), done: make(chan error, 1)}
	logger.Info("REST API listening", "url", rw.url, "worker", w.ID())
	go func() {
		err := w.Run(ctx)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		rw.done <- err
	}()
	return rw, nil
}

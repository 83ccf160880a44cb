package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry is the process's metrics registry, the one every part that
// records metrics (worker, broker) is given: no default registry. It holds
// the Go runtime's and the process's collectors (go_*, process_*, the
// names the Prometheus Go client gives them everywhere) and
// tributary_info{version,commit} 1.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "tributary_info",
			Help:        "The version and commit of the tributary binary (always 1).",
			ConstLabels: prometheus.Labels{"version": version, "commit": buildCommit()},
		}, func() float64 { return 1 }),
	)
	return reg
}

// metricsHandler serves reg's series as Prometheus text (or OpenMetrics
// when asked): GET /metrics. A collector's error leaves its series out
// rather than failing the whole scrape.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
}

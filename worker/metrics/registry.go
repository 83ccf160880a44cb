package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns a process's metrics registry, for the command to
// create and hand to every part that records metrics (worker, broker): no
// default registry. It holds the Go runtime's and the process's
// collectors (go_*, process_*, the names the Prometheus Go client gives
// them everywhere) and tributary_info{version,commit} 1.
func NewRegistry(version, commit string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "tributary_info",
			Help:        "The version and commit of the tributary binary (always 1).",
			ConstLabels: prometheus.Labels{"version": version, "commit": commit},
		}, func() float64 { return 1 }),
	)
	return reg
}

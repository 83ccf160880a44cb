// Package metrics is the worker's Prometheus metrics: Kafka Connect's
// metric groups (connect-worker-metrics, connect-worker-rebalance-metrics,
// connect-coordinator-metrics, connector-metrics, connector-task-metrics,
// source-task-metrics, sink-task-metrics, task-error-metrics, app-info)
// with Kafka's semantics, named as the Prometheus JMX exporter names Kafka
// Connect's MBeans with the rules users' dashboards and alerts were
// written for (Style: Strimzi's, the default, or Confluent's).
//
// Nothing is global: the command creates a prometheus.Registry and hands
// it to the worker, which registers a Connect (a Collector) there.
// Runners record into their Task with atomics, or a short mutex once per
// batch; rates, averages and maxima over metrics.sample.window.ms ×
// metrics.num.samples (package internal/stats) are computed when scraped.
//
// What the driver does (worker.driver):
//
//	m := metrics.New(metrics.Config{WorkerID: id, Window: w, Style: s})
//	reg.MustRegister(m)
//	t := m.StartTask(metrics.TaskID{Connector: "c", Task: 0}, metrics.Source)
//	m.SetTaskState(id, "RUNNING")      // at every status it writes
//	… the runner records into t …
//	m.RemoveTask(id)                    // deleted, or moved elsewhere
//
// A FAILED task keeps its set (status "failed" and its last values) until
// it is deleted, restarted or moves: Kafka Connect drops them, which
// leaves users' failed-task alerts nothing to see.
package metrics

// Package metricsdoc keeps the README's list of every series Tributary
// serves (its "Monitoring" section) generated from the code: its test
// collects the series from the same code a scrape runs (the worker's
// metrics.Describe, the connectors' MetricsDoc, a running broker's
// registry, the process collectors) and fails when the README's list
// differs, so that the list cannot drift. Rewrite the list with
//
//	TRIBUTARY_UPDATE_README=1 go test ./internal/metricsdoc
package metricsdoc

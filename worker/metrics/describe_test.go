package metrics

import (
	"slices"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	docs := Describe()
	byName := map[string]SeriesDoc{}
	// Several attributes can have one Strimzi name (records-lag and
	// records-lag-max of a partition, told apart by _objectname): key
	// by both names.
	for _, d := range docs {
		if d.Type == "" || d.Help == "" || strings.Contains(d.Help, `"`) {
			t.Errorf("%s/%s: type %q help %q", d.Name, d.Confluent, d.Type, d.Help)
		}
		byName[d.Name+" "+d.Confluent] = d
	}
	for name, want := range map[string]struct {
		confluent, typ string
		labels         []string
	}{
		"kafka_connect_worker_connector_count":                {"kafka_connect_connect_worker_metrics_connector_count", "gauge", nil},
		"kafka_connect_source_task_source_record_write_total": {"kafka_connect_source_task_metrics_source_record_write", "counter", []string{"connector", "task"}},
		"kafka_connect_connector_task_status":                 {"", "gauge", []string{"connector", "task", "status"}},
		"kafka_connect_sink_task_sink_record_lag_max":         {"kafka_connect_sink_task_metrics_sink_record_lag_max", "gauge", []string{"connector", "task"}},
		"kafka_consumer_fetch_manager_records_lag":            {"kafka_consumer_consumer_fetch_manager_metrics_records_lag", "gauge", []string{"clientid", "topic", "partition"}},
		"tributary_sink_lag_records":                          {"tributary_sink_lag_records", "gauge", []string{"connector", "task", "topic", "partition"}},
		"tributary_sink_e2e_latency_seconds":                  {"tributary_sink_e2e_latency_seconds", "histogram", []string{"connector", "task"}},
	} {
		d, ok := byName[name+" "+want.confluent]
		if !ok {
			t.Errorf("%s: not described", name)
			continue
		}
		if d.Confluent != want.confluent || d.Type != want.typ || (want.labels != nil && !slices.Equal(d.Labels, want.labels)) {
			t.Errorf("%s: %+v, want %+v", name, d, want)
		}
	}
}

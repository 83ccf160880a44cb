package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/internal/stats"
)

// TestTaskSemantics checks Kafka Connect's semantics of the task groups:
// polls before transforms, writes after, active records, rates over the
// window, ratios of time per state, error counters.
func TestTaskSemantics(t *testing.T) {
	t.Parallel()
	cl := newClock()
	c := New(Config{Window: stats.Window{Size: 10 * time.Second, Samples: 2}, WorkerID: "w:8083", Now: cl.Now})
	id := TaskID{"src", 0}
	task := c.StartTask(id, Source)
	c.SetTaskState(id, "RUNNING")
	task.RecordPoll(100, 20*time.Millisecond)
	task.RecordBatch(100)
	cl.add(time.Second)
	fams := gather(t, c)
	if got := valueOf(t, fams, "kafka_connect_source_task_source_record_active_count", "_objectname",
		"kafka.connect<type=source-task-metrics, connector=src, task=0><>source-record-active-count"); got != 100 {
		t.Errorf("active count %v, want 100 (polled, not written)", got)
	}
	task.RecordWrite(100, 10) // 10 filtered out by a transform
	task.RecordFailure()
	task.RecordError()
	task.RecordSkipped()
	cl.add(4 * time.Second)
	c.SetTaskState(id, "PAUSED")
	cl.add(5 * time.Second)
	fams = gather(t, c)
	for name, want := range map[string]float64{
		"kafka_connect_source_task_source_record_poll_total":          100,
		"kafka_connect_source_task_source_record_write_total":         90,
		"kafka_connect_source_task_source_record_poll_rate":           100.0 / 10, // over the 10 s since the sample began
		"kafka_connect_source_task_poll_batch_max_time_ms":            20,
		"kafka_connect_connector_task_batch_size_max":                 100,
		"kafka_connect_connector_task_running_ratio":                  0.5,
		"kafka_connect_connector_task_pause_ratio":                    0.5,
		"kafka_connect_task_error_total_record_failures":              1,
		"kafka_connect_task_error_total_record_errors":                1,
		"kafka_connect_task_error_total_records_skipped":              1,
		"kafka_connect_task_error_last_error_timestamp":               float64(t0.Add(time.Second).UnixMilli()),
		"kafka_connect_worker_connector_paused_task_count":            1,
		"kafka_connect_worker_connector_total_task_count":             1,
		"kafka_connect_worker_task_count":                             1,
		"kafka_connect_worker_rebalance_time_since_last_rebalance_ms": math.Inf(1),
	} {
		if got := valueOf(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := valueOf(t, fams, "kafka_connect_connector_task_status", "status", "paused"); got != 1 {
		t.Errorf("status paused = %v", got)
	}
	// NaN before any commit, as Kafka's Avg and Max.
	if got := valueOf(t, fams, "kafka_connect_connector_task_offset_commit_avg_time_ms"); !math.IsNaN(got) {
		t.Errorf("offset commit avg before a commit = %v, want NaN", got)
	}
}

// TestFailedTaskStays: a failed task's series stay (status failed, its
// counts) until the driver removes the set; a restart starts from zero.
func TestFailedTaskStays(t *testing.T) {
	t.Parallel()
	cl := newClock()
	c := New(Config{WorkerID: "w:8083", Now: cl.Now})
	id := TaskID{"sink", 1}
	task := c.StartTask(id, Sink)
	c.SetTaskState(id, "RUNNING")
	task.RecordRead(5)
	c.SetTaskState(id, "FAILED")
	fams := gather(t, c)
	if got := valueOf(t, fams, "kafka_connect_connector_task_status", "connector", "sink", "task", "1", "status", "failed"); got != 1 {
		t.Errorf("failed status = %v", got)
	}
	if got := valueOf(t, fams, "kafka_connect_worker_connector_failed_task_count", "connector", "sink"); got != 1 {
		t.Errorf("failed task count = %v", got)
	}
	if got := valueOf(t, fams, "kafka_connect_sink_task_sink_record_read_total"); got != 5 {
		t.Errorf("read total of the failed task = %v, want 5", got)
	}
	c.StartTask(id, Sink) // restarted
	c.SetTaskState(id, "RUNNING")
	fams = gather(t, c)
	if got := valueOf(t, fams, "kafka_connect_sink_task_sink_record_read_total"); got != 0 {
		t.Errorf("read total after a restart = %v, want 0", got)
	}
	c.RemoveTask(id)
	fams = gather(t, c)
	if fams["kafka_connect_connector_task_status"] != nil || fams["kafka_connect_worker_connector_total_task_count"] != nil {
		t.Error("series of a removed task remain")
	}
	if got := valueOf(t, fams, "kafka_connect_worker_task_count"); got != 0 {
		t.Errorf("task count = %v", got)
	}
}

func TestWorkerGroups(t *testing.T) {
	t.Parallel()
	cl := newClock()
	c := New(Config{WorkerID: "10.0.0.1:8083", Version: "1.2", Commit: "c0ffee", Now: cl.Now})
	c.ConnectorStartup(true)
	c.ConnectorStartup(false)
	c.TaskStartup(true)
	c.RebalanceStarted()
	fams := gather(t, c)
	if got := valueOf(t, fams, "kafka_connect_worker_rebalance_rebalancing"); got != 1 {
		t.Errorf("rebalancing = %v", got)
	}
	cl.add(250 * time.Millisecond)
	c.RebalanceCompleted(7, "sessioned", "http://10.0.0.1:8083/", 2, 5)
	cl.add(time.Second)
	fams = gather(t, c)
	for name, want := range map[string]float64{
		"kafka_connect_worker_rebalance_rebalancing":                  0,
		"kafka_connect_worker_rebalance_epoch":                        7,
		"kafka_connect_worker_rebalance_completed_rebalances_total":   1,
		"kafka_connect_worker_rebalance_rebalance_max_time_ms":        250,
		"kafka_connect_worker_rebalance_time_since_last_rebalance_ms": 1000,
		"kafka_connect_worker_connector_startup_attempts_total":       2,
		"kafka_connect_worker_connector_startup_failure_total":        1,
		"kafka_connect_worker_connector_startup_success_percentage":   0.5,
		"kafka_connect_worker_task_startup_success_percentage":        1,
		"kafka_connect_start_time_seconds":                            float64(t0.UnixMilli()) / 1000,
	} {
		if got := valueOf(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := valueOf(t, fams, "kafka_connect_coordinator_assigned_tasks", "clientid", `"connect-10.0.0.1:8083"`); got != 5 {
		t.Errorf("assigned tasks = %v", got)
	}
	if got := valueOf(t, fams, "kafka_connect_worker_rebalance_connect_protocol", "connect_protocol", "SESSIONED"); got != 1 {
		t.Errorf("protocol = %v", got)
	}
	if got := valueOf(t, fams, "kafka_connect_worker_rebalance_leader_name", "leader_name", "http://10.0.0.1:8083/"); got != 1 {
		t.Errorf("leader = %v", got)
	}
	if got := valueOf(t, fams, "kafka_connect_version", "version", "1.2", "clientid", `"10.0.0.1:8083"`); got != 1 {
		t.Errorf("version = %v", got)
	}
}

package metrics

// Kafka Connect's metric groups and their attributes, each with Kafka's
// description (ConnectMetricsRegistry): the series' help texts and the
// README's list come from here.
const (
	groupWorker    = "connect-worker-metrics"
	groupRebalance = "connect-worker-rebalance-metrics"
	groupCoord     = "connect-coordinator-metrics"
	groupConnector = "connector-metrics"
	groupTask      = "connector-task-metrics"
	groupSource    = "source-task-metrics"
	groupSink      = "sink-task-metrics"
	groupErrors    = "task-error-metrics"
	groupAppInfo   = "app-info"
)

// Attribute is one attribute of a Kafka Connect metric group.
type Attribute struct {
	Group, Name string
	// Tags are the MBean's key properties after type= (connector, task,
	// client-id).
	Tags []string
	// String: the value is a string (a label of a value-1 series).
	String bool
	Doc    string
}

var connectTags, taskTags, clientTags = []string{"connector"}, []string{"connector", "task"}, []string{"client-id"}

// Catalog lists every attribute the worker exports, by group, in Kafka's
// order.
var Catalog = []Attribute{
	{groupWorker, "connector-count", nil, false, "The number of connectors run in this worker."},
	{groupWorker, "task-count", nil, false, "The number of tasks run in this worker."},
	{groupWorker, "connector-startup-attempts-total", nil, false, "The total number of connector startups that this worker has attempted."},
	{groupWorker, "connector-startup-success-total", nil, false, "The total number of connector starts that succeeded."},
	{groupWorker, "connector-startup-success-percentage", nil, false, "The average percentage of this worker's connectors starts that succeeded."},
	{groupWorker, "connector-startup-failure-total", nil, false, "The total number of connector starts that failed."},
	{groupWorker, "connector-startup-failure-percentage", nil, false, "The average percentage of this worker's connectors starts that failed."},
	{groupWorker, "task-startup-attempts-total", nil, false, "The total number of task startups that this worker has attempted."},
	{groupWorker, "task-startup-success-total", nil, false, "The total number of task starts that succeeded."},
	{groupWorker, "task-startup-success-percentage", nil, false, "The average percentage of this worker's tasks starts that succeeded."},
	{groupWorker, "task-startup-failure-total", nil, false, "The total number of task starts that failed."},
	{groupWorker, "task-startup-failure-percentage", nil, false, "The average percentage of this worker's tasks starts that failed."},

	{groupWorker, "connector-total-task-count", connectTags, false, "The number of tasks of the connector on the worker."},
	{groupWorker, "connector-running-task-count", connectTags, false, "The number of running tasks of the connector on the worker."},
	{groupWorker, "connector-paused-task-count", connectTags, false, "The number of paused tasks of the connector on the worker."},
	{groupWorker, "connector-failed-task-count", connectTags, false, "The number of failed tasks of the connector on the worker."},
	{groupWorker, "connector-unassigned-task-count", connectTags, false, "The number of unassigned tasks of the connector on the worker."},
	{groupWorker, "connector-destroyed-task-count", connectTags, false, "The number of destroyed tasks of the connector on the worker."},
	{groupWorker, "connector-restarting-task-count", connectTags, false, "The number of restarting tasks of the connector on the worker."},

	{groupRebalance, "connect-protocol", nil, true, "The Connect protocol used by this cluster"},
	{groupRebalance, "leader-name", nil, true, "The name of the group leader."},
	{groupRebalance, "epoch", nil, false, "The epoch or generation number of this worker."},
	{groupRebalance, "completed-rebalances-total", nil, false, "The total number of rebalances completed by this worker."},
	{groupRebalance, "rebalancing", nil, false, "Whether this worker is currently rebalancing."},
	{groupRebalance, "rebalance-max-time-ms", nil, false, "The maximum time in milliseconds spent by this worker to rebalance."},
	{groupRebalance, "rebalance-avg-time-ms", nil, false, "The average time in milliseconds spent by this worker to rebalance."},
	{groupRebalance, "time-since-last-rebalance-ms", nil, false, "The time in milliseconds since this worker completed the most recent rebalance."},

	{groupCoord, "assigned-connectors", clientTags, false, "The number of connector instances currently assigned to this consumer"},
	{groupCoord, "assigned-tasks", clientTags, false, "The number of tasks currently assigned to this consumer"},

	{groupConnector, "status", connectTags, true, "The status of the connector. One of 'unassigned', 'running', 'paused', 'stopped', 'failed', or 'restarting'."},
	{groupConnector, "connector-type", connectTags, true, "The type of the connector. One of 'source' or 'sink'."},
	{groupConnector, "connector-class", connectTags, true, "The name of the connector class."},
	{groupConnector, "connector-version", connectTags, true, "The version of the connector class, as reported by the connector."},

	{groupTask, "status", taskTags, true, "The status of the connector task. One of 'unassigned', 'running', 'paused', 'failed', or 'restarting'."},
	{groupTask, "running-ratio", taskTags, false, "The fraction of time this task has spent in the running state."},
	{groupTask, "pause-ratio", taskTags, false, "The fraction of time this task has spent in the pause state."},
	{groupTask, "offset-commit-max-time-ms", taskTags, false, "The maximum time in milliseconds taken by this task to commit offsets."},
	{groupTask, "offset-commit-avg-time-ms", taskTags, false, "The average time in milliseconds taken by this task to commit offsets."},
	{groupTask, "batch-size-max", taskTags, false, "The number of records in the largest batch the task has processed so far."},
	{groupTask, "batch-size-avg", taskTags, false, "The average number of records in the batches the task has processed so far."},
	{groupTask, "offset-commit-failure-percentage", taskTags, false, "The average percentage of this task's offset commit attempts that failed."},
	{groupTask, "offset-commit-success-percentage", taskTags, false, "The average percentage of this task's offset commit attempts that succeeded."},

	{groupSource, "source-record-poll-rate", taskTags, false, "The average per-second number of records produced/polled (before transformation) by this task belonging to the named source connector in this worker."},
	{groupSource, "source-record-poll-total", taskTags, false, "The total number of records produced/polled (before transformation) by this task belonging to the named source connector in this worker."},
	{groupSource, "source-record-write-rate", taskTags, false, "The average per-second number of records written to Kafka for this task belonging to the named source connector in this worker, since the task was last restarted. This is after transformations are applied, and excludes any records filtered out by the transformations."},
	{groupSource, "source-record-write-total", taskTags, false, "The number of records output written to Kafka for this task belonging to the named source connector in this worker, since the task was last restarted. This is after transformations are applied, and excludes any records filtered out by the transformations."},
	{groupSource, "poll-batch-max-time-ms", taskTags, false, "The maximum time in milliseconds taken by this task to poll for a batch of source records."},
	{groupSource, "poll-batch-avg-time-ms", taskTags, false, "The average time in milliseconds taken by this task to poll for a batch of source records."},
	{groupSource, "source-record-active-count-max", taskTags, false, "The maximum number of records that have been produced by this task but not yet completely written to Kafka."},
	{groupSource, "source-record-active-count-avg", taskTags, false, "The average number of records that have been produced by this task but not yet completely written to Kafka."},
	{groupSource, "source-record-active-count", taskTags, false, "The number of records that have been produced by this task but not yet completely written to Kafka."},
	{groupSource, "transaction-size-min", taskTags, false, "The number of records in the smallest transaction the task has committed so far."},
	{groupSource, "transaction-size-max", taskTags, false, "The number of records in the largest transaction the task has committed so far."},
	{groupSource, "transaction-size-avg", taskTags, false, "The average number of records in the transactions the task has committed so far."},

	{groupSink, "sink-record-read-rate", taskTags, false, "The average per-second number of records read from Kafka for this task belonging to the named sink connector in this worker. This is before transformations are applied."},
	{groupSink, "sink-record-read-total", taskTags, false, "The total number of records read from Kafka by this task belonging to the named sink connector in this worker, since the task was last restarted."},
	{groupSink, "sink-record-send-rate", taskTags, false, "The average per-second number of records output from the transformations and sent/put to this task belonging to the named sink connector in this worker. This is after transformations are applied and excludes any records filtered out by the transformations."},
	{groupSink, "sink-record-send-total", taskTags, false, "The total number of records output from the transformations and sent/put to this task belonging to the named sink connector in this worker, since the task was last restarted."},
	{groupSink, "sink-record-lag-max", taskTags, false, "The maximum lag in terms of number of records that the sink task is behind the consumer's position for any topic partitions (Kafka Connect documents it and never records it; Tributary does: the largest log end offset minus consumed position of the task's partitions)."},
	{groupSink, "partition-count", taskTags, false, "The number of topic partitions assigned to this task belonging to the named sink connector in this worker."},
	{groupSink, "offset-commit-seq-no", taskTags, false, "The current sequence number for offset commits."},
	{groupSink, "offset-commit-completion-rate", taskTags, false, "The average per-second number of offset commit completions that were completed successfully."},
	{groupSink, "offset-commit-completion-total", taskTags, false, "The total number of offset commit completions that were completed successfully."},
	{groupSink, "offset-commit-skip-rate", taskTags, false, "The average per-second number of offset commit completions that were received too late and skipped/ignored."},
	{groupSink, "offset-commit-skip-total", taskTags, false, "The total number of offset commit completions that were received too late and skipped/ignored."},
	{groupSink, "put-batch-max-time-ms", taskTags, false, "The maximum time taken by this task to put a batch of sinks records."},
	{groupSink, "put-batch-avg-time-ms", taskTags, false, "The average time taken by this task to put a batch of sinks records."},
	{groupSink, "sink-record-active-count-max", taskTags, false, "The maximum number of records that have been read from Kafka but not yet completely committed/flushed/acknowledged by the sink task."},
	{groupSink, "sink-record-active-count-avg", taskTags, false, "The average number of records that have been read from Kafka but not yet completely committed/flushed/acknowledged by the sink task."},
	{groupSink, "sink-record-active-count", taskTags, false, "The number of records that have been read from Kafka but not yet completely committed/flushed/acknowledged by the sink task."},

	{groupErrors, "total-record-failures", taskTags, false, "The number of record processing failures in this task."},
	{groupErrors, "total-record-errors", taskTags, false, "The number of record processing errors in this task."},
	{groupErrors, "total-records-skipped", taskTags, false, "The number of records skipped due to errors."},
	{groupErrors, "total-retries", taskTags, false, "The number of operations retried."},
	{groupErrors, "total-errors-logged", taskTags, false, "The number of errors that were logged."},
	{groupErrors, "deadletterqueue-produce-requests", taskTags, false, "The number of attempted writes to the dead letter queue."},
	{groupErrors, "deadletterqueue-produce-failures", taskTags, false, "The number of failed writes to the dead letter queue."},
	{groupErrors, "last-error-timestamp", taskTags, false, "The epoch timestamp when this task last encountered an error."},

	{groupAppInfo, "version", clientTags, true, "The worker's version (Kafka Connect's app-info)."},
	{groupAppInfo, "commit-id", clientTags, true, "The commit the worker was built from."},
	{groupAppInfo, "start-time-ms", clientTags, false, "When the worker started, in milliseconds since the epoch."},
}

// doc is an attribute's description.
var doc = func() map[string]string {
	m := make(map[string]string, len(Catalog))
	for _, a := range Catalog {
		m[a.Group+"/"+a.Name] = a.Doc
	}
	return m
}()

func help(group, attr string) string {
	if d, ok := doc[group+"/"+attr]; ok {
		return d
	}
	return "Kafka Connect " + group + " " + attr
}

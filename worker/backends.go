package worker

import (
	"context"

	"github.com/tributary-dev/tributary/sdk"
)

// Target states of a connector, as stored in the config topic.
const (
	TargetStarted = "STARTED"
	TargetPaused  = "PAUSED"
	TargetStopped = "STOPPED"
)

// ConnectorSnapshot is what the config topic says about one connector.
type ConnectorSnapshot struct {
	Config map[string]string
	Target string              // TargetStarted, TargetPaused or TargetStopped
	Tasks  []map[string]string // the committed task configs
	// ConfigOffset is the config-topic offset of the connector's config
	// record; TasksStale says its config changed (to another one) after
	// Tasks were committed, so that Tasks belong to an older config and
	// must not be started (until the connector's new task configs are
	// committed).
	ConfigOffset int64
	TasksStale   bool
	// Problem, when set, says why no worker can run the connector as the
	// internal topics hold it (a record it cannot apply, a name the group
	// protocol cannot carry). Such a connector is never assigned or
	// started; the leader reports it FAILED with Problem as the trace. It
	// can be deleted, and a new config or record clears what can be
	// cleared.
	Problem string
	// offsetsProblem: Problem is about the connector's offsets (set by the
	// herder, which reads them).
	offsetsProblem bool
}

// configBackend is the config topic (worker/store's ConfigStore through an
// adapter). Writes return once the write is read back.
type configBackend interface {
	Snapshot() (connectors map[string]ConnectorSnapshot, offset int64)
	// PutConnectorConfig writes a connector's config, preceded by its
	// target state when initialTarget is not "" (a creation with an
	// initial state), in one batch.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, initialTarget string) error
	DeleteConnector(ctx context.Context, name string) error
	PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error
	// PutTaskConfigsFor writes task configs generated from the connector
	// config generatedFrom; errStaleTaskConfigs, and nothing written, if
	// the connector has another config by now.
	PutTaskConfigsFor(ctx context.Context, name string, tasks []map[string]string, generatedFrom map[string]string) error
	PutTargetState(ctx context.Context, name, state string) error
	// PutLoggerLevel writes a cluster-wide log level (logger-cluster-<ns>).
	PutLoggerLevel(ctx context.Context, namespace, level string) error
	// Updates is signalled after records written by anyone were applied.
	Updates() <-chan struct{}
}

// statusBackend is the status topic.
type statusBackend interface {
	PutConnector(ctx context.Context, name string, st ConnectorState, generation int32) error
	PutTask(ctx context.Context, id TaskID, st TaskState, generation int32) error
	Connector(name string) (ConnectorState, bool)
	Tasks(name string) []TaskState
	DeleteConnector(ctx context.Context, name string, tasks int) error
	// DeleteTask tombstones one task's status.
	DeleteTask(ctx context.Context, id TaskID) error
	Topics(name string) []string
	ResetTopics(ctx context.Context, name string) error
	// Names lists the connectors with any status (connector, task or
	// active topic).
	Names() []string
}

// offsetBackend is the offsets topic.
type offsetBackend interface {
	Offsets(ctx context.Context, connector string, partitions []sdk.Partition) ([]sdk.Offset, error)
	WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error
	// All lists every partition of a connector with its offset.
	All(connector string) []sdk.SourceOffset
	// Problem says why some of a connector's offsets cannot be read (""
	// when all can): its tasks could not know where they stand.
	Problem(connector string) string
	// ClearProblems tombstones the connector's records that cannot be read.
	ClearProblems(ctx context.Context, connector string) error
}

// taskRunner is a running source or sink task (worker/task).
type taskRunner interface {
	Pause()
	Resume()
	Stop(ctx context.Context) error
}

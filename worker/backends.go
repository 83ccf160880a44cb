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
}

// configBackend is the config topic (worker/store's ConfigStore through an
// adapter). Writes return once the write is read back.
type configBackend interface {
	Snapshot() (connectors map[string]ConnectorSnapshot, offset int64)
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) error
	DeleteConnector(ctx context.Context, name string) error
	PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error
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
}

// offsetBackend is the offsets topic.
type offsetBackend interface {
	Offsets(ctx context.Context, connector string, partitions []sdk.Partition) ([]sdk.Offset, error)
	WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error
	// All lists every partition of a connector with its offset.
	All(connector string) []sdk.SourceOffset
}

// taskRunner is a running source or sink task (worker/task).
type taskRunner interface {
	Pause()
	Resume()
	Stop(ctx context.Context) error
}

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
	// All lists the connectors with a status (their own, a task's or an
	// active topic) and the task ids with one.
	All() map[string][]int
	// Refresh reads the status topic to its end.
	Refresh(ctx context.Context) error
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

package sdk

import (
	"context"
	"log/slog"
)

// TaskInfo names a task.
type TaskInfo struct {
	Connector string
	Task      int
}

// SourceTask reads from an external system. The runtime calls Open once,
// then Poll repeatedly from a single goroutine, then Close exactly once
// (even when Open failed). Optional extra abilities are the
// OffsetsCommitter interface.
type SourceTask interface {
	// Open prepares the task; restore the position with tc.Offset. ctx is
	// cancelled if the task is stopped while opening.
	Open(ctx context.Context, tc SourceTaskContext) error
	// Poll returns at most max records. max is the runtime's wish for
	// about one batch of the plugin protocol: it follows the size of the
	// records sent so far (at least 500, unless the batch limit is lower)
	// and may change from call to call. It should block while no data is
	// available but return promptly (with whatever it has, possibly
	// nothing) once ctx is cancelled. Returning an error marked Retriable
	// makes the runtime back off and poll again; any other error fails the
	// task.
	Poll(ctx context.Context, max int) ([]SourceRecord, error)
	// Close releases resources.
	Close(ctx context.Context) error
}

// OffsetsCommitter is an optional SourceTask ability: OffsetsCommitted is
// called, in commit order, with the latest offset per partition once those
// offsets are durably stored (the records before them are in Kafka). It is
// where a CDC source confirms its position upstream (e.g. a replication
// slot's flush LSN). It may run concurrently with Poll, never with Close.
type OffsetsCommitter interface {
	OffsetsCommitted(ctx context.Context, offsets []SourceOffset) error
}

// SourceTaskContext is the runtime seen from a source task.
type SourceTaskContext interface {
	Info() TaskInfo
	// Offset returns the last committed offset of a partition, or nil.
	Offset(ctx context.Context, p Partition) (Offset, error)
	// Offsets returns the committed offsets of several partitions, in
	// order (nil where none is stored).
	Offsets(ctx context.Context, ps []Partition) ([]Offset, error)
	// Logger logs with the connector and task attributes set.
	Logger() *slog.Logger
}

// SinkTask writes to an external system. The runtime calls Open once, then
// Put, Flush, and the PartitionsHandler methods from a single goroutine,
// then Close exactly once.
type SinkTask interface {
	Open(ctx context.Context, tc SinkTaskContext) error
	// Put writes (or buffers) records. A Retriable error makes the runtime
	// redeliver the same batch after a back-off.
	Put(ctx context.Context, records []SinkRecord) error
	// Flush is Kafka Connect's preCommit: offsets holds, per partition, the
	// offset after the last record given to Put (the next one to consume).
	// Return the offsets that are durable in the external system: the same
	// map once everything is flushed, or earlier offsets (or a subset) for
	// an asynchronous sink. Never return an offset higher than given.
	Flush(ctx context.Context, offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
	Close(ctx context.Context) error
}

// PartitionsHandler is an optional SinkTask ability, Kafka Connect's
// open/close: called when partitions are assigned to or revoked from the
// task.
type PartitionsHandler interface {
	Assigned(ctx context.Context, partitions []TopicPartition) error
	Revoked(ctx context.Context, partitions []TopicPartition) error
}

// SinkTaskContext is the runtime seen from a sink task.
type SinkTaskContext interface {
	Info() TaskInfo
	// Rewind asks the runtime to consume the given partitions from the
	// given offsets next (Kafka Connect's SinkTaskContext.offset).
	Rewind(offsets map[TopicPartition]int64)
	Logger() *slog.Logger
}

// ConnectorContext is the runtime seen from a running connector.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the runtime to call TaskConfigs
	// again and restart the tasks if they changed.
	RequestTaskReconfiguration()
	// RaiseError fails the connector.
	RaiseError(err error)
	Logger() *slog.Logger
}

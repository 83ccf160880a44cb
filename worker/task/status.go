package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-dev/tributary/sdk"
)

// State is a task state as written to the status topic.
type State string

// The states a runner reports.
const (
	StateRunning State = "RUNNING"
	StatePaused  State = "PAUSED"
	StateFailed  State = "FAILED"
)

// StatusReporter receives task state changes; the herder implements it and
// writes the status topic. err is set for StateFailed only. Calls come from
// the runner's goroutines, one at a time per runner, and must not block for
// long.
type StatusReporter interface {
	ReportStatus(id sdk.TaskInfo, state State, err *sdk.TaskError)
}

// StatusReporterFunc adapts a function to StatusReporter.
type StatusReporterFunc func(id sdk.TaskInfo, state State, err *sdk.TaskError)

// ReportStatus implements StatusReporter.
func (f StatusReporterFunc) ReportStatus(id sdk.TaskInfo, s State, err *sdk.TaskError) { f(id, s, err) }

// OffsetWriter stores source offsets (the worker's offset store, writing
// the offsets topic). WriteOffsets returns once the offsets are durable
// (the offsets topic acked them).
type OffsetWriter interface {
	WriteOffsets(ctx context.Context, connector string, offsets []sdk.SourceOffset) error
}

// OffsetWriterFunc adapts a function to OffsetWriter.
type OffsetWriterFunc func(ctx context.Context, connector string, offsets []sdk.SourceOffset) error

// WriteOffsets implements OffsetWriter.
func (f OffsetWriterFunc) WriteOffsets(ctx context.Context, c string, o []sdk.SourceOffset) error {
	return f(ctx, c, o)
}

// SourceTransform is the connector's transformation chain (SMTs, see
// worker/transform's Chain.Source): it changes the record in place and
// returns false to drop it. An error fails the record at Kafka Connect's
// TRANSFORMATION stage (errors.tolerance decides what that does); it may
// name the transformation (a ClassName method) and the Java exception
// (an ExceptionClass method).
type SourceTransform func(*sdk.SourceRecord) (bool, error)

// SinkTransform is the sink side's SourceTransform (Chain.Sink).
type SinkTransform func(*sdk.SinkRecord) (bool, error)

// taskError turns any error into the *sdk.TaskError reported as FAILED.
func taskError(err error, what string) *sdk.TaskError {
	var te *sdk.TaskError
	if errors.As(err, &te) {
		return te
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	return &sdk.TaskError{Message: msg, Trace: msg}
}

package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-dev/tributary/sdk"
)

// Loader finds connector plugins and starts connectors and tasks. Host and
// InProcess implement it.
type Loader interface {
	// Specs lists every connector plugin found.
	Specs() []sdk.Spec
	// Spec finds a plugin by class name or alias.
	Spec(class string) (sdk.Spec, error)
	// Validate validates a connector configuration (the connector's keys).
	Validate(ctx context.Context, class string, config map[string]string) (sdk.ConfigInfos, error)
	// AlterOffsets asks the connector class about change, a change to the
	// offsets of its stopped instance name configured with config, before
	// the caller writes it (Kafka Connect's alterOffsets). accepted is true
	// when the connector's hook accepted it; false with a nil error when the
	// connector has no hook (or its plugin predates the question). A
	// refusal is a *OffsetsRefusedError, or sdk.ErrOffsetsUnsupported; any
	// other error is a failure to ask.
	AlterOffsets(ctx context.Context, class, name string, config map[string]string, change sdk.OffsetChange) (accepted bool, err error)
	StartConnector(ctx context.Context, class, name string, config map[string]string) (Connector, error)
	StartSourceTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader) (SourceTask, error)
	StartSinkTask(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string) (SinkTask, error)
}

// Locator is a Loader that says where a connector class comes from, as
// Kafka Connect's PluginDesc.location does: "classpath" for the
// connectors built into the worker, the plugin's location under
// plugin.path for the others.
type Locator interface {
	Location(class string) string
}

// Classpath is the Location of a connector built into the worker (Kafka
// Connect's word for a plugin outside plugin.path).
const Classpath = "classpath"

// OffsetReader gives source tasks the committed offsets of their
// partitions (the worker's offset store). Offsets returns one entry per
// partition, nil where none is stored.
type OffsetReader interface {
	Offsets(ctx context.Context, partitions []sdk.Partition) ([]sdk.Offset, error)
}

// OffsetReaderFunc adapts a function to OffsetReader.
type OffsetReaderFunc func(ctx context.Context, partitions []sdk.Partition) ([]sdk.Offset, error)

// Offsets implements OffsetReader.
func (f OffsetReaderFunc) Offsets(ctx context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	return f(ctx, ps)
}

// ConnectorEvent is something a running connector asks of the runtime.
type ConnectorEvent struct {
	// Reconfigure asks for TaskConfigs to be called again.
	Reconfigure bool
	// Err fails the connector (a *sdk.TaskError).
	Err error
}

// Connector is a running connector instance.
type Connector interface {
	TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error)
	// Events delivers reconfiguration requests and failures; it is closed
	// when the connector ends.
	Events() <-chan ConnectorEvent
	Stop(ctx context.Context) error
}

// SourceTask is a running source task. Poll and Committed may be called
// concurrently with each other; Stop ends both.
type SourceTask interface {
	// Poll returns the next batch of records, blocking until one is ready.
	// After the task failed it returns a *sdk.TaskError; after Stop,
	// ErrStopped.
	Poll(ctx context.Context) ([]sdk.SourceRecord, error)
	// Committed tells the task which offsets are durably stored, in order.
	Committed(ctx context.Context, offsets []sdk.SourceOffset) error
	// Stop stops the task gracefully, or forcibly once ctx is done.
	Stop(ctx context.Context) error
}

// RawValueSource is implemented by source tasks that can hand over record
// values still in the plugin wire encoding, for a converter that writes
// them for Kafka without building Go values first (convert.RawTaker).
type RawValueSource interface {
	// KeepValuesEncoded makes the records of later batches carry each
	// value that is not null as a *wire.Raw (ValueSchema is still set).
	// Batches decoded before the call may carry decoded values.
	KeepValuesEncoded()
}

// EncodedOffsetSource is implemented by source tasks that can hand over
// source offsets still in the plugin wire encoding. A source runner needs
// a record's offset only if it becomes the one committed for its
// partition, so most never need to become maps.
type EncodedOffsetSource interface {
	// EncodesOffsets reports whether PollEncodedOffsets may be used
	// (wrappers of a SourceTask forward the question).
	EncodesOffsets() bool
	// PollEncodedOffsets is Poll, except that every record's Offset is
	// nil and offsets[i] is instead the encoding of recs[i]'s offset (nil
	// when it has none), for wire.DecodeOffset.
	PollEncodedOffsets(ctx context.Context) (recs []sdk.SourceRecord, offsets [][]byte, err error)
	// ReleaseBatch tells the task that nothing refers any more to the
	// records PollEncodedOffsets last returned (nor to the recs and
	// offsets slices), nor to their keys, values and headers (which may
	// alias the received batch): its memory may receive a later batch.
	// Calling it is optional: without it the memory is left to the
	// garbage collector.
	ReleaseBatch(recs []sdk.SourceRecord)
}

// EncodesOffsets returns t as an EncodedOffsetSource if it is one that
// encodes offsets, else nil; wrappers of a SourceTask use it to forward
// the question.
func EncodesOffsets(t SourceTask) EncodedOffsetSource {
	if eo, ok := t.(EncodedOffsetSource); ok && eo.EncodesOffsets() {
		return eo
	}
	return nil
}

// EncodedValueSink is implemented by sink tasks that can take record
// values already in the plugin wire encoding (a *wire.Raw, written by a
// convert.WireMaker) and pass them on as they are.
type EncodedValueSink interface {
	// TakesEncodedValues reports whether Put takes such values. If so,
	// Put must be done with them when it returns (copy them), since the
	// caller writes over their memory afterwards.
	TakesEncodedValues() bool
}

// TakesEncodedValues reports whether t is an EncodedValueSink that takes
// encoded values; wrappers of a SinkTask use it to forward the question.
func TakesEncodedValues(t SinkTask) bool {
	ev, ok := t.(EncodedValueSink)
	return ok && ev.TakesEncodedValues()
}

// SinkTask is a running sink task. Its methods must be called from one
// goroutine; Stop may be called from any.
type SinkTask interface {
	// Put delivers a batch. It may return before the task has processed
	// it (a plugin process works on earlier batches while the host
	// prepares the next); the batch's failure then surfaces from a later
	// Put, Ready, Sync or Flush, and the rewinds it requests later too.
	// Records of a partition the task asked to rewind that were Put before
	// the caller took that request from Rewinds are not given to the task.
	Put(ctx context.Context, records []sdk.SinkRecord) error
	// Ready waits until Put can send without waiting. Take Rewinds after
	// it and before the next Put.
	Ready(ctx context.Context) error
	// Sync waits until the task has processed every batch Put so far.
	Sync(ctx context.Context) error
	Assigned(ctx context.Context, partitions []sdk.TopicPartition) error
	Revoked(ctx context.Context, partitions []sdk.TopicPartition) error
	// Flush returns the offsets the task reports durable (preCommit).
	Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error)
	// Rewinds returns (and clears) the rewind requests made by the task.
	Rewinds() map[sdk.TopicPartition]int64
	Stop(ctx context.Context) error
}

// RewindNotifier is implemented by sink tasks that can ask to rewind
// between calls (a plugin's task from any of its goroutines): RewindRequested
// is signalled then, so that a runner waiting for records applies the
// rewind at once instead of at its next poll or offset flush (Kafka
// Connect applies context.offset() at its next loop iteration).
type RewindNotifier interface {
	RewindRequested() <-chan struct{}
}

// EndingSink is implemented by sink tasks that can end between calls: a
// plugin's task ends when its plugin process exits or its stream breaks,
// whether or not the runner is calling it. The runner watches Done to
// report that failure at once, instead of at the task's next call, which
// an idle task may not get before the next offset flush. (The source side
// needs no such thing: the runner always waits in Poll, which returns the
// failure.)
type EndingSink interface {
	// Done is closed when the task ended: it failed or it stopped.
	Done() <-chan struct{}
	// Err is nil until Done is closed; then it is the task's failure (for
	// a plugin process that exited, an error naming the exit status, with
	// the tail of the plugin's stderr when it wrote any), or ErrStopped.
	Err() error
}

// MetricsReporter is implemented by connectors and tasks whose plugin
// reports metrics of its own (sdk.Metrics, KIP-877): PluginMetrics is the
// last snapshot (nil before the first), still there once the task or
// connector ended, so that a failed task's last values stay visible. The
// worker adds the connector and task labels.
type MetricsReporter interface {
	PluginMetrics() []sdk.MetricFamily
}

// OffsetsRefusedError is a connector's refusal of a change to its offsets;
// Message is the connector's reason, worded for the user.
type OffsetsRefusedError struct {
	Message string
}

func (e *OffsetsRefusedError) Error() string { return e.Message }

// ErrStopped is returned by a task's methods after Stop.
var ErrStopped = errors.New("plugins: task stopped")

// ErrUnknownPlugin is wrapped when no plugin has the requested class.
var ErrUnknownPlugin = errors.New("plugins: unknown plugin")

func findSpec(specs []sdk.Spec, class string) (int, error) {
	for i := range specs {
		if specs[i].Matches(class) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w %q", ErrUnknownPlugin, class)
}

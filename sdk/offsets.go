package sdk

import (
	"context"
	"errors"
	"fmt"
)

// ErrOffsetsUnsupported is what an AlterOffsets hook returns when the
// connector's offsets may not be changed from outside at all (Kafka
// Connect's UnsupportedOperationException from alterOffsets): every PATCH
// and DELETE of the instance's offsets is refused.
var ErrOffsetsUnsupported = errors.New("sdk: the connector does not support external modification of offsets")

// OffsetChange is a change to the offsets of a stopped connector instance:
// Source for a source connector, Sink for a sink connector. A nil offset
// resets its partition.
type OffsetChange struct {
	Source []SourceOffset
	Sink   map[TopicPartition]*int64
}

// OffsetApprover is implemented by connectors that may have a say on a
// change to their offsets; SourceConnector and SinkConnector do, through
// their AlterOffsets hook. Runtimes call it before they write the change;
// connector authors set the hook instead.
type OffsetApprover interface {
	// ApproveOffsets asks the connector about change for an instance with
	// the stored configuration config. accepted is true when the
	// connector's hook accepted it (Kafka Connect's alterOffsets returning
	// true); false with a nil error when the connector has no hook (the
	// default alterOffsets, which returns false). An error refuses the
	// change: ErrOffsetsUnsupported, a *PanicError, or the connector's
	// reason.
	ApproveOffsets(ctx context.Context, config map[string]string, change OffsetChange) (accepted bool, err error)
}

func (f connectorFuncs[C]) approveOffsets(ctx context.Context, config map[string]string, change OffsetChange) (bool, error) {
	if f.alter == nil {
		return false, nil
	}
	cfg, err := ParseConfig[C](config)
	if err != nil {
		return false, fmt.Errorf("the connector's configuration is invalid: %w", err)
	}
	if err := safeCall(func() error { return f.alter(ctx, cfg, change) }); err != nil {
		return false, err
	}
	return true, nil
}

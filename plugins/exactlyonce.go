package plugins

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/protocol/pluginpb"
)

// ExactlyOnceQuestions are what a worker asks a source connector about a
// configuration as it validates it (KIP-618's preflight checks).
type ExactlyOnceQuestions struct {
	// Support: does it deliver exactly once (exactly.once.support=required).
	Support bool
	// Boundaries: can its tasks define their own transaction boundaries
	// (transaction.boundary=connector).
	Boundaries bool
}

// ExactlyOnceAnswers are a connector's answers; a question not asked, or
// not known to the plugin, is answered ExactlyOnceUndeclared and false.
type ExactlyOnceAnswers struct {
	Support sdk.ExactlyOnceSupport
	// SupportErr is the connector's failure to answer ("" when it did).
	SupportErr string
	Boundaries bool
	// BoundariesErr is the connector's failure to answer.
	BoundariesErr string
}

// ExactlyOnceValidator is a Loader that asks the exactly-once questions as
// it validates a configuration, in the same call (Host, InProcess).
type ExactlyOnceValidator interface {
	ValidateExactlyOnce(ctx context.Context, class string, config map[string]string, q ExactlyOnceQuestions) (sdk.ConfigInfos, ExactlyOnceAnswers, error)
}

// SourceTaskOptions are how a worker runs a source task beyond its config.
type SourceTaskOptions struct {
	// TransactionContext gives the task a transaction context
	// (sdk.TransactionContextOf): its connector defines the transaction
	// boundaries, which the task then reports (BoundarySource).
	TransactionContext bool
}

// SourceTaskStarter is a Loader that starts source tasks with options
// (Host, InProcess).
type SourceTaskStarter interface {
	StartSourceTaskWith(ctx context.Context, class string, info sdk.TaskInfo, config map[string]string, offsets OffsetReader, opts SourceTaskOptions) (SourceTask, error)
}

// Boundary is a transaction boundary a source task asked for.
type Boundary int

// Boundaries.
const (
	NoBoundary Boundary = iota
	// CommitBoundary commits the transaction after the records polled
	// before it.
	CommitBoundary
	// AbortBoundary aborts it: its records are dropped, their offsets
	// still committed.
	AbortBoundary
)

// BoundarySource is implemented by source tasks started with a transaction
// context. A boundary comes as a batch of its own, without records: after a
// Poll (or PollEncodedOffsets) that returned no records, Boundary says
// what the task asked for after every record polled before.
type BoundarySource interface {
	Boundary() Boundary
}

// ValidateExactlyOnce implements ExactlyOnceValidator.
func (h *Host) ValidateExactlyOnce(ctx context.Context, class string, config map[string]string, q ExactlyOnceQuestions) (sdk.ConfigInfos, ExactlyOnceAnswers, error) {
	var a ExactlyOnceAnswers
	pi, err := h.find(class)
	if err != nil {
		return sdk.ConfigInfos{}, a, err
	}
	p, done, err := h.validator(ctx, pi)
	if err != nil {
		return sdk.ConfigInfos{}, a, err
	}
	defer done()
	resp, err := p.rpc.Validate(ctx, &pluginpb.ValidateRequest{Class: pi.Spec.Class, Config: config,
		ExactlyOnceSupport: q.Support, TransactionBoundaries: q.Boundaries})
	if err != nil {
		return sdk.ConfigInfos{}, a, p.wrap(fmt.Errorf("plugins: validate %s: %w", class, plainError(err)))
	}
	var infos sdk.ConfigInfos
	if err := json.Unmarshal(resp.GetConfigInfosJson(), &infos); err != nil {
		return sdk.ConfigInfos{}, a, fmt.Errorf("plugins: validation result of %s: %w", class, err)
	}
	if eo := resp.GetExactlyOnce(); eo != nil {
		switch eo.GetSupport() {
		case pluginpb.ExactlyOnceSupport_EXACTLY_ONCE_SUPPORTED:
			a.Support = sdk.ExactlyOnceSupported
		case pluginpb.ExactlyOnceSupport_EXACTLY_ONCE_UNSUPPORTED:
			a.Support = sdk.ExactlyOnceUnsupported
		}
		a.SupportErr = eo.GetSupportError().GetMessage()
		a.Boundaries = eo.GetTransactionBoundaries()
		a.BoundariesErr = eo.GetTransactionBoundariesError().GetMessage()
	}
	return infos, a, nil
}

// ValidateExactlyOnce implements ExactlyOnceValidator.
func (l *InProcess) ValidateExactlyOnce(ctx context.Context, class string, config map[string]string, q ExactlyOnceQuestions) (sdk.ConfigInfos, ExactlyOnceAnswers, error) {
	var a ExactlyOnceAnswers
	infos, err := l.Validate(ctx, class, config)
	if err != nil {
		return infos, a, err
	}
	c, err := l.find(class)
	if err != nil {
		return infos, a, err
	}
	d, ok := c.(sdk.ExactlyOnceDeclarer)
	if !ok {
		return infos, a, nil
	}
	if q.Support {
		if err := sdk.SafeCall(func() error { var err error; a.Support, err = d.ExactlyOnceSupport(ctx, config); return err }); err != nil {
			a.Support, a.SupportErr = sdk.ExactlyOnceUndeclared, err.Error()
		}
	}
	if q.Boundaries {
		if err := sdk.SafeCall(func() error {
			var err error
			a.Boundaries, err = d.CanDefineTransactionBoundaries(ctx, config)
			return err
		}); err != nil {
			a.Boundaries, a.BoundariesErr = false, err.Error()
		}
	}
	return infos, a, nil
}

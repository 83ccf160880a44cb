package worker

import (
	"strings"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

// Exactly-once source support (KIP-618): what a source connector's config
// asks of it, and the worker's preflight checks.

// TransactionBoundary is a source connector's transaction.boundary.
type TransactionBoundary string

// Transaction boundaries.
const (
	BoundaryPoll      TransactionBoundary = "poll"
	BoundaryInterval  TransactionBoundary = "interval"
	BoundaryConnector TransactionBoundary = "connector"
)

// transactionBoundary reads transaction.boundary (validated when the
// connector was created; case-insensitive, default poll).
func transactionBoundary(conn map[string]string) TransactionBoundary {
	switch b := TransactionBoundary(strings.ToLower(strings.TrimSpace(conn["transaction.boundary"]))); b {
	case BoundaryInterval, BoundaryConnector:
		return b
	}
	return BoundaryPoll
}

// exactlyOnceRequired reports whether exactly.once.support=required.
func exactlyOnceRequired(conn map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(conn["exactly.once.support"]), "required")
}

// exactlyOnceQuestions are the questions a source connector's config makes
// the worker ask it as it is validated (DistributedHerder's
// validateSourceConnectorExactlyOnceSupport and
// validateSourceConnectorTransactionBoundary).
func exactlyOnceQuestions(spec sdk.Spec, config map[string]string) plugins.ExactlyOnceQuestions {
	if spec.Type != sdk.Source {
		return plugins.ExactlyOnceQuestions{}
	}
	return plugins.ExactlyOnceQuestions{Support: exactlyOnceRequired(config), Boundaries: transactionBoundary(config) == BoundaryConnector}
}

// Kafka Connect's preflight messages.
const (
	msgEOSDisabled    = "This worker does not have exactly-once source support enabled."
	msgEOSUndeclared  = "The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which will disable this preflight check and allow the connector to be created)."
	msgEOSUnsupported = "The connector does not support exactly-once semantics with the provided configuration."
	msgNoBoundaries   = "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."
)

// unexpectedValidationError is Kafka Connect's message for a connector
// that failed to answer a preflight question.
func unexpectedValidationError(msg string) string {
	if msg = strings.TrimSpace(msg); msg != "" {
		return "An unexpected error occurred during validation: " + msg
	}
	return "An unexpected error occurred during validation; please see the worker logs for more details."
}

// addExactlyOnceErrors adds the preflight checks' errors to a source
// connector's validation: on exactly.once.support when it is required
// (the worker must run with exactly.once.source.support=enabled and the
// connector must declare support), on transaction.boundary when it is
// connector (the connector must say its tasks define them). A key that
// already has errors is not checked further, as in Kafka Connect.
func addExactlyOnceErrors(infos *sdk.ConfigInfos, enabled bool, q plugins.ExactlyOnceQuestions, a plugins.ExactlyOnceAnswers) {
	for i := range infos.Configs {
		v := &infos.Configs[i].Value
		if len(v.Errors) > 0 {
			continue
		}
		switch {
		case v.Name == "exactly.once.support" && q.Support:
			if !enabled {
				v.Errors = append(v.Errors, msgEOSDisabled)
			}
			switch {
			case a.SupportErr != "":
				v.Errors = append(v.Errors, unexpectedValidationError(a.SupportErr))
			case a.Support == sdk.ExactlyOnceUndeclared:
				v.Errors = append(v.Errors, msgEOSUndeclared)
			case a.Support == sdk.ExactlyOnceUnsupported:
				v.Errors = append(v.Errors, msgEOSUnsupported)
			}
		case v.Name == "transaction.boundary" && q.Boundaries:
			switch {
			case a.BoundariesErr != "":
				v.Errors = append(v.Errors, unexpectedValidationError(a.BoundariesErr))
			case !a.Boundaries:
				v.Errors = append(v.Errors, msgNoBoundaries)
			}
		}
	}
	infos.ErrorCount = 0
	for _, c := range infos.Configs {
		infos.ErrorCount += len(c.Value.Errors)
	}
}

package sdk

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// ExactlyOnceSupport is a source connector's answer to whether it delivers
// exactly once with a configuration (Kafka Connect's ExactlyOnceSupport,
// KIP-618): when the worker runs its tasks with exactly-once support, the
// records of each transaction and their source offsets are committed
// together, and a task restarted anywhere resumes exactly after the last
// committed record. A connector supports it when its source can be read
// again from any committed offset and gives the same records after it.
type ExactlyOnceSupport int

// Exactly-once support levels.
const (
	// ExactlyOnceUndeclared: the connector does not say (Kafka Connect's
	// null, the default). A connector created with
	// exactly.once.support=required is refused.
	ExactlyOnceUndeclared ExactlyOnceSupport = iota
	// ExactlyOnceSupported: it delivers exactly once with the
	// configuration.
	ExactlyOnceSupported
	// ExactlyOnceUnsupported: it does not with the configuration.
	ExactlyOnceUnsupported
)

func (s ExactlyOnceSupport) String() string {
	switch s {
	case ExactlyOnceSupported:
		return "SUPPORTED"
	case ExactlyOnceUnsupported:
		return "UNSUPPORTED"
	}
	return "null"
}

// ExactlyOnceDeclarer is a Connector that answers the worker's
// exactly-once questions about a configuration before any instance of it
// is created; SourceConnector implements it. Runtimes find it by type
// assertion. Both methods get the configuration as given (it may not be
// valid); an error is reported on the question's key as "An unexpected
// error occurred during validation: <its message>".
type ExactlyOnceDeclarer interface {
	// ExactlyOnceSupport is asked when exactly.once.support=required
	// (Kafka Connect's SourceConnector.exactlyOnceSupport).
	ExactlyOnceSupport(ctx context.Context, config map[string]string) (ExactlyOnceSupport, error)
	// CanDefineTransactionBoundaries is asked when
	// transaction.boundary=connector (canDefineTransactionBoundaries): true
	// when the connector's tasks use TransactionContextOf with config.
	CanDefineTransactionBoundaries(ctx context.Context, config map[string]string) (bool, error)
}

// ExactlyOnceSupport implements ExactlyOnceDeclarer.
func (c SourceConnector[C]) ExactlyOnceSupport(ctx context.Context, config map[string]string) (ExactlyOnceSupport, error) {
	if c.ExactlyOnce == nil {
		return ExactlyOnceUndeclared, nil
	}
	cfg, err := parseAsJava[C](config)
	if err != nil {
		return ExactlyOnceUndeclared, err
	}
	var s ExactlyOnceSupport
	err = safeCall(func() error { s = c.ExactlyOnce(cfg); return nil })
	return s, err
}

// CanDefineTransactionBoundaries implements ExactlyOnceDeclarer.
func (c SourceConnector[C]) CanDefineTransactionBoundaries(ctx context.Context, config map[string]string) (bool, error) {
	if c.TransactionBoundaries == nil {
		return false, nil
	}
	cfg, err := parseAsJava[C](config)
	if err != nil {
		return false, err
	}
	var ok bool
	err = safeCall(func() error { ok = c.TransactionBoundaries(cfg); return nil })
	return ok, err
}

// parseAsJava parses config as ParseConfig does, failing with the message
// of the first key in error (in the order the keys are defined), as a
// Java connector's new AbstractConfig(CONFIG_DEF, props) throws it.
func parseAsJava[C any](config map[string]string) (C, error) {
	cfg, err := ParseConfig[C](config)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return cfg, err
	}
	def, derr := defineConfig(reflect.TypeFor[C]())
	if derr != nil {
		return cfg, err
	}
	for _, f := range def.fields {
		if msgs := ce.Errors[f.info.Name]; len(msgs) > 0 {
			return cfg, errors.New(msgs[0])
		}
	}
	return cfg, err
}

// TransactionContext lets a source task define its own producer
// transactions (Kafka Connect's TransactionContext): with
// transaction.boundary=connector under exactly-once support, the worker
// commits a transaction only when the task asks for it, after a record or
// after a polled batch. An abort drops the transaction's records from
// Kafka, but still commits their source offsets, so that they are not read
// again; a task that wants them read again fails instead.
//
// Its methods may be called from any goroutine. A request about a record
// takes effect once the record has been returned from Poll; one about a
// batch, after the records of the next Poll to return (it may be the one
// running). A request about a record beats one about its batch.
type TransactionContext interface {
	// CommitTransaction commits the transaction after the records of the
	// next batch Poll returns.
	CommitTransaction()
	// CommitTransactionOn commits the transaction after rec, which must
	// point into the slice Poll returns (it is found by its address, as
	// Kafka Connect finds a record by its identity).
	CommitTransactionOn(rec *SourceRecord)
	// AbortTransaction aborts the transaction after the records of the next
	// batch Poll returns.
	AbortTransaction()
	// AbortTransactionOn aborts the transaction after rec (see
	// CommitTransactionOn).
	AbortTransactionOn(rec *SourceRecord)
}

// TransactionContextOf returns the transaction context the runtime gave a
// source task, or nil when its connector's transaction boundaries are not
// its own to define (transaction.boundary is not connector, or the worker
// does not run it with exactly-once support): Kafka Connect's
// SourceTaskContext.transactionContext.
func TransactionContextOf(tc SourceTaskContext) TransactionContext {
	if h, ok := tc.(interface{ TransactionContext() TransactionContext }); ok {
		return h.TransactionContext()
	}
	return nil
}

// TransactionRequest is what a task asked of its transaction at a point.
type TransactionRequest int

// Transaction requests.
const (
	NoTransactionRequest TransactionRequest = iota
	CommitTransactionRequest
	AbortTransactionRequest
)

// Transactions implements TransactionContext for runtimes (the plugin
// server and the worker's in-process loader): the task's requests, which
// the runtime takes as it hands the polled records on. The zero value is
// ready to use.
type Transactions struct {
	mu                      sync.Mutex
	commitBatch, abortBatch bool
	commitOn, abortOn       map[*SourceRecord]bool
}

// CommitTransaction implements TransactionContext.
func (t *Transactions) CommitTransaction() {
	t.mu.Lock()
	t.commitBatch = true
	t.mu.Unlock()
}

// AbortTransaction implements TransactionContext.
func (t *Transactions) AbortTransaction() {
	t.mu.Lock()
	t.abortBatch = true
	t.mu.Unlock()
}

// CommitTransactionOn implements TransactionContext.
func (t *Transactions) CommitTransactionOn(rec *SourceRecord) {
	if rec == nil {
		panic("sdk: the source record used to define a transaction boundary may not be nil")
	}
	t.mu.Lock()
	if t.commitOn == nil {
		t.commitOn = map[*SourceRecord]bool{}
	}
	t.commitOn[rec] = true
	t.mu.Unlock()
}

// AbortTransactionOn implements TransactionContext.
func (t *Transactions) AbortTransactionOn(rec *SourceRecord) {
	if rec == nil {
		panic("sdk: the source record used to define a transaction boundary may not be nil")
	}
	t.mu.Lock()
	if t.abortOn == nil {
		t.abortOn = map[*SourceRecord]bool{}
	}
	t.abortOn[rec] = true
	t.mu.Unlock()
}

// OnRecord takes the request about rec, a record Poll returned. Both a
// commit and an abort of the same record is an error that fails the task.
func (t *Transactions) OnRecord(rec *SourceRecord) (TransactionRequest, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.commitOn) == 0 && len(t.abortOn) == 0 {
		return NoTransactionRequest, nil
	}
	c, a := t.commitOn[rec], t.abortOn[rec]
	delete(t.commitOn, rec)
	delete(t.abortOn, rec)
	switch {
	case c && a:
		p := "null"
		if rec.KafkaPartition != nil {
			p = fmt.Sprint(*rec.KafkaPartition)
		}
		return NoTransactionRequest, fmt.Errorf("Connector requested both commit and abort of same record against topic/partition %s/%s", rec.Topic, p)
	case c:
		return CommitTransactionRequest, nil
	case a:
		return AbortTransactionRequest, nil
	}
	return NoTransactionRequest, nil
}

// OnBatch takes the request about the batch Poll just returned (take it
// before the next Poll: requests made during a Poll are about its batch).
// Both a commit and an abort is an error that fails the task.
func (t *Transactions) OnBatch() (TransactionRequest, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, a := t.commitBatch, t.abortBatch
	if c && a {
		return NoTransactionRequest, fmt.Errorf("Connector requested both commit and abort of same transaction")
	}
	t.commitBatch, t.abortBatch = false, false
	switch {
	case c:
		return CommitTransactionRequest, nil
	case a:
		return AbortTransactionRequest, nil
	}
	return NoTransactionRequest, nil
}

package sdk

import (
	"errors"
	"fmt"
)

// retriable marks an error as transient.
type retriable struct{ err error }

func (r retriable) Error() string { return r.err.Error() }
func (r retriable) Unwrap() error { return r.err }

// Retriable marks err as transient, like Kafka Connect's
// RetriableException: the runtime retries the same Poll (after a back-off)
// or redelivers the same batch to Put instead of failing the task.
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return retriable{err}
}

// IsRetriable reports whether err or an error it wraps was marked with
// Retriable.
func IsRetriable(err error) bool {
	var r retriable
	return errors.As(err, &r)
}

// FieldError is a configuration error attached to one key; it appears under
// that key in the validation result.
type FieldError struct {
	Key     string
	Message string
}

func (e FieldError) Error() string { return fmt.Sprintf("sdk: config %s: %s", e.Key, e.Message) }

// PanicError is what a recovered panic in connector code becomes. The
// runtime reports Value as the task's error message and Stack as its trace.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// TaskError is how a runtime reports a failed connector or task: the error
// message and a trace (a panic's stack, or the error text). It is what
// becomes the `trace` of a FAILED status.
type TaskError struct {
	Message string
	Trace   string
}

func (e *TaskError) Error() string { return e.Message }

package transform

import (
	"errors"
	"fmt"
)

// The Java exception classes transformations throw, as Kafka Connect names
// them in its logs and dead letter queue headers.
const (
	DataException            = "org.apache.kafka.connect.errors.DataException"
	ConnectException         = "org.apache.kafka.connect.errors.ConnectException"
	ConfigException          = "org.apache.kafka.common.config.ConfigException"
	IllegalArgumentException = "java.lang.IllegalArgumentException"
	NullPointerException     = "java.lang.NullPointerException"
	ClassCastException       = "java.lang.ClassCastException"
	DebeziumException        = "io.debezium.DebeziumException"
)

// Error is the failure of a transformation on one record: the exception
// Kafka's transformation throws in the same case, its class and message.
type Error struct {
	Class   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func dataErr(format string, args ...any) error {
	return &Error{Class: DataException, Message: fmt.Sprintf(format, args...)}
}

func failure(class, format string, args ...any) error {
	return &Error{Class: class, Message: fmt.Sprintf(format, args...)}
}

// ExceptionClass returns the Java exception class of a transformation's
// error (DataException when it carries none).
func ExceptionClass(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Class
	}
	if _, ok := errors.AsType[*ConfigError](err); ok {
		return ConfigException
	}
	return DataException
}

// StageError is the failure of one stage of a chain: Kafka Connect's
// TRANSFORMATION stage error, naming the transformation's class.
type StageError struct {
	Alias string
	// Class is the transformation's class (Kafka Connect's
	// __connect.errors.class.name header).
	Class string
	Err   error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("transformation %s (%s): %v", e.Alias, e.Class, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// ClassName is the failed transformation's class (the task runners name it
// in logs and dead letter queue headers).
func (e *StageError) ClassName() string { return e.Class }

// ExceptionClass is the Java exception Kafka's transformation throws in
// the same case.
func (e *StageError) ExceptionClass() string { return ExceptionClass(e.Err) }

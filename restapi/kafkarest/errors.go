package kafkarest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Confluent REST Proxy's error codes (io.confluent.kafkarest.Errors and the
// v3 exception mappers). A code of three digits equals the HTTP status.
const (
	codeTopicNotFound         = 40401
	codePartitionNotFound     = 40402
	codeInstanceNotFound      = 40403
	codeFormatMismatch        = 40601
	codeAlreadySubscribed     = 40901
	codeInstanceExists        = 40902
	codeIllegalState          = 40903
	codeKeySchemaMissing      = 42201
	codeValueSchemaMissing    = 42202
	codeConversion            = 42203
	codeInvalidConsumerConfig = 42204
	codeRegistryMissing       = 42206
	codeKafkaError            = 50002
	codeKafkaRetriable        = 50003
)

const (
	msgTopicNotFound     = "Topic not found."
	msgPartitionNotFound = "Partition not found."
	msgInstanceNotFound  = "Consumer instance not found."
	msgFormatMismatch    = "The requested embedded data format does not match the deserializer for this consumer instance"
	msgAlreadySubscribed = "Consumer cannot subscribe the the specified target because it has already subscribed to other topics."
	msgInstanceExists    = "Consumer with specified consumer ID already exists in the specified consumer group."
	msgRegistryMissing   = "Payload error. Schema Registry must be configured when using schemas."
)

// Error is an answer that is not a success: the HTTP status and
// Confluent's body.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("kafkarest: %d %s", e.Code, e.Message) }

func errorf(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// badRequest is Jersey's 400 for a body that is not the JSON expected.
func badRequest(format string, args ...any) *Error {
	return errorf(http.StatusBadRequest, http.StatusBadRequest, format, args...)
}

// unprocessable is the 422 of a constraint violation (a missing or
// ill-typed field).
func unprocessable(format string, args ...any) *Error {
	return errorf(http.StatusUnprocessableEntity, http.StatusUnprocessableEntity, format, args...)
}

func notFound(code int, msg string) *Error { return errorf(http.StatusNotFound, code, "%s", msg) }

var (
	errTopicNotFound     = notFound(codeTopicNotFound, msgTopicNotFound)
	errPartitionNotFound = notFound(codePartitionNotFound, msgPartitionNotFound)
	errInstanceNotFound  = notFound(codeInstanceNotFound, msgInstanceNotFound)
	errRegistryMissing   = errorf(http.StatusUnprocessableEntity, codeRegistryMissing, "%s", msgRegistryMissing)
)

// kafkaError maps an error from the client to Confluent's 500s: 50003 for a
// retriable Kafka error, 50002 for any other.
func kafkaError(err error) *Error {
	var ke *kerr.Error
	if errors.As(err, &ke) && ke.Retriable {
		return errorf(http.StatusInternalServerError, codeKafkaRetriable, "Retriable Kafka error: %v", err)
	}
	return errorf(http.StatusInternalServerError, codeKafkaError, "Kafka error: %v", err)
}

// asError turns err into the answer to give: an *Error as it is, anything
// else a Kafka error.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return kafkaError(err)
}

// writeJSON writes v with status and contentType.
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error_code":500,"message":"encode response"}`)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError writes err's body with its status.
func writeError(w http.ResponseWriter, contentType string, err error) {
	e := asError(err)
	writeJSON(w, e.Status, contentType, e)
}

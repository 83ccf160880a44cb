package schemaregistry

import (
	"fmt"
	"net/http"
)

// Error is a failure with Confluent Schema Registry's error body: Status is
// the HTTP status, Code the error_code, Message the message.
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("schemaregistry: %d %s", e.Code, e.Message) }

func newErr(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Confluent's error codes (core/.../rest/exceptions/Errors.java).
const (
	CodeSubjectNotFound          = 40401
	CodeVersionNotFound          = 40402
	CodeSchemaNotFound           = 40403
	CodeSubjectSoftDeleted       = 40404
	CodeSubjectNotSoftDeleted    = 40405
	CodeVersionSoftDeleted       = 40406
	CodeVersionNotSoftDeleted    = 40407
	CodeSubjectCompatNotSet      = 40408
	CodeSubjectModeNotSet        = 40409
	CodeIncompatibleSchema       = 409
	CodeInvalidSchema            = 42201
	CodeInvalidVersion           = 42202
	CodeInvalidCompatibility     = 42203
	CodeInvalidMode              = 42204
	CodeOperationNotPermitted    = 42205
	CodeReferenceExists          = 42206
	CodeIDDoesNotMatch           = 42207
	CodeInvalidSubject           = 42208
	CodeStoreError               = 50001
	CodeOperationTimeout         = 50002
	CodeUnprocessableEntityJSON  = 422
	CodeBadRequest               = 400
	CodeNotFound                 = 404
	CodeMethodNotAllowed         = 405
	CodeUnsupportedMediaType     = 415
	CodeInternal                 = 500
	CodeNoActiveSubjectVersionEx = 40907
)

func errSubjectNotFound(s string) *Error {
	return newErr(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", s)
}

func errVersionNotFound(v int) *Error {
	return newErr(http.StatusNotFound, CodeVersionNotFound, "Version %d not found.", v)
}

func errSchemaNotFound() *Error {
	return newErr(http.StatusNotFound, CodeSchemaNotFound, "Schema not found")
}

func errSchemaIDNotFound(id int) *Error {
	return newErr(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
}

func errSubjectSoftDeleted(s string) *Error {
	return newErr(http.StatusNotFound, CodeSubjectSoftDeleted, "Subject '%s' was soft deleted.Set permanent=true to delete permanently", s)
}

func errSubjectNotSoftDeleted(s string) *Error {
	return newErr(http.StatusNotFound, CodeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", s)
}

func errVersionSoftDeleted(s string, v int) *Error {
	return newErr(http.StatusNotFound, CodeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", s, v)
}

func errVersionNotSoftDeleted(s string, v int) *Error {
	return newErr(http.StatusNotFound, CodeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", s, v)
}

func errSubjectCompatNotSet(s string) *Error {
	return newErr(http.StatusNotFound, CodeSubjectCompatNotSet, "Subject '%s' does not have subject-level compatibility configured", s)
}

func errSubjectModeNotSet(s string) *Error {
	return newErr(http.StatusNotFound, CodeSubjectModeNotSet, "Subject '%s' does not have subject-level mode configured", s)
}

func errInvalidSchema(format string, args ...any) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeInvalidSchema, format, args...)
}

func errInvalidVersion(v string) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeInvalidVersion,
		"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
}

func errInvalidCompatibility() *Error {
	return newErr(http.StatusUnprocessableEntity, CodeInvalidCompatibility,
		"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
}

func errInvalidMode() *Error {
	return newErr(http.StatusUnprocessableEntity, CodeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD.")
}

func errNotPermitted(format string, args ...any) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeOperationNotPermitted, format, args...)
}

func errReferenceExists(key string) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeReferenceExists, "One or more references exist to the schema %s.", key)
}

func errIDDoesNotMatch(format string, args ...any) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeIDDoesNotMatch, format, args...)
}

func errInvalidSubject(s string) *Error {
	return newErr(http.StatusUnprocessableEntity, CodeInvalidSubject, "The specified subject '%s' is not a valid.", s)
}

func errIncompatible(subject string, details []string) *Error {
	return newErr(http.StatusConflict, CodeIncompatibleSchema,
		"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: %s", subject, bracket(details))
}

func errStore(format string, args ...any) *Error {
	return newErr(http.StatusInternalServerError, CodeStoreError, format, args...)
}

func errTimeout(format string, args ...any) *Error {
	return newErr(http.StatusInternalServerError, CodeOperationTimeout, format, args...)
}

// bracket renders a list the way Java's List.toString does.
func bracket(items []string) string {
	s := "["
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += it
	}
	return s + "]"
}

package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/tributary-dev/tributary/worker"
)

// ErrorMessage is Kafka Connect's error body; ErrorCode equals the HTTP
// status.
type ErrorMessage struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// writeJSON writes v as the JSON body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Entities are plain data; this cannot happen short of a NaN.
		writeError(w, http.StatusInternalServerError, "encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEmpty answers status with no body (Kafka Connect's 202s and 204s
// carry no Content-Type).
func writeEmpty(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
}

// writeError writes Kafka Connect's error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorMessage{ErrorCode: status, Message: msg})
}

// fail maps a herder error to its status: *worker.Error by Kind, a timed-out
// request to 500 like Kafka Connect, anything else to a logged 500.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var we *worker.Error
	switch {
	case errors.As(err, &we):
		status := int(we.Kind)
		if status < 400 || status > 599 {
			status = http.StatusInternalServerError
		}
		if status >= 500 {
			a.log.Warn("rest: request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
		}
		writeError(w, status, we.Message)
	case errors.Is(err, context.DeadlineExceeded):
		a.log.Warn("rest: request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "Request timed out")
	default:
		a.log.Error("rest: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// badRequest is a 400 with msg.
func badRequest(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusBadRequest, msg)
}

// readBody reads the request body within the size limit, checking that it
// is declared as JSON (Kafka Connect answers 415 otherwise). It writes the
// error response and returns false on failure.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !isJSON(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			badRequest(w, fmt.Sprintf("Request body is larger than the limit of %d bytes", mbe.Limit))
			return nil, false
		}
		badRequest(w, "Cannot read request body: "+err.Error())
		return nil, false
	}
	return body, true
}

// isJSON reports whether a Content-Type header names application/json.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// decodeStrict parses body into v, rejecting unknown fields, trailing data
// and an empty body with a message for a 400.
func decodeStrict(body []byte, v any) error { return decodeBody(body, v, false) }

// decodeStrictNumbers is decodeStrict keeping numbers as json.Number, for
// bodies whose numbers must stay as written (offsets: an int64 stays exact,
// 5.0 stays a float).
func decodeStrictNumbers(body []byte, v any) error { return decodeBody(body, v, true) }

func decodeBody(body []byte, v any, numbers bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return reqErr("Request body is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if numbers {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return reqErr("Unexpected data after the JSON value")
	}
	return nil
}

// jsonError turns a decoding error into a message for a 400.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return reqErr("Malformed JSON at offset %d: %v", se.Offset, se)
	case errors.As(err, &te):
		if te.Field != "" {
			return reqErr("Cannot deserialize field %q: JSON %s is not %s", te.Field, te.Value, jsonKind(te.Type))
		}
		return reqErr("Cannot deserialize JSON %s: the body must be %s", te.Value, jsonKind(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return reqErr("Malformed JSON: unexpected end of input")
	default:
		return err // our own messages (configMap), already user-facing
	}
}

// jsonKind names the JSON a Go type is decoded from ("an object", "a
// string", …), for messages: the user sent JSON, not Go.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "of this type"
}

// requestError is a user-facing message for a 400, worded like Kafka
// Connect's (capitalised sentences, unlike Go error strings).
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

// reqErr makes a *requestError.
func reqErr(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// Messages of Kafka Connect's config checks.
const (
	nullConfigValue  = "Null value can not be supplied as the configuration value."
	configErrorsHead = "Connector configuration is invalid and contains the following %d error(s):\n"
	configErrorsTail = "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
)

// configErrors formats errs like AbstractHerder.maybeAddConfigErrors.
func configErrors(errs ...string) string {
	return fmt.Sprintf(configErrorsHead, len(errs)) + strings.Join(errs, "\n") + configErrorsTail
}

// configMap is a connector config as Kafka Connect reads it: a JSON object
// whose values Jackson coerces to strings (numbers and booleans become
// their text; null is a validation error; objects and arrays are
// rejected).
type configMap map[string]string

// UnmarshalJSON implements json.Unmarshaler.
func (c *configMap) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*c = nil
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(configMap, len(raw))
	for k, v := range raw {
		s, err := configValue(k, v)
		if err != nil {
			return err
		}
		if s == nil {
			return errNullValue
		}
		out[k] = *s
	}
	*c = out
	return nil
}

// errNullValue reports a JSON null config value.
var errNullValue error = &requestError{msg: nullConfigValue}

// configValue converts one JSON config value: strings as they are, numbers
// and booleans as their JSON text, null as nil.
func configValue(key string, v json.RawMessage) (*string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, reqErr("Invalid value for configuration %s", key)
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		return &s, nil
	case 'n':
		return nil, nil
	case 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s := string(v)
		return &s, nil
	default:
		return nil, reqErr("Cannot deserialize value of configuration %s: a JSON object or array is not a string", key)
	}
}

// patchMap is a PATCH config body: like configMap but null deletes a key.
type patchMap map[string]*string

// UnmarshalJSON implements json.Unmarshaler.
func (p *patchMap) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(patchMap, len(raw))
	for k, v := range raw {
		s, err := configValue(k, v)
		if err != nil {
			return err
		}
		out[k] = s
	}
	*p = out
	return nil
}

// decodeConfig parses a flat config body; it writes the 400 and returns
// false on failure.
func decodeConfig(w http.ResponseWriter, body []byte) (map[string]string, bool) {
	var c configMap
	if err := decodeStrict(body, &c); err != nil {
		if errors.Is(err, errNullValue) {
			badRequest(w, configErrors(nullConfigValue))
		} else {
			badRequest(w, err.Error())
		}
		return nil, false
	}
	if c == nil {
		badRequest(w, "Connector configuration must be a JSON object")
		return nil, false
	}
	return c, true
}

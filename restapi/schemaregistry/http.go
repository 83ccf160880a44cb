package schemaregistry

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// ContentType is the media type of every answer, as Confluent's.
const ContentType = "application/vnd.schemaregistry.v1+json"

// maxBody bounds a request body (Confluent's default schema size limit is
// far below it).
const maxBody = 16 << 20

// Handler returns the REST API over reg.
func Handler(reg *Registry, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &api{reg: reg, log: logger}
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeErr(w, newErr(http.StatusNotFound, CodeNotFound, "HTTP 404 Not Found"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeErr(w, newErr(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "HTTP 405 Method Not Allowed"))
	})
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, map[string]any{}) })
	r.Get("/schemas/types", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, []string{TypeJSON, TypeProtobuf, TypeAvro})
	})
	r.Get("/contexts", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, []string{"."}) })
	r.Get("/schemas", a.schemas)
	r.Get("/schemas/ids/{id}", a.schemaByID)
	r.Get("/schemas/ids/{id}/schema", a.rawSchemaByID)
	r.Get("/schemas/ids/{id}/subjects", a.subjectsByID)
	r.Get("/schemas/ids/{id}/versions", a.versionsByID)
	r.Get("/subjects", a.subjects)
	r.Post("/subjects/{subject}", a.lookup)
	r.Delete("/subjects/{subject}", a.deleteSubject)
	r.Get("/subjects/{subject}/versions", a.versions)
	r.Post("/subjects/{subject}/versions", a.register)
	r.Get("/subjects/{subject}/versions/{version}", a.version)
	r.Get("/subjects/{subject}/versions/{version}/schema", a.rawVersion)
	r.Get("/subjects/{subject}/versions/{version}/referencedby", a.referencedBy)
	r.Delete("/subjects/{subject}/versions/{version}", a.deleteVersion)
	r.Post("/compatibility/subjects/{subject}/versions/{version}", a.compatibility)
	r.Post("/compatibility/subjects/{subject}/versions", a.compatibility)
	r.Get("/config", a.getConfig)
	r.Put("/config", a.putConfig)
	r.Delete("/config", a.deleteConfig)
	r.Get("/config/{subject}", a.getConfig)
	r.Put("/config/{subject}", a.putConfig)
	r.Delete("/config/{subject}", a.deleteConfig)
	r.Get("/mode", a.getMode)
	r.Put("/mode", a.putMode)
	r.Delete("/mode", a.deleteMode)
	r.Get("/mode/{subject}", a.getMode)
	r.Put("/mode/{subject}", a.putMode)
	r.Delete("/mode/{subject}", a.deleteMode)
	return r
}

// subjectParam is the {subject} of the path, unescaped: chi matches the
// escaped path, so a subject holding a slash (the file names Confluent's
// serializers register Protobuf references under, such as
// "ex/address.proto", sent as ex%2Faddress.proto) arrives escaped.
func subjectParam(r *http.Request) string {
	raw := chi.URLParam(r, "subject")
	if s, err := url.PathUnescape(raw); err == nil {
		return s
	}
	return raw
}

type api struct {
	reg *Registry
	log *slog.Logger
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, newErr(http.StatusInternalServerError, CodeInternal, "encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func writeErr(w http.ResponseWriter, e *Error) {
	b, _ := json.Marshal(errorBody{ErrorCode: e.Code, Message: e.Message})
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := statusOf(err)
	if e.Status >= 500 {
		a.log.Warn("schema registry: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeErr(w, e)
}

// acceptedTypes are the request media types Confluent accepts.
var acceptedTypes = map[string]bool{
	"application/vnd.schemaregistry.v1+json": true,
	"application/vnd.schemaregistry+json":    true,
	"application/json":                       true,
	"application/octet-stream":               true,
}

// decode reads a JSON body into v; false means the answer was written.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !acceptedTypes[mt] {
			writeErr(w, newErr(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "HTTP 415 Unsupported Media Type"))
			return false
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeErr(w, newErr(http.StatusBadRequest, CodeBadRequest, "reading the request body: %v", err))
		return false
	}
	if len(body) > maxBody {
		writeErr(w, newErr(http.StatusRequestEntityTooLarge, 413, "request body larger than %d bytes", maxBody))
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeErr(w, newErr(http.StatusUnprocessableEntity, CodeUnprocessableEntityJSON, "Request body is empty"))
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeErr(w, newErr(http.StatusBadRequest, CodeBadRequest, "Unexpected character or malformed JSON: %v", err))
		return false
	}
	return true
}

func boolParam(r *http.Request, name string) bool {
	b, _ := strconv.ParseBool(r.URL.Query().Get(name))
	return b
}

func idParam(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(chi.URLParam(r, "id"))
	if err != nil || id < 0 {
		writeErr(w, newErr(http.StatusNotFound, CodeNotFound, "HTTP 404 Not Found"))
		return 0, false
	}
	return id, true
}

// schemaBody is a schema as GET /schemas/ids/{id} renders it: schemaType
// only when not AVRO, references only when there are some.
type schemaBody struct {
	SchemaType string      `json:"schemaType,omitempty"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
}

// versionBody is a subject version as GET .../versions/{v} renders it.
type versionBody struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
}

func shownType(t string) string {
	if t == TypeAvro {
		return ""
	}
	return t
}

func toVersionBody(v *SchemaValue) versionBody {
	return versionBody{Subject: v.Subject, Version: v.Version, ID: v.ID, SchemaType: shownType(v.SchemaType), References: v.References, Schema: v.Schema}
}

func (a *api) schemaByID(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(w, r)
	if !ok {
		return
	}
	v, err := a.reg.SchemaByID(id)
	if err == nil {
		v.Schema, err = a.reg.Formatted(v, r.URL.Query().Get("format"))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, schemaBody{SchemaType: shownType(v.SchemaType), Schema: v.Schema, References: v.References})
}

func writeRaw(w http.ResponseWriter, schema string) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, schema)
}

func (a *api) rawSchemaByID(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(w, r)
	if !ok {
		return
	}
	v, err := a.reg.SchemaByID(id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeRaw(w, v.Schema)
}

func (a *api) subjectsByID(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(w, r)
	if !ok {
		return
	}
	users, err := a.reg.UsersOfID(id, boolParam(r, "deleted"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := []string{}
	for _, u := range users {
		if len(out) == 0 || out[len(out)-1] != u.Subject {
			out = append(out, u.Subject)
		}
	}
	writeJSON(w, out)
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func (a *api) versionsByID(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(w, r)
	if !ok {
		return
	}
	users, err := a.reg.UsersOfID(id, boolParam(r, "deleted"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := []subjectVersion{}
	for _, u := range users {
		out = append(out, subjectVersion{u.Subject, u.Version})
	}
	writeJSON(w, out)
}

func (a *api) subjects(w http.ResponseWriter, r *http.Request) {
	out := a.reg.Subjects(boolParam(r, "deleted"))
	if out == nil {
		out = []string{}
	}
	writeJSON(w, out)
}

func (a *api) versions(w http.ResponseWriter, r *http.Request) {
	out, err := a.reg.Versions(subjectParam(r), boolParam(r, "deleted"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, out)
}

func (a *api) register(w http.ResponseWriter, r *http.Request) {
	var req SchemaRequest
	if !decode(w, r, &req) {
		return
	}
	id, err := a.reg.Register(r.Context(), subjectParam(r), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]int{"id": id})
}

func (a *api) lookup(w http.ResponseWriter, r *http.Request) {
	var req SchemaRequest
	if !decode(w, r, &req) {
		return
	}
	v, err := a.reg.Lookup(subjectParam(r), req, boolParam(r, "deleted"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, toVersionBody(v))
}

func (a *api) version(w http.ResponseWriter, r *http.Request) {
	v, err := a.reg.GetVersion(subjectParam(r), chi.URLParam(r, "version"), boolParam(r, "deleted"))
	if err == nil {
		v.Schema, err = a.reg.Formatted(v, r.URL.Query().Get("format"))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, toVersionBody(v))
}

func (a *api) rawVersion(w http.ResponseWriter, r *http.Request) {
	v, err := a.reg.GetVersion(subjectParam(r), chi.URLParam(r, "version"), boolParam(r, "deleted"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeRaw(w, v.Schema)
}

func (a *api) referencedBy(w http.ResponseWriter, r *http.Request) {
	ids, err := a.reg.ReferencedBy(subjectParam(r), chi.URLParam(r, "version"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if ids == nil {
		ids = []int{}
	}
	writeJSON(w, ids)
}

func (a *api) deleteSubject(w http.ResponseWriter, r *http.Request) {
	out, err := a.reg.DeleteSubject(r.Context(), subjectParam(r), boolParam(r, "permanent"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, out)
}

func (a *api) deleteVersion(w http.ResponseWriter, r *http.Request) {
	v, err := a.reg.DeleteVersion(r.Context(), subjectParam(r), chi.URLParam(r, "version"), boolParam(r, "permanent"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, v)
}

type compatBody struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

func (a *api) compatibility(w http.ResponseWriter, r *http.Request) {
	var req SchemaRequest
	if !decode(w, r, &req) {
		return
	}
	ok, msgs, err := a.reg.TestCompatibility(subjectParam(r), chi.URLParam(r, "version"), req)
	if e := statusOf(err); err != nil && e.Code == CodeInvalidSchema && boolParam(r, "verbose") {
		// Confluent answers an invalid schema in verbose mode as
		// incompatible, the parse error as the message.
		ok, msgs, err = false, []string{e.Message}, nil
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body := compatBody{IsCompatible: ok}
	if boolParam(r, "verbose") {
		body.Messages = msgs
		if body.Messages == nil {
			body.Messages = []string{}
		}
		writeJSON(w, struct {
			IsCompatible bool     `json:"is_compatible"`
			Messages     []string `json:"messages"`
		}{ok, body.Messages})
		return
	}
	writeJSON(w, body)
}

func (a *api) getConfig(w http.ResponseWriter, r *http.Request) {
	lvl, err := a.reg.Config(subjectParam(r), boolParam(r, "defaultToGlobal"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"compatibilityLevel": lvl})
}

func (a *api) putConfig(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Compatibility *string `json:"compatibility"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Compatibility == nil {
		a.fail(w, r, errInvalidCompatibility())
		return
	}
	lvl, err := a.reg.SetConfig(r.Context(), subjectParam(r), *req.Compatibility)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"compatibility": lvl})
}

func (a *api) deleteConfig(w http.ResponseWriter, r *http.Request) {
	old, err := a.reg.DeleteConfig(r.Context(), subjectParam(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"compatibilityLevel": old})
}

func (a *api) getMode(w http.ResponseWriter, r *http.Request) {
	m, err := a.reg.Mode(subjectParam(r), boolParam(r, "defaultToGlobal"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"mode": m})
}

func (a *api) putMode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Mode string `json:"mode"`
	}
	if !decode(w, r, &req) {
		return
	}
	m, err := a.reg.SetMode(r.Context(), subjectParam(r), req.Mode, boolParam(r, "force"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"mode": m})
}

func (a *api) deleteMode(w http.ResponseWriter, r *http.Request) {
	subject := subjectParam(r)
	if subject == "" {
		writeErr(w, newErr(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "HTTP 405 Method Not Allowed"))
		return
	}
	m, err := a.reg.DeleteMode(r.Context(), subject)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"mode": m})
}

// schemas answers GET /schemas: every subject version, or with
// latestOnly=true each subject's latest, filtered by subjectPrefix.
func (a *api) schemas(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	deleted := boolParam(r, "deleted")
	out := []versionBody{}
	for _, v := range a.reg.AllVersions(q.Get("subjectPrefix"), deleted, boolParam(r, "latestOnly")) {
		out = append(out, toVersionBody(&v))
	}
	writeJSON(w, out)
}

package restapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/tributary-dev/tributary/worker"
)

// Messages Kafka Connect's health check answers (RootResource).
const (
	healthyMessage   = "Worker has completed startup and is ready to handle requests."
	startingMessage  = "Worker is still starting up."
	unhealthyMessage = "Worker was unable to handle this request and may be unable to handle other requests."
)

// WorkerStatus is the body of GET /health.
type WorkerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (a *api) serverInfo(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	writeJSON(w, http.StatusOK, a.h.ServerInfo(ctx))
}

func (a *api) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.HealthTimeout)
	defer cancel()
	err := a.h.Health(ctx)
	if err == nil {
		writeJSON(w, http.StatusOK, WorkerStatus{Status: "healthy", Message: healthyMessage})
		return
	}
	msg := func(def string) string {
		var we *worker.Error
		if errors.As(err, &we) && we.Message != "" {
			return we.Message
		}
		return def
	}
	if worker.KindOf(err) == worker.KindUnavailable {
		writeJSON(w, http.StatusServiceUnavailable, WorkerStatus{Status: "starting", Message: msg(startingMessage)})
		return
	}
	writeJSON(w, http.StatusInternalServerError, WorkerStatus{Status: "unhealthy", Message: msg(unhealthyMessage)})
}

// Probe is the body of GET /healthz and GET /readyz.
type Probe struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// healthz is Kubernetes' liveness probe: 200 unless the worker is stuck
// (its herder loop does not answer), then 503; a worker still starting is
// alive. A Herder without Probes answers as /health does, but 200 while
// starting.
func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.HealthTimeout)
	defer cancel()
	var err error
	if p, ok := a.h.(worker.Probes); ok {
		err = p.Alive(ctx)
	} else if err = a.h.Health(ctx); worker.KindOf(err) == worker.KindUnavailable {
		err = nil
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, Probe{Status: "unhealthy", Message: probeMessage(err)})
		return
	}
	writeJSON(w, http.StatusOK, Probe{Status: "ok"})
}

// readyz is Kubernetes' readiness probe: 200 once the worker has joined
// its group, read the config topic to its end and answers; 503 otherwise,
// saying why.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.HealthTimeout)
	defer cancel()
	var err error
	if p, ok := a.h.(worker.Probes); ok {
		err = p.Ready(ctx)
	} else {
		err = a.h.Health(ctx)
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, Probe{Status: "not ready", Message: probeMessage(err)})
		return
	}
	writeJSON(w, http.StatusOK, Probe{Status: "ready"})
}

func probeMessage(err error) string {
	var we *worker.Error
	if errors.As(err, &we) && we.Message != "" {
		return we.Message
	}
	return err.Error()
}

// connectorName returns the {connector} path parameter, unescaped.
func connectorName(r *http.Request) string {
	return pathParam(r, "connector")
}

// pathParam returns a path parameter. decodePaths has decoded the path
// once already: decoding the parameter again would make
// /connectors/victim%252Fx name "victim/x".
func pathParam(r *http.Request, key string) string {
	return chi.URLParam(r, key)
}

// taskID parses the {task} path parameter like JAX-RS parses an Integer
// path parameter: a non-number is a plain 404.
func taskID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.ParseInt(pathParam(r, "task"), 10, 32)
	if err != nil {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return 0, false
	}
	return int(id), true
}

// queryBool parses a boolean query parameter like JAX-RS (Boolean.valueOf:
// "true" in any case is true, anything else false), with a default when
// absent.
func queryBool(r *http.Request, key string, def bool) bool {
	vs, ok := r.URL.Query()[key]
	if !ok || len(vs) == 0 {
		return def
	}
	return strings.EqualFold(vs[0], "true")
}

// location is the absolute URL of a connector, as Jersey builds the
// Location header of a 201.
func location(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/connectors/" + url.PathEscape(name)
}

func (a *api) listConnectors(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	names, err := a.h.Connectors(ctx)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if names == nil {
		names = []string{}
	}
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		writeJSON(w, http.StatusOK, names)
		return
	}
	out := make(map[string]map[string]any, len(names))
	for _, name := range names {
		exp := map[string]any{}
		gone := false
		for _, e := range expand {
			var v any
			var err error
			switch e {
			case "status":
				v, err = a.h.ConnectorStatus(ctx, name)
			case "info":
				v, err = a.h.ConnectorInfo(ctx, name)
			default:
				continue // unknown expansions are ignored, like Kafka Connect
			}
			if worker.KindOf(err) == worker.KindNotFound {
				gone = true // deleted mid-request: skipped
				break
			}
			if err != nil {
				a.fail(w, r, err)
				return
			}
			exp[e] = v
		}
		if !gone {
			out[name] = exp
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// createRequest is the body of POST /connectors.
type createRequest struct {
	Name         *string   `json:"name"`
	Config       configMap `json:"config"`
	InitialState *string   `json:"initial_state"`
}

// checkName puts name into config as "name", or checks that the one there
// matches (ConnectorsResource.checkAndPutConnectorConfigName).
func checkName(w http.ResponseWriter, name string, config map[string]string) bool {
	if included, ok := config["name"]; ok {
		if included != name {
			badRequest(w, fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", included, name))
			return false
		}
		return true
	}
	config["name"] = name
	return true
}

// javaTrim trims s as Java's String.trim does: characters up to U+0020 go
// from both ends (strings.TrimSpace would also drop U+0085 and U+00A0,
// which Kafka Connect keeps and then refuses or accepts).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// emptyName is Kafka Connect's answer to a create without a name.
var emptyName = configErrors("Invalid value  for configuration name: String may not be empty")

func (a *api) createConnector(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req createRequest
	if err := decodeStrict(body, &req); err != nil {
		if errors.Is(err, errNullValue) {
			badRequest(w, configErrors(nullConfigValue))
			return
		}
		badRequest(w, err.Error())
		return
	}
	name := ""
	if req.Name != nil {
		name = javaTrim(*req.Name)
	}
	if req.Config == nil {
		badRequest(w, "Connector config is missing")
		return
	}
	state := ""
	if req.InitialState != nil {
		switch *req.InitialState {
		case worker.StateRunning, worker.StatePaused, worker.StateStopped:
			state = *req.InitialState
		default:
			badRequest(w, fmt.Sprintf("Invalid initial_state %q: must be one of RUNNING, PAUSED, STOPPED", *req.InitialState))
			return
		}
	}
	config := map[string]string(req.Config)
	if !checkName(w, name, config) {
		return
	}
	if name == "" {
		badRequest(w, emptyName)
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	_, info, err := a.h.PutConnectorConfig(ctx, name, config, false, state)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", location(r, name))
	writeJSON(w, http.StatusCreated, info)
}

func (a *api) getConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	info, err := a.h.ConnectorInfo(ctx, connectorName(r))
	reply(a, w, r, info, err)
}

func (a *api) deleteConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusNoContent, a.h.DeleteConnector(ctx, connectorName(r)))
}

func (a *api) getConfig(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	c, err := a.h.ConnectorConfig(ctx, connectorName(r))
	if c == nil {
		c = map[string]string{}
	}
	reply(a, w, r, c, err)
}

func (a *api) putConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	config, ok := decodeConfig(w, body)
	if !ok {
		return
	}
	name := connectorName(r)
	if !checkName(w, name, config) {
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	created, info, err := a.h.PutConnectorConfig(ctx, name, config, true, "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if created {
		w.Header().Set("Location", location(r, name))
		writeJSON(w, http.StatusCreated, info)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (a *api) patchConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var patch patchMap
	if err := decodeStrict(body, &patch); err != nil {
		badRequest(w, err.Error())
		return
	}
	if patch == nil {
		badRequest(w, "Connector configuration patch must be a JSON object")
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	info, err := a.h.PatchConnectorConfig(ctx, connectorName(r), patch)
	reply(a, w, r, info, err)
}

func (a *api) connectorStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	st, err := a.h.ConnectorStatus(ctx, connectorName(r))
	if st.Tasks == nil {
		st.Tasks = []worker.TaskState{}
	}
	reply(a, w, r, st, err)
}

func (a *api) restartConnector(w http.ResponseWriter, r *http.Request) {
	includeTasks := queryBool(r, "includeTasks", false)
	onlyFailed := queryBool(r, "onlyFailed", false)
	ctx, cancel := a.ctx(r)
	defer cancel()
	st, err := a.h.RestartConnector(ctx, connectorName(r), includeTasks, onlyFailed)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !includeTasks && !onlyFailed {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	if st == nil {
		a.fail(w, r, fmt.Errorf("rest: herder returned no state for restart of %s", connectorName(r)))
		return
	}
	if st.Tasks == nil {
		st.Tasks = []worker.TaskState{}
	}
	writeJSON(w, http.StatusAccepted, st)
}

func (a *api) pause(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusAccepted, a.h.PauseConnector(ctx, connectorName(r)))
}

func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusAccepted, a.h.ResumeConnector(ctx, connectorName(r)))
}

func (a *api) stop(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusNoContent, a.h.StopConnector(ctx, connectorName(r)))
}

func (a *api) taskConfigs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	tasks, err := a.h.TaskConfigs(ctx, connectorName(r))
	if tasks == nil {
		tasks = []worker.TaskInfo{}
	}
	reply(a, w, r, tasks, err)
}

// tasksConfig serves the deprecated GET /connectors/{name}/tasks-config
// (KIP-661; removed from Kafka Connect 4.0, kept here for old clients).
func (a *api) tasksConfig(w http.ResponseWriter, r *http.Request) {
	name := connectorName(r)
	a.log.Warn("rest: GET /connectors/{name}/tasks-config is deprecated; use GET /connectors/{name}/tasks", "connector", name)
	ctx, cancel := a.ctx(r)
	defer cancel()
	tasks, err := a.h.TaskConfigs(ctx, name)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make(map[string]map[string]string, len(tasks))
	for _, t := range tasks {
		out[t.ID.Connector+"-"+strconv.Itoa(t.ID.Task)] = t.Config
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *api) taskStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	st, err := a.h.TaskStatus(ctx, connectorName(r), id)
	reply(a, w, r, st, err)
}

func (a *api) restartTask(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusNoContent, a.h.RestartTask(ctx, connectorName(r), id))
}

// ActiveTopics is one entry of GET /connectors/{name}/topics.
type ActiveTopics struct {
	Topics []string `json:"topics"`
}

func (a *api) topics(w http.ResponseWriter, r *http.Request) {
	name := connectorName(r)
	ctx, cancel := a.ctx(r)
	defer cancel()
	topics, err := a.h.ConnectorTopics(ctx, name)
	if topics == nil {
		topics = []string{}
	}
	reply(a, w, r, map[string]ActiveTopics{name: {Topics: topics}}, err)
}

func (a *api) resetTopics(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	empty(a, w, r, http.StatusAccepted, a.h.ResetConnectorTopics(ctx, connectorName(r)))
}

// Message is the body of the offsets PATCH and DELETE answers.
type Message struct {
	Message string `json:"message"`
}

func (a *api) offsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	off, err := a.h.Offsets(ctx, connectorName(r))
	if off.Offsets == nil {
		off.Offsets = []worker.PartitionOffset{}
	}
	reply(a, w, r, off, err)
}

// noOffsets is Kafka Connect's answer to an alter request without offsets.
const noOffsets = "Partitions / offsets need to be provided for an alter offsets request"

func (a *api) alterOffsets(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req worker.ConnectorOffsets
	if err := decodeStrictNumbers(body, &req); err != nil {
		badRequest(w, err.Error())
		return
	}
	if len(req.Offsets) == 0 {
		badRequest(w, noOffsets)
		return
	}
	for _, po := range req.Offsets {
		if po.Partition == nil {
			badRequest(w, "Partition must be specified and non-null for every entry of an alter offsets request")
			return
		}
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	msg, err := a.h.AlterOffsets(ctx, connectorName(r), req)
	reply(a, w, r, Message{Message: msg}, err)
}

func (a *api) resetOffsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	msg, err := a.h.ResetOffsets(ctx, connectorName(r))
	reply(a, w, r, Message{Message: msg}, err)
}

// reply answers 200 with v, or the error.
func reply(a *api, w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// empty answers status with no body, or the error.
func empty(a *api, w http.ResponseWriter, r *http.Request, status int, err error) {
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeEmpty(w, status)
}

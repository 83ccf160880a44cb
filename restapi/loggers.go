package restapi

import (
	"net/http"
	"strings"
)

func (a *api) loggers(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	ls, err := a.h.Loggers(ctx)
	reply(a, w, r, ls, err)
}

func (a *api) logger(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := a.ctx(r)
	defer cancel()
	l, err := a.h.Logger(ctx, pathParam(r, "logger"))
	reply(a, w, r, l, err)
}

// setLogger is PUT /admin/loggers/{name}?scope=worker|cluster. The body is a
// map whose "level" entry is required; other entries are ignored, as in
// Kafka Connect. An unknown scope falls back to worker.
func (a *api) setLogger(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req configMap
	if err := decodeStrict(body, &req); err != nil {
		badRequest(w, err.Error())
		return
	}
	level, ok := req["level"]
	if !ok {
		badRequest(w, "Desired 'level' parameter was not specified in request.")
		return
	}
	scope := "worker"
	if strings.EqualFold(r.URL.Query().Get("scope"), "cluster") {
		scope = "cluster"
	}
	ctx, cancel := a.ctx(r)
	defer cancel()
	names, err := a.h.SetLogLevel(ctx, pathParam(r, "logger"), level, scope)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if scope == "cluster" {
		writeEmpty(w, http.StatusNoContent)
		return
	}
	if names == nil {
		names = []string{}
	}
	writeJSON(w, http.StatusOK, names)
}

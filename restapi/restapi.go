package restapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/tributary-dev/tributary/worker"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes bounds request bodies (Kafka Connect has no
	// limit; a connector config is a few KiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultRequestTimeout is Kafka Connect's REST request timeout
	// (RestServer.DEFAULT_REST_REQUEST_TIMEOUT_MS).
	DefaultRequestTimeout = 90 * time.Second
	// DefaultHealthTimeout is Kafka Connect's health-check timeout
	// (RestServer.DEFAULT_HEALTH_CHECK_TIMEOUT_MS).
	DefaultHealthTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds the time a client may take to send a
	// request body (1 MiB takes well under a second even on a slow link).
	DefaultBodyTimeout = 30 * time.Second
)

// Options configures New. The zero value is usable.
type Options struct {
	// Logger receives request errors (500s) and deprecation notices;
	// nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes bounds every request body; a larger body is a 400.
	// 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RequestTimeout bounds each herder call (Kafka Connect:
	// rest request timeout, 90 s). 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// HealthTimeout bounds GET /health's herder call (Kafka Connect: 10 s).
	// 0 means DefaultHealthTimeout.
	HealthTimeout time.Duration
	// BodyTimeout bounds reading a request body, from when the handler
	// starts reading it; a body not received in time is a 408 and the
	// connection is closed. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Metrics, when set, serves GET /metrics (the Prometheus text the
	// command builds from its registry).
	Metrics http.Handler
}

func (o *Options) validate() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
}

// api holds the handlers' shared state.
type api struct {
	h    worker.Herder
	opts Options
	log  *slog.Logger
	// client forwards requests to other workers.
	client *http.Client
	// root is the whole handler (a forwarded request that turns out to be
	// this worker's to do runs through it again).
	root http.Handler
}

// New returns the handler serving Kafka Connect's REST API on top of h.
func New(h worker.Herder, opts Options) http.Handler {
	opts.validate()
	a := &api{h: h, opts: opts, log: opts.Logger, client: &http.Client{Timeout: opts.RequestTimeout}}

	r := chi.NewRouter()
	r.Use(a.bodyDeadline)
	r.Use(decodePaths)             // once, before routing, as Kafka Connect's Jetty
	r.Use(middleware.StripSlashes) // Jersey accepts /connectors/ and /connectors/a/
	r.Use(a.recoverer)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	})

	r.Get("/", a.serverInfo)
	r.Get("/health", a.health)
	r.Get("/healthz", a.healthz)
	r.Get("/readyz", a.readyz)
	if opts.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", opts.Metrics)
	}

	r.Route("/connectors", func(r chi.Router) {
		r.Get("/", a.listConnectors)
		r.Post("/", a.createConnector)
		r.Route("/{connector}", func(r chi.Router) {
			r.Get("/", a.getConnector)
			r.Delete("/", a.deleteConnector)
			r.Get("/config", a.getConfig)
			r.Put("/config", a.putConfig)
			r.Patch("/config", a.patchConfig)
			r.Get("/status", a.connectorStatus)
			r.Post("/restart", a.restartConnector)
			r.Put("/pause", a.pause)
			r.Put("/resume", a.resume)
			r.Put("/stop", a.stop)
			r.Get("/tasks", a.taskConfigs)
			r.Get("/tasks-config", a.tasksConfig)
			r.Get("/tasks/{task}/status", a.taskStatus)
			r.Post("/tasks/{task}/restart", a.restartTask)
			r.Post("/tasks", a.putTaskConfigs) // internal, between workers
			r.Get("/topics", a.topics)
			r.Put("/topics/reset", a.resetTopics)
			r.Get("/offsets", a.offsets)
			r.Patch("/offsets", a.alterOffsets)
			r.Delete("/offsets", a.resetOffsets)
		})
	})

	r.Route("/connector-plugins", func(r chi.Router) {
		r.Get("/", a.plugins)
		r.Get("/{plugin}/config", a.pluginConfig)
		r.Put("/{plugin}/config/validate", a.validate)
	})

	r.Route("/admin/loggers", func(r chi.Router) {
		r.Get("/", a.loggers)
		r.Get("/{logger}", a.logger)
		r.Put("/{logger}", a.setLogger)
	})
	a.root = holdBodies(headAsGet(r))
	return a.root
}

// headAsGet answers HEAD like GET (JAX-RS does); net/http drops the body.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.WithContext(r.Context())
			r.Method = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline gives a request with a body BodyTimeout to send it: a body
// trickled in byte by byte must not hold a request and its connection for
// ever. Handlers that read the body (readBody) answer a late one with a
// 408; for those that do not, the deadline bounds the server's draining of
// the body after the answer. (A ResponseWriter that cannot take deadlines,
// as httptest's recorder, is left alone.)
func (a *api) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(a.opts.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// ctx returns the request's context bounded by the request timeout.
func (a *api) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), a.opts.RequestTimeout)
}

// recoverer turns a panic in a handler into a logged 500 with Kafka
// Connect's error body.
func (a *api) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				a.log.Error("rest: handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, "Internal server error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

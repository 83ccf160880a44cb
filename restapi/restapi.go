package restapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/tributary-dev/tributary/restapi/console"
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
	// Auth, when set, is the basic authentication every request but the
	// internal ones must pass (Kafka Connect's
	// BasicAuthSecurityRestExtension); nil serves everyone.
	Auth *BasicAuth
	// Client forwards requests to other workers (with the listeners' TLS
	// settings when they use HTTPS); nil is a plain client.
	Client *http.Client
	// Admin says where the /admin endpoints are (admin.listeners).
	Admin AdminRoutes
	// Metrics, when set, serves GET /metrics (the Prometheus text the
	// command builds from its registry) on the API's listeners, behind
	// Auth like every other route.
	Metrics http.Handler
}

// AdminRoutes says whether a handler serves the /admin endpoints, the
// others, or both.
type AdminRoutes int

const (
	// AdminWithAPI serves both (no admin.listeners).
	AdminWithAPI AdminRoutes = iota
	// AdminNone serves the API without /admin (a regular listener when
	// admin.listeners is set, to another listener or to none).
	AdminNone
	// AdminOnly serves only /admin (an admin listener).
	AdminOnly
)

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
	client := opts.Client
	if client == nil {
		client = &http.Client{}
	}
	client = &http.Client{Transport: client.Transport, Timeout: opts.RequestTimeout}
	a := &api{h: h, opts: opts, log: opts.Logger, client: client}

	r := chi.NewRouter()
	r.Use(a.bodyDeadline)
	r.Use(decodePaths)             // once, before routing, as Kafka Connect's Jetty
	r.Use(middleware.StripSlashes) // Jersey accepts /connectors/ and /connectors/a/
	r.Use(a.recoverer)
	if opts.Auth != nil {
		r.Use(a.authenticate)
	}
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	})

	if opts.Admin != AdminOnly {
		a.apiRoutes(r)
	}
	if opts.Admin != AdminNone {
		r.Route("/admin/loggers", func(r chi.Router) {
			r.Get("/", a.loggers)
			r.Get("/{logger}", a.logger)
			r.Put("/{logger}", a.setLogger)
		})
	}
	a.root = holdBodies(headAsGet(r))
	return a.root
}

// apiRoutes are every route but /admin.
func (a *api) apiRoutes(r chi.Router) {
	r.Get("/", a.serverInfo)
	r.Get("/health", a.health)
	r.Get("/healthz", a.healthz)
	r.Get("/readyz", a.readyz)
	if a.opts.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", a.opts.Metrics)
	}
	// The web console, behind the same authentication (r.Use above).
	r.Handle("/ui", console.Handler())
	r.Handle("/ui/*", console.Handler())

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
			r.Put("/fence", a.fenceZombies)    // internal, between workers
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

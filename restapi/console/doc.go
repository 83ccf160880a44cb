// Package console serves Tributary's web console: a few static files
// (plain ES modules and CSS, no build step) embedded in the binary (the
// embed package), which the REST API mounts under /ui/ on every worker. The
// console talks only to the worker's own REST API (Kafka Connect's
// endpoints, /admin/loggers and /metrics), from the same origin, so it
// passes through the same authentication and HTTPS as any other client;
// it loads nothing from elsewhere and works offline.
//
//	r.Handle("/ui", console.Handler())
//	r.Handle("/ui/*", console.Handler())
package console

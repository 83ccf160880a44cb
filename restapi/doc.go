// Package restapi serves Kafka Connect's REST API (paths, status codes, JSON
// shapes and {"error_code","message"} error bodies of Kafka Connect 4.x) on
// top of a worker.Herder.
//
// The package only translates HTTP to herder calls and back: request bodies
// are size-limited and parsed here (malformed JSON is a 400, never a 500),
// Kafka Connect's request-level checks (connector name trimming and
// matching, the connector.class of a validate request, …) are done here,
// and everything else is the herder's business, reported through
// *worker.Error whose Kind is the HTTP status.
//
// Usage:
//
//	h := restapi.New(herder, restapi.Options{Logger: logger})
//	srv := restapi.NewServer(h, logger)
//	ln, _ := net.Listen("tcp", "127.0.0.1:8083")
//	srv.Start(ln)
//	defer srv.Shutdown(ctx)
//
// The contract subpackage holds the table of request/response pairs that
// pins the API down; it runs against this package with a fake herder
// (restapitest), against a live Tributary worker and against a live Kafka
// Connect worker.
package restapi

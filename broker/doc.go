// Package broker is Tributary's bundled broker: a single-node, durable broker
// that speaks the Kafka wire protocol, so that any Kafka client works with it.
//
// Requests and responses are encoded with franz-go's kmsg; record batches are
// stored verbatim by package broker/log. One goroutine reads each connection
// and handles its requests in order; a second writes the responses in the same
// order, waiting where a response is not ready yet (a produce waiting for its
// fsync, a fetch waiting for data). Produce requests with acks=all are
// answered only after a group commit has fsynced every partition they wrote.
//
// Usage:
//
//	cfg := broker.DefaultConfig()
//	cfg.Listener = "127.0.0.1:0"
//	cfg.LogDir = dir
//	b, err := broker.Open(cfg)
//	go b.Serve(ctx)         // returns when ctx is cancelled or Close is called
//	addr := b.Addr()        // the address clients bootstrap from
//	b.Close()               // flushes every log
//
// Security follows Kafka's model: named listeners (Config.Listeners, or
// Kafka's listeners/listener.security.protocol.map properties through
// FromProperties) in PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; the
// principal of a connection comes from its client certificate (SSL) or its
// SASL login (PLAIN, SCRAM-SHA-256/512, sasl.go), else User:ANONYMOUS. With
// Config.Authorizer every handler asks the connection whether its principal
// may do the operation Kafka checks (authz.go); the decision is package
// broker/acl's. SCRAM credentials and ACLs are kept in LogDir/security.json
// (security.go).
//
// Handlers live in one file per API key (api_00_produce.go …); apiTable in
// api_18_api_versions.go is the single list that drives both ApiVersions and
// request validation.
package broker

// Package worker is Tributary's connect runtime: a Kafka Connect-compatible
// worker that runs connectors and tasks (as plugin processes) and coordinates
// with other workers only through a Kafka-protocol broker.
//
// Subpackages split the runtime at its seams:
//
//   - worker/convert: converters (JsonConverter, StringConverter, …)
//   - worker/store: the config, offset and status stores on the three
//     compacted internal topics, in Kafka Connect's record formats
//   - worker/member: membership in the worker group (protocol type "connect")
//   - worker/task: source and sink task runners (the data path)
//
// This package holds the Herder interface the REST API talks to, the
// entities it returns (shaped like Kafka Connect's JSON), the worker
// configuration, and the herder that ties the parts together.
package worker

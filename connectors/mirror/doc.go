// Package mirror is Tributary's MirrorMaker 2: the connectors
// org.apache.kafka.connect.mirror.MirrorSourceConnector,
// MirrorCheckpointConnector and MirrorHeartbeatConnector, compatible with
// Kafka's (the same keys and defaults, remote topic names, and the
// byte-exact offset-syncs, checkpoints and heartbeats records that Java's
// RemoteClusterUtils and Kafka's own MirrorMaker 2 read).
//
// The worker running them must use the target cluster as its Kafka: the
// records they return go to the target through the worker's producer,
// with ByteArrayConverter for keys, values and headers (the worker forces
// it for these classes). Each task opens its own franz-go clients to the
// source and target from the source.cluster.* and target.cluster.* keys.
//
// The deciding parts are pure and tested without sockets: the replication
// policies (policy.go), the Java-regex filters (filter.go), the wire
// formats (format.go), the offset-sync emission rules (syncwriter.go),
// the offset translation index (syncstore.go) and the mapping of source
// topic ACLs to remote ones (acls.go).
package mirror

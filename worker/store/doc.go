// Package store keeps a connect worker's state in the three compacted
// internal topics, in Kafka Connect's exact record formats, so that
// Tributary and Kafka Connect workers can read each other's topics.
//
// Each store is a KafkaBasedLog: Open creates the topic if it is missing
// (always cleanup.policy=compact), verifies it if present (compact only;
// the config topic must have exactly one partition), reads it to the end
// and then tails it in a goroutine until Close. Writes wait for the
// broker's ack and then (config and status stores) read to the end, so a
// writer sees its own write in the next Snapshot.
//
//   - ConfigStore (config.storage.topic): connector-, task-, commit-,
//     target-state- and restart-connector- records; task configs apply only
//     on their commit record, as in Kafka. A listener hears every change so
//     the herder can react to other workers' writes.
//   - OffsetStore (offset.storage.topic): source offsets keyed
//     ["<connector>",{partition}] with JsonConverter's byte layout and the
//     Java default partitioner's murmur2 placement.
//   - StatusStore (status.storage.topic): status-connector- and
//     status-task- records with Kafka's putSafe generation rule.
//
// Usage sketch:
//
//	o := store.Options{Brokers: brokers, Topic: "connect-configs", ReplicationFactor: -1}
//	cfgs, err := store.OpenConfigStore(ctx, o, func(ev store.ConfigEvent) { wake(herder) })
//	...
//	defer cfgs.Close()
//	err = cfgs.PutConnectorConfig(ctx, "src", map[string]string{"connector.class": "FileStreamSource"}, "")
//	snap := cfgs.Snapshot()
//
// The package does not import package worker; it has its own State and
// TargetState types with Kafka Connect's names.
package store

// Package plugins is the host side of Tributary's connector plugins: it
// finds plugin executables under plugin.path, starts them through
// hashicorp/go-plugin (gRPC, protocol version negotiated in the handshake),
// and makes each running connector and task look like a local object to the
// worker.
//
// Two Loaders share one set of interfaces:
//
//   - Host runs each connector (its instance and its tasks on this worker)
//     in a plugin process of its own, one gRPC stream per task: third-party
//     executables found under plugin.path, and the first-party connectors
//     through the tributary-connector-* executables (BuiltinCommands). A
//     crash, exit or hang of a plugin fails only that connector's tasks,
//     with the panic message and stack (or the tail of the plugin's stderr)
//     as the trace; the host stays up and can start the tasks again.
//   - InProcess calls sdk connectors directly; tests and the overhead
//     benchmark use it.
//
// Usage sketch (the worker's task runner):
//
//	builtin, _ := plugins.BuiltinCommands()
//	host, err := plugins.NewHost(ctx, plugins.Config{
//		PluginPath: []string{"/opt/tributary/plugins"},
//		Builtin:    builtin,
//		Logger:     logger,
//	})
//	task, err := host.StartSourceTask(ctx, "FileStreamSource",
//		sdk.TaskInfo{Connector: "files", Task: 0}, taskConfig, offsetStore)
//	for {
//		recs, err := task.Poll(ctx) // a batch; *sdk.TaskError on failure
//		…produce recs, store their offsets once acked…
//		task.Committed(ctx, committedOffsets)
//	}
//	task.Stop(ctx) // graceful; kills the plugin after the stop timeout
//
// Records travel in batches (sdk/protocol/wire encoding) that pluginpb.Codec
// hands to gRPC without copying. A source task's batches go through shared
// memory where the plugin accepts it (sdk/protocol/shm; Linux): the plugin
// encodes into a slot of a sealed memory file both map, the stream carries
// only the slot's number, and the host copies the batch out before
// decoding it. A sink task's Put returns once its batch is sent, so the
// worker prepares the next one while the plugin works; the next Put, Sync
// or Flush waits for it.
//
// Optional interfaces let the runner skip work on the way through: a host
// source task can leave values (RawValueSource) and source offsets
// (EncodedOffsetSource) in the wire encoding and take a received batch's
// memory back once the runner is done with it (ReleaseBatch); a host sink
// task takes values already encoded (EncodedValueSink). The host asks
// source plugins to write each value's length (TaskStart.value_lengths):
// a value left encoded is then cut out of its batch without being read,
// and checked once, by the converter that writes it for Kafka.
//
// Plugin stderr (the SDK logs JSON lines there) is re-emitted through the
// host's slog logger with connector and task attributes. Plugins exit when
// the host dies: the SDK watches its parent process, and on Linux the host
// also asks the kernel for a parent-death signal.
package plugins

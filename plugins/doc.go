// Package plugins is the host side of Tributary's connector plugins: it
// finds plugin executables under plugin.path, starts them through
// hashicorp/go-plugin (gRPC, protocol version negotiated in the handshake),
// and makes each running connector and task look like a local object to the
// worker.
//
// Two Loaders share one set of interfaces:
//
//   - Host runs connectors in plugin processes, one gRPC stream per
//     connector instance and per task: third-party executables found under
//     plugin.path, and the first-party connectors through the
//     tributary-connector-* executables (BuiltinCommands). Config.Isolation
//     says which share a process: IsolationPlugin (the default) runs every
//     connector of one executable on this worker in one process,
//     IsolationConnector gives each connector (its instance and its tasks)
//     a process of its own. A panic in a connector's or task's method
//     fails that one, with the panic and stack as its trace (the SDK
//     recovers it); a crash, exit or kill of a process (a panic on a
//     goroutine the connector started itself, which Go cannot recover, an
//     os.Exit, the OOM killer) fails exactly the instances and tasks it
//     hosted, with the tail of its stderr as the trace; the host stays up
//     and starts them again, in a new process, when the worker restarts
//     them. A task that hangs is killed with its process when it has the
//     process to itself, else abandoned: its process is retired (new tasks
//     go to a new one) and ends with the last task it still serves.
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
// Plugin stderr (the SDK logs JSON lines there, each naming its connector
// and task) is re-emitted through the host's slog logger: a line goes to
// the loggers of the connector it names, named after that connector's
// class, with its connector and task attributes, whichever connector
// started the process; a line naming none (a print, a crash's stack) is
// the plugin's (logger dev.tributary.plugins, attribute plugin), or its
// only connector's. Plugins exit when
// the host dies: the SDK watches its parent process, and on Linux the host
// also asks the kernel for a parent-death signal.
package plugins

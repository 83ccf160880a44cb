package pluginpb

// Handshake and transport constants shared by the SDK (plugin side) and the
// plugins package (host side).
const (
	// MagicCookieKey and MagicCookieValue guard against running a plugin
	// binary by hand: go-plugin refuses to serve without them.
	MagicCookieKey   = "TRIBUTARY_PLUGIN"
	MagicCookieValue = "b3a7f1c2-tributary-connector-plugin"
	// ProtocolVersion is the version of this file's protocol. A host and a
	// plugin negotiate the highest version both support; go-plugin carries
	// the host's list in PLUGIN_PROTOCOL_VERSIONS.
	ProtocolVersion = 2
	// OldestProtocolVersion is the oldest version a host still speaks
	// (version 1: one Put at a time to a sink plugin).
	OldestProtocolVersion = 1
	// PluginName is the name the service is dispensed under.
	PluginName = "connector"
	// MaxMessageSize bounds one gRPC message in both directions (gRPC's
	// default of 4 MiB is too small for large records).
	MaxMessageSize = 256 << 20
	// WindowSize is the HTTP/2 flow-control window (stream and connection)
	// both sides set: gRPC's 64 KiB default makes the sender of a
	// megabyte batch wait for many window updates.
	WindowSize = 16 << 20
	// BufferSize is the gRPC transport read and write buffer size. Each
	// connection keeps both for its life, in the worker and in every
	// plugin process: 256 KiB rather than 1 MiB takes 7-12 MB off the
	// resident memory of a worker running one source and one sink, for
	// no measurable CPU in the end-to-end benchmark (a megabyte batch is
	// written in four system calls instead of one).
	BufferSize = 256 << 10
)

// Package pluginpb holds the gRPC protocol between a Tributary worker and a
// connector plugin process: plugin.proto and the code generated from it.
//
// Connector authors never use it; the sdk package serves it and the plugins
// package calls it. Record payloads are opaque bytes encoded by package
// sdk/protocol/wire. Regenerate with:
//
//	cd sdk && go generate ./protocol/pluginpb
package pluginpb

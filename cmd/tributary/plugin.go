package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/sdk"
)

// pluginCommand is the hidden plugin mode: a worker re-executes its own
// binary as "tributary plugin" to run the first-party connectors in a
// separate process, speaking the same protocol as third-party plugins.
func pluginCommand() command {
	return command{
		name:    "plugin",
		summary: "serve the built-in connectors as a plugin process (started by workers, not by hand)",
		hidden:  true,
		run: func(_ context.Context, args []string, stdout, _ io.Writer) int {
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				fmt.Fprint(stdout, `Usage: tributary plugin

Serves the built-in connectors (FileStreamSource, FileStreamSink, Datagen,
DiscardSink, PostgresConnector)
over the Tributary plugin protocol. Workers start this command themselves;
it refuses to run without the handshake environment a worker provides.
`)
				return 0
			}
			sdk.Serve(connectors.All()...)
			return 0
		},
	}
}

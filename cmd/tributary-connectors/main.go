// Command tributary-connectors serves Tributary's first-party connectors
// (connectors.All) as a plugin process. Workers start it themselves, from
// beside their own tributary binary (else from PATH), the way they start a
// third-party plugin found under plugin.path; it is not run by hand.
//
// It is an executable of its own, not a mode of tributary's, so that the
// worker and broker processes do not link the connectors' libraries (the
// PostgreSQL and MongoDB drivers, aws-sdk-go-v2, arrow-go's Parquet writer):
// Go runs the init of every package a binary links in every process it
// starts, whichever command runs, and with them linked an idle worker's RSS
// doubled (docs/benchmarks.md, "Idle memory").
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tributary-dev/tributary/connectors"
	"github.com/tributary-dev/tributary/sdk"
)

func main() {
	all := connectors.All()
	if code, done := parseArgs(os.Args[1:], all, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	sdk.Serve(all...)
}

// parseArgs handles a command line other than the empty one a worker
// gives: it prints the help or refuses the arguments, and reports done.
func parseArgs(args []string, all []sdk.Connector, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case len(args) == 0:
		return 0, false
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprint(stdout, "Usage: tributary-connectors\n\nServes the built-in connectors over the Tributary plugin protocol:\n")
		for _, c := range all {
			fmt.Fprintf(stdout, "  %s\n", c.Spec().Class)
		}
		fmt.Fprint(stdout, `
Workers start this executable themselves, from the directory of their
tributary binary (else from PATH); it refuses to run without the handshake
environment a worker provides.
`)
		return 0, true
	default:
		fmt.Fprintf(stderr, "tributary-connectors: unexpected argument %q; it takes none (see --help)\n", args[0])
		return 2, true
	}
}

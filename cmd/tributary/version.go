package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version, commit and Go version",
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 {
				fmt.Fprintln(stdout, "Usage: tributary version\n\nPrints the version, the VCS commit it was built from and the Go version.")
				return 0
			}
			commit := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						commit = s.Value
					}
				}
			}
			fmt.Fprintf(stdout, "tributary %s (commit %s, %s)\n", version, commit, runtime.Version())
			return 0
		},
	}
}

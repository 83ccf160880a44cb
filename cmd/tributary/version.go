package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with -ldflags "-X
// main.version=… -X main.commit=…" (make build and make image do); without
// commit, the VCS revision Go stamped into the binary, if any, is used.
var (
	version = "dev"
	commit  = ""
)

// buildCommit is the commit the binary was built from, or "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version, commit and Go version",
		run: func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 {
				fmt.Fprintln(stdout, "Usage: tributary version\n\nPrints the version, the VCS commit it was built from and the Go version.")
				return 0
			}
			fmt.Fprintf(stdout, "tributary %s (commit %s, %s)\n", version, buildCommit(), runtime.Version())
			return 0
		},
	}
}

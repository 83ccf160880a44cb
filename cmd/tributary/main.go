// Command tributary is the one Tributary binary: the bundled broker, connect
// workers, the all-in-one dev mode and small admin commands.
//
// main only parses the command line and calls into the library packages; all
// behaviour lives in broker/, worker/ and friends.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/tributary-dev/tributary/worker"
)

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	hidden  bool
	// run executes the command with the arguments after its name and
	// returns the process exit code. stdout and stderr are passed in so
	// that tests can capture them.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands lists every subcommand; each lives in its own file.
func commands() []command {
	cmds := []command{
		brokerCommand(),
		versionCommand(),
	}
	cmds = append(cmds, extraCommands()...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

func main() {
	worker.Commit = buildCommit() // GET / reports it
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "tributary: unknown command %q; run 'tributary --help' for the list\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Tributary: Kafka Connect-compatible connect workers and a bundled Kafka-protocol broker.

Usage:
  tributary <command> [flags]

Commands:
`)
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprint(w, `
Run 'tributary <command> --help' for the flags of a command.
`)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchManyHelp = `Usage: tributary-bench many [flags]

Benchmarks many connectors on one worker (issue 39), in one run, on one
bundled broker (started in this process), all on 127.0.0.1: for each count
N of --counts, N FileStreamSource connectors (tasks.max=1, each reading an
empty file of its own, created --parallel at a time) on a fresh worker of
each runtime in turn:

  tributary plugin.isolation=plugin     one plugin process per plugin
                                        executable (the default)
  tributary plugin.isolation=connector  one plugin process per connector
  kafka-connect                         Kafka Connect 4.4 (distributed mode,
                                        connect-distributed.sh's heap
                                        -Xms256M -Xmx2G and G1)

Measured, per runtime and count:
  processes     the worker and its plugin processes (1 for Kafka Connect)
  idle PSS      PSS summed over the runtime's processes with no connector
  PSS           the same 5 s after every connector ran: the memory the
                processes use with shared pages counted once, as a memory
                cgroup holding them counts it
  RSS           RSS summed over the processes (shared pages counted in each)
  margin        PSS per connector, from the count before (or from idle)
  created in    the creates, --parallel at a time
  all RUNNING   from the first create until every connector and task RUNNING
                (GET /connectors?expand=status)
  idle CPU      CPU use of the runtime's processes over 10 s, % of one core
  status ms     median latency of GET /connectors?expand=status (of 5)

Goals (issue 39): at N = 1000 Tributary's PSS <= Kafka Connect's RSS, and all
RUNNING no later than Kafka Connect.

Kafka Connect runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+; without them it is reported as skipped
(not a failure). Progress goes to stderr; the table (or JSON) to stdout.

Flags:
  --counts LIST        connector counts (default 10,100,1000)
  --isolations LIST    Tributary's plugin.isolation settings to run
                       (default plugin,connector)
  --parallel N         creates in flight at once (default 8)
  --no-kafka-connect   leave out Kafka Connect
  --dir DIR            where working directories are created (default
                       $TMPDIR or /tmp); removed afterwards
  --timeout DURATION   limit for a run's connectors to run (default 10m)
  --tributary PATH     the tributary binary the worker runs (default: built
                       from this checkout with go build)
  --json               print the report as JSON instead of a table
  -h, --help           show this help

Exit status: 0 when every run completed (goal met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Examples:
  tributary-bench many
  tributary-bench many --counts 100 --isolations plugin --no-kafka-connect
`

func runBenchMany(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench many", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		counts, isolations, dir, exe string
		parallel                     int
		noKC, asJSON                 bool
		timeout                      time.Duration
	)
	fs.StringVar(&counts, "counts", "10,100,1000", "")
	fs.StringVar(&isolations, "isolations", "plugin,connector", "")
	fs.IntVar(&parallel, "parallel", 8, "")
	fs.StringVar(&exe, "tributary", "", "")
	fs.BoolVar(&noKC, "no-kafka-connect", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&dir, "dir", "", "")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, benchManyHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary-bench many: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tributary-bench many: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	ns, err := parseIntList(counts, false)
	if err != nil || parallel < 1 || timeout <= 0 {
		fmt.Fprintln(stderr, "tributary-bench many: --counts must list whole numbers, --parallel be at least 1 and --timeout positive (see --help)")
		return 2
	}
	var isos []string
	for _, s := range strings.Split(isolations, ",") {
		switch s = strings.TrimSpace(s); s {
		case "plugin", "connector":
			isos = append(isos, s)
		case "":
		default:
			fmt.Fprintf(stderr, "tributary-bench many: isolation %q is neither plugin nor connector (see --help)\n", s)
			return 2
		}
	}
	if exe == "" {
		built, cleanup, err := buildTributary(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tributary-bench many: %v (or pass --tributary PATH)\n", err)
			return 1
		}
		defer cleanup()
		exe = built
	}
	rep, err := bench.RunMany(ctx, bench.ManyOptions{Exe: exe, Counts: ns, Isolations: isos, NoKafkaConnect: noKC,
		Dir: dir, Timeout: timeout, Parallel: parallel, Progress: stderr})
	if rep == nil {
		fmt.Fprintf(stderr, "tributary-bench many: %v\n", err)
		return 1
	}
	if !writeReport(ctx, "tributary-bench many", rep, asJSON, stdout, stderr) {
		return 1
	}
	if rep.Failed() {
		return 1
	}
	return 0
}

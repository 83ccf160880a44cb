package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchManyHelp = `Usage: tributary-bench many [flags]

Benchmarks many connectors on one worker and on a cluster of workers
(issue 39), in one run, on one bundled broker (started in this process),
all on 127.0.0.1: for each count N of --counts and each cluster size W of
--workers, N FileStreamSource connectors (tasks.max=1, each reading an
empty file of its own, created --parallel at a time, round robin over the
workers) on W fresh workers of each runtime in turn:

  tributary plugin.isolation=plugin     one plugin process per plugin
                                        executable (the default)
  tributary plugin.isolation=connector  one plugin process per connector
  kafka-connect                         Kafka Connect 4.4 (distributed mode,
                                        connect-distributed.sh's heap
                                        -Xms256M -Xmx2G and G1); on a
                                        cluster once per value of
                                        --kafka-connect-delays

Measured, per runtime and count:
  processes     the workers and their plugin processes (1 per worker for
                Kafka Connect)
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

On a cluster (W > 1), then: a follower (not the leader, which would
reassign at once) is killed with SIGKILL (a Tributary worker's process
group: its plugin processes with it), and measured are
  killed worker ran   its connectors and tasks
  all RUNNING again   from the kill until every connector and task is
                      RUNNING on the surviving workers
  misplaced/duplicate connectors whose file is not held open by exactly
                      one process, of the worker its status names (a task
                      running twice, or elsewhere than its status says),
                      before the kill and after the failover (goal 0, 0)
Tributary runs with its defaults (scheduled.rebalance.max.delay.ms=1000);
Kafka Connect's default scheduled.rebalance.max.delay.ms is 300000 (5
minutes: a dead follower's work waits that long), so it runs once with
each value of --kafka-connect-delays.

Goals (issue 39): at N = 1000 Tributary's PSS <= Kafka Connect's RSS, and all
RUNNING no later than Kafka Connect.

Kafka Connect runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+; without them it is reported as skipped
(not a failure). Progress goes to stderr; the table (or JSON) to stdout.

Flags:
  --counts LIST        connector counts (default 10,100,1000)
  --workers LIST       cluster sizes (default 1; 1,3 runs one worker and a
                       cluster of three)
  --kafka-connect-delays LIST
                       scheduled.rebalance.max.delay.ms of the Kafka Connect
                       clusters, one run each (default 300000,0; one worker
                       runs once)
  --isolations LIST    Tributary's plugin.isolation settings to run
                       (default plugin,connector)
  --parallel N         creates in flight at once (default 8)
  --no-kafka-connect   leave out Kafka Connect
  --dir DIR            where working directories are created (default
                       $TMPDIR or /tmp); removed afterwards
  --timeout DURATION   limit for a run's connectors to run, and again to run
                       elsewhere after the kill (default 10m)
  --tributary PATH     the tributary binary the worker runs (default: built
                       from this checkout with go build)
  --json               print the report as JSON instead of a table
  -h, --help           show this help

Exit status: 0 when every run completed (goal met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Examples:
  tributary-bench many
  tributary-bench many --counts 100 --isolations plugin --no-kafka-connect
  tributary-bench many --counts 10,100 --workers 3 --isolations plugin
`

func runBenchMany(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench many", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		counts, workers, delays, isolations, dir, exe string
		parallel                                      int
		noKC, asJSON                                  bool
		timeout                                       time.Duration
	)
	fs.StringVar(&counts, "counts", "10,100,1000", "")
	fs.StringVar(&workers, "workers", "1", "")
	fs.StringVar(&delays, "kafka-connect-delays", "300000,0", "")
	fs.StringVar(&isolations, "isolations", "plugin,connector", "")
	fs.IntVar(&parallel, "parallel", 8, "")
	fs.StringVar(&exe, "tributary", "", "")
	fs.BoolVar(&noKC, "no-kafka-connect", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&dir, "dir", "", "")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "")
	const name = "tributary-bench many"
	if code, done := parseFlags(fs, args, name, benchManyHelp, stdout, stderr); done {
		return code
	}
	ns, err := parseIntList(counts, false)
	ws, werr := parseIntList(workers, false)
	ds, derr := parseIntList(delays, false)
	if err != nil || werr != nil || derr != nil || parallel < 1 || timeout <= 0 || slices.Min(ws) < 1 || slices.Min(ds) < 0 {
		fmt.Fprintf(stderr, "%s: --counts, --workers and --kafka-connect-delays must list whole numbers (workers at least 1), --parallel be at least 1 and --timeout positive (see --help)\n", name)
		return 2
	}
	var isos []string
	for _, s := range strings.Split(isolations, ",") {
		switch s = strings.TrimSpace(s); s {
		case "plugin", "connector":
			isos = append(isos, s)
		case "":
		default:
			fmt.Fprintf(stderr, "%s: isolation %q is neither plugin nor connector (see --help)\n", name, s)
			return 2
		}
	}
	return runAndReport(ctx, name, exe, asJSON, stdout, stderr, func(exe string) (benchReport, error) {
		rep, err := bench.RunMany(ctx, bench.ManyOptions{Exe: exe, Counts: ns, Workers: ws, KafkaConnectDelays: ds, Isolations: isos,
			NoKafkaConnect: noKC, Dir: dir, Timeout: timeout, Parallel: parallel, Progress: stderr})
		if rep == nil {
			return nil, err
		}
		return rep, err
	})
}

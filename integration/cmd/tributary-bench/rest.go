package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchRESTHelp = `Usage: tributary-bench rest [flags]

Benchmarks the REST API under a burst of concurrent connector creates, in one
run, on one bundled broker (started in this process), all on 127.0.0.1:
first a 'tributary worker' child process, then a Kafka
Connect 4.4 worker (distributed mode, connect-distributed.sh's heap -Xms256M
-Xmx2G and G1), each freshly started and idle, get --connectors POST
/connectors requests at once, one connection each: FileStreamSource
connectors (tasks.max=1), each reading an empty file of its own.

Measured, per runtime:
  answered in    wall time from the first request sent to the last answer
  answers        the answers by HTTP status (every create should be 201)
  p50/p99/max    the answers' latencies
  CPU s          CPU time (user + system) of the worker process from the
                 first request to the last answer; for Tributary also of
                 its plugin processes (the JVM's threads for Kafka Connect)
  /health        GET /health sampled every 250 ms during the burst: the
                 samples that did not answer 200 (it should stay healthy)
  all RUNNING    time from the first request until every created connector
                 and its task are RUNNING (GET /connectors?expand=status),
                 the CPU time until then, and the /health samples that did
                 not answer 200 from the burst's end until then
  errors that created, 201s missing
                 creates that answered an error although their connector
                 exists afterwards, and 201s whose connector does not: both
                 must be 0 (an error answer must not have changed state)

Goal: every create answered 201, and Kafka Connect's time / Tributary's time
>= 1.0 for the answers (issue 23).

Kafka Connect runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+; without them it is reported as skipped
(not a failure). Progress goes to stderr; the table (or JSON) to stdout.

Flags:
  --connectors N       connectors created at once (default 200)
  --no-kafka-connect   leave out Kafka Connect
  --dir DIR            where working directories are created (default
                       $TMPDIR or /tmp); removed afterwards
  --timeout DURATION   limit for each runtime's burst and for its
                       connectors to run (default 5m)
  --tributary PATH     the tributary binary the worker runs (default: built
                       from this checkout with go build)
  --json               print the report as JSON instead of a table
  -h, --help           show this help

Exit status: 0 when both runtimes ran (goal met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Examples:
  tributary-bench rest
  tributary-bench rest --connectors 1000 --no-kafka-connect
`

func runBenchREST(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench rest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		connectors   int
		noKC, asJSON bool
		dir, exe     string
		timeout      time.Duration
	)
	fs.StringVar(&exe, "tributary", "", "")
	fs.IntVar(&connectors, "connectors", bench.DefaultCreates, "")
	fs.BoolVar(&noKC, "no-kafka-connect", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&dir, "dir", "", "")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "")
	const name = "tributary-bench rest"
	if code, done := parseFlags(fs, args, name, benchRESTHelp, stdout, stderr); done {
		return code
	}
	if connectors < 1 || timeout <= 0 {
		fmt.Fprintln(stderr, "tributary-bench rest: --connectors must be at least 1 and --timeout positive (see --help)")
		return 2
	}
	return runAndReport(ctx, name, exe, asJSON, stdout, stderr, func(exe string) (benchReport, error) {
		rep, err := bench.RunCreates(ctx, bench.CreatesOptions{Exe: exe, Connectors: connectors, NoKafkaConnect: noKC,
			Dir: dir, Timeout: timeout, Progress: stderr})
		if rep == nil {
			return nil, err
		}
		return rep, err
	})
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchClusterHelp = `Usage: tributary-bench cluster [flags]

Benchmarks a cluster of connect workers, each a 'tributary worker' child
process (--tributary, or built from this checkout), on one bundled broker started in this process,
side by side with Kafka Connect 4.4 workers (distributed mode,
connect-distributed.sh's heap -Xms256M -Xmx2G and G1) on the same broker,
all on 127.0.0.1. Every pipeline is FileStreamSource -> topic ->
FileStreamSink (100-byte lines, 500 lines/s per input), the connectors
both runtimes have.

  failover    3 workers run 3 pipelines (6 connectors, 6 tasks); a
              follower that runs tasks is killed with SIGKILL (a follower:
              a new leader remembers no lost work and reassigns at once);
              measured from the kill: every connector and task RUNNING on
              the other workers (GET /connectors?expand=status), and the
              killed worker's sources producing (topic end offsets) and
              its sinks writing (output lines) again. The worker is started
              again between runs. Tributary with its defaults; Kafka Connect
              with its defaults (scheduled.rebalance.max.delay.ms=300000:
              --default-runs runs, each over 5 minutes) and with
              scheduled.rebalance.max.delay.ms=0.
  join        (Tributary) a 4th worker joins 3 running 3 pipelines and 2
              datagen connectors of 3 tasks: from its process start to its
              first task RUNNING, and the number of tasks that restarted on
              the other workers (from the status topic; goal 0).
  REST        PUT /connectors/{name}/config latency through the leader and
              through a follower (5 x --runs requests each), for Tributary
              and Kafka Connect (the scheduled.rebalance.max.delay.ms=0
              cluster).
  throughput  (Tributary) datagen -> discard, 2 tasks each on a
              2-partition topic, --records records of about 1 KiB, with 1
              and with 2 workers: records/s at the sink's committed offsets
              and the workers' and plugins' CPU seconds per record.

Results are the median and maximum over --runs runs (failover of Kafka
Connect with its defaults: --default-runs). Kafka Connect runs from the jars
fetched by integration/fetch-jars.sh (or $TRIBUTARY_JARS) with Java 17+;
without them it is reported as skipped. Progress goes to stderr; the tables
(or JSON) to stdout. Run it alone on the machine: the timings include
every process's start-up.

Flags:
  --runs N            measured runs (default 5)
  --default-runs N    failover runs of Kafka Connect with its defaults
                      (default 2)
  --records N         datagen -> discard records (default 1000000)
  --no-kafka-connect  leave out Kafka Connect
  --dir DIR           where working directories are created (default $TMPDIR)
  --timeout DURATION  limit of each wait (default 10m)
  --tributary PATH    the tributary binary the workers run (default: built
                      from this checkout with go build)
  --json              print the report as JSON
  -h, --help          show this help

Exit status: 0 when every measurement ran (goals met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Example:
  flock /work/heavy.lock go run ./integration/cmd/tributary-bench cluster --runs 5
`

func runBenchCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench cluster", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		runs, defaultRuns, records int
		noKC, asJSON               bool
		dir, exe                   string
		timeout                    time.Duration
	)
	fs.StringVar(&exe, "tributary", "", "")
	fs.IntVar(&runs, "runs", 5, "")
	fs.IntVar(&defaultRuns, "default-runs", 2, "")
	fs.IntVar(&records, "records", 1_000_000, "")
	fs.BoolVar(&noKC, "no-kafka-connect", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&dir, "dir", "", "")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "")
	const name = "tributary-bench cluster"
	if code, done := parseFlags(fs, args, name, benchClusterHelp, stdout, stderr); done {
		return code
	}
	if runs < 1 || defaultRuns < 1 || records < 2 || timeout <= 0 {
		fmt.Fprintln(stderr, "tributary-bench cluster: --runs and --default-runs must be at least 1, --records at least 2, --timeout positive (see --help)")
		return 2
	}
	return runAndReport(ctx, name, exe, asJSON, stdout, stderr, func(exe string) (benchReport, error) {
		rep, err := bench.RunCluster(ctx, bench.ClusterOptions{Exe: exe, Runs: runs, DefaultRuns: defaultRuns, Records: records,
			NoKafkaConnect: noKC, Dir: dir, Timeout: timeout, Progress: stderr})
		if rep == nil {
			return nil, err
		}
		return rep, err
	})
}

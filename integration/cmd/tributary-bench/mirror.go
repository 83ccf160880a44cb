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

const benchMirrorHelp = `Usage: tributary-bench mirror [flags]

Benchmarks MirrorMaker 2 replication (issue 34) in one run, all on
127.0.0.1: Tributary's mirror connectors on a Tributary worker beside
Kafka's (connect-mirror 4.3.1, rebuilt for 4.4 by integration/fetch-jars.sh)
on Kafka Connect 4.4, each running MirrorSourceConnector,
MirrorCheckpointConnector and MirrorHeartbeatConnector with the same
configuration (aliases A and B, ByteArrayConverter for keys, values and
headers, tasks.max=--tasks, replication factor 1, everything else at its
default) and offset.flush.interval.ms=1000 on both workers.

The brokers are bundled brokers in this process: one source, holding a
topic per runtime, and a fresh target per runtime, which is the
mirroring worker's Kafka. For each runtime in turn:

  1. --records random values of --size bytes are produced to the source
     topic (--partitions partitions), before the mirror starts;
  2. the worker starts and the three connectors are created; a consumer on
     the target reads A.<topic> from the start;
  3. backlog: measured from the first record's arrival at the target
     consumer to the arrival of the --records-th: records/s, and the CPU
     time (user + system) of every process of the mirror over that span:
     the Tributary worker and its plugin processes, or Kafka Connect's JVM
     (CPU-s per million records, records per CPU-second);
  4. latency: --latency-records more records are produced at
     --latency-rate records/s, each stamped with its produce time; the
     replication latency is its arrival at the target consumer minus that
     timestamp (p50, p99, max).

Goal (issue 34): Tributary's records per CPU-second >= 3x MirrorMaker 2's.

Kafka Connect runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+ and connect-distributed.sh's heap; without
them it is reported as skipped (not a failure). Progress goes to stderr; the
table (or JSON) to stdout.

Flags:
  --records N          backlog records per runtime (default 1000000)
  --size N             record value bytes (default 1024)
  --partitions N       partitions of the source topic (default 4)
  --tasks N            tasks.max of the connectors (default 2)
  --latency-records N  records of the paced phase (default 20000)
  --latency-rate N     their rate, records/s (default 2000, below either
                       mirror's throughput, so that the latency is not
                       queueing)
  --runtimes LIST      kafka-connect, tributary or both, in the order to run
                       (default kafka-connect,tributary)
  --dir DIR            where data directories are created (default $TMPDIR
                       or /tmp); removed afterwards
  --timeout DURATION   limit for each runtime's run (default 10m)
  --tributary PATH     the tributary binary the worker runs (default: built
                       from this checkout with go build)
  --json               print the report as JSON instead of a table
  -h, --help           show this help

Exit status: 0 when every run completed (goal met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Examples:
  tributary-bench mirror
  tributary-bench mirror --records 200000 --runtimes tributary
`

func runBenchMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench mirror", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		o             bench.MirrorOptions
		runtimes, exe string
		asJSON        bool
	)
	fs.IntVar(&o.Records, "records", bench.DefaultMirrorRecords, "")
	fs.IntVar(&o.Size, "size", bench.DefaultMirrorSize, "")
	fs.IntVar(&o.Partitions, "partitions", bench.DefaultMirrorPartitions, "")
	fs.IntVar(&o.Tasks, "tasks", bench.DefaultMirrorTasks, "")
	fs.IntVar(&o.LatencyRecords, "latency-records", bench.DefaultMirrorLatencyRecords, "")
	fs.IntVar(&o.LatencyRate, "latency-rate", bench.DefaultMirrorLatencyRate, "")
	fs.StringVar(&runtimes, "runtimes", bench.MirrorKafkaConnect+","+bench.MirrorTributary, "")
	fs.StringVar(&o.Dir, "dir", "", "")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "")
	fs.StringVar(&exe, "tributary", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	const name = "tributary-bench mirror"
	if code, done := parseFlags(fs, args, name, benchMirrorHelp, stdout, stderr); done {
		return code
	}
	if o.Records < 1 || o.Size < 1 || o.Partitions < 1 || o.Tasks < 1 || o.LatencyRecords < 1 || o.LatencyRate < 1 || o.Timeout <= 0 {
		fmt.Fprintf(stderr, "%s: --records, --size, --partitions, --tasks, --latency-records and --latency-rate must be at least 1 and --timeout positive (see --help)\n", name)
		return 2
	}
	for _, s := range strings.Split(runtimes, ",") {
		switch s = strings.TrimSpace(s); s {
		case bench.MirrorKafkaConnect, bench.MirrorTributary:
			o.Runtimes = append(o.Runtimes, s)
		case "":
		default:
			fmt.Fprintf(stderr, "%s: runtime %q is neither kafka-connect nor tributary (see --help)\n", name, s)
			return 2
		}
	}
	if len(o.Runtimes) == 0 {
		fmt.Fprintf(stderr, "%s: --runtimes names no runtime (see --help)\n", name)
		return 2
	}
	o.Progress = stderr
	return runAndReport(ctx, name, exe, asJSON, stdout, stderr, func(exe string) (benchReport, error) {
		o.Exe = exe
		rep, err := bench.RunMirror(ctx, o)
		if rep == nil {
			return nil, err
		}
		return rep, err
	})
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchOverview = `Usage: tributary-bench broker [flags]
       tributary-bench connect [flags]
       tributary-bench cluster [flags]
       tributary-bench rest [flags]
       tributary-bench many [flags]
       tributary-bench mirror [flags]

Benchmarks, each side by side with its reference in one run:

  broker    the bundled broker against franz-go's kfake and Apache Kafka 4.4:
            produce and consume throughput, transactions, consumer groups,
            rebalances
  connect   the Connect worker end to end (datagen -> discard), and the
            FileStream connectors against Kafka Connect 4.4: records/s,
            start-up time, memory
  cluster   a cluster of workers beside Kafka Connect 4.4 workers: failover
            after kill -9, a joining worker, REST writes through a
            follower, throughput with 1 and 2 workers
  rest      a burst of concurrent connector creates against one worker,
            beside Kafka Connect 4.4: answer latency, /health, time until
            every connector runs
  many      10, 100, 1000 connectors on one worker or a cluster, each
            plugin.isolation, beside Kafka Connect 4.4: memory (PSS, RSS),
            time until all run, idle CPU, status latency, and on a cluster
            the time to run everything again after a worker's SIGKILL
  mirror    MirrorMaker 2 replication of 1M 1 KiB records between two
            brokers, Tributary's mirror beside Kafka's connect-mirror on
            Kafka Connect 4.4: records/s, CPU-s per million, replication
            latency p50/p99

Run 'tributary-bench <benchmark> --help' (broker, connect, cluster, rest, many, mirror)
for what each measures and its flags.
`

const benchHelp = `Usage: tributary-bench broker [flags]

Runs the same franz-go producer and consumer, in one run and all on
127.0.0.1, against each target in turn:

  tributary      Tributary's broker in-process (fsync, group-committed, before
                 acking acks=all)
  kfake-memory   franz-go's kfake, one broker, in memory
  kfake-sync     kfake with DataDir and SyncWrites (fsync every batch)
  kafka          Apache Kafka 4.4 (KRaft, one node) with its defaults
                 (flushing left to the page cache)
  kafka-durable  Apache Kafka 4.4 with log.flush.interval.messages=1

and, only when named in --targets, the cost of security:

  tributary-tls       Tributary's broker on an SSL listener
  tributary-sasl-ssl  Tributary's broker on a SASL_SSL listener, SCRAM-SHA-512
  kafka-sasl-ssl      Apache Kafka 4.4 on a SASL_SSL listener, SCRAM-SHA-512

Each target is started once. For every record size x partition count it
creates fresh topics, warms up (produce and read back a separate topic),
then, --runs times on a new topic each, produces N records with acks=all and
the idempotent producer (franz-go defaults: linger 10ms, 1 MB batches, but
no compression unless --compression; random values, no keys), timed from
the first Produce to the end of Flush, and reads all N back from the start
with a new client, verifying count, per-partition order and offsets. It
prints the median run's records/s and MB/s (10^6 bytes of record values) per
target and the ratios behind the broker's goals:

  produce  tributary / kfake-sync     >= 1.5
  produce  tributary / kafka-durable  >= 1.0
  consume  tributary / kfake-memory   >= 1.0

Consumer groups (--groups, on by default; on the tributary, kfake-memory and
kafka targets, whichever are selected): 3 franz-go members (kgo.ConsumerGroup,
default cooperative-sticky balancer, autocommit) in one group on a
6-partition topic of 100 B records, session.timeout.ms=6000 and
heartbeat.interval.ms=1000; group.initial.rebalance.delay.ms is 0 on
tributary (broker.Config.GroupInitialRebalanceDelay) and kafka (server
property); kfake has no such delay.

  group consume  --group-records records are produced (round robin over the
                 partitions), then read from the start by a new group,
                 --runs times: the 3 members join with fetching paused and,
                 once each owns 2 partitions, resume; records/s from then
                 to the last record (the join time is shown apart)
  rebalance      --rebalance-runs times, on a new group consuming a
                 continuous stream (600 records/s): one member runs in a
                 child process (this executable again) and is SIGKILLed once
                 the group is stable, so it sends no LeaveGroup; measured is
                 the time from the kill until the 2 survivors received
                 records from every partition it owned (median, min, max).
                 Goal: every run within 8s (session timeout 6s).

Apache Kafka runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+, with Kafka's own start-script heap and GC
settings (-Xmx1g, G1). Without java or the jars those targets are reported
as skipped; --no-kafka leaves them out. Progress goes to stderr, one line per
step; the tables (or JSON) go to stdout.

Flags:
  --records N          records per run (default: 256 MiB of values, at
                       most 1000000: 1000000 x 100 B, 262144 x 1 KiB)
  --runs N             measured runs per workload and target, each on a
                       fresh topic; the tables show the median run and the
                       spread (max-min)/median (default 3)
  --warmup N           warm-up records per workload (default: N/10, at most
                       50000; 0 disables)
  --sizes LIST         record value sizes in bytes, comma-separated; k/KiB
                       suffix allowed (default 100,1024; minimum 8)
  --partitions LIST    partition counts, comma-separated (default 1,6)
  --txn N              transactional workloads: the producer has a
                       transactional id and commits every N records, the
                       consumer reads read_committed; the goals become
                       produce and consume tributary / kafka-durable >= 1.5
                       (issue 22). Example: --txn 1000 --sizes 1KiB
                       --partitions 6 --groups=false --targets
                       tributary,kafka,kafka-durable
  --compression C      producer batch compression: none, snappy (franz-go's
                       default), lz4, zstd or gzip (default none; values
                       are random, so compression only costs CPU)
  --targets LIST       targets to run, comma-separated, in the order above
                       (default all: every target but the secured ones)
  --no-kafka           leave out kafka and kafka-durable
  --dir DIR            where data directories are created (default $TMPDIR
                       or /tmp); removed afterwards
  --timeout DURATION   limit for each produce or consume phase (default 5m)
  --groups             run the consumer group benchmarks (default true;
                       --groups=false skips them)
  --only-groups        run only the consumer group benchmarks, not the
                       produce/consume workloads
  --group-records N    records of the group consume run (default 2000000)
  --rebalance-runs N   repetitions of the rebalance run per target (default
                       3; 0 skips it)
  --rebalance-timeout DURATION
                       how long to wait for the survivors after a kill
                       before the run counts as failed (default 1m)
  --json               print the report as JSON instead of tables
  --cpuprofile FILE    write a CPU profile of this process (client, the
                       in-process tributary and kfake brokers; not Apache
                       Kafka) for 'go tool pprof'; best with one --targets
  -h, --help           show this help

Exit status: 0 when every selected target ran every workload and group run
(whether or not the goals were met), 1 when a target failed or was skipped, 2 on bad flags.

Examples:
  tributary-bench broker
  tributary-bench broker --records 20000 --no-kafka
  tributary-bench broker --sizes 100 --partitions 6 --targets tributary,kfake-sync --json
  tributary-bench broker --only-groups --targets tributary,kfake-memory,kafka
`

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if bench.IsMemberChild() { // the rebalance run's member child
		return bench.RunMemberChild(ctx, stdout, stderr)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, benchOverview)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "connect" {
		return runBenchConnect(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "cluster" {
		return runBenchCluster(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "rest" {
		return runBenchREST(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "many" {
		return runBenchMany(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "mirror" {
		return runBenchMirror(ctx, args[1:], stdout, stderr)
	}
	if args[0] != "broker" {
		fmt.Fprintf(stderr, "tributary-bench: unknown benchmark %q; 'broker', 'connect', 'cluster', 'rest', 'many' and 'mirror' exist (see --help)\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet("bench broker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		records, warmup, runs           int
		sizes, partitions, targets, dir string
		compression                     string
		noKafka, asJSON                 bool
		txnEvery                        int
		cpuProfile                      string
		timeout                         time.Duration
		groups, onlyGroups              bool
		groupRecords, rebalanceRuns     int
		rebalanceTimeout                time.Duration
	)
	fs.BoolVar(&groups, "groups", true, "")
	fs.BoolVar(&onlyGroups, "only-groups", false, "")
	fs.IntVar(&groupRecords, "group-records", bench.DefaultGroupRecords, "")
	fs.IntVar(&rebalanceRuns, "rebalance-runs", bench.DefaultRebalanceRuns, "")
	fs.DurationVar(&rebalanceTimeout, "rebalance-timeout", time.Minute, "")
	fs.IntVar(&records, "records", 0, "")
	fs.IntVar(&txnEvery, "txn", 0, "")
	fs.IntVar(&warmup, "warmup", -1, "")
	fs.IntVar(&runs, "runs", bench.DefaultRuns, "")
	fs.StringVar(&sizes, "sizes", "100,1024", "")
	fs.StringVar(&partitions, "partitions", "1,6", "")
	fs.StringVar(&targets, "targets", "all", "")
	fs.StringVar(&dir, "dir", "", "")
	fs.BoolVar(&noKafka, "no-kafka", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "")
	fs.StringVar(&compression, "compression", "none", "")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "")
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, benchHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary-bench broker: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tributary-bench broker: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "tributary-bench broker: %v (see --help)\n", err)
		return 2
	}
	if runs < 1 {
		return usageErr(fmt.Errorf("--runs must be at least 1"))
	}
	if onlyGroups && !groups {
		return usageErr(fmt.Errorf("--only-groups with --groups=false leaves nothing to run"))
	}
	if groupRecords < 1 {
		return usageErr(fmt.Errorf("--group-records must be at least 1"))
	}
	if rebalanceRuns < 0 {
		return usageErr(fmt.Errorf("--rebalance-runs must not be negative"))
	}
	if rebalanceTimeout <= 0 {
		return usageErr(fmt.Errorf("--rebalance-timeout must be positive"))
	}
	if txnEvery < 0 {
		return usageErr(fmt.Errorf("--txn must not be negative"))
	}
	o := bench.Options{Records: records, Warmup: warmup, Runs: runs, Compression: compression, Dir: dir, PhaseTimeout: timeout, Progress: stderr, TxnEvery: txnEvery,
		Groups: groups || onlyGroups, NoWorkloads: onlyGroups, GroupRecords: groupRecords, RebalanceRuns: rebalanceRuns,
		RebalanceTimeout: rebalanceTimeout, MemberArgs: []string{"broker"}}
	var err error
	if o.Sizes, err = parseIntList(sizes, true); err != nil {
		return usageErr(fmt.Errorf("--sizes: %w", err))
	}
	if o.Partitions, err = parseIntList(partitions, false); err != nil {
		return usageErr(fmt.Errorf("--partitions: %w", err))
	}
	if o.Targets, err = bench.ParseTargets(targets); err != nil {
		return usageErr(fmt.Errorf("--targets: %w", err))
	}
	if noKafka {
		var kept []bench.Target
		for _, t := range o.Targets {
			if !t.IsApacheKafka() {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			return usageErr(fmt.Errorf("--no-kafka leaves no targets"))
		}
		o.Targets = kept
	}
	if err := o.Validate(); err != nil {
		return usageErr(err)
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "tributary-bench broker: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "tributary-bench broker: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := bench.Run(ctx, o)
	if rep == nil {
		fmt.Fprintf(stderr, "tributary-bench broker: %v\n", err)
		return 1
	}
	if !writeReport(ctx, "tributary-bench broker", rep, asJSON, stdout, stderr) {
		return 1
	}
	if len(rep.TargetErrors) > 0 {
		return 1
	}
	if rep.Groups != nil && rep.Groups.Failed() {
		return 1
	}
	for _, w := range rep.Workloads {
		for _, r := range w.Results {
			if r.Error != "" {
				return 1
			}
		}
	}
	return 0
}

// parseIntList parses "100,1024" (and, with sizes, "1k" or "1KiB" for 1024).
func parseIntList(s string, sizes bool) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mul := 1
		if sizes {
			lf := strings.ToLower(f)
			for _, suf := range []string{"kib", "kb", "k"} {
				if strings.HasSuffix(lf, suf) {
					f, mul = f[:len(f)-len(suf)], 1024
					break
				}
			}
			f = strings.TrimSuffix(strings.TrimSuffix(f, "B"), "b")
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, n*mul)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

// reportWriter prints a benchmark's report.
type reportWriter interface {
	WriteJSON(io.Writer) error
	WriteText(io.Writer) error
}

// benchReport is a benchmark's report.
type benchReport interface {
	reportWriter
	// Failed reports whether a measurement failed.
	Failed() bool
}

// parseFlags parses args into fs; done says the command ends with code:
// 0 after printing help to stdout, 2 on a bad flag or an argument.
func parseFlags(fs *flag.FlagSet, args []string, name, help string, stdout, stderr io.Writer) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, help)
			return 0, true
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", name, err)
		return 2, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", name, fs.Arg(0))
		return 2, true
	}
	return 0, false
}

// runAndReport builds tributary when exe is empty, runs the benchmark on
// it and prints its report; the exit status is 1 when the build, the
// benchmark or a measurement failed, or the run was interrupted.
func runAndReport(ctx context.Context, name, exe string, asJSON bool, stdout, stderr io.Writer, run func(exe string) (benchReport, error)) int {
	if exe == "" {
		built, cleanup, err := buildTributary(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v (or pass --tributary PATH)\n", name, err)
			return 1
		}
		defer cleanup()
		exe = built
	}
	rep, err := run(exe)
	if rep == nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if !writeReport(ctx, name, rep, asJSON, stdout, stderr) || rep.Failed() {
		return 1
	}
	return 0
}

// writeReport prints rep (as JSON or tables) and reports whether it is
// complete: false after a write error or an interruption (said on stderr
// under the command's name).
func writeReport(ctx context.Context, name string, rep reportWriter, asJSON bool, stdout, stderr io.Writer) bool {
	var err error
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return false
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: interrupted; the report is partial\n", name)
		return false
	}
	return true
}

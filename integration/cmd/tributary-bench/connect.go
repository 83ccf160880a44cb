package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/integration/bench"
)

const benchConnectHelp = `Usage: tributary-bench connect [flags]

Benchmarks the Connect worker, in one run, on one bundled broker (started in
this process, fsync before acking as always), all on 127.0.0.1:

  (a) Tributary end to end: a 'tributary worker' child process (this
      executable) created over its REST API with a Datagen source
      (dev.tributary.connect.datagen.DatagenConnector, payload.bytes=900,
      schemaless JsonConverter values of about 1 KiB, StringConverter keys)
      writing --records records to a 1-partition topic, and a DiscardSink
      (dev.tributary.connect.discard.DiscardSinkConnector) reading it; one
      task each; each connector (instance and task) in a plugin process
      of its own, as the worker always runs connectors.
  (b) Side by side: FileStreamSource → topic → FileStreamSink, --file-records
      lines of 1 KiB (StringConverter keys and values, one task each), on a
      fresh Tributary worker process and on Kafka Connect 4.4 (distributed
      mode, connect-distributed.sh's heap -Xms256M -Xmx2G and G1), both
      against the same broker, one after the other.
  (c) With --pipelines smt, side by side as (b): lines of 1 KiB JSON
      objects, and the sink reads them with a schemaless JsonConverter and a
      chain of three transformations: InsertField$Value (a topic field and
      a static one), ReplaceField$Value (one field excluded, two renamed),
      RegexRouter (the topic renamed).
  (d) With --pipelines metrics, the cost of the metrics: the FileStream
      pipeline of (b) on Tributary alone, --rounds times over, on a worker
      built without metrics (--baseline or --baseline-rev), on this one
      with nobody scraping it, and on this one with GET /metrics every
      --scrape-interval (as Prometheus would; the scraper's own CPU is not
      counted), in a rotating order, each run on a fresh worker process;
      the medians of the CPU per record are compared (goal: at most 3 %
      more with metrics scraped every second than without metrics).
  (e) With --pipelines eos, exactly-once sources (KIP-618): (a) on a worker
      with exactly.once.source.support=enabled and the source with
      exactly.once.support=required, beside (a) without (goal: at least
      80 % of its rate); and (b) with exactly-once on both runtimes (goal:
      Tributary at least 3x Kafka Connect's rate).

Measured, per pipeline:
  CPU/record  user + system CPU time of the runtime's processes (the
              worker and its plugin processes; the JVM) from the
              connectors' creation to the last commit, per record
  records/s   at the sink: the consumer group connect-<sink>'s committed
              offsets (offset.flush.interval.ms=1000 on both runtimes),
              sampled every 100 ms, from the first commit to the commit
              covering every record; the source side's rate (topic end
              offsets) is in --json
  ready       process start to GET /health 200 (Tributary); for Kafka
              Connect, process start to its REST API answering
  RSS         VmRSS from /proc/<pid>/status: the worker process (the JVM
              for Kafka Connect) and, for Tributary, the sum over its plugin
              child processes, reported separately and summed; idle is read
              2 s after ready with no connectors, load is the median of the
              samples while records flow, peak the highest

Targets (a table says met / not met):
  end to end datagen → discard        >= 100,000 records/s
  idle RSS, worker + plugins          <= 60 MB
  ready                               <= 1 s
  FileStream records/s                >= 2x Kafka Connect's
  FileStream RSS under load           <= 1/5 of Kafka Connect's
  FileStream+3 SMTs records/s         >= 3x Kafka Connect's
  metrics, scraped every 1 s          <= 3% more CPU per record than none

Kafka Connect runs from the jars fetched by integration/fetch-jars.sh (or
$TRIBUTARY_JARS) with Java 17+; without them it is reported as skipped
(not a failure). Progress goes to stderr; the tables (or JSON) to stdout.

Flags:
  --records N          datagen → discard records (default 2000000)
  --file-records N     FileStream lines (default 500000; the input file is
                       N KiB)
  --pipelines LIST     which pipelines to run, of e2e (a), file (b), smt
                       (c), metrics (d) and eos (e) (default e2e,file)
  --baseline PATH      (d) a tributary binary built without metrics, the
                       connectors' executables beside it
  --baseline-rev REV   (d) build that binary from git revision REV of this
                       repository (git archive, then go build ./cmd/...),
                       e.g. the commit before metrics were added
  --rounds N           (d) rounds of the three runs (default 5)
  --scrape-interval D  (d) how often the scraped variant is scraped
                       (default 1s)
  --no-kafka-connect   leave out Kafka Connect
  --dir DIR            where working directories are created (default
                       $TMPDIR or /tmp); removed afterwards
  --timeout DURATION   limit for each pipeline run (default 5m)
  --tributary PATH     the tributary binary the workers run (default: built
                       from this checkout with go build)
  --json               print the report as JSON instead of tables
  -h, --help           show this help

Exit status: 0 when every pipeline ran (goals met or not, Kafka Connect
skipped or not), 1 when one failed, 2 on bad flags.

Examples:
  tributary-bench connect
  tributary-bench connect --records 500000 --file-records 100000
  tributary-bench connect --no-kafka-connect --json
  tributary-bench connect --pipelines smt --file-records 200000
  tributary-bench connect --pipelines metrics --baseline-rev 3c2f895
`

func runBenchConnect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench connect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		records, fileRecords int
		noKC, asJSON         bool
		dir, exe, pipelines  string
		baseline, baseRev    string
		rounds               int
		timeout, scrapeEvery time.Duration
	)
	fs.StringVar(&baseline, "baseline", "", "")
	fs.StringVar(&baseRev, "baseline-rev", "", "")
	fs.IntVar(&rounds, "rounds", bench.DefaultRounds, "")
	fs.DurationVar(&scrapeEvery, "scrape-interval", time.Second, "")
	fs.StringVar(&exe, "tributary", "", "")
	fs.IntVar(&records, "records", bench.DefaultConnectRecords, "")
	fs.IntVar(&fileRecords, "file-records", bench.DefaultConnectFileRecords, "")
	fs.BoolVar(&noKC, "no-kafka-connect", false, "")
	fs.StringVar(&pipelines, "pipelines", "e2e,file", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&dir, "dir", "", "")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, benchConnectHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary-bench connect: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tributary-bench connect: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	if records < 1 || fileRecords < 1 {
		fmt.Fprintln(stderr, "tributary-bench connect: --records and --file-records must be at least 1 (see --help)")
		return 2
	}
	if rounds < 1 || scrapeEvery <= 0 {
		fmt.Fprintln(stderr, "tributary-bench connect: --rounds must be at least 1 and --scrape-interval positive (see --help)")
		return 2
	}
	if baseline != "" && baseRev != "" {
		fmt.Fprintln(stderr, "tributary-bench connect: --baseline and --baseline-rev are exclusive (see --help)")
		return 2
	}
	if timeout <= 0 {
		fmt.Fprintln(stderr, "tributary-bench connect: --timeout must be positive (see --help)")
		return 2
	}
	var pl []string
	for _, p := range strings.Split(pipelines, ",") {
		switch p = strings.TrimSpace(p); p {
		case bench.PipelineE2E, bench.PipelineFile, bench.PipelineSMT, bench.PipelineMetrics, bench.PipelineEOS:
			pl = append(pl, p)
		default:
			fmt.Fprintf(stderr, "tributary-bench connect: --pipelines: unknown pipeline %q (e2e, file, smt, metrics, eos; see --help)\n", p)
			return 2
		}
	}
	if exe == "" {
		built, cleanup, err := buildTributary(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tributary-bench connect: %v (or pass --tributary PATH)\n", err)
			return 1
		}
		defer cleanup()
		exe = built
	}
	if baseRev != "" {
		built, cleanup, err := buildTributaryAt(ctx, baseRev, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "tributary-bench connect: --baseline-rev: %v\n", err)
			return 1
		}
		defer cleanup()
		baseline = built
	}
	rep, err := bench.RunConnect(ctx, bench.ConnectOptions{Exe: exe, Records: records, FileRecords: fileRecords,
		NoKafkaConnect: noKC, Pipelines: pl, Dir: dir, Timeout: timeout, Progress: stderr,
		Baseline: baseline, Rounds: rounds, ScrapeInterval: scrapeEvery})
	if rep == nil {
		fmt.Fprintf(stderr, "tributary-bench connect: %v\n", err)
		return 1
	}
	if !writeReport(ctx, "tributary-bench connect", rep, asJSON, stdout, stderr) {
		return 1
	}
	if rep.Failed() {
		return 1
	}
	return 0
}

// buildTributary builds cmd/tributary, and beside it the first-party
// connectors' executables (cmd/tributary-connector-*, where its workers find
// them), into a temporary directory, for the workers of the connect
// benchmark; cleanup removes it.
func buildTributary(ctx context.Context, progress io.Writer) (exe string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "tributary-bench-")
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintln(progress, "building cmd/... (tributary and the connectors' executables) for the workers (go build; --tributary PATH skips this)")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "github.com/tributary-dev/tributary/cmd/...")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build cmd/...: %w\n%s", err, out)
	}
	return filepath.Join(dir, "tributary"), func() { os.RemoveAll(dir) }, nil
}

// buildTributaryAt builds cmd/... as of git revision rev of this
// repository (its tree exported with git archive, so that no checkout
// changes) into a temporary directory; cleanup removes it.
func buildTributaryAt(ctx context.Context, rev string, progress io.Writer) (exe string, cleanup func(), err error) {
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", nil, fmt.Errorf("git rev-parse --show-toplevel: %w (run from the repository)", err)
	}
	dir, err := os.MkdirTemp("", "tributary-bench-baseline-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		cleanup()
		return "", nil, err
	}
	fmt.Fprintf(progress, "building cmd/... as of %s for the baseline (git archive | tar -x; go build)\n", rev)
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(top)), rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("git archive %s: %w\n%s", rev, err, out)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "./cmd/...")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build ./cmd/... at %s: %w\n%s", rev, err, out)
	}
	return filepath.Join(dir, "tributary"), cleanup, nil
}

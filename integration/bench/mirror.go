package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// Mirror benchmark defaults (issue 34: 1M records of 1 KiB).
const (
	DefaultMirrorRecords        = 1_000_000
	DefaultMirrorSize           = 1024
	DefaultMirrorPartitions     = 4
	DefaultMirrorTasks          = 2
	DefaultMirrorLatencyRecords = 20_000
	DefaultMirrorLatencyRate    = 2_000
	// TargetMirrorCPURatio is the goal: Tributary's records per CPU-second
	// at least 3x MirrorMaker 2's.
	TargetMirrorCPURatio = 3.0
)

// The mirror benchmark's runtimes.
const (
	MirrorTributary    = "tributary"
	MirrorKafkaConnect = "kafka-connect"
)

// mirrorConverters are the converters of MirrorMaker 2's connectors (the
// dedicated driver forces them; on a Connect cluster each connector sets
// them, Tributary's worker forces them).
var mirrorConverters = map[string]string{
	"key.converter":    "org.apache.kafka.connect.converters.ByteArrayConverter",
	"value.converter":  "org.apache.kafka.connect.converters.ByteArrayConverter",
	"header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
}

// MirrorOptions configures RunMirror.
type MirrorOptions struct {
	// Exe is the tributary binary started as `Exe worker`.
	Exe string
	// Records is the backlog each runtime copies (default
	// DefaultMirrorRecords), of Size bytes each (DefaultMirrorSize), on a
	// topic of Partitions partitions, with tasks.max Tasks.
	Records, Size, Partitions, Tasks int
	// LatencyRecords are then produced at LatencyRate records/s while
	// the mirror runs, for the replication latency.
	LatencyRecords, LatencyRate int
	// Runtimes to run, in order (default kafka-connect, tributary).
	Runtimes []string
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds each runtime's run.
	Timeout  time.Duration
	Progress io.Writer
}

// MirrorResult is one runtime's run.
type MirrorResult struct {
	Runtime string `json:"runtime"`
	// Records copied in the backlog phase, in Seconds from the first to
	// the last record's arrival at the target consumer.
	Records       int     `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	// CPUSeconds is the user+system CPU of every process of the mirror
	// (Tributary: the worker and its plugin processes; Kafka Connect: its
	// JVM) over the same span.
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUPerMillion       float64 `json:"cpu_seconds_per_million"`
	RecordsPerCPUSecond float64 `json:"records_per_cpu_second"`
	Processes           int     `json:"processes"`
	// Replication latency of the paced phase: arrival at the target
	// consumer minus the record's timestamp (set by the producer).
	LatencyRecords int     `json:"latency_records"`
	LatencyP50Ms   float64 `json:"latency_p50_ms"`
	LatencyP99Ms   float64 `json:"latency_p99_ms"`
	LatencyMaxMs   float64 `json:"latency_max_ms"`
	// StartSeconds is from the connectors' creation to the first record
	// at the target.
	StartSeconds float64 `json:"start_seconds"`
	Skipped      string  `json:"skipped,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// MirrorReport is the outcome of RunMirror.
type MirrorReport struct {
	Host       Host            `json:"host"`
	Broker     string          `json:"broker"`
	Records    int             `json:"records"`
	Size       int             `json:"size"`
	Partitions int             `json:"partitions"`
	Tasks      int             `json:"tasks"`
	Results    []*MirrorResult `json:"results"`
	// CPURatio is Tributary's records per CPU-second over Kafka
	// Connect's (0 unless both ran).
	CPURatio float64 `json:"cpu_ratio"`
	Elapsed  float64 `json:"elapsed_seconds"`
}

// Failed reports whether a run failed (a skipped Kafka Connect is not a
// failure).
func (r *MirrorReport) Failed() bool {
	return slices.ContainsFunc(r.Results, func(x *MirrorResult) bool { return x.Error != "" })
}

func (r *MirrorReport) find(runtime string) *MirrorResult {
	for _, x := range r.Results {
		if x.Runtime == runtime && x.Error == "" && x.Skipped == "" {
			return x
		}
	}
	return nil
}

// RunMirror replicates, for each runtime in turn, a backlog of Records
// records from a source broker to a target broker with the three
// MirrorMaker 2 connectors (Tributary's, or Kafka's connect-mirror in
// Kafka Connect 4.4), then a paced stream for the latency. The brokers are
// bundled brokers in this process: a source shared by the runs (a topic of
// its own for each) and a fresh target for each run, whose Kafka the
// mirroring worker uses.
func RunMirror(ctx context.Context, o MirrorOptions) (*MirrorReport, error) {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Records, DefaultMirrorRecords)
	def(&o.Size, DefaultMirrorSize)
	def(&o.Partitions, DefaultMirrorPartitions)
	def(&o.Tasks, DefaultMirrorTasks)
	def(&o.LatencyRecords, DefaultMirrorLatencyRecords)
	def(&o.LatencyRate, DefaultMirrorLatencyRate)
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if len(o.Runtimes) == 0 {
		o.Runtimes = []string{MirrorKafkaConnect, MirrorTributary}
	}
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "bench mirror: "+format+"\n", args...)
		}
	}
	begin := time.Now()
	rep := &MirrorReport{Host: hostInfo(), Broker: "tributary (bundled brokers, in this process)",
		Records: o.Records, Size: o.Size, Partitions: o.Partitions, Tasks: o.Tasks}
	src, err := start(ctx, Tributary, o.Dir)
	if err != nil {
		return nil, fmt.Errorf("source broker: %w", err)
	}
	defer src.close()
	work, err := os.MkdirTemp(o.Dir, "tributary-bench-mirror-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	for _, rt := range o.Runtimes {
		res := &MirrorResult{Runtime: rt}
		rep.Results = append(rep.Results, res)
		rctx, cancel := context.WithTimeout(ctx, o.Timeout)
		err := runMirrorOnce(rctx, o, logf, src.bootstrap, filepath.Join(work, rt), res)
		cancel()
		switch {
		case errors.Is(err, harness.ErrUnavailable):
			res.Skipped = err.Error()
		case err != nil:
			res.Error = err.Error()
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	if t, k := rep.find(MirrorTributary), rep.find(MirrorKafkaConnect); t != nil && k != nil && k.RecordsPerCPUSecond > 0 {
		rep.CPURatio = t.RecordsPerCPUSecond / k.RecordsPerCPUSecond
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, nil
}

// runMirrorOnce is one runtime's run, mirroring the topic bench-<runtime>
// of the source at srcAddr (cluster alias A) to a new target (alias B).
func runMirrorOnce(ctx context.Context, o MirrorOptions, logf func(string, ...any), srcAddr, dir string, res *MirrorResult) error {
	topic := "bench-" + res.Runtime
	logf("%s: producing %d records of %d bytes to %s (%d partitions)", res.Runtime, o.Records, o.Size, topic, o.Partitions)
	if err := createTopics(ctx, srcAddr, int32(o.Partitions), []string{topic}); err != nil {
		return err
	}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(srcAddr), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer pcl.Close()
	if _, err := produce(ctx, pcl, topic, o.Size, o.Records, 0); err != nil {
		return fmt.Errorf("produce the backlog: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tgt, err := start(ctx, Tributary, dir)
	if err != nil {
		return fmt.Errorf("target broker: %w", err)
	}
	defer tgt.close()

	var n *node
	switch res.Runtime {
	case MirrorTributary:
		n, err = startTributaryNode(ctx, o.Exe, filepath.Join(dir, "worker"), tgt.bootstrap, "bench-mirror", nil)
	case MirrorKafkaConnect:
		n, err = startKafkaConnectNode(ctx, filepath.Join(dir, "connect"), tgt.bootstrap, "bench-mirror",
			map[string]string{"offset.flush.interval.ms": "1000"})
	default:
		return fmt.Errorf("unknown runtime %q", res.Runtime)
	}
	if err != nil {
		return err
	}
	defer n.stop()
	cpu := func() float64 { return cpuSeconds(n.pid, true) }

	// The target consumer, subscribed before the remote topic exists.
	remote := "A." + topic
	ccl, err := kgo.NewClient(kgo.SeedBrokers(tgt.bootstrap), kgo.ConsumeTopics(remote),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return err
	}
	defer ccl.Close()

	common := map[string]string{
		"source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": srcAddr, "target.cluster.bootstrap.servers": tgt.bootstrap,
		"topics": topic, "tasks.max": fmt.Sprint(o.Tasks),
		"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
	}
	maps.Copy(common, mirrorConverters)
	created := time.Now()
	for name, class := range map[string]string{"mirror-source": "MirrorSourceConnector", "mirror-checkpoint": "MirrorCheckpointConnector", "mirror-heartbeat": "MirrorHeartbeatConnector"} {
		cfg := maps.Clone(common)
		cfg["connector.class"] = "org.apache.kafka.connect.mirror." + class
		if err := putConnector(ctx, n.url, name, cfg); err != nil {
			return err
		}
	}
	logf("%s: connectors created on %s (pid %d); copying", res.Runtime, n.url, n.pid)

	var (
		got          int
		first, last  time.Time
		cpu0, cpu1   float64
		lat          []float64
		producerDone = make(chan error, 1)
		paced        bool
	)
	total := o.Records + o.LatencyRecords
	for got < total {
		if ctx.Err() != nil {
			return fmt.Errorf("%d of %d records at the target: %w", got, total, ctx.Err())
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := ccl.PollFetches(pctx)
		cancel()
		now := time.Now()
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if got > o.Records {
				lat = append(lat, float64(now.Sub(r.Timestamp))/float64(time.Millisecond))
			}
		})
		if got > 0 && first.IsZero() {
			first, cpu0 = now, cpu()
			res.StartSeconds = now.Sub(created).Seconds()
			logf("%s: first record after %.1f s", res.Runtime, res.StartSeconds)
		}
		if got >= o.Records && last.IsZero() {
			last, cpu1 = now, cpu()
			res.Processes = 1 + len(descendants(n.pid))
			logf("%s: %d records in %.1f s; the paced phase (%d records at %d/s)", res.Runtime, got, last.Sub(first).Seconds(), o.LatencyRecords, o.LatencyRate)
		}
		if !last.IsZero() && !paced {
			paced = true
			go func() { producerDone <- producePaced(ctx, srcAddr, topic, o.Size, o.LatencyRecords, o.LatencyRate) }()
		}
		if msg := failedTask(ctx, n.url, "mirror-source"); msg != "" && fs.NumRecords() == 0 {
			return errors.New(msg)
		}
	}
	if err := <-producerDone; err != nil {
		return fmt.Errorf("paced producer: %w", err)
	}
	if got != total {
		return fmt.Errorf("%d records at the target, %d produced", got, total)
	}
	res.Records = o.Records
	res.Seconds = last.Sub(first).Seconds()
	res.RecordsPerSec = float64(o.Records) / res.Seconds
	res.CPUSeconds = cpu1 - cpu0
	res.CPUPerMillion = res.CPUSeconds * 1e6 / float64(o.Records)
	if res.CPUSeconds > 0 {
		res.RecordsPerCPUSecond = float64(o.Records) / res.CPUSeconds
	}
	slices.Sort(lat)
	res.LatencyRecords = len(lat)
	res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyMaxMs = percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 1)
	logf("%s: %.0f records/s, %.2f CPU-s per million, latency p50 %.1f ms p99 %.1f ms", res.Runtime, res.RecordsPerSec, res.CPUPerMillion, res.LatencyP50Ms, res.LatencyP99Ms)
	return nil
}

// producePaced produces n records of size bytes to topic at rate
// records/s (in 10 ms steps), each stamped with its produce time, with no
// linger.
func producePaced(ctx context.Context, addr, topic string, size, n, rate int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	value := make([]byte, size)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	begin := time.Now()
	errc := make(chan error, 1)
	sent := 0
	for sent < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return err
		case now := <-tick.C:
			due := min(n, int(now.Sub(begin).Seconds()*float64(rate)))
			for ; sent < due; sent++ {
				cl.Produce(ctx, &kgo.Record{Value: value, Timestamp: time.Now()}, func(_ *kgo.Record, err error) {
					if err != nil {
						select {
						case errc <- err:
						default:
						}
					}
				})
			}
		}
	}
	return cl.Flush(ctx)
}

// WriteText prints the results side by side and the goal.
func (r *MirrorReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "MirrorMaker 2 replication: %s/%s, %d CPUs, %s; brokers: %s\n", r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, r.Broker)
	fmt.Fprintf(out, "%d records of %d bytes, %d partitions, tasks.max=%d\n\n", r.Records, r.Size, r.Partitions, r.Tasks)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "runtime\trecords\tseconds\trecords/s\tCPU s\tCPU s/1M\trecords/CPU-s\tprocesses\tlatency p50 ms\tp99 ms\tmax ms\tfirst record after s\t")
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\tskipped: %s\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, firstLines(x.Skipped, 1))
		case x.Error != "":
			fmt.Fprintf(w, "%s\tfailed: %s\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, firstLines(x.Error, 1))
		default:
			fmt.Fprintf(w, "%s\t%d\t%.1f\t%.0f\t%.1f\t%.1f\t%.0f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", x.Runtime, x.Records, x.Seconds, x.RecordsPerSec,
				x.CPUSeconds, x.CPUPerMillion, x.RecordsPerCPUSecond, x.Processes, x.LatencyP50Ms, x.LatencyP99Ms, x.LatencyMaxMs, x.StartSeconds)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if t, k := r.find(MirrorTributary), r.find(MirrorKafkaConnect); t != nil && k != nil {
		res := "not met"
		if r.CPURatio >= TargetMirrorCPURatio {
			res = "met"
		}
		fmt.Fprintf(out, "\nrecords per CPU-second, Tributary / MirrorMaker 2: %.2fx (goal >= %.0fx: %s); records/s: %.2fx\n",
			r.CPURatio, TargetMirrorCPURatio, res, t.RecordsPerSec/k.RecordsPerSec)
	}
	fmt.Fprintf(out, "\n(%.0f s in all)\n", r.Elapsed)
	return nil
}

// WriteJSON prints the report as JSON.
func (r *MirrorReport) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

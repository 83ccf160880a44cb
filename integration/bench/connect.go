package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// Connect benchmark defaults.
const (
	DefaultConnectRecords     = 2_000_000
	DefaultConnectFileRecords = 500_000
	// ConnectPayloadBytes is datagen's payload.bytes: with the id, key,
	// amount and created fields the record value is about 1 KiB
	// (JsonConverter, schemas.enable=false).
	ConnectPayloadBytes = 900
	// ConnectLineBytes is the length of each line of the FileStream input
	// (plus the newline).
	ConnectLineBytes = 1023
)

// The pipelines of the Connect benchmark.
const (
	PipelineE2E  = "e2e"  // datagen → topic → discard, Tributary alone
	PipelineFile = "file" // FileStream → topic → FileStream, side by side
	// PipelineSMT is FileStream → topic → FileStream with JSON lines and a
	// chain of three transformations in the sink (InsertField,
	// ReplaceField, RegexRouter), side by side.
	PipelineSMT = "smt"
	// PipelineEOS is the exactly-once source pipelines (KIP-618):
	// datagen → topic → discard on a Tributary worker with
	// exactly.once.source.support disabled and enabled, and FileStream →
	// topic → FileStream with it enabled, side by side with Kafka Connect
	// 4.4's (which has no datagen).
	PipelineEOS = "eos"
)

// eosWorker is the worker setting of the exactly-once runs; eosSource
// the source connector's.
var (
	eosWorker = map[string]string{"exactly.once.source.support": "enabled"}
	eosSource = map[string]string{"exactly.once.support": "required"}
)

// SMTChain is the sink settings of PipelineSMT's transformations.
var SMTChain = map[string]string{
	"transforms":                     "insert,replace,route",
	"transforms.insert.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
	"transforms.insert.topic.field":  "source_topic",
	"transforms.insert.static.field": "pipeline",
	"transforms.insert.static.value": "bench",
	"transforms.replace.type":        "org.apache.kafka.connect.transforms.ReplaceField$Value",
	"transforms.replace.exclude":     "note",
	"transforms.replace.renames":     "name:full_name,email:contact",
	"transforms.route.type":          "org.apache.kafka.connect.transforms.RegexRouter",
	"transforms.route.regex":         "bench-(.*)",
	"transforms.route.replacement":   "lake-$1",
	"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
	"value.converter.schemas.enable": "false",
}

// ConnectOptions configures RunConnect.
type ConnectOptions struct {
	// Exe is the tributary binary started as `Exe worker`.
	Exe string
	// Records is the datagen → discard run's record count.
	Records int
	// FileRecords is the FileStream run's line count.
	FileRecords int
	// NoKafkaConnect leaves out Kafka Connect.
	NoKafkaConnect bool
	// Pipelines selects the pipelines: PipelineE2E, PipelineFile and
	// PipelineSMT (default the first two).
	Pipelines []string
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds each pipeline run.
	Timeout time.Duration
	// Baseline is a tributary binary built without metrics (the
	// connectors' executables beside it), PipelineMetrics's reference;
	// Rounds its rounds (DefaultRounds) and ScrapeInterval how often its
	// scraped variant is scraped (1 s).
	Baseline       string
	Rounds         int
	ScrapeInterval time.Duration
	Progress       io.Writer
}

// Proc is one process's memory.
type Proc struct {
	// RSSLoadMB is the median VmRSS sampled while records flowed, RSSPeakMB
	// the highest sample; RSSIdleMB was read before any connector existed
	// (for the worker) or after the run (for plugins, 0 when none remain).
	RSSIdleMB float64 `json:"rss_idle_mb"`
	RSSLoadMB float64 `json:"rss_load_mb"`
	RSSPeakMB float64 `json:"rss_peak_mb"`
	// PSSLoadMB is the median proportional set size (Pss in
	// /proc/<pid>/smaps_rollup) while records flowed: plugin processes of
	// one executable (tributary-connector-basic serves both FileStream
	// connectors) share its text pages, which a sum of RSS counts once per
	// process.
	PSSLoadMB float64 `json:"pss_load_mb"`
}

// PipelineResult is one pipeline on one runtime.
type PipelineResult struct {
	Runtime  string `json:"runtime"`
	Pipeline string `json:"pipeline"`
	Records  int64  `json:"records"`
	// RecordBytes is the mean size of a record value on the topic.
	RecordBytes   float64 `json:"record_bytes"`
	RecordsPerSec float64 `json:"records_per_sec"`
	// SourcePerSec is the rate at which the topic filled.
	SourcePerSec float64 `json:"source_records_per_sec"`
	// CPUSeconds is the user and system CPU time the runtime's processes
	// (the worker and its plugin processes; the JVM) spent from the
	// connectors' creation to the last commit; CPUMicrosPerRecord is it
	// per record moved.
	CPUSeconds         float64 `json:"cpu_seconds"`
	CPUMicrosPerRecord float64 `json:"cpu_us_per_record"`
	ReadySeconds       float64 `json:"ready_seconds"`
	// Worker is the worker process (the JVM for Kafka Connect), Plugins
	// the sum over its plugin child processes, Total their sum sampled
	// together.
	Worker  Proc   `json:"worker"`
	Plugins Proc   `json:"plugins"`
	Total   Proc   `json:"total"`
	Error   string `json:"error,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// ConnectReport is RunConnect's result.
type ConnectReport struct {
	Host        Host              `json:"host"`
	Broker      string            `json:"broker"`
	Results     []*PipelineResult `json:"results"`
	KafkaBroker string            `json:"kafka_connect_broker,omitempty"`
	// Metrics is PipelineMetrics's result, MetricsError why it failed.
	Metrics      *MetricsOverhead `json:"metrics_overhead,omitempty"`
	MetricsError string           `json:"metrics_error,omitempty"`
	Elapsed      float64          `json:"elapsed_seconds"`
}

func (r *ConnectReport) find(runtime, pipeline string) *PipelineResult {
	for _, x := range r.Results {
		if x.Runtime == runtime && x.Pipeline == pipeline && x.Error == "" && x.Skipped == "" {
			return x
		}
	}
	return nil
}

// Failed reports whether a pipeline failed (a skipped Kafka Connect is not
// a failure).
func (r *ConnectReport) Failed() bool {
	if r.MetricsError != "" {
		return true
	}
	for _, x := range r.Results {
		if x.Error != "" {
			return true
		}
	}
	return false
}

// RunConnect runs the Connect worker benchmark: on one bundled broker
// (in-process), (a) datagen → topic → DiscardSink in a Tributary worker
// process, (b) FileStreamSource → topic → FileStreamSink on a Tributary
// worker and on Kafka Connect 4.4.
func RunConnect(ctx context.Context, o ConnectOptions) (*ConnectReport, error) {
	if o.Records <= 0 {
		o.Records = DefaultConnectRecords
	}
	if o.FileRecords <= 0 {
		o.FileRecords = DefaultConnectFileRecords
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if len(o.Pipelines) == 0 {
		o.Pipelines = []string{PipelineE2E, PipelineFile}
	}
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "bench connect: "+format+"\n", args...)
		}
	}
	begin := time.Now()
	rep := &ConnectReport{Host: hostInfo(), Broker: "tributary (bundled broker, in this process)"}
	logf("starting the bundled broker")
	br, err := start(ctx, Tributary, o.Dir)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	defer br.close()
	bootstrap := br.bootstrap
	logf("broker at %s", bootstrap)
	work, err := os.MkdirTemp(o.Dir, "tributary-bench-connect-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// (a) datagen → topic → discard.
	if slices.Contains(o.Pipelines, PipelineE2E) {
		rep.Results = append(rep.Results, runE2E(ctx, o, logf, adm, bootstrap, work))
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	if slices.Contains(o.Pipelines, PipelineFile) {
		if err := runFilePipelines(ctx, o, logf, adm, bootstrap, work, rep, false); err != nil {
			return rep, err
		}
	}
	if slices.Contains(o.Pipelines, PipelineSMT) {
		if err := runFilePipelines(ctx, o, logf, adm, bootstrap, work, rep, true); err != nil {
			return rep, err
		}
	}
	if slices.Contains(o.Pipelines, PipelineEOS) {
		if err := runEOSPipelines(ctx, o, logf, adm, bootstrap, work, rep); err != nil {
			return rep, err
		}
	}
	if slices.Contains(o.Pipelines, PipelineMetrics) {
		m, err := runMetricsOverhead(ctx, o, logf, adm, bootstrap, work)
		rep.Metrics = m
		if err != nil {
			rep.MetricsError = err.Error()
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
		}
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, ctx.Err()
}

func runE2E(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, work string) *PipelineResult {
	return runTributary(ctx, o, logf, adm, bootstrap, filepath.Join(work, "e2e"), "datagen→discard", func(url string) (pipeline, error) {
		return e2ePipeline(o, "bench-e2e"), nil
	})
}

// e2ePipeline is datagen → topic → discard.
func e2ePipeline(o ConnectOptions, topic string) pipeline {
	return pipeline{
		topic: topic, n: int64(o.Records),
		source: map[string]string{"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "tasks.max": "1",
			"kafka.topic": topic, "payload.bytes": strconv.Itoa(ConnectPayloadBytes), "iterations": strconv.Itoa(o.Records),
			"batch.size": "2000", "key.converter": "org.apache.kafka.connect.storage.StringConverter",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"},
		sink: map[string]string{"connector.class": "dev.tributary.connect.discard.DiscardSinkConnector", "tasks.max": "1",
			"topics": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"},
	}
}

// runEOSPipelines runs PipelineEOS: datagen → discard with exactly-once
// support (and without, unless PipelineE2E ran it already), and FileStream
// with it on Tributary and on Kafka Connect.
func runEOSPipelines(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, work string, rep *ConnectReport) error {
	if rep.find("tributary", "datagen→discard") == nil {
		rep.Results = append(rep.Results, runE2E(ctx, o, logf, adm, bootstrap, work))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep.Results = append(rep.Results, runTributary(ctx, o, logf, adm, bootstrap, filepath.Join(work, "e2e-eos"), "datagen→discard (exactly-once)",
		func(url string) (pipeline, error) {
			p := e2ePipeline(o, "bench-e2e-eos")
			maps.Copy(p.source, eosSource)
			return p, nil
		}, eosWorker))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	input := filepath.Join(work, "eos-input.txt")
	logf("writing %d lines of %d bytes to %s", o.FileRecords, ConnectLineBytes+1, input)
	if err := writeInput(input, o.FileRecords); err != nil {
		return err
	}
	filePipeline := func(runtime, dir string) pipeline {
		topic := "bench-eos-" + runtime
		p := pipeline{topic: topic, n: int64(o.FileRecords),
			source: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
				"file": input, "topic": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
				"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
			sink: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1",
				"file": filepath.Join(dir, "output.txt"), "topics": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
				"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
		}
		maps.Copy(p.source, eosSource)
		return p
	}
	const name = "FileStream (exactly-once)"
	tdir := filepath.Join(work, "eos-tributary")
	rep.Results = append(rep.Results, runTributary(ctx, o, logf, adm, bootstrap, tdir, name, func(string) (pipeline, error) {
		return filePipeline("tributary", tdir), nil
	}, eosWorker))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kres := &PipelineResult{Runtime: "kafka-connect", Pipeline: name}
	rep.Results = append(rep.Results, kres)
	if o.NoKafkaConnect {
		kres.Skipped = "--no-kafka-connect"
	} else {
		kdir := filepath.Join(work, "eos-kafka-connect")
		runKafkaConnect(ctx, o, logf, adm, bootstrap, kdir, filePipeline("kafka-connect", kdir), kres, eosWorker)
	}
	return ctx.Err()
}

// runFilePipelines runs FileStream → topic → FileStream on Tributary and
// on Kafka Connect; with smt, JSON lines through the sink's SMTChain.
func runFilePipelines(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, work string,
	rep *ConnectReport, smt bool) error {
	name, tag := "FileStream", "file"
	if smt {
		name, tag = "FileStream+3 SMTs", "smt"
	}
	input := filepath.Join(work, tag+"-input.txt")
	logf("writing %d lines of %d bytes to %s", o.FileRecords, ConnectLineBytes+1, input)
	write := writeInput
	if smt {
		write = writeJSONInput
	}
	if err := write(input, o.FileRecords); err != nil {
		return err
	}
	filePipeline := func(runtime, dir string) pipeline {
		topic := "bench-" + tag + "-" + runtime
		p := pipeline{topic: topic, n: int64(o.FileRecords),
			source: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
				"file": input, "topic": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
				"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
			sink: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1",
				"file": filepath.Join(dir, "output.txt"), "topics": topic, "key.converter": "org.apache.kafka.connect.storage.StringConverter",
				"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
		}
		if smt {
			maps.Copy(p.sink, SMTChain)
		}
		return p
	}
	tdir := filepath.Join(work, tag+"-tributary")
	rep.Results = append(rep.Results, runTributary(ctx, o, logf, adm, bootstrap, tdir, name, func(string) (pipeline, error) {
		return filePipeline("tributary", tdir), nil
	}))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kres := &PipelineResult{Runtime: "kafka-connect", Pipeline: name}
	rep.Results = append(rep.Results, kres)
	if o.NoKafkaConnect {
		kres.Skipped = "--no-kafka-connect"
	} else {
		kdir := filepath.Join(work, tag+"-kafka-connect")
		runKafkaConnect(ctx, o, logf, adm, bootstrap, kdir, filePipeline("kafka-connect", kdir), kres)
		if kres.Skipped == "" {
			rep.KafkaBroker = rep.Broker
		}
	}
	return ctx.Err()
}

// writeJSONInput writes n JSON objects of ConnectLineBytes bytes, one a
// line: a user row whose note pads it to size.
func writeJSONInput(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < n; i++ {
		head := fmt.Sprintf(`{"id":%d,"name":"user %d","email":"user%d@example.com","age":%d,"active":%t,"score":%d.5,"note":"`,
			i, i, i, 18+i%60, i%2 == 0, i%1000)
		pad := ConnectLineBytes - len(head) - len(`"}`)
		w.WriteString(head)
		w.WriteString(strings.Repeat("n", max(pad, 0)))
		w.WriteString("\"}\n")
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type pipeline struct {
	topic        string
	n            int64
	source, sink map[string]string
}

func writeInput(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	line := make([]byte, ConnectLineBytes+1)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		for j := range ConnectLineBytes {
			line[j] = letters[rng.IntN(len(letters))]
		}
		line[ConnectLineBytes] = '\n'
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// workerProc is a `tributary worker` child process.
type workerProc struct {
	cmd   *exec.Cmd
	url   string
	ready time.Duration
	log   string
	done  chan struct{}
}

func freeListener() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startTributaryWorker(ctx context.Context, exe, dir, bootstrap string, extra ...map[string]string) (*workerProc, error) {
	addr, err := freeListener()
	if err != nil {
		return nil, err
	}
	props := workerProps(bootstrap, "bench-"+filepath.Base(dir), addr)
	for _, e := range extra {
		maps.Copy(props, e)
	}
	return startWorkerProps(ctx, exe, dir, props)
}

// workerProps are the settings of a benchmarked Tributary worker in group
// with its REST API on addr.
func workerProps(bootstrap, group, addr string) map[string]string {
	return map[string]string{
		"bootstrap.servers":                 bootstrap,
		"group.id":                          group,
		"config.storage.topic":              group + "-configs",
		"offset.storage.topic":              group + "-offsets",
		"status.storage.topic":              group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"listeners":                         "http://" + addr,
		"offset.flush.interval.ms":          "1000",
	}
}

// startWorkerProps starts `exe worker` on props (written to
// dir/worker.properties; its output appended to dir/worker.log) in its own
// process group and waits until GET /health answers 200.
func startWorkerProps(ctx context.Context, exe, dir string, props map[string]string) (*workerProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&buf, "%s=%s\n", k, props[k])
	}
	propsPath := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(propsPath, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "worker.log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "worker", propsPath)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	w := &workerProc{cmd: cmd, url: props["listeners"], log: logPath, done: make(chan struct{})}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	go func() { cmd.Wait(); lf.Close(); close(w.done) }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-w.done:
			return nil, fmt.Errorf("worker exited during start-up; see %s:\n%s", logPath, tailFile(logPath, 20))
		default:
		}
		if resp, err := client.Get(w.url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				w.ready = time.Since(begin)
				return w, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			w.stop()
			return nil, fmt.Errorf("worker not healthy after %v; see %s:\n%s", time.Since(begin).Round(time.Millisecond), logPath, tailFile(logPath, 20))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// stop sends SIGTERM and, after 15 s, kills the process group.
func (w *workerProc) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// rssMB is VmRSS of pid in MB (2^20 bytes), 0 when it is gone.
func rssMB(pid int) float64 {
	return procKB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
}

// pssMB is Pss of pid in MB, 0 when it is gone or unknown.
func pssMB(pid int) float64 {
	return procKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
}

// procKB reads a "Key: N kB" line of a /proc file as MB.
func procKB(path, key string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// descendants lists the processes below pid.
// treeCPU is the CPU time of pid and its descendants (a worker and its
// plugin processes) that are alive.
func treeCPU(pid int) time.Duration {
	total := procCPU(pid)
	for _, c := range descendants(pid) {
		total += procCPU(c)
	}
	return total
}

func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	sort.Ints(out)
	return out
}

// memSampler samples a process and its descendants.
type memSampler struct {
	pid                   int
	worker, plugins, both []float64
	// PSS samples (every 5th RSS sample: smaps_rollup is slower to read).
	pssWorker, pssPlugins, pssBoth []float64
	n                              int
	// kids are the descendants, looked up every 5th sample: finding them
	// reads every process's stat file, a cost the benchmark should not
	// add to the machine it measures every 100 ms.
	kids []int
}

func (m *memSampler) sample() {
	w := rssMB(m.pid)
	if m.n%5 == 0 {
		m.kids = descendants(m.pid)
	}
	kids := m.kids
	var p float64
	for _, c := range kids {
		p += rssMB(c)
	}
	m.worker = append(m.worker, w)
	m.plugins = append(m.plugins, p)
	m.both = append(m.both, w+p)
	if m.n%5 == 0 {
		w, p = pssMB(m.pid), 0
		for _, c := range kids {
			p += pssMB(c)
		}
		m.pssWorker = append(m.pssWorker, w)
		m.pssPlugins = append(m.pssPlugins, p)
		m.pssBoth = append(m.pssBoth, w+p)
	}
	m.n++
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func maxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

func (m *memSampler) fill(r *PipelineResult) {
	r.Worker.RSSLoadMB, r.Worker.RSSPeakMB = medianOf(m.worker), maxOf(m.worker)
	r.Plugins.RSSLoadMB, r.Plugins.RSSPeakMB = medianOf(m.plugins), maxOf(m.plugins)
	r.Total.RSSLoadMB, r.Total.RSSPeakMB = medianOf(m.both), maxOf(m.both)
	r.Worker.PSSLoadMB, r.Plugins.PSSLoadMB, r.Total.PSSLoadMB = medianOf(m.pssWorker), medianOf(m.pssPlugins), medianOf(m.pssBoth)
}

func putConnector(ctx context.Context, url, name string, cfg map[string]string) error {
	body, _ := json.Marshal(cfg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url+"/connectors/"+name+"/config", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT /connectors/%s/config: %s: %s", name, resp.Status, b)
	}
	return nil
}

// failedTask returns the trace of a FAILED connector or task, if any.
func failedTask(ctx context.Context, url, name string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/connectors/"+name+"/status", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Connector struct {
			State string `json:"state"`
			Trace string `json:"trace"`
		} `json:"connector"`
		Tasks []struct {
			State string `json:"state"`
			Trace string `json:"trace"`
		} `json:"tasks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return ""
	}
	if st.Connector.State == "FAILED" {
		return "connector " + name + " FAILED: " + firstLines(st.Connector.Trace, 5)
	}
	for i, t := range st.Tasks {
		if t.State == "FAILED" {
			return fmt.Sprintf("task %s-%d FAILED: %s", name, i, firstLines(t.Trace, 5))
		}
	}
	return ""
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// runPipeline creates the source and sink connectors at url and measures
// the sink's throughput from the consumer group connect-<sink>'s committed
// offsets: from the first commit to the one covering all p.n records. sample
// runs every poll.
func runPipeline(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, url string, p pipeline,
	sample func(), cpu func() time.Duration, res *PipelineResult) {
	cpu0 := cpu()
	name := strings.ReplaceAll(res.Runtime+"-"+res.Pipeline, "→", "-")
	src, snk := name+"-source", name+"-sink"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, p.topic); err != nil {
		res.Error = fmt.Sprintf("create topic %s: %v", p.topic, err)
		return
	}
	if err := putConnector(ctx, url, snk, p.sink); err != nil {
		res.Error = err.Error()
		return
	}
	if err := putConnector(ctx, url, src, p.source); err != nil {
		res.Error = err.Error()
		return
	}
	logf("%s %s: connectors %s and %s created; %d records to move", res.Runtime, res.Pipeline, src, snk, p.n)
	sinkGroup := "connect-" + snk
	var (
		firstT, endT, srcFirstT, srcEndT time.Time
		firstC, srcFirstC                int64
		lastLog                          = time.Now()
	)
	begin := time.Now()
	deadline := begin.Add(o.Timeout)
	for {
		if ctx.Err() != nil {
			res.Error = ctx.Err().Error()
			return
		}
		sample()
		now := time.Now()
		var committed, end int64
		if offs, err := adm.FetchOffsets(ctx, sinkGroup); err == nil {
			offs.Each(func(r kadm.OffsetResponse) {
				if r.Topic == p.topic && r.Err == nil {
					committed += r.At
				}
			})
		}
		if ends, err := adm.ListEndOffsets(ctx, p.topic); err == nil {
			ends.Each(func(l kadm.ListedOffset) { end += l.Offset })
		}
		if end > 0 && srcFirstT.IsZero() {
			srcFirstT, srcFirstC = now, end
		}
		if end >= p.n && srcEndT.IsZero() {
			srcEndT = now
		}
		if committed > 0 && firstT.IsZero() {
			firstT, firstC = now, committed
		}
		if committed >= p.n {
			endT = now
			break
		}
		if now.Sub(lastLog) >= 5*time.Second {
			lastLog = now
			logf("%s %s: %d/%d on the topic, %d committed by the sink", res.Runtime, res.Pipeline, end, p.n, committed)
			if f := failedTask(ctx, url, src); f != "" {
				res.Error = f
				return
			}
			if f := failedTask(ctx, url, snk); f != "" {
				res.Error = f
				return
			}
		}
		if now.After(deadline) {
			res.Error = fmt.Sprintf("timed out after %v: %d/%d records committed by the sink", o.Timeout, committed, p.n)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.Records = p.n
	res.CPUSeconds = (cpu() - cpu0).Seconds()
	res.CPUMicrosPerRecord = res.CPUSeconds * 1e6 / float64(p.n)
	if firstC < p.n && endT.After(firstT) {
		res.RecordsPerSec = float64(p.n-firstC) / endT.Sub(firstT).Seconds()
	} else {
		res.RecordsPerSec = float64(p.n) / endT.Sub(begin).Seconds()
	}
	if srcFirstC < p.n && srcEndT.After(srcFirstT) {
		res.SourcePerSec = float64(p.n-srcFirstC) / srcEndT.Sub(srcFirstT).Seconds()
	}
	res.RecordBytes = meanValueSize(ctx, bootstrap, p.topic)
	logf("%s %s: %d records in the sink at %s records/s (source filled the topic at %s records/s; values %.0f B)",
		res.Runtime, res.Pipeline, p.n, group(res.RecordsPerSec), group(res.SourcePerSec), res.RecordBytes)
}

// meanValueSize reads up to 1000 records of topic from the start and
// returns their mean value size.
func meanValueSize(ctx context.Context, bootstrap, topic string) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n, total int
	for n < 1000 && ctx.Err() == nil {
		cl.PollRecords(ctx, 1000-n).EachRecord(func(r *kgo.Record) { n++; total += len(r.Value) })
	}
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}

func runTributary(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, dir, pipelineName string,
	mk func(url string) (pipeline, error), workerProps ...map[string]string) *PipelineResult {
	res := &PipelineResult{Runtime: "tributary", Pipeline: pipelineName}
	logf("tributary %s: starting a worker process (%s worker)", pipelineName, o.Exe)
	w, err := startTributaryWorker(ctx, o.Exe, dir, bootstrap, workerProps...)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer func() {
		w.stop()
		logf("tributary %s: worker stopped", pipelineName)
	}()
	res.ReadySeconds = w.ready.Seconds()
	time.Sleep(2 * time.Second) // let start-up garbage settle
	idle := &memSampler{pid: w.pid()}
	idle.sample()
	res.Worker.RSSIdleMB, res.Plugins.RSSIdleMB, res.Total.RSSIdleMB = idle.worker[0], idle.plugins[0], idle.both[0]
	logf("tributary %s: ready in %v; idle RSS %.1f MB (worker) + %.1f MB (plugins)", pipelineName, w.ready.Round(time.Millisecond),
		idle.worker[0], idle.plugins[0])
	p, err := mk(w.url)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	load := &memSampler{pid: w.pid()}
	runPipeline(ctx, o, logf, adm, bootstrap, w.url, p, load.sample, func() time.Duration { return treeCPU(w.pid()) }, res)
	load.fill(res)
	return res
}

func runKafkaConnect(ctx context.Context, o ConnectOptions, logf func(string, ...any), adm *kadm.Client, bootstrap, dir string,
	p pipeline, res *PipelineResult, workerProps ...map[string]string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Error = err.Error()
		return
	}
	logf("kafka-connect %s: starting Kafka Connect 4.4 (distributed, JVM heap as connect-distributed.sh: -Xms256M -Xmx2G, G1)", res.Pipeline)
	props := map[string]string{"offset.flush.interval.ms": "1000"}
	for _, e := range workerProps {
		maps.Copy(props, e)
	}
	c, err := harness.StartKafkaConnect(ctx, dir, bootstrap, props, harness.WithConnectJVMArgs(connectJVMArgs...))
	if errors.Is(err, harness.ErrUnavailable) {
		res.Skipped = err.Error()
		logf("kafka-connect: skipped: %v", err)
		return
	}
	if err != nil {
		res.Error = err.Error()
		return
	}
	defer func() {
		c.Close()
		logf("kafka-connect: stopped")
	}()
	res.ReadySeconds = c.StartupTime().Seconds()
	pid := findPID(filepath.Join(dir, "connect-distributed.properties"))
	if pid == 0 {
		res.Error = "cannot find the Kafka Connect JVM's pid"
		return
	}
	time.Sleep(2 * time.Second)
	res.Worker.RSSIdleMB = rssMB(pid)
	res.Total.RSSIdleMB = res.Worker.RSSIdleMB
	logf("kafka-connect: ready in %v (pid %d); idle RSS %.1f MB", c.StartupTime().Round(time.Millisecond), pid, res.Worker.RSSIdleMB)
	load := &memSampler{pid: pid}
	runPipeline(ctx, o, logf, adm, bootstrap, c.URL(), p, load.sample, func() time.Duration { return procCPU(pid) }, res)
	load.fill(res)
}

// connectJVMArgs are connect-distributed.sh's heap settings and
// kafka-run-class.sh's GC settings, replacing the harness's CI defaults.
var connectJVMArgs = []string{
	"-Xms256M", "-Xmx2G",
	"-XX:-UseSerialGC", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
}

// findPID returns the process whose command line contains s.
func findPID(s string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			return p
		}
	}
	return 0
}

// Targets of the Connect benchmark.
var (
	TargetRecordsPerSec   = 100_000.0
	TargetIdleRSSMB       = 60.0
	TargetReadySeconds    = 1.0
	TargetThroughputRatio = 2.0
	TargetMemoryRatio     = 0.2
	// TargetSMTRatio is the goal of the pipeline with transformations.
	TargetSMTRatio = 3.0
	// TargetEOSRatio is exactly-once datagen → discard over at-least-once;
	// TargetEOSConnectRatio exactly-once FileStream, Tributary over Kafka
	// Connect.
	TargetEOSRatio        = 0.8
	TargetEOSConnectRatio = 3.0
)

// WriteText prints the results and the targets table.
func (r *ConnectReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "Connect worker benchmark: %s/%s, %d CPUs, %s; broker: %s\n\n", r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, r.Broker)
	if len(r.Results) > 0 {
		if err := r.writePipelines(out); err != nil {
			return err
		}
	}
	if r.Metrics != nil {
		if err := r.Metrics.writeText(out); err != nil {
			return err
		}
	}
	if r.MetricsError != "" {
		fmt.Fprintf(out, "\nmetrics overhead failed: %s\n", firstLines(r.MetricsError, 3))
	}
	fmt.Fprintf(out, "\n(%.0f s in all)\n", r.Elapsed)
	return nil
}

// writePipelines prints the pipelines' results and the targets table.
func (r *ConnectReport) writePipelines(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "runtime\tpipeline\trecords\tvalue B\trecords/s\tCPU µs/record\tready\tworker RSS idle/load/peak MB\tplugins RSS idle/load MB\ttotal RSS idle/load/peak MB\ttotal PSS load MB\t")
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\t%s\tskipped: %s\t\t\t\t\t\t\t\t\t\n", x.Runtime, x.Pipeline, firstLines(x.Skipped, 1))
		case x.Error != "":
			fmt.Fprintf(w, "%s\t%s\tfailed: %s\t\t\t\t\t\t\t\t\t\n", x.Runtime, x.Pipeline, firstLines(x.Error, 1))
		default:
			fmt.Fprintf(w, "%s\t%s\t%d\t%.0f\t%s\t%.1f\t%.3fs\t%.1f / %.1f / %.1f\t%.1f / %.1f\t%.1f / %.1f / %.1f\t%.1f\t\n", x.Runtime, x.Pipeline, x.Records,
				x.RecordBytes, group(x.RecordsPerSec), x.CPUMicrosPerRecord, x.ReadySeconds, x.Worker.RSSIdleMB, x.Worker.RSSLoadMB, x.Worker.RSSPeakMB,
				x.Plugins.RSSIdleMB, x.Plugins.RSSLoadMB, x.Total.RSSIdleMB, x.Total.RSSLoadMB, x.Total.RSSPeakMB, x.Total.PSSLoadMB)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "target\tgoal\tmeasured\tresult")
	row := func(name, goal string, have bool, measured string, met bool) {
		res := "not met"
		switch {
		case !have:
			res, measured = "n/a", "-"
		case met:
			res = "met"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", name, goal, measured, res)
	}
	e2e := r.find("tributary", "datagen→discard")
	tf, kf := r.find("tributary", "FileStream"), r.find("kafka-connect", "FileStream")
	row("end to end datagen→discard", fmt.Sprintf(">= %s rec/s", group(TargetRecordsPerSec)), e2e != nil,
		func() string {
			if e2e == nil {
				return ""
			}
			return group(e2e.RecordsPerSec) + " rec/s"
		}(), e2e != nil && e2e.RecordsPerSec >= TargetRecordsPerSec)
	row("idle RSS (worker + plugins)", fmt.Sprintf("<= %.0f MB", TargetIdleRSSMB), e2e != nil,
		func() string {
			if e2e == nil {
				return ""
			}
			return fmt.Sprintf("%.1f MB", e2e.Total.RSSIdleMB)
		}(), e2e != nil && e2e.Total.RSSIdleMB <= TargetIdleRSSMB)
	row("ready (process start → /health 200)", fmt.Sprintf("<= %.0f s", TargetReadySeconds), e2e != nil,
		func() string {
			if e2e == nil {
				return ""
			}
			return fmt.Sprintf("%.3f s", e2e.ReadySeconds)
		}(), e2e != nil && e2e.ReadySeconds <= TargetReadySeconds)
	both := tf != nil && kf != nil
	var tr, mr float64
	if both {
		tr = tf.RecordsPerSec / kf.RecordsPerSec
		mr = tf.Total.RSSLoadMB / kf.Total.RSSLoadMB
	}
	row("FileStream records/s, Tributary / Kafka Connect", fmt.Sprintf(">= %.1fx", TargetThroughputRatio), both,
		fmt.Sprintf("%.2fx (%s vs %s rec/s)", tr, groupOr(tf), groupOr(kf)), tr >= TargetThroughputRatio)
	row("FileStream RSS under load, Tributary / Kafka Connect", fmt.Sprintf("<= %.2f (1/5)", TargetMemoryRatio), both,
		fmt.Sprintf("%.3f (%.1f vs %.1f MB)", mr, rssOr(tf), rssOr(kf)), both && mr <= TargetMemoryRatio)
	if both && tf.Total.PSSLoadMB > 0 && kf.Total.PSSLoadMB > 0 {
		row("FileStream PSS under load, Tributary / Kafka Connect", "(informational)", true,
			fmt.Sprintf("%.3f (%.1f vs %.1f MB)", tf.Total.PSSLoadMB/kf.Total.PSSLoadMB, tf.Total.PSSLoadMB, kf.Total.PSSLoadMB), true)
	}
	if both {
		row("FileStream start-up, Kafka Connect / Tributary", "(informational)", true,
			fmt.Sprintf("%.1fx (%.3f s vs %.3f s)", kf.ReadySeconds/tf.ReadySeconds, kf.ReadySeconds, tf.ReadySeconds), true)
	}
	ts, ks := r.find("tributary", "FileStream+3 SMTs"), r.find("kafka-connect", "FileStream+3 SMTs")
	if ts != nil || ks != nil {
		bothSMT := ts != nil && ks != nil
		var sr float64
		if bothSMT {
			sr = ts.RecordsPerSec / ks.RecordsPerSec
		}
		row("FileStream+3 SMTs records/s, Tributary / Kafka Connect", fmt.Sprintf(">= %.1fx", TargetSMTRatio), bothSMT,
			fmt.Sprintf("%.2fx (%s vs %s rec/s)", sr, groupOr(ts), groupOr(ks)), sr >= TargetSMTRatio)
		if bothSMT && ts.CPUMicrosPerRecord > 0 {
			row("FileStream+3 SMTs CPU per record, Kafka Connect / Tributary", "(informational)", true,
				fmt.Sprintf("%.2fx (%.1f vs %.1f µs)", ks.CPUMicrosPerRecord/ts.CPUMicrosPerRecord, ks.CPUMicrosPerRecord, ts.CPUMicrosPerRecord), true)
		}
	}
	te, ta := r.find("tributary", "datagen→discard (exactly-once)"), r.find("tributary", "datagen→discard")
	tfe, kfe := r.find("tributary", "FileStream (exactly-once)"), r.find("kafka-connect", "FileStream (exactly-once)")
	if te != nil || tfe != nil {
		okA := te != nil && ta != nil && ta.RecordsPerSec > 0
		var ra float64
		if okA {
			ra = te.RecordsPerSec / ta.RecordsPerSec
		}
		row("datagen→discard records/s, exactly-once / at-least-once", fmt.Sprintf(">= %.0f%%", TargetEOSRatio*100), okA,
			fmt.Sprintf("%.0f%% (%s vs %s rec/s)", ra*100, groupOr(te), groupOr(ta)), ra >= TargetEOSRatio)
		okK := tfe != nil && kfe != nil && kfe.RecordsPerSec > 0
		var rk float64
		if okK {
			rk = tfe.RecordsPerSec / kfe.RecordsPerSec
		}
		row("FileStream exactly-once records/s, Tributary / Kafka Connect", fmt.Sprintf(">= %.1fx", TargetEOSConnectRatio), okK,
			fmt.Sprintf("%.2fx (%s vs %s rec/s)", rk, groupOr(tfe), groupOr(kfe)), rk >= TargetEOSConnectRatio)
		if okK && tfe.CPUMicrosPerRecord > 0 {
			row("FileStream exactly-once CPU-s per million records, Tributary / Kafka Connect", "(informational)", true,
				fmt.Sprintf("%.1f vs %.1f", tfe.CPUMicrosPerRecord, kfe.CPUMicrosPerRecord), true)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return nil
}

func groupOr(r *PipelineResult) string {
	if r == nil {
		return "-"
	}
	return group(r.RecordsPerSec)
}

func rssOr(r *PipelineResult) float64 {
	if r == nil {
		return 0
	}
	return r.Total.RSSLoadMB
}

// WriteJSON prints the report as JSON.
func (r *ConnectReport) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

package integration

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// BenchmarkPostgresCDC is the Postgres source's benchmark, side by side in
// one run (run it alone, under the shared lock):
//
//	flock /work/heavy.lock go test -run '^$' -bench BenchmarkPostgresCDC -benchtime 1x -timeout 60m ./integration/
//
// With the connectors stopped, 500k rows of 10 columns (about 200 bytes)
// are inserted and then updated: 1M changes wait in the slots. Then, on
// the same broker (Tributary's, in the test process), it measures
//   - catch-up: Tributary's source and Debezium 3.6.1 on Kafka Connect 4.4
//     each read the 1M changes from their slot into a topic (JsonConverter);
//   - snapshot: each reads the 500-k-row table into a topic;
//   - the server's own limits: pg_recvlogical with test_decoding on a third
//     slot of its own (the same changes, to /dev/null), and COPY (SELECT ...) TO STDOUT
//     of the table;
//
// and reports events/s and rows/s, CPU-seconds per million events of the
// connector's processes (Tributary: worker and plugin; Debezium: the Kafka
// Connect JVM; the broker is shared and not counted), the plugin's peak RSS,
// and the ratios; beside them the broker's CPU per million (this process's,
// during the job) and how busy the machine's cores were (a job at ~100% is
// bound by the CPU, not by a wait). Environment:
//   - TRIBUTARY_PG_BENCH_ROWS: the row count (500000);
//   - TRIBUTARY_PG_BENCH_RUNS: runs of our jobs and of the server's limits
//     (1), each on its own slot over the same changes; medians reported;
//   - TRIBUTARY_PG_BENCH_BINARIES: label=path,... builds of cmd/tributary
//     (each with its cmd/tributary-connector-* beside it) to compare,
//     alternated run by run (default: this tree's build);
//   - TRIBUTARY_PG_BENCH_NO_DEBEZIUM: leave Debezium out (it runs once);
//   - TRIBUTARY_PG_BENCH_AVRO_REGISTRY: a schema registry URL, or
//     "bundled" for Tributary's own (a broker process of its own, not
//     counted); each run then also catches up and snapshots with
//     AvroConverter (key and value) against it, and the report compares
//     its rates, CPU and bytes per event in the topic with the
//     JsonConverter jobs';
//   - TRIBUTARY_PG_BENCH_EOS: run every worker (Kafka Connect's too) with
//     exactly.once.source.support=enabled and the connectors with
//     exactly.once.support=required (each poll's batch one transaction; the
//     end offsets waited for then count one transaction marker per batch,
//     about 0.05 % of the records);
//   - TRIBUTARY_PG_BENCH_PERF: a directory for `perf record -g` profiles
//     of the worker and plugin processes of each of our jobs, and the
//     workers' logs (the snapshot's own duration and rate).
func BenchmarkPostgresCDC(b *testing.B) {
	rows := 500000
	if v, err := strconv.Atoi(os.Getenv("TRIBUTARY_PG_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	runs := 1
	if v, err := strconv.Atoi(os.Getenv("TRIBUTARY_PG_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	withDebezium := os.Getenv("TRIBUTARY_PG_BENCH_NO_DEBEZIUM") == ""
	var eosWorker map[string]string
	eosLabel := ""
	if os.Getenv("TRIBUTARY_PG_BENCH_EOS") != "" {
		eosWorker = map[string]string{"exactly.once.source.support": "enabled"}
		eosLabel = ", exactly-once"
	}
	if withDebezium {
		harness.RequireDebezium(b)
	}
	// Builds to compare, alternated run by run: label=binary pairs, or the
	// working tree's build.
	type build struct{ label, bin string }
	var builds []build
	for _, lb := range strings.Split(os.Getenv("TRIBUTARY_PG_BENCH_BINARIES"), ",") {
		if l, bin, ok := strings.Cut(lb, "="); ok {
			builds = append(builds, build{l, bin})
		}
	}
	if len(builds) == 0 {
		builds = []build{{"Tributary", harness.BuildTributary(b)}}
	}
	pg := harness.StartPostgresT(b, harness.WithPostgresSetting("shared_buffers", "512MB"), harness.WithPostgresSetting("max_wal_size", "8GB"),
		harness.WithPostgresSetting("max_replication_slots", "64"))
	ctx := context.Background()
	conn, err := pg.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	exec1 := func(sql string) {
		b.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatalf("%.100s: %v", sql, err)
		}
	}
	exec1(`CREATE TABLE bench (id bigint PRIMARY KEY, a int NOT NULL, b int, c bigint, d numeric(12,2), e text, f text,
		g timestamp, h boolean, i text)`)
	exec1(`CREATE PUBLICATION bench_pub FOR TABLE bench`)
	// One slot per run and build (and for Debezium), all before the
	// changes: each run reads the same 1M changes.
	slot := func(kind string, bi, r int) string { return fmt.Sprintf("%s_%d_%d", kind, bi, r) }
	avroURL := os.Getenv("TRIBUTARY_PG_BENCH_AVRO_REGISTRY")
	if avroURL == "bundled" {
		avroURL = harness.SchemaRegistryURL(b)
	}
	for r := range runs {
		for bi := range builds {
			exec1(fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, slot("trib", bi, r)))
			if avroURL != "" {
				exec1(fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, slot("triba", bi, r)))
			}
		}
		exec1(fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'test_decoding')`, slot("recv", 0, r)))
	}
	if withDebezium {
		exec1(`SELECT pg_create_logical_replication_slot('dbz', 'pgoutput')`)
	}
	gen := time.Now()
	exec1(fmt.Sprintf(`INSERT INTO bench SELECT i, i %% 1000, i * 7, i::bigint * 1000003, i / 100.0, md5(i::text) || md5((i+1)::text),
		md5((i+2)::text) || md5((i+3)::text), timestamp '2024-01-01' + i * interval '1 second', i %% 2 = 0, md5((i+4)::text)
		FROM generate_series(1, %d) i`, rows))
	exec1(`UPDATE bench SET a = a + 1, i = md5(i)`)
	var endLSN string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&endLSN); err != nil {
		b.Fatal(err)
	}
	exec1(`VACUUM ANALYZE bench`)
	events := int64(2 * rows)
	b.Logf("generated %d rows and %d changes in %v", rows, events, time.Since(gen).Round(time.Millisecond))

	broker := harness.TributaryBroker(b).Bootstrap()
	adm := kadm.NewClient(newBenchClient(b, broker))
	waitTopic := func(topic string, n int64, within time.Duration) time.Duration {
		start := time.Now()
		for {
			ends, err := adm.ListEndOffsets(ctx, topic)
			var total int64
			if err == nil {
				ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			}
			if total >= n {
				return time.Since(start)
			}
			if time.Since(start) > within {
				b.Fatalf("%s has %d of %d records after %v", topic, total, n, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	base := func(prefix, slot string) map[string]string {
		c := pgConnectorConfig(pg, prefix, "public.bench")
		c["slot.name"], c["publication.name"], c["publication.autocreate.mode"] = slot, "bench_pub", "disabled"
		c["snapshot.mode"] = "no_data"
		if eosWorker != nil {
			c["exactly.once.support"] = "required"
		}
		return c
	}

	// Tributary: a worker per build.
	workers := make([]*harness.WorkerProcess, len(builds))
	for bi, bd := range builds {
		workers[bi] = harness.StartWorkerProcess(b, bd.bin, filepath.Join(b.TempDir(), "worker"), harness.WorkerProps(b, broker, fmt.Sprintf("bench%d", bi), eosWorker))
	}
	perfDir := os.Getenv("TRIBUTARY_PG_BENCH_PERF")
	runOurs := func(w *harness.WorkerProcess, name string, cfg map[string]string, n int64) pgBenchResult {
		before := procCPU(w.Pid())
		m := startMachineWatch()
		benchREST(b, w.URL(), "POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
		var stopPerf func()
		if perfDir != "" {
			stopPerf = startPerf(b, perfDir, name, w.Pid())
		}
		d := waitTopic(cfg["topic.prefix"]+".public.bench", n, 20*time.Minute)
		brokerCPU, busy := m.stop()
		if stopPerf != nil {
			stopPerf()
		}
		plugin := pluginOf(w.Pid(), name)
		cpu := procCPU(w.Pid()) - before
		var rss int64
		if plugin != 0 {
			cpu += procCPU(plugin)
			rss = peakRSS(plugin)
		}
		benchREST(b, w.URL(), "DELETE", "/connectors/"+name, nil, 204)
		return pgBenchResult{d: d, cpu: cpu, peakRSS: rss, brokerCPU: brokerCPU, busy: busy}
	}
	ourStream := make([][]pgBenchResult, len(builds))
	ourSnap := make([][]pgBenchResult, len(builds))
	ourStreamAvro := make([][]pgBenchResult, len(builds))
	ourSnapAvro := make([][]pgBenchResult, len(builds))
	// avro is a job's config with AvroConverter for key and value; an Avro
	// name has no '-', and the topic prefix names the schemas.
	avro := func(prefix, slot string) map[string]string {
		c := base(strings.ReplaceAll(prefix, "-", "_"), slot)
		maps.Copy(c, avroConverters(avroURL))
		return c
	}
	var recv, copyD []pgBenchResult
	for r := range runs {
		for bi, bd := range builds {
			name := fmt.Sprintf("%d-%d", bi, r)
			res := runOurs(workers[bi], "stream-"+name, base("ts"+name, slot("trib", bi, r)), events)
			ourStream[bi] = append(ourStream[bi], res)
			snapCfg := base("tsnap"+name, slot("tsnap", bi, r))
			snapCfg["snapshot.mode"] = "initial"
			snapCfg["snapshot.max.threads"] = "1"
			snapCfg["slot.drop.on.stop"] = "true" // one slot per run
			snapRes := runOurs(workers[bi], "snap-"+name, snapCfg, int64(rows))
			ourSnap[bi] = append(ourSnap[bi], snapRes)
			if avroURL != "" {
				ourStreamAvro[bi] = append(ourStreamAvro[bi], runOurs(workers[bi], "streama-"+name, avro("tsa"+name, slot("triba", bi, r)), events))
				ac := avro("tsnapa"+name, slot("tsnapa", bi, r))
				ac["snapshot.mode"], ac["snapshot.max.threads"], ac["slot.drop.on.stop"] = "initial", "1", "true"
				ourSnapAvro[bi] = append(ourSnapAvro[bi], runOurs(workers[bi], "snapa-"+name, ac, int64(rows)))
			}
			b.Logf("run %d, %s: catch-up %.0f events/s (%.1f CPU-s/M; broker %.1f CPU-s/M, machine %.0f%% busy), snapshot %.0f rows/s (%.1f CPU-s/M; broker %.1f CPU-s/M, machine %.0f%% busy)",
				r+1, bd.label, float64(events)/res.d.Seconds(), res.cpu/(float64(events)/1e6), res.brokerCPU/(float64(events)/1e6), 100*res.busy,
				float64(rows)/snapRes.d.Seconds(), snapRes.cpu/(float64(rows)/1e6), snapRes.brokerCPU/(float64(rows)/1e6), 100*snapRes.busy)
		}
		// The server's limits.
		start := time.Now()
		cmd := exec.Command(filepath.Join(pg.BinDir(), "pg_recvlogical"), "-d", pg.DSN(), "--slot", slot("recv", 0, r), "--start",
			"--endpos", endLSN, "-f", "/dev/null", "--no-loop")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("pg_recvlogical: %v\n%s", err, out)
		}
		recv = append(recv, pgBenchResult{d: time.Since(start)})
		start = time.Now()
		if _, err := conn.PgConn().CopyTo(ctx, io.Discard, "COPY (SELECT * FROM bench) TO STDOUT"); err != nil {
			b.Fatal(err)
		}
		copyD = append(copyD, pgBenchResult{d: time.Since(start)})
	}
	for bi, w := range workers {
		w.Kill()
		if perfDir != "" { // the worker's log (the snapshot's own timing) beside the profiles
			if l, err := os.ReadFile(w.LogPath()); err == nil {
				_ = os.WriteFile(filepath.Join(perfDir, fmt.Sprintf("worker-%d.log", bi)), l, 0o644)
			}
		}
	}

	// Debezium 3.6.1 on Kafka Connect 4.4, same broker, once (left out
	// with TRIBUTARY_PG_BENCH_NO_DEBEZIUM set).
	var dbzStream, dbzSnap pgBenchResult
	if withDebezium {
		opts := []harness.ConnectOption{harness.WithWorkerProperty("offset.flush.interval.ms", "10000"), harness.WithConnectJVMArgs("-Xmx2g")}
		for k, v := range eosWorker {
			opts = append(opts, harness.WithWorkerProperty(k, v))
		}
		kc := harness.KafkaConnect(b, broker, opts...)
		runDbz := func(name string, cfg map[string]string, n int64) pgBenchResult {
			pid := kc.Pid()
			before := procCPU(pid)
			m := startMachineWatch()
			benchREST(b, kc.URL(), "POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
			d := waitTopic(cfg["topic.prefix"]+".public.bench", n, 30*time.Minute)
			brokerCPU, busy := m.stop()
			r := pgBenchResult{d: d, cpu: procCPU(pid) - before, peakRSS: peakRSS(pid), brokerCPU: brokerCPU, busy: busy}
			benchREST(b, kc.URL(), "DELETE", "/connectors/"+name, nil, 204)
			return r
		}
		dbzStream = runDbz("dbz-stream", base("ds", "dbz"), events)
		dsnap := base("dsnap", "dbz_snap")
		dsnap["snapshot.mode"] = "initial"
		dbzSnap = runDbz("dbz-snap", dsnap, int64(rows))
		kc.Close()
	}

	rate := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() }
	perM := func(cpu float64, n int64) float64 { return cpu / (float64(n) / 1e6) }
	var rep strings.Builder
	fmt.Fprintf(&rep, "\n%d rows, %d changes; median of %d run(s), runs alternated%s\n", rows, events, runs, eosLabel)
	fmt.Fprintf(&rep, "%-48s %10s %12s %16s %12s %14s %8s  %s\n", "job", "seconds", "per second", "CPU-s/M events", "peak RSS MB",
		"broker CPU-s/M", "busy %", "per run (per second)")
	line := func(job string, n int64, rs []pgBenchResult) pgBenchResult {
		m := pgMedian(rs)
		var each []string
		for _, r := range rs {
			each = append(each, fmt.Sprintf("%.0f", rate(n, r.d)))
		}
		cpu, rss, bcpu, busy := "", "", "", ""
		if m.cpu > 0 {
			cpu, rss = fmt.Sprintf("%.1f", perM(m.cpu, n)), fmt.Sprintf("%.1f", float64(m.peakRSS)/(1<<20))
			bcpu, busy = fmt.Sprintf("%.1f", perM(m.brokerCPU, n)), fmt.Sprintf("%.0f", 100*m.busy)
		}
		fmt.Fprintf(&rep, "%-48s %10.2f %12.0f %16s %12s %14s %8s  %s\n", job, m.d.Seconds(), rate(n, m.d), cpu, rss, bcpu, busy, strings.Join(each, " "))
		return m
	}
	recvM, copyM := pgMedian(recv), pgMedian(copyD)
	streams := make([]pgBenchResult, len(builds))
	snaps := make([]pgBenchResult, len(builds))
	for bi, bd := range builds {
		streams[bi] = line("catch-up: "+bd.label+" (worker + plugin)", events, ourStream[bi])
	}
	if withDebezium {
		line("catch-up: Debezium 3.6.1 (Kafka Connect JVM)", events, []pgBenchResult{dbzStream})
	}
	line("catch-up: pg_recvlogical + test_decoding", events, recv)
	for bi, bd := range builds {
		snaps[bi] = line("snapshot: "+bd.label+" (worker + plugin)", int64(rows), ourSnap[bi])
	}
	if withDebezium {
		line("snapshot: Debezium 3.6.1 (Kafka Connect JVM)", int64(rows), []pgBenchResult{dbzSnap})
	}
	line("snapshot: COPY (SELECT *) TO STDOUT", int64(rows), copyD)
	if avroURL != "" {
		for bi, bd := range builds {
			s := line("catch-up: "+bd.label+" AvroConverter (worker + plugin)", events, ourStreamAvro[bi])
			a := line("snapshot: "+bd.label+" AvroConverter (worker + plugin)", int64(rows), ourSnapAvro[bi])
			fmt.Fprintf(&rep, "%s AvroConverter: catch-up %.0f%% of pg_recvlogical, %.2fx the JsonConverter catch-up's events/s, CPU per event %.2fx\n", bd.label,
				100*rate(events, s.d)/rate(events, recvM.d), rate(events, s.d)/rate(events, streams[bi].d), s.cpu/streams[bi].cpu)
			fmt.Fprintf(&rep, "%s AvroConverter: snapshot %.0f%% of COPY, %.2fx the JsonConverter snapshot's rows/s, CPU per row %.2fx\n", bd.label,
				100*rate(int64(rows), a.d)/rate(int64(rows), copyM.d), rate(int64(rows), a.d)/rate(int64(rows), snaps[bi].d), a.cpu/snaps[bi].cpu)
		}
		for _, job := range []struct{ kind, json, avro string }{{"snapshot", "tsnap0-0", "tsnapa0_0"}, {"catch-up", "ts0-0", "tsa0_0"}} {
			jsonBytes := sampleEventBytes(b, broker, job.json+".public.bench")
			avroBytes := sampleEventBytes(b, broker, job.avro+".public.bench")
			fmt.Fprintf(&rep, "bytes per %s event (key + value, first 1000): JsonConverter with schemas %.0f, AvroConverter %.0f (1/%.1f)\n",
				job.kind, jsonBytes, avroBytes, jsonBytes/avroBytes)
		}
	}
	for bi, bd := range builds {
		fmt.Fprintf(&rep, "%s: streaming %.0f%% of pg_recvlogical, snapshot %.0f%% of COPY", bd.label,
			100*rate(events, streams[bi].d)/rate(events, recvM.d), 100*rate(int64(rows), snaps[bi].d)/rate(int64(rows), copyM.d))
		if withDebezium {
			fmt.Fprintf(&rep, ", streaming %.2fx Debezium, snapshot %.2fx Debezium, CPU per event %.2fx / %.2fx Debezium's",
				rate(events, streams[bi].d)/rate(events, dbzStream.d), rate(int64(rows), snaps[bi].d)/rate(int64(rows), dbzSnap.d),
				streams[bi].cpu/dbzStream.cpu, snaps[bi].cpu/dbzSnap.cpu)
		}
		fmt.Fprintf(&rep, "; plugin peak RSS %.1f MB (snapshot), %.1f MB (catch-up)\n", float64(snaps[bi].peakRSS)/(1<<20), float64(streams[bi].peakRSS)/(1<<20))
	}
	// Printed whole (b.Log output of a benchmark is cut after a few lines).
	fmt.Fprint(os.Stdout, rep.String())
	b.ReportMetric(rate(events, streams[0].d), "stream_events/s")
	b.ReportMetric(rate(int64(rows), snaps[0].d), "snapshot_rows/s")
	b.ReportMetric(0, "ns/op")
}

// sampleEventBytes is the mean key + value size of a topic's first 1000
// records.
func sampleEventBytes(b *testing.B, bootstrap, topic string) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, total := 0, 0
	for n < 1000 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if n < 1000 {
				n++
				total += len(r.Key) + len(r.Value)
			}
		})
	}
	if n == 0 {
		b.Fatalf("no record in %s", topic)
	}
	return float64(total) / float64(n)
}

type pgBenchResult struct {
	d       time.Duration
	cpu     float64
	peakRSS int64
	// brokerCPU is the CPU time of this process (the broker, mostly)
	// during the job; busy the share of the machine's CPU time in use by
	// anything, which says whether the job was bound by the CPU.
	brokerCPU, busy float64
}

// machineWatch measures, over a job, the CPU time of this process (the
// broker's) and how busy the machine was.
type machineWatch struct{ self, busy, total float64 }

func startMachineWatch() machineWatch {
	busy, total := machineCPU()
	return machineWatch{self: procCPU(os.Getpid()), busy: busy, total: total}
}

// stop returns this process's CPU seconds and the machine's busy share
// since start.
func (m machineWatch) stop() (self, busy float64) {
	b, t := machineCPU()
	if t > m.total {
		busy = (b - m.busy) / (t - m.total)
	}
	return procCPU(os.Getpid()) - m.self, busy
}

// median returns the run with the median duration.
func pgMedian(rs []pgBenchResult) pgBenchResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b pgBenchResult) int { return cmp.Compare(a.d, b.d) })
	return s[len(s)/2]
}

// startPerf samples the worker and, once it is started, the connector's
// plugin process with `perf record -g` into dir/<name>.data (set
// TRIBUTARY_PG_BENCH_PERF=dir; needs perf). The returned func stops it.
func startPerf(b *testing.B, dir, name string, worker int) func() {
	var plugin int
	for i := 0; i < 200 && plugin == 0; i++ {
		if plugin = pluginOf(worker, name); plugin == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	out := filepath.Join(dir, name+".data")
	cmd := exec.Command("perf", "record", "-g", "-F", "997", "-o", out, "-p", fmt.Sprintf("%d,%d", worker, plugin))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		b.Logf("perf: %v", err)
		return func() {}
	}
	b.Logf("perf record of %s: worker %d, plugin %d into %s", name, worker, plugin, out)
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// machineCPU returns the machine's busy and total CPU time so far (clock
// ticks, all cores; iowait counts as idle).
func machineCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i >= 8 { // guest time is counted in user already
			break
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

// procCPU returns the user+system CPU seconds of a process so far.
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	sy, _ := strconv.ParseFloat(f[12], 64)
	return (u + sy) / 100 // clock ticks
}

// peakRSS returns a process's peak resident set (VmHWM) in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// pluginOf returns the pid of the worker's newest plugin process (each
// connector has its own).
func pluginOf(workerPid int, _ string) int {
	newest, best := 0, int64(-1)
	for _, pid := range workerChildren(workerPid) {
		st, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if err == nil && st.ModTime().UnixNano() > best {
			newest, best = pid, st.ModTime().UnixNano()
		}
	}
	return newest
}

func benchREST(b *testing.B, url, method, path string, body any, want int) {
	b.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
}

// newBenchClient returns the client that watches the topics fill. Its
// metadata may be refreshed every 50 ms: with franz-go's default (at most
// every 5 s), end offsets of a topic created after the client last looked
// stay unknown for up to 5 s, and every job shorter than that was timed as
// 5 s.
func newBenchClient(b *testing.B, bootstrap string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

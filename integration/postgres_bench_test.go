package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
// are inserted and then updated: 1M changes wait in three slots. Then, on
// the same broker (Tributary's, in the test process), it measures
//   - catch-up: Tributary's source and Debezium 3.6.1 on Kafka Connect 4.4
//     each read the 1M changes from their slot into a topic (JsonConverter);
//   - snapshot: each reads the 500-k-row table into a topic;
//   - the server's own limits: pg_recvlogical with test_decoding on a third
//     slot (the same changes, to /dev/null), and COPY (SELECT ...) TO STDOUT
//     of the table;
//
// and reports events/s and rows/s, CPU-seconds per million events of the
// connector's processes (Tributary: worker and plugin; Debezium: the Kafka
// Connect JVM; the broker is shared and not counted), the plugin's peak RSS,
// and the ratios. TRIBUTARY_PG_BENCH_ROWS changes the row count.
func BenchmarkPostgresCDC(b *testing.B) {
	rows := 500000
	if v, err := strconv.Atoi(os.Getenv("TRIBUTARY_PG_BENCH_ROWS")); err == nil && v > 0 {
		rows = v
	}
	harness.RequireDebezium(b)
	pg := harness.StartPostgresT(b, harness.WithPostgresSetting("shared_buffers", "512MB"), harness.WithPostgresSetting("max_wal_size", "8GB"))
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
	for _, s := range []string{"trib", "dbz"} {
		exec1(fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, s))
	}
	exec1(`SELECT pg_create_logical_replication_slot('recv', 'test_decoding')`)
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
		return c
	}

	// Tributary.
	bin := harness.BuildTributary(b)
	w := harness.StartWorkerProcess(b, bin, filepath.Join(b.TempDir(), "worker"), harness.WorkerProps(b, broker, "bench", nil))
	type result struct {
		d       time.Duration
		cpu     float64
		peakRSS int64
	}
	runOurs := func(name string, cfg map[string]string, n int64) result {
		before := procCPU(w.Pid())
		benchREST(b, w.URL(), "POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
		d := waitTopic(cfg["topic.prefix"]+".public.bench", n, 20*time.Minute)
		plugin := pluginOf(w.Pid(), name)
		cpu := procCPU(w.Pid()) - before
		var rss int64
		if plugin != 0 {
			cpu += procCPU(plugin)
			rss = peakRSS(plugin)
		}
		benchREST(b, w.URL(), "DELETE", "/connectors/"+name, nil, 204)
		return result{d: d, cpu: cpu, peakRSS: rss}
	}
	ourStream := runOurs("trib-stream", base("ts", "trib"), events)
	snapCfg := base("tsnap", "trib_snap")
	snapCfg["snapshot.mode"] = "initial"
	snapCfg["snapshot.max.threads"] = "1"
	ourSnap := runOurs("trib-snap", snapCfg, int64(rows))
	w.Kill()

	// Debezium 3.6.1 on Kafka Connect 4.4, same broker.
	kc := harness.KafkaConnect(b, broker, harness.WithWorkerProperty("offset.flush.interval.ms", "10000"),
		harness.WithConnectJVMArgs("-Xmx2g"))
	runDbz := func(name string, cfg map[string]string, n int64) result {
		pid := kc.Pid()
		before := procCPU(pid)
		benchREST(b, kc.URL(), "POST", "/connectors", map[string]any{"name": name, "config": cfg}, 201)
		d := waitTopic(cfg["topic.prefix"]+".public.bench", n, 30*time.Minute)
		r := result{d: d, cpu: procCPU(pid) - before, peakRSS: peakRSS(pid)}
		benchREST(b, kc.URL(), "DELETE", "/connectors/"+name, nil, 204)
		return r
	}
	dbzStream := runDbz("dbz-stream", base("ds", "dbz"), events)
	dsnap := base("dsnap", "dbz_snap")
	dsnap["snapshot.mode"] = "initial"
	dbzSnap := runDbz("dbz-snap", dsnap, int64(rows))
	kc.Close()

	// The server's limits.
	start := time.Now()
	cmd := exec.Command(filepath.Join(pg.BinDir(), "pg_recvlogical"), "-d", pg.DSN(), "--slot", "recv", "--start",
		"--endpos", endLSN, "-f", "/dev/null", "--no-loop")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("pg_recvlogical: %v\n%s", err, out)
	}
	recv := time.Since(start)
	start = time.Now()
	if _, err := conn.PgConn().CopyTo(ctx, io.Discard, "COPY (SELECT * FROM bench) TO STDOUT"); err != nil {
		b.Fatal(err)
	}
	copyD := time.Since(start)

	rate := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() }
	perM := func(cpu float64, n int64) float64 { return cpu / (float64(n) / 1e6) }
	var rep strings.Builder
	fmt.Fprintf(&rep, "\n%-44s %12s %14s %16s %12s\n", "job", "seconds", "per second", "CPU-s/M events", "peak RSS MB")
	line := func(job string, n int64, r result) {
		fmt.Fprintf(&rep, "%-44s %12.2f %14.0f %16.1f %12.1f\n", job, r.d.Seconds(), rate(n, r.d), perM(r.cpu, n), float64(r.peakRSS)/(1<<20))
	}
	line("catch-up: Tributary (worker + plugin)", events, ourStream)
	line("catch-up: Debezium 3.6.1 (Kafka Connect JVM)", events, dbzStream)
	fmt.Fprintf(&rep, "%-44s %12.2f %14.0f\n", "catch-up: pg_recvlogical + test_decoding", recv.Seconds(), rate(events, recv))
	line("snapshot: Tributary (worker + plugin)", int64(rows), ourSnap)
	line("snapshot: Debezium 3.6.1 (Kafka Connect JVM)", int64(rows), dbzSnap)
	fmt.Fprintf(&rep, "%-44s %12.2f %14.0f\n", "snapshot: COPY (SELECT *) TO STDOUT", copyD.Seconds(), rate(int64(rows), copyD))
	fmt.Fprintf(&rep, "streaming: %.2fx Debezium, %.0f%% of pg_recvlogical; snapshot: %.2fx Debezium, %.0f%% of COPY; plugin peak RSS %.1f MB (snapshot), %.1f MB (catch-up)\n",
		rate(events, ourStream.d)/rate(events, dbzStream.d), 100*rate(events, ourStream.d)/rate(events, recv),
		rate(int64(rows), ourSnap.d)/rate(int64(rows), dbzSnap.d), 100*rate(int64(rows), ourSnap.d)/rate(int64(rows), copyD),
		float64(ourSnap.peakRSS)/(1<<20), float64(ourStream.peakRSS)/(1<<20))
	// Printed whole (b.Log output of a benchmark is cut after a few lines).
	fmt.Fprint(os.Stdout, rep.String())
	b.ReportMetric(rate(events, ourStream.d), "stream_events/s")
	b.ReportMetric(rate(int64(rows), ourSnap.d), "snapshot_rows/s")
	b.ReportMetric(rate(events, ourStream.d)/rate(events, dbzStream.d), "x_debezium_stream")
	b.ReportMetric(0, "ns/op")
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
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", workerPid))
	for _, task := range tasks {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", workerPid, task.Name()))
		for _, f := range strings.Fields(string(c)) {
			pid, _ := strconv.Atoi(f)
			st, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
			if err == nil && st.ModTime().UnixNano() > best {
				newest, best = pid, st.ModTime().UnixNano()
			}
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

func newBenchClient(b *testing.B, bootstrap string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

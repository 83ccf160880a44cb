package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// ManyOptions configures RunMany.
type ManyOptions struct {
	// Exe is the tributary binary started as `Exe worker`.
	Exe string
	// Counts are the connector counts, each on fresh workers (default 10,
	// 100, 1000).
	Counts []int
	// Isolations are the plugin.isolation settings Tributary runs with
	// (default plugin and connector).
	Isolations []string
	// NoKafkaConnect leaves out Kafka Connect.
	NoKafkaConnect bool
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds the wait until a run's connectors all run.
	Timeout time.Duration
	// Parallel is how many creates are in flight at once (default 8).
	Parallel int
	Progress io.Writer
}

// ManyResult is one runtime at one connector count.
type ManyResult struct {
	Runtime    string `json:"runtime"`
	Connectors int    `json:"connectors"`
	// Processes is the runtime's process count with every connector
	// running (the worker and its plugin processes; 1 for Kafka Connect).
	Processes int `json:"processes"`
	// IdlePSSMB and IdleRSSMB are the runtime's memory with no connector,
	// 2 s after it was ready.
	IdlePSSMB float64 `json:"idle_pss_mb"`
	IdleRSSMB float64 `json:"idle_rss_mb"`
	// PSSMB is the sum of the processes' PSS with every connector running
	// (5 s after the last one ran): the pages they use, pages shared
	// among them counted once, as a memory cgroup holding them would
	// count them. RSSMB sums their RSS (shared pages once per process).
	PSSMB float64 `json:"pss_mb"`
	RSSMB float64 `json:"rss_mb"`
	// CreateSeconds is the time the creates took (Parallel at a time);
	// RunningSeconds the time from the first create until every connector
	// and task ran (0 if not within the timeout).
	CreateSeconds  float64 `json:"create_seconds"`
	RunningSeconds float64 `json:"running_seconds"`
	// IdleCPUPercent is the runtime's CPU use (% of one core) over 10 s
	// with every connector running and no data flowing.
	IdleCPUPercent float64 `json:"idle_cpu_percent"`
	// StatusMs is the median latency of GET /connectors?expand=status
	// (of 5) with every connector running.
	StatusMs     float64 `json:"status_ms"`
	ReadySeconds float64 `json:"ready_seconds"`
	Error        string  `json:"error,omitempty"`
	Skipped      string  `json:"skipped,omitempty"`
}

// ManyReport is RunMany's result.
type ManyReport struct {
	Host    Host          `json:"host"`
	Broker  string        `json:"broker"`
	Results []*ManyResult `json:"results"`
	Elapsed float64       `json:"elapsed_seconds"`
}

// Failed reports whether a run failed (a skipped one is not a failure).
func (r *ManyReport) Failed() bool {
	for _, x := range r.Results {
		if x.Error != "" {
			return true
		}
	}
	return false
}

// RunMany runs the many-connectors benchmark: for each count N, N
// FileStreamSource connectors (tasks.max=1, each reading an empty file of
// its own) on one fresh worker of each runtime — Tributary with each
// plugin.isolation of o.Isolations, then Kafka Connect 4.4 — all on one
// bundled broker (in-process), one run at a time.
func RunMany(ctx context.Context, o ManyOptions) (*ManyReport, error) {
	if len(o.Counts) == 0 {
		o.Counts = []int{10, 100, 1000}
	}
	if len(o.Isolations) == 0 {
		o.Isolations = []string{"plugin", "connector"}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "bench many: "+format+"\n", args...)
		}
	}
	begin := time.Now()
	rep := &ManyReport{Host: hostInfo(), Broker: "tributary (bundled broker, in this process)"}
	logf("starting the bundled broker")
	br, err := start(ctx, Tributary, o.Dir)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	defer br.close()
	work, err := os.MkdirTemp(o.Dir, "tributary-bench-many-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	for _, n := range o.Counts {
		for _, iso := range o.Isolations {
			res := &ManyResult{Runtime: "tributary plugin.isolation=" + iso, Connectors: n}
			rep.Results = append(rep.Results, res)
			func() {
				dir := filepath.Join(work, fmt.Sprintf("tributary-%s-%d", iso, n))
				logf("%s, %d connectors: starting a worker process", res.Runtime, n)
				w, err := startTributaryWorker(ctx, o.Exe, dir, br.bootstrap, map[string]string{"plugin.isolation": iso})
				if err != nil {
					res.Error = err.Error()
					return
				}
				defer w.stop()
				res.ReadySeconds = w.ready.Seconds()
				manyRun(ctx, o, logf, w.url, w.pid(), true, dir, res)
			}()
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
		}
		res := &ManyResult{Runtime: "kafka-connect", Connectors: n}
		rep.Results = append(rep.Results, res)
		if o.NoKafkaConnect {
			res.Skipped = "--no-kafka-connect"
			continue
		}
		dir := filepath.Join(work, fmt.Sprintf("kafka-connect-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			res.Error = err.Error()
			continue
		}
		logf("kafka-connect, %d connectors: starting Kafka Connect 4.4 (distributed, -Xms256M -Xmx2G, G1)", n)
		c, err := harness.StartKafkaConnect(ctx, dir, br.bootstrap, nil, harness.WithConnectJVMArgs(connectJVMArgs...))
		switch {
		case errors.Is(err, harness.ErrUnavailable):
			res.Skipped = err.Error()
			logf("kafka-connect: skipped: %v", err)
		case err != nil:
			res.Error = err.Error()
		default:
			res.ReadySeconds = c.StartupTime().Seconds()
			if pid := findPID(filepath.Join(dir, "connect-distributed.properties")); pid == 0 {
				res.Error = "cannot find the Kafka Connect JVM's pid"
			} else {
				manyRun(ctx, o, logf, c.URL(), pid, false, dir, res)
			}
			c.Close()
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, ctx.Err()
}

// treeMemory returns the PSS and RSS (MB) of pid and, when tree, of its
// descendants, and how many processes that is.
func treeMemory(pid int, tree bool) (pss, rss float64, procs int) {
	pids := []int{pid}
	if tree {
		pids = append(pids, descendants(pid)...)
	}
	for _, p := range pids {
		pss += pssMB(p)
		rss += rssMB(p)
	}
	return pss, rss, len(pids)
}

// manyRun creates o.Parallel connectors at a time at url until res's
// count exist, waits until all run and measures the runtime (pid, with
// its descendants when tree).
func manyRun(ctx context.Context, o ManyOptions, logf func(string, ...any), url string, pid int, tree bool, dir string, res *ManyResult) {
	time.Sleep(2 * time.Second) // let start-up settle
	res.IdlePSSMB, res.IdleRSSMB, _ = treeMemory(pid, tree)
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		res.Error = err.Error()
		return
	}
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	start := time.Now()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
	)
	next := make(chan int)
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := fmt.Sprintf("many-%04d", i)
				file := filepath.Join(files, name+".txt")
				err := os.WriteFile(file, nil, 0o644)
				if err == nil {
					body, _ := json.Marshal(map[string]any{"name": name, "config": map[string]string{
						"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
						"file": file, "topic": "many-topic"}})
					err = createConnector(ctx, client, url, body)
				}
				if err != nil {
					mu.Lock()
					failure = errors.Join(failure, fmt.Errorf("create %s: %w", name, err))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range res.Connectors {
		next <- i
	}
	close(next)
	wg.Wait()
	res.CreateSeconds = time.Since(start).Seconds()
	if failure != nil {
		res.Error = failure.Error()
		return
	}
	logf("%s: %d connectors created in %.1f s", res.Runtime, res.Connectors, res.CreateSeconds)
	deadline := time.Now().Add(o.Timeout)
	for {
		running, _, err := runningConnectors(ctx, url)
		n := 0
		for _, ok := range running {
			if ok {
				n++
			}
		}
		if err == nil && n == res.Connectors {
			res.RunningSeconds = time.Since(start).Seconds()
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			res.Error = fmt.Sprintf("%d of %d connectors RUNNING after %v (last error: %v)", n, res.Connectors, o.Timeout, err)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	logf("%s: all %d RUNNING %.1f s after the first create", res.Runtime, res.Connectors, res.RunningSeconds)
	time.Sleep(5 * time.Second)
	res.PSSMB, res.RSSMB, res.Processes = treeMemory(pid, tree)
	cpu0, t0 := cpuSeconds(pid, tree), time.Now()
	time.Sleep(10 * time.Second)
	res.IdleCPUPercent = 100 * (cpuSeconds(pid, tree) - cpu0) / time.Since(t0).Seconds()
	var lat []float64
	for range 5 {
		t := time.Now()
		if _, _, err := runningConnectors(ctx, url); err != nil {
			res.Error = err.Error()
			return
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
	}
	slices.Sort(lat)
	res.StatusMs = lat[len(lat)/2]
	logf("%s, %d connectors: %d processes, PSS %.0f MB, RSS %.0f MB, idle CPU %.1f%%, status %.0f ms",
		res.Runtime, res.Connectors, res.Processes, res.PSSMB, res.RSSMB, res.IdleCPUPercent, res.StatusMs)
}

// createConnector POSTs body to url/connectors, retrying a 409 (a
// rebalance in progress) for up to a minute.
func createConnector(ctx context.Context, client *http.Client, url string, body []byte) error {
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/connectors", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusCreated:
			return nil
		case resp.StatusCode == http.StatusConflict && time.Now().Before(deadline):
			time.Sleep(500 * time.Millisecond)
		default:
			return fmt.Errorf("%s: %s", resp.Status, b)
		}
	}
}

// WriteText prints the table: per count, each runtime's memory, per
// connector at the margin (from the count before), time to RUNNING, idle
// CPU and status latency, and the goals of issue 39.
func (r *ManyReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "Many connectors (FileStreamSource, one task each, idle): %s/%s, %d CPUs, %s; broker: %s\n\n",
		r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, r.Broker)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "runtime\tconnectors\tprocesses\tidle PSS MB\tPSS MB\tRSS MB\tPSS MB/connector (margin)\tcreated in\tall RUNNING after\tidle CPU %\tstatus ms\t")
	prev := map[string]*ManyResult{}
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\t%d\tskipped: %s\t\t\t\t\t\t\t\t\t\n", x.Runtime, x.Connectors, firstLines(x.Skipped, 1))
			continue
		case x.Error != "":
			fmt.Fprintf(w, "%s\t%d\tfailed: %s\t\t\t\t\t\t\t\t\t\n", x.Runtime, x.Connectors, firstLines(x.Error, 1))
			continue
		}
		margin := "-"
		if p := prev[x.Runtime]; p != nil && x.Connectors > p.Connectors {
			margin = fmt.Sprintf("%.2f", (x.PSSMB-p.PSSMB)/float64(x.Connectors-p.Connectors))
		} else if x.Connectors > 0 {
			margin = fmt.Sprintf("%.2f", (x.PSSMB-x.IdlePSSMB)/float64(x.Connectors))
		}
		prev[x.Runtime] = x
		fmt.Fprintf(w, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f\t%s\t%.1f s\t%.1f s\t%.1f\t%.0f\t\n", x.Runtime, x.Connectors, x.Processes,
			x.IdlePSSMB, x.PSSMB, x.RSSMB, margin, x.CreateSeconds, x.RunningSeconds, x.IdleCPUPercent, x.StatusMs)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, x := range r.Results {
		if x.Runtime != "tributary plugin.isolation=plugin" || x.Error != "" || x.Skipped != "" {
			continue
		}
		for _, k := range r.Results {
			if k.Runtime == "kafka-connect" && k.Connectors == x.Connectors && k.Error == "" && k.Skipped == "" {
				fmt.Fprintf(out, "N=%d: Tributary PSS %.0f MB vs Kafka Connect RSS %.0f MB (goal <=): %s; all RUNNING %.1f s vs %.1f s (goal <=): %s\n",
					x.Connectors, x.PSSMB, k.RSSMB, metOrNot(x.PSSMB <= k.RSSMB), x.RunningSeconds, k.RunningSeconds, metOrNot(x.RunningSeconds <= k.RunningSeconds))
			}
		}
	}
	fmt.Fprintf(out, "\n(%.0f s in all)\n", r.Elapsed)
	return nil
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// WriteJSON prints the report as JSON.
func (r *ManyReport) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

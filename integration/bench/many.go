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
	"strconv"
	"strings"
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
	// Workers are the cluster sizes each count runs on (default 1): one
	// worker, or a cluster of that many workers per runtime, in which a
	// follower is then killed with SIGKILL.
	Workers []int
	// Isolations are the plugin.isolation settings Tributary runs with
	// (default plugin and connector).
	Isolations []string
	// KafkaConnectDelays are the scheduled.rebalance.max.delay.ms values a
	// Kafka Connect cluster of more than one worker runs with, one run
	// each (default 300000, Kafka Connect's default, and 0). One worker
	// runs once, with 0.
	KafkaConnectDelays []int
	// NoKafkaConnect leaves out Kafka Connect.
	NoKafkaConnect bool
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds the wait until a run's connectors all run, and again
	// until they run elsewhere after a worker's kill.
	Timeout time.Duration
	// Parallel is how many creates are in flight at once (default 8).
	Parallel int
	Progress io.Writer
}

// ManyResult is one runtime at one connector count on some workers.
type ManyResult struct {
	Runtime string `json:"runtime"`
	// Workers is the number of workers in the cluster.
	Workers int `json:"workers"`
	// Settings names the runtime's settings that matter to the failover.
	Settings   string `json:"settings,omitempty"`
	Connectors int    `json:"connectors"`
	// Processes is the runtime's process count with every connector
	// running (the workers and their plugin processes; 1 per worker for
	// Kafka Connect).
	Processes int `json:"processes"`
	// IdlePSSMB and IdleRSSMB are the runtime's memory with no connector,
	// 2 s after its workers were ready.
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
	StatusMs float64 `json:"status_ms"`
	// ReadySeconds is the slowest worker's start, until it answered.
	ReadySeconds float64 `json:"ready_seconds"`
	// On a cluster: Moved is the number of connectors and tasks the
	// killed follower ran, FailoverSeconds the time from its SIGKILL (its
	// plugin processes with it) until every connector and task was
	// RUNNING on the others, and Duplicates the connectors whose file was
	// not held open by exactly one process, of the worker its status
	// names (a task running twice, or not where its status says), before
	// the kill and after the failover.
	Moved            int     `json:"moved,omitempty"`
	FailoverSeconds  float64 `json:"failover_seconds,omitempty"`
	DuplicatesBefore int     `json:"duplicates_before,omitempty"`
	DuplicatesAfter  int     `json:"duplicates_after,omitempty"`
	Error            string  `json:"error,omitempty"`
	Skipped          string  `json:"skipped,omitempty"`
}

// ManyReport is RunMany's result.
type ManyReport struct {
	runtimesReport[*ManyResult]
}

func (x *ManyResult) failure() string { return x.Error }

// runtimesReport is the report of a benchmark that runs the runtimes side
// by side on one broker: a result per runtime and run.
type runtimesReport[R interface{ failure() string }] struct {
	Host    Host    `json:"host"`
	Broker  string  `json:"broker"`
	Results []R     `json:"results"`
	Elapsed float64 `json:"elapsed_seconds"`
}

// Failed reports whether a run failed (a skipped one is not a failure).
func (r *runtimesReport[R]) Failed() bool {
	for _, x := range r.Results {
		if x.failure() != "" {
			return true
		}
	}
	return false
}

// RunMany runs the many-connectors benchmark: for each count N and
// cluster size W, N FileStreamSource connectors (tasks.max=1, each reading
// an empty file of its own) on W fresh workers of each runtime —
// Tributary with each plugin.isolation of o.Isolations, then Kafka
// Connect 4.4 (on a cluster, with each of o.KafkaConnectDelays) — all on
// one bundled broker (in-process), one run at a time.
func RunMany(ctx context.Context, o ManyOptions) (*ManyReport, error) {
	if len(o.Counts) == 0 {
		o.Counts = []int{10, 100, 1000}
	}
	if len(o.Workers) == 0 {
		o.Workers = []int{1}
	}
	if len(o.Isolations) == 0 {
		o.Isolations = []string{"plugin", "connector"}
	}
	if len(o.KafkaConnectDelays) == 0 {
		o.KafkaConnectDelays = []int{300000, 0}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	begin := time.Now()
	rep := &ManyReport{runtimesReport[*ManyResult]{Host: hostInfo(), Broker: "tributary (bundled broker, in this process)"}}
	env, err := newBenchEnv(ctx, o.Dir, "many", o.Progress)
	if err != nil {
		return nil, err
	}
	defer env.close()

	for _, n := range o.Counts {
		for _, w := range o.Workers {
			for _, iso := range o.Isolations {
				res := &ManyResult{Runtime: "tributary plugin.isolation=" + iso, Workers: w, Connectors: n}
				if w > 1 {
					res.Settings = "scheduled.rebalance.max.delay.ms=1000 (default)"
				}
				rep.Results = append(rep.Results, res)
				group := fmt.Sprintf("tributary-%s-%d-w%d", iso, n, w)
				env.logf("%s, %d connectors on %d worker(s): starting the workers", res.Runtime, n, w)
				manyRun(ctx, o, env, group, res, func(ctx context.Context, i int) (*node, error) {
					return startTributaryNode(ctx, o.Exe, filepath.Join(env.work, fmt.Sprintf("%s-%d", group, i)), env.bootstrap, group,
						map[string]string{"plugin.isolation": iso})
				})
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
			}
			delays := o.KafkaConnectDelays
			if w == 1 {
				delays = []int{0}
			}
			for _, delay := range delays {
				res := &ManyResult{Runtime: "kafka-connect", Workers: w, Connectors: n}
				if w > 1 {
					res.Settings = fmt.Sprintf("scheduled.rebalance.max.delay.ms=%d", delay)
					if delay == 300000 {
						res.Settings += " (default)"
					}
				}
				rep.Results = append(rep.Results, res)
				if o.NoKafkaConnect {
					res.Skipped = "--no-kafka-connect"
					continue
				}
				group := fmt.Sprintf("kafka-connect-%d-w%d-d%d", n, w, delay)
				env.logf("kafka-connect, %d connectors on %d worker(s) (%s): starting Kafka Connect 4.4 (distributed, -Xms256M -Xmx2G, G1)", n, w, res.Settings)
				props := map[string]string{"scheduled.rebalance.max.delay.ms": strconv.Itoa(delay), "offset.flush.interval.ms": "1000"}
				manyRun(ctx, o, env, group, res, func(ctx context.Context, i int) (*node, error) {
					return startKafkaConnectNode(ctx, filepath.Join(env.work, fmt.Sprintf("%s-%d", group, i)), env.bootstrap, group, props)
				})
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
			}
		}
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, ctx.Err()
}

// benchEnv is what a benchmark of workers runs on: a bundled broker in
// this process and a working directory.
type benchEnv struct {
	bootstrap string
	work      string
	logf      func(string, ...any)
	close     func()
}

// newBenchEnv starts the bundled broker and makes a working directory
// under dir (default $TMPDIR); progress lines are prefixed with
// "bench name: ".
func newBenchEnv(ctx context.Context, dir, name string, progress io.Writer) (*benchEnv, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	e := &benchEnv{logf: func(format string, args ...any) {
		if progress != nil {
			fmt.Fprintf(progress, "bench "+name+": "+format+"\n", args...)
		}
	}}
	e.logf("starting the bundled broker")
	br, err := start(ctx, Tributary, dir)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	work, err := os.MkdirTemp(dir, "tributary-bench-"+name+"-")
	if err != nil {
		br.close()
		return nil, err
	}
	e.bootstrap, e.work = br.bootstrap, work
	e.close = func() {
		os.RemoveAll(work)
		br.close()
	}
	return e, nil
}

// clusterMemory returns the PSS and RSS (MB) summed over the nodes'
// processes and their descendants, and how many processes that is.
func clusterMemory(nodes []*node) (pss, rss float64, procs int) {
	for _, n := range nodes {
		for _, p := range append([]int{n.pid}, descendants(n.pid)...) {
			pss += pssMB(p)
			rss += rssMB(p)
			procs++
		}
	}
	return pss, rss, procs
}

// clusterCPU is the CPU seconds of the nodes' processes (their reaped
// children included).
func clusterCPU(nodes []*node) float64 {
	var t float64
	for _, n := range nodes {
		t += cpuSeconds(n.pid, true)
	}
	return t
}

// manyRun starts res.Workers workers with startNode (all at once), creates
// o.Parallel connectors at a time until res's count exist, waits until all
// run and measures the runtime; on a cluster it then kills a follower and
// measures until everything runs on the others.
func manyRun(ctx context.Context, o ManyOptions, env *benchEnv, group string, res *ManyResult, startNode func(ctx context.Context, i int) (*node, error)) {
	c := &benchCluster{group: group, nodes: make([]*node, res.Workers)}
	defer c.close()
	errs := make([]error, res.Workers)
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.nodes[i], errs[i] = startNode(ctx, i) }()
	}
	wg.Wait()
	for _, err := range errs {
		switch {
		case errors.Is(err, harness.ErrUnavailable):
			res.Skipped = err.Error()
			env.logf("%s: skipped: %v", res.Runtime, err)
			return
		case err != nil:
			res.Error = err.Error()
			return
		}
	}
	for _, n := range c.nodes {
		res.ReadySeconds = max(res.ReadySeconds, n.ready.Seconds())
	}
	time.Sleep(2 * time.Second) // let start-up settle
	res.IdlePSSMB, res.IdleRSSMB, _ = clusterMemory(c.nodes)
	files := filepath.Join(env.work, group+"-files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		res.Error = err.Error()
		return
	}
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	start := time.Now()
	var (
		mu      sync.Mutex
		failure error
	)
	next := make(chan int)
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := manyName(i)
				file := filepath.Join(files, name+".txt")
				err := os.WriteFile(file, nil, 0o644)
				if err == nil {
					body, _ := json.Marshal(map[string]any{"name": name, "config": map[string]string{
						"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
						"file": file, "topic": "many-topic"}})
					err = createConnector(ctx, client, c.nodes[i%len(c.nodes)].url, body)
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
	env.logf("%s: %d connectors created in %.1f s", res.Runtime, res.Connectors, res.CreateSeconds)
	before, err := settled(ctx, group, c.nodes, 2*res.Connectors, o.Timeout)
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.RunningSeconds = time.Since(start).Seconds()
	env.logf("%s: all %d RUNNING %.1f s after the first create", res.Runtime, res.Connectors, res.RunningSeconds)
	time.Sleep(5 * time.Second)
	res.PSSMB, res.RSSMB, res.Processes = clusterMemory(c.nodes)
	cpu0, t0 := clusterCPU(c.nodes), time.Now()
	time.Sleep(10 * time.Second)
	res.IdleCPUPercent = 100 * (clusterCPU(c.nodes) - cpu0) / time.Since(t0).Seconds()
	var lat []float64
	for range 5 {
		t := time.Now()
		if _, _, err := runningConnectors(ctx, c.nodes[0].url); err != nil {
			res.Error = err.Error()
			return
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
	}
	slices.Sort(lat)
	res.StatusMs = lat[len(lat)/2]
	env.logf("%s, %d connectors on %d worker(s): %d processes, PSS %.0f MB, RSS %.0f MB, idle CPU %.1f%%, status %.0f ms",
		res.Runtime, res.Connectors, res.Workers, res.Processes, res.PSSMB, res.RSSMB, res.IdleCPUPercent, res.StatusMs)
	if res.Workers < 2 {
		return
	}
	res.DuplicatesBefore = misplaced(ctx, c.nodes, files, before, res.Connectors)
	leader := c.leaderURL()
	vi := -1
	for i, n := range c.nodes {
		if n.url == leader {
			continue
		}
		for _, id := range before.on {
			if id == n.id() {
				vi = i
			}
		}
	}
	if vi < 0 {
		res.Error = fmt.Sprintf("no follower (leader %q) runs a connector", leader)
		return
	}
	victim := c.nodes[vi]
	for _, id := range before.on {
		if id == victim.id() {
			res.Moved++
		}
	}
	killed := time.Now()
	victim.kill()
	c.nodes[vi] = nil
	after, err := settled(ctx, group, c.alive(), 2*res.Connectors, o.Timeout)
	if err != nil {
		res.Error = "after the kill: " + err.Error()
		return
	}
	res.FailoverSeconds = time.Since(killed).Seconds()
	res.DuplicatesAfter = misplaced(ctx, c.alive(), files, after, res.Connectors)
	env.logf("%s: SIGKILL of %s (%d connectors and tasks): all RUNNING on the others %.1f s later; misplaced or duplicate tasks %d before, %d after",
		res.Runtime, victim.id(), res.Moved, res.FailoverSeconds, res.DuplicatesBefore, res.DuplicatesAfter)
}

func manyName(i int) string { return fmt.Sprintf("many-%04d", i) }

// misplaced counts the connectors 0..n-1 whose file (under dir) is not
// held open by exactly one process of nodes' process trees, of the worker
// w says its task runs on: what the processes run, apart from what the
// statuses say (a FileStreamSource task holds its file open while it
// runs, in Tributary's plugin process and in Kafka Connect's JVM alike).
// A task that just started may not have opened its file yet: it looks
// again for up to 30 s while any is misplaced.
func misplaced(ctx context.Context, nodes []*node, dir string, w where, n int) int {
	bad := 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		held := map[string][]string{}
		for _, nd := range nodes {
			for _, pid := range append([]int{nd.pid}, descendants(nd.pid)...) {
				fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
				for _, fd := range fds {
					target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
					if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
						held[target] = append(held[target], nd.id())
					}
				}
			}
		}
		bad = 0
		for i := range n {
			got := held[filepath.Join(dir, manyName(i)+".txt")]
			if len(got) != 1 || got[0] != w.on[manyName(i)+"-0"] {
				bad++
			}
		}
		if bad == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return bad
		}
	}
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

// WriteText prints the table: per count and cluster size, each runtime's
// memory, per connector at the margin (from the count before), time to
// RUNNING, idle CPU, status latency and, on a cluster, the failover after
// a follower's SIGKILL; then the goals of issue 39.
func (r *ManyReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "Many connectors (FileStreamSource, one task each, idle): %s/%s, %d CPUs, %s; broker: %s\n\n",
		r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, r.Broker)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "runtime\tsettings\tworkers\tconnectors\tprocesses\tidle PSS MB\tPSS MB\tRSS MB\tPSS MB/connector (margin)\tcreated in\tall RUNNING after\tidle CPU %\tstatus ms\tkilled worker ran\tall RUNNING again after\tmisplaced/duplicate before, after\t")
	prev := map[string]*ManyResult{}
	for _, x := range r.Results {
		settings := x.Settings
		if settings == "" {
			settings = "-"
		}
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\tskipped: %s\t\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, settings, x.Workers, x.Connectors, firstLines(x.Skipped, 1))
			continue
		case x.Error != "" && x.RunningSeconds == 0:
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\tfailed: %s\t\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, settings, x.Workers, x.Connectors, firstLines(x.Error, 1))
			continue
		}
		key := fmt.Sprintf("%s %s %d", x.Runtime, x.Settings, x.Workers)
		margin := "-"
		if p := prev[key]; p != nil && x.Connectors > p.Connectors {
			margin = fmt.Sprintf("%.2f", (x.PSSMB-p.PSSMB)/float64(x.Connectors-p.Connectors))
		} else if x.Connectors > 0 {
			margin = fmt.Sprintf("%.2f", (x.PSSMB-x.IdlePSSMB)/float64(x.Connectors))
		}
		prev[key] = x
		failover, moved, dups := "-", "-", "-"
		switch {
		case x.Error != "":
			failover = "failed: " + firstLines(x.Error, 1)
		case x.Workers > 1:
			moved = fmt.Sprintf("%d", x.Moved)
			failover = fmt.Sprintf("%.1f s", x.FailoverSeconds)
			dups = fmt.Sprintf("%d, %d", x.DuplicatesBefore, x.DuplicatesAfter)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%s\t%.1f s\t%.1f s\t%.1f\t%.0f\t%s\t%s\t%s\t\n", x.Runtime, settings, x.Workers,
			x.Connectors, x.Processes, x.IdlePSSMB, x.PSSMB, x.RSSMB, margin, x.CreateSeconds, x.RunningSeconds, x.IdleCPUPercent, x.StatusMs,
			moved, failover, dups)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	ok := func(x *ManyResult) bool { return x.Error == "" && x.Skipped == "" }
	for _, x := range r.Results {
		if x.Runtime != "tributary plugin.isolation=plugin" || !ok(x) {
			continue
		}
		for _, k := range r.Results {
			if k.Runtime != "kafka-connect" || k.Connectors != x.Connectors || k.Workers != x.Workers || !ok(k) {
				continue
			}
			fmt.Fprintf(out, "N=%d on %d worker(s): Tributary PSS %.0f MB vs Kafka Connect RSS %.0f MB (%.2fx; goal <=): %s; all RUNNING %.1f s vs %.1f s (goal <=): %s",
				x.Connectors, x.Workers, x.PSSMB, k.RSSMB, x.PSSMB/k.RSSMB, metOrNot(x.PSSMB <= k.RSSMB), x.RunningSeconds, k.RunningSeconds,
				metOrNot(x.RunningSeconds <= k.RunningSeconds))
			if x.Workers > 1 {
				fmt.Fprintf(out, "; after a SIGKILL all RUNNING again %.1f s vs %.1f s (Kafka Connect %s, %.1fx)", x.FailoverSeconds, k.FailoverSeconds, k.Settings,
					k.FailoverSeconds/x.FailoverSeconds)
			}
			fmt.Fprintln(out)
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

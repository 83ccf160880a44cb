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
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// DefaultCreates is the create burst's default connector count.
const DefaultCreates = 200

// CreatesOptions configures RunCreates.
type CreatesOptions struct {
	// Exe is the tributary binary started as `Exe worker`.
	Exe string
	// Connectors is how many connectors the burst creates, all at once.
	Connectors int
	// NoKafkaConnect leaves out Kafka Connect.
	NoKafkaConnect bool
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds each runtime's burst and the wait until its
	// connectors run.
	Timeout  time.Duration
	Progress io.Writer
}

// BurstResult is one runtime's create burst.
type BurstResult struct {
	Runtime    string `json:"runtime"`
	Connectors int    `json:"connectors"`
	// Seconds is the wall time from the first request sent to the last
	// answer received.
	Seconds float64 `json:"seconds"`
	// Statuses counts the answers by HTTP status ("error" for a request
	// that got no answer).
	Statuses map[string]int `json:"statuses"`
	// P50Ms, P99Ms and MaxMs are the answers' latencies.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// CPUSeconds is the CPU time the worker (and, for Tributary, its plugin
	// processes) used from the first request to the last answer.
	CPUSeconds float64 `json:"cpu_seconds"`
	// RunningSeconds is the time from the first request until every
	// created connector and its task were RUNNING (0 if they were not
	// within the timeout).
	RunningSeconds float64 `json:"running_seconds"`
	// CPUSecondsToRunning is the CPU time until then.
	CPUSecondsToRunning float64 `json:"cpu_seconds_to_running"`
	// HealthSamples and HealthNotOK count GET /health samples taken every
	// 250 ms during the burst and those not answering 200; HealthAfter*
	// the same from the last answer until every connector was RUNNING.
	HealthSamples      int `json:"health_samples"`
	HealthNotOK        int `json:"health_not_ok"`
	HealthAfterSamples int `json:"health_after_samples"`
	HealthAfterNotOK   int `json:"health_after_not_ok"`
	// ErrorsThatCreated lists connectors whose create answered an error
	// but which exist afterwards (an error that changed state).
	ErrorsThatCreated []string `json:"errors_that_created,omitempty"`
	// CreatedButMissing lists connectors answered 201 that do not exist
	// afterwards.
	CreatedButMissing []string `json:"created_but_missing,omitempty"`
	ReadySeconds      float64  `json:"ready_seconds"`
	Error             string   `json:"error,omitempty"`
	Skipped           string   `json:"skipped,omitempty"`
}

// CreatesReport is RunCreates's result.
type CreatesReport struct {
	runtimesReport[*BurstResult]
}

func (x *BurstResult) failure() string { return x.Error }

func findBurst(r *CreatesReport, runtime string) *BurstResult {
	for _, x := range r.Results {
		if x.Runtime == runtime && x.Error == "" && x.Skipped == "" {
			return x
		}
	}
	return nil
}

// RunCreates runs the REST create-burst benchmark: on one bundled broker
// (in-process), a Tributary worker process and then a Kafka Connect 4.4
// worker each get Connectors concurrent POST /connectors requests
// (FileStreamSource, one task, each reading an empty file of its own).
func RunCreates(ctx context.Context, o CreatesOptions) (*CreatesReport, error) {
	if o.Connectors <= 0 {
		o.Connectors = DefaultCreates
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	begin := time.Now()
	rep := &CreatesReport{runtimesReport[*BurstResult]{Host: hostInfo(), Broker: "tributary (bundled broker, in this process)"}}
	env, err := newBenchEnv(ctx, o.Dir, "rest", o.Progress)
	if err != nil {
		return nil, err
	}
	defer env.close()
	logf, work := env.logf, env.work

	tres := &BurstResult{Runtime: "tributary", Connectors: o.Connectors}
	rep.Results = append(rep.Results, tres)
	func() {
		dir := filepath.Join(work, "tributary")
		logf("tributary: starting a worker process (%s worker)", o.Exe)
		w, err := startTributaryWorker(ctx, o.Exe, dir, env.bootstrap)
		if err != nil {
			tres.Error = err.Error()
			return
		}
		defer func() {
			w.stop()
			logf("tributary: worker stopped")
		}()
		tres.ReadySeconds = w.ready.Seconds()
		time.Sleep(2 * time.Second) // let start-up settle
		burst(ctx, o, logf, w.url, w.pid(), true, dir, tres)
	}()
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}

	kres := &BurstResult{Runtime: "kafka-connect", Connectors: o.Connectors}
	rep.Results = append(rep.Results, kres)
	if o.NoKafkaConnect {
		kres.Skipped = "--no-kafka-connect"
	} else {
		logf("kafka-connect: starting Kafka Connect 4.4 (distributed, JVM heap as connect-distributed.sh: -Xms256M -Xmx2G, G1)")
		n, err := startKafkaConnectNode(ctx, filepath.Join(work, "kafka-connect"), env.bootstrap, "bench-rest-kafka-connect", nil)
		switch {
		case errors.Is(err, harness.ErrUnavailable):
			kres.Skipped = err.Error()
			logf("kafka-connect: skipped: %v", err)
		case err != nil:
			kres.Error = err.Error()
		default:
			kres.ReadySeconds = n.ready.Seconds()
			time.Sleep(2 * time.Second)
			burst(ctx, o, logf, n.url, n.pid, false, filepath.Join(work, "kafka-connect"), kres)
			n.stop()
			logf("kafka-connect: stopped")
		}
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, ctx.Err()
}

// burst creates o.Connectors connectors at url at once and measures the
// answers, /health during the burst, the CPU time of pid (with its
// descendants when tree) and the time until all run.
func burst(ctx context.Context, o CreatesOptions, logf func(string, ...any), url string, pid int, tree bool, dir string, res *BurstResult) {
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		res.Error = err.Error()
		return
	}
	names := make([]string, o.Connectors)
	bodies := make([][]byte, o.Connectors)
	for i := range names {
		names[i] = fmt.Sprintf("burst-%04d", i)
		file := filepath.Join(files, names[i]+".txt")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			res.Error = err.Error()
			return
		}
		bodies[i], _ = json.Marshal(map[string]any{"name": names[i], "config": map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
			"file": file, "topic": "burst-topic"}})
	}
	// One connection per request, as a burst of independent clients.
	client := &http.Client{Timeout: o.Timeout, Transport: &http.Transport{MaxIdleConnsPerHost: o.Connectors, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		burstDone bool // guarded by mu
		statuses  = map[string]int{}
		codes     = make([]int, o.Connectors)
		lat       []float64
	)
	healthStop := make(chan struct{})
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		hc := &http.Client{Timeout: 15 * time.Second}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-healthStop:
				return
			case <-tick.C:
			}
			ok := false
			if resp, err := hc.Get(url + "/health"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok = resp.StatusCode == http.StatusOK
			}
			mu.Lock()
			if burstDone {
				res.HealthAfterSamples++
				if !ok {
					res.HealthAfterNotOK++
				}
			} else {
				res.HealthSamples++
				if !ok {
					res.HealthNotOK++
				}
			}
			mu.Unlock()
		}
	}()
	logf("%s: %d concurrent POST /connectors", res.Runtime, o.Connectors)
	cpu0 := cpuSeconds(pid, tree)
	start := time.Now()
	gate := make(chan struct{})
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			t0 := time.Now()
			code := 0
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/connectors", bytes.NewReader(bodies[i]))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			codes[i] = code
			key := "error"
			if code != 0 {
				key = strconv.Itoa(code)
			}
			statuses[key]++
			lat = append(lat, float64(d.Microseconds())/1000)
		}()
	}
	close(gate)
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.CPUSeconds = cpuSeconds(pid, tree) - cpu0
	mu.Lock()
	burstDone = true
	mu.Unlock()
	defer func() {
		close(healthStop)
		<-healthDone
	}()
	res.Statuses = statuses
	slices.Sort(lat)
	res.P50Ms, res.P99Ms, res.MaxMs = percentile(lat, 0.50), percentile(lat, 0.99), lat[len(lat)-1]
	mu.Lock()
	logf("%s: %d creates answered in %.2f s (%v); /health not 200 in %d of %d samples", res.Runtime, o.Connectors, res.Seconds, statuses,
		res.HealthNotOK, res.HealthSamples)
	mu.Unlock()

	// Every create that answered an error must not have created its
	// connector; every 201 must have.
	created := map[string]bool{}
	for i, n := range names {
		if codes[i] == http.StatusCreated {
			created[n] = true
		}
	}
	deadline := time.Now().Add(o.Timeout)
	for {
		running, exist, err := runningConnectors(ctx, url)
		if err == nil {
			allRunning := true
			for n := range created {
				if !running[n] {
					allRunning = false
					break
				}
			}
			if allRunning {
				res.RunningSeconds = time.Since(start).Seconds()
				res.CPUSecondsToRunning = cpuSeconds(pid, tree) - cpu0
				for i, n := range names {
					if codes[i] != http.StatusCreated && exist[n] {
						res.ErrorsThatCreated = append(res.ErrorsThatCreated, n)
					}
					if codes[i] == http.StatusCreated && !exist[n] {
						res.CreatedButMissing = append(res.CreatedButMissing, n)
					}
				}
				logf("%s: all %d created connectors RUNNING after %.2f s", res.Runtime, len(created), res.RunningSeconds)
				return
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			logf("%s: not every connector RUNNING within %v (last error: %v)", res.Runtime, o.Timeout, err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// runningConnectors returns the connectors whose connector and tasks
// (at least one) are RUNNING, and every connector that exists.
func runningConnectors(ctx context.Context, url string) (running, exist map[string]bool, err error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/connectors?expand=status", nil)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, nil, fmt.Errorf("GET /connectors?expand=status: %s: %s", resp.Status, b)
	}
	var body map[string]struct {
		Status struct {
			Connector struct {
				State string `json:"state"`
			} `json:"connector"`
			Tasks []struct {
				State string `json:"state"`
			} `json:"tasks"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, nil, err
	}
	running, exist = map[string]bool{}, map[string]bool{}
	for n, e := range body {
		exist[n] = true
		ok := e.Status.Connector.State == "RUNNING" && len(e.Status.Tasks) > 0
		for _, t := range e.Status.Tasks {
			ok = ok && t.State == "RUNNING"
		}
		running[n] = ok
	}
	return running, exist, nil
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// cpuSeconds is the CPU time (user + system) of pid, including its reaped
// children (plugin processes that have exited), and, when tree, of its
// live descendants.
func cpuSeconds(pid int, tree bool) float64 {
	t := procCPU(pid) + reapedCPU(pid)
	if tree {
		for _, c := range descendants(pid) {
			t += procCPU(c)
		}
	}
	return t.Seconds()
}

// reapedCPU is the CPU time of pid's children that exited and were waited
// for (cutime and cstime of /proc/<pid>/stat).
func reapedCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 { // after the command: state(0) … cutime(13) cstime(14)
		return 0
	}
	ut, _ := strconv.ParseInt(f[13], 10, 64)
	st, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// TargetCreateRatio is the goal: Tributary answers the burst at least as
// fast as Kafka Connect (Kafka Connect's time / Tributary's time).
const TargetCreateRatio = 1.0

// WriteText prints the results and the goal.
func (r *CreatesReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "REST create burst: %s/%s, %d CPUs, %s; broker: %s\n\n", r.Host.GOOS, r.Host.GOARCH, r.Host.CPUs, r.Host.GoVersion, r.Broker)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "runtime\tcreates\tanswered in\tanswers\tp50 ms\tp99 ms\tmax ms\tCPU s\tCPU ms/create\t/health not 200\tall RUNNING after\tCPU s to RUNNING\t/health not 200 until then\terrors that created\t201s missing\t")
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\tskipped: %s\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, firstLines(x.Skipped, 1))
		case x.Error != "":
			fmt.Fprintf(w, "%s\tfailed: %s\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", x.Runtime, firstLines(x.Error, 1))
		default:
			running := "-"
			if x.RunningSeconds > 0 {
				running = fmt.Sprintf("%.2f s", x.RunningSeconds)
			}
			fmt.Fprintf(w, "%s\t%d\t%.2f s\t%s\t%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t%d of %d\t%s\t%.2f\t%d of %d\t%d\t%d\t\n", x.Runtime, x.Connectors, x.Seconds,
				formatStatuses(x.Statuses), x.P50Ms, x.P99Ms, x.MaxMs, x.CPUSeconds, 1000*x.CPUSeconds/float64(x.Connectors),
				x.HealthNotOK, x.HealthSamples, running, x.CPUSecondsToRunning, x.HealthAfterNotOK, x.HealthAfterSamples,
				len(x.ErrorsThatCreated), len(x.CreatedButMissing))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	t, k := findBurst(r, "tributary"), findBurst(r, "kafka-connect")
	if t != nil && k != nil {
		ratio := k.Seconds / t.Seconds
		res := "not met"
		if ratio >= TargetCreateRatio && t.Statuses["201"] == t.Connectors {
			res = "met"
		}
		fmt.Fprintf(out, "creates answered, Kafka Connect / Tributary time: %.2fx (%.2f s vs %.2f s); goal >= %.1fx with every create 201: %s\n",
			ratio, k.Seconds, t.Seconds, TargetCreateRatio, res)
		if t.RunningSeconds > 0 && k.RunningSeconds > 0 {
			fmt.Fprintf(out, "all RUNNING, Kafka Connect / Tributary time: %.2fx (%.2f s vs %.2f s) (informational)\n",
				k.RunningSeconds/t.RunningSeconds, k.RunningSeconds, t.RunningSeconds)
		}
	}
	fmt.Fprintf(out, "\n(%.0f s in all)\n", r.Elapsed)
	return nil
}

func formatStatuses(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// WriteJSON prints the report as JSON.
func (r *CreatesReport) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

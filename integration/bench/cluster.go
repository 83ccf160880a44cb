package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// ClusterOptions configures RunCluster.
type ClusterOptions struct {
	// Exe is the tributary binary started as `Exe worker`.
	Exe string
	// Runs is the number of measured runs of each measurement (default 5).
	Runs int
	// DefaultRuns is the number of failover runs of Kafka Connect with its
	// defaults, each of which waits out scheduled.rebalance.max.delay.ms
	// (5 minutes; default 2).
	DefaultRuns int
	// Records is the datagen → discard record count (default 1,000,000).
	Records int
	// NoKafkaConnect leaves out Kafka Connect.
	NoKafkaConnect bool
	// Dir is where working directories are created (default $TMPDIR).
	Dir string
	// Timeout bounds each wait (default 10 minutes).
	Timeout  time.Duration
	Progress io.Writer
}

// Stat is the median and maximum of runs.
type Stat struct {
	Median float64   `json:"median"`
	Max    float64   `json:"max"`
	Runs   []float64 `json:"runs"`
}

func statOf(xs []float64) Stat { return Stat{Median: medianOf(xs), Max: maxOf(xs), Runs: xs} }

// FailoverResult is one runtime's kill -9 failover.
type FailoverResult struct {
	Runtime  string `json:"runtime"`
	Settings string `json:"settings"`
	// Running: from the kill to every connector and task RUNNING on the
	// other workers, in seconds.
	Running Stat `json:"running_s"`
	// Flowing: from the kill to the killed worker's sources producing and
	// its sinks writing again, in seconds.
	Flowing Stat   `json:"flowing_s"`
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// JoinResult is a worker joining a cluster of three.
type JoinResult struct {
	// FirstRunning: from the new worker's process start to its first task
	// RUNNING, in seconds.
	FirstRunning Stat `json:"first_running_s"`
	// Moved is the number of tasks moved to the new worker per run;
	// RestartedElsewhere the number of other tasks that restarted (goal 0).
	Moved              []int  `json:"moved"`
	RestartedElsewhere []int  `json:"restarted_elsewhere"`
	Error              string `json:"error,omitempty"`
}

// RESTResult is the latency of a config update through the leader and
// through a follower, in milliseconds.
type RESTResult struct {
	Runtime  string `json:"runtime"`
	Leader   Stat   `json:"leader_ms"`
	Follower Stat   `json:"follower_ms"`
	Skipped  string `json:"skipped,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ThroughputResult is datagen → discard with some workers.
type ThroughputResult struct {
	Workers       int     `json:"workers"`
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"records_per_sec"`
	// CPUPerRecord is the workers' and their plugins' CPU seconds per
	// record (the broker, in this process, is not counted).
	CPUPerRecord float64 `json:"cpu_seconds_per_record"`
	Error        string  `json:"error,omitempty"`
}

// ClusterReport is RunCluster's result.
type ClusterReport struct {
	Host       Host               `json:"host"`
	Broker     string             `json:"broker"`
	Failover   []FailoverResult   `json:"failover"`
	Join       JoinResult         `json:"join"`
	REST       []RESTResult       `json:"rest"`
	Throughput []ThroughputResult `json:"throughput"`
	Elapsed    float64            `json:"elapsed_s"`
}

// Failed reports whether a measurement failed (skipped ones do not).
func (r *ClusterReport) Failed() bool {
	bad := r.Join.Error != ""
	for _, f := range r.Failover {
		bad = bad || f.Error != ""
	}
	for _, x := range r.REST {
		bad = bad || x.Error != ""
	}
	for _, x := range r.Throughput {
		bad = bad || x.Error != ""
	}
	return bad
}

// RunCluster measures a cluster of Tributary workers (separate processes)
// on the bundled broker, side by side with Kafka Connect 4.4 workers on the
// same broker: kill -9 failover, a worker joining, REST writes through a
// follower and datagen → discard with one and two workers.
func RunCluster(ctx context.Context, o ClusterOptions) (*ClusterReport, error) {
	if o.Runs <= 0 {
		o.Runs = 5
	}
	if o.DefaultRuns <= 0 {
		o.DefaultRuns = 2
	}
	if o.Records <= 0 {
		o.Records = 1_000_000
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	begin := time.Now()
	rep := &ClusterReport{Host: hostInfo(), Broker: "tributary (bundled broker, in this process)"}
	env, err := newBenchEnv(ctx, o.Dir, "cluster", o.Progress)
	if err != nil {
		return nil, err
	}
	defer env.close()
	b := &clusterBench{o: o, logf: env.logf, bootstrap: env.bootstrap, work: env.work}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.bootstrap))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	b.adm = kadm.NewClient(cl)

	fo, rest := b.tributaryFailover(ctx)
	rep.Failover = append(rep.Failover, fo)
	rep.REST = append(rep.REST, rest)
	if ctx.Err() == nil {
		rep.Join = b.join(ctx)
	}
	for _, w := range []int{1, 2} {
		if ctx.Err() == nil {
			rep.Throughput = append(rep.Throughput, b.throughput(ctx, w))
		}
	}
	for _, delay := range []string{"0", ""} {
		if ctx.Err() != nil {
			break
		}
		fo, rest := b.kafkaConnectFailover(ctx, delay)
		rep.Failover = append(rep.Failover, fo)
		if delay == "0" {
			rep.REST = append(rep.REST, rest)
		}
	}
	rep.Elapsed = time.Since(begin).Seconds()
	return rep, ctx.Err()
}

type clusterBench struct {
	o         ClusterOptions
	logf      func(string, ...any)
	bootstrap string
	work      string
	adm       *kadm.Client
	seq       int
}

// node is one worker of a benchmarked cluster.
type node struct {
	url string // REST base
	log string // log file
	// pid is the worker's process (a Tributary worker's plugin processes
	// are its descendants; Kafka Connect's JVM has none).
	pid int
	// ready is the time from the start until the worker answered.
	ready time.Duration
	// kill kills it with SIGKILL; stop ends it at the end of a run.
	kill, stop func()
	// restart starts it again (a new process); nil if it cannot.
	restart func(ctx context.Context) (*node, error)
}

func (n *node) id() string { return strings.TrimPrefix(n.url, "http://") }

// benchCluster is the workers of one group.
type benchCluster struct {
	group string
	nodes []*node // nil: killed
}

func (c *benchCluster) alive() []*node {
	var out []*node
	for _, n := range c.nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

func (c *benchCluster) close() {
	for _, n := range c.nodes {
		if n != nil {
			n.stop()
		}
	}
}

var leaderRE = regexp.MustCompile(`leader_url=(\S+)|leaderUrl='([^']*)'`)

// leaderURL is the leader's REST URL from the last generation the workers
// logged (Tributary: leader_url=; Kafka Connect: leaderUrl=”).
func (c *benchCluster) leaderURL() string {
	url := ""
	for _, n := range c.alive() {
		f, err := os.Open(n.log)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			if m := leaderRE.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1] + m[2]
			}
		}
		f.Close()
	}
	return strings.TrimRight(url, "/")
}

// tributaryNode starts a Tributary worker in group.
func (b *clusterBench) tributaryNode(ctx context.Context, group string, extra map[string]string) (*node, error) {
	b.seq++
	return startTributaryNode(ctx, b.o.Exe, filepath.Join(b.work, fmt.Sprintf("%s-w%d", group, b.seq)), b.bootstrap, group, extra)
}

// kafkaConnectNode starts a Kafka Connect 4.4 worker in group.
func (b *clusterBench) kafkaConnectNode(ctx context.Context, group string, props map[string]string) (*node, error) {
	b.seq++
	return startKafkaConnectNode(ctx, filepath.Join(b.work, fmt.Sprintf("%s-kc%d", group, b.seq)), b.bootstrap, group, props)
}

// startTributaryNode starts `exe worker` in group with its files in dir
// and extra settings over the benchmark's.
func startTributaryNode(ctx context.Context, exe, dir, bootstrap, group string, extra map[string]string) (*node, error) {
	addr, err := freeListener()
	if err != nil {
		return nil, err
	}
	props := workerProps(bootstrap, group, addr)
	maps.Copy(props, extra)
	var mk func(ctx context.Context) (*node, error)
	mk = func(ctx context.Context) (*node, error) {
		w, err := startWorkerProps(ctx, exe, dir, props)
		if err != nil {
			return nil, err
		}
		kill := func() {
			_ = syscallKillGroup(w.cmd.Process.Pid)
			<-w.done
		}
		return &node{url: w.url, log: w.log, pid: w.pid(), ready: w.ready, restart: mk, kill: kill, stop: kill}, nil
	}
	return mk(ctx)
}

// startKafkaConnectNode starts a Kafka Connect 4.4 worker in group
// (connect-distributed.sh's heap and GC) with its files in dir and props
// over the harness's settings.
func startKafkaConnectNode(ctx context.Context, dir, bootstrap, group string, props map[string]string) (*node, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c, err := harness.StartKafkaConnect(ctx, dir, bootstrap, props, harness.WithConnectGroup(group), harness.WithConnectJVMArgs(connectJVMArgs...))
	if err != nil {
		return nil, err
	}
	pid := findPID(filepath.Join(dir, "connect-distributed.properties"))
	if pid == 0 {
		c.Close()
		return nil, errors.New("cannot find the Kafka Connect JVM's pid")
	}
	kill := func() {
		_ = syscall.Kill(pid, syscall.SIGKILL) // Close alone may stop it with SIGTERM first
		c.Close()
	}
	return &node{url: c.URL(), log: c.LogPath(), pid: pid, ready: c.StartupTime(), kill: kill, stop: func() { c.Close() },
		restart: func(ctx context.Context) (*node, error) {
			return startKafkaConnectNode(ctx, dir+"r", bootstrap, group, props)
		}}, nil
}

// filePipe is a FileStreamSource -> topic -> FileStreamSink pipeline with
// a growing input.
type filePipe struct {
	src, sink, topic, in, out string
}

// startInput appends 100-byte lines to every input at rate lines/s each
// until ctx ends.
func startInput(ctx context.Context, pipes []filePipe, rate int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, p := range pipes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(p.in, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return
			}
			defer f.Close()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			line := 0
			for {
				var sb strings.Builder
				for i := 0; i < rate/10; i++ {
					fmt.Fprintf(&sb, "%s-%09d %s\n", p.src, line, strings.Repeat("x", 100-len(p.src)-12))
					line++
				}
				f.WriteString(sb.String())
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	return &wg
}

func (b *clusterBench) filePipes(group string, n int) []filePipe {
	var out []filePipe
	for k := 0; k < n; k++ {
		out = append(out, filePipe{src: fmt.Sprintf("src-%d", k), sink: fmt.Sprintf("sink-%d", k), topic: fmt.Sprintf("%s-stream-%d", group, k),
			in: filepath.Join(b.work, fmt.Sprintf("%s-in-%d.txt", group, k)), out: filepath.Join(b.work, fmt.Sprintf("%s-out-%d.txt", group, k))})
	}
	return out
}

func createPipes(ctx context.Context, url string, pipes []filePipe) error {
	for _, p := range pipes {
		if err := putConnector(ctx, url, p.src, map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
			"file": p.in, "topic": p.topic, "tasks.max": "1"}); err != nil {
			return err
		}
		if err := putConnector(ctx, url, p.sink, map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
			"file": p.out, "topics": p.topic, "tasks.max": "1"}); err != nil {
			return err
		}
	}
	return nil
}

// where is the cluster's status: instance ("name" or "name-i") -> worker
// id, and the instances not RUNNING.
type where struct {
	on    map[string]string
	tasks map[string]bool // the instances that are tasks
	bad   []string
}

func status(ctx context.Context, url string) (where, error) {
	w := where{on: map[string]string{}, tasks: map[string]bool{}}
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/connectors?expand=status", nil)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return w, err
	}
	defer resp.Body.Close()
	var st map[string]struct {
		Status struct {
			Connector struct {
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
			} `json:"connector"`
			Tasks []struct {
				ID       int    `json:"id"`
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
			} `json:"tasks"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return w, err
	}
	for name, s := range st {
		w.on[name] = s.Status.Connector.WorkerID
		if s.Status.Connector.State != "RUNNING" {
			w.bad = append(w.bad, name)
		}
		for _, t := range s.Status.Tasks {
			k := fmt.Sprintf("%s-%d", name, t.ID)
			w.on[k] = t.WorkerID
			w.tasks[k] = true
			if t.State != "RUNNING" {
				w.bad = append(w.bad, k)
			}
		}
	}
	return w, nil
}

// settled waits until want instances run, all RUNNING, all on alive
// workers, and returns where.
func (b *clusterBench) settled(ctx context.Context, c *benchCluster, want int) (where, error) {
	return settled(ctx, c.group, c.alive(), want, b.o.Timeout)
}

// settled waits up to timeout until want instances (connectors and tasks)
// exist, all RUNNING on one of nodes, and returns where.
func settled(ctx context.Context, group string, nodes []*node, want int, timeout time.Duration) (where, error) {
	deadline := time.Now().Add(timeout)
	ids := map[string]bool{}
	for _, n := range nodes {
		ids[n.id()] = true
	}
	var last where
	for {
		w, err := status(ctx, nodes[0].url)
		if err == nil {
			last = w
			ok := len(w.on) == want && len(w.bad) == 0
			for _, id := range w.on {
				ok = ok && ids[id]
			}
			if ok {
				return w, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, fmt.Errorf("cluster %s not settled after %v: %d/%d instances, not running %d %v (%v)", group, timeout, len(last.on), want,
				len(last.bad), last.bad[:min(len(last.bad), 5)], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

func (b *clusterBench) topicEnd(ctx context.Context, topic string) int64 {
	var end int64
	if ends, err := b.adm.ListEndOffsets(ctx, topic); err == nil {
		ends.Each(func(l kadm.ListedOffset) { end += l.Offset })
	}
	return end
}

// failoverRuns kills a follower that runs tasks, runs times, measuring
// until its work runs and flows elsewhere, and restarts it after each run.
func (b *clusterBench) failoverRuns(ctx context.Context, c *benchCluster, pipes []filePipe, runs int, res *FailoverResult) {
	want := 4 * len(pipes)
	var running, flowing []float64
	for run := 1; run <= runs; run++ {
		before, err := b.settled(ctx, c, want)
		if err != nil {
			res.Error = err.Error()
			return
		}
		time.Sleep(2 * time.Second) // records flowing everywhere
		leader := c.leaderURL()
		vi := -1
		for i, n := range c.nodes {
			if n == nil || n.url == leader {
				continue
			}
			for k, id := range before.on {
				if id == n.id() && before.tasks[k] {
					vi = i
				}
			}
		}
		if vi < 0 {
			res.Error = "no follower runs a task"
			return
		}
		victim := c.nodes[vi]
		type check struct{ topic, out string }
		var checks []check
		for _, p := range pipes {
			if before.on[p.src+"-0"] == victim.id() {
				checks = append(checks, check{topic: p.topic})
			}
			if before.on[p.sink+"-0"] == victim.id() {
				checks = append(checks, check{out: p.out})
			}
		}
		base := make([]int64, len(checks))
		killed := time.Now()
		victim.kill()
		c.nodes[vi] = nil
		for i, ch := range checks {
			if ch.topic != "" {
				base[i] = b.topicEnd(ctx, ch.topic)
			} else {
				base[i] = int64(lineCount(ch.out))
			}
		}
		var runAt, flowAt time.Time
		deadline := killed.Add(b.o.Timeout)
		for flowAt.IsZero() {
			if ctx.Err() != nil || time.Now().After(deadline) {
				res.Error = fmt.Sprintf("run %d: not failed over after %v", run, b.o.Timeout)
				return
			}
			if runAt.IsZero() {
				if w, err := status(ctx, c.alive()[0].url); err == nil && len(w.on) == want && len(w.bad) == 0 {
					moved := true
					for _, id := range w.on {
						moved = moved && id != victim.id()
					}
					if moved {
						runAt = time.Now()
					}
				}
			}
			if !runAt.IsZero() {
				flows := true
				for i, ch := range checks {
					if ch.topic != "" {
						flows = flows && b.topicEnd(ctx, ch.topic) > base[i]
					} else {
						flows = flows && int64(lineCount(ch.out)) > base[i]
					}
				}
				if flows {
					flowAt = time.Now()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		running = append(running, runAt.Sub(killed).Seconds())
		flowing = append(flowing, flowAt.Sub(killed).Seconds())
		b.logf("%s (%s) run %d/%d: kill -9 of %s: everything RUNNING elsewhere after %.1fs, flowing after %.1fs",
			res.Runtime, res.Settings, run, runs, victim.id(), running[len(running)-1], flowing[len(flowing)-1])
		n, err := victim.restart(ctx)
		if err != nil {
			res.Error = fmt.Sprintf("restart: %v", err)
			return
		}
		c.nodes[vi] = n
	}
	res.Running, res.Flowing = statOf(running), statOf(flowing)
}

// restLatency updates a connector's config n times through the leader and
// through a follower.
func (b *clusterBench) restLatency(ctx context.Context, c *benchCluster, pipe filePipe, res *RESTResult) {
	leader := c.leaderURL()
	follower := ""
	for _, n := range c.alive() {
		if n.url != leader {
			follower = n.url
		}
	}
	if leader == "" || follower == "" {
		res.Error = "no leader or follower found"
		return
	}
	measure := func(url string) ([]float64, error) {
		var ms []float64
		for i := 0; i < 5*b.o.Runs; i++ {
			t0 := time.Now()
			err := putConnector(ctx, url, pipe.src, map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
				"file": pipe.in, "topic": pipe.topic, "tasks.max": "1", "batch.size": strconv.Itoa(1000 + i)})
			if err != nil {
				return nil, err
			}
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
			time.Sleep(200 * time.Millisecond)
		}
		return ms, nil
	}
	l, err := measure(leader)
	if err != nil {
		res.Error = err.Error()
		return
	}
	f, err := measure(follower)
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.Leader, res.Follower = statOf(l), statOf(f)
	b.logf("%s REST: config update median %.1f ms through the leader, %.1f ms through a follower", res.Runtime, res.Leader.Median, res.Follower.Median)
}

func (b *clusterBench) tributaryFailover(ctx context.Context) (FailoverResult, RESTResult) {
	res := FailoverResult{Runtime: "tributary", Settings: "defaults (session 10s, heartbeat 1s, scheduled.rebalance.max.delay.ms=1000)"}
	rest := RESTResult{Runtime: "tributary"}
	group := "bench-failover"
	c := &benchCluster{group: group}
	defer c.close()
	b.logf("tributary failover: starting 3 workers")
	for i := 0; i < 3; i++ {
		n, err := b.tributaryNode(ctx, group, nil)
		if err != nil {
			res.Error, rest.Error = err.Error(), err.Error()
			return res, rest
		}
		c.nodes = append(c.nodes, n)
	}
	pipes := b.filePipes(group, 3)
	ictx, stop := context.WithCancel(ctx)
	wg := startInput(ictx, pipes, 500)
	defer func() { stop(); wg.Wait() }()
	if err := createPipes(ctx, c.nodes[0].url, pipes); err != nil {
		res.Error, rest.Error = err.Error(), err.Error()
		return res, rest
	}
	b.failoverRuns(ctx, c, pipes, b.o.Runs, &res)
	if _, err := b.settled(ctx, c, 4*len(pipes)); err != nil {
		rest.Error = err.Error()
		return res, rest
	}
	b.restLatency(ctx, c, pipes[0], &rest)
	return res, rest
}

func (b *clusterBench) kafkaConnectFailover(ctx context.Context, delay string) (FailoverResult, RESTResult) {
	res := FailoverResult{Runtime: "kafka-connect", Settings: "defaults (session 10s, heartbeat 3s, scheduled.rebalance.max.delay.ms=300000)"}
	props := map[string]string{"offset.flush.interval.ms": "1000", "scheduled.rebalance.max.delay.ms": "300000"}
	runs := b.o.DefaultRuns
	if delay != "" {
		res.Settings = "scheduled.rebalance.max.delay.ms=" + delay
		props["scheduled.rebalance.max.delay.ms"] = delay
		runs = b.o.Runs
	}
	rest := RESTResult{Runtime: "kafka-connect"}
	if b.o.NoKafkaConnect {
		res.Skipped, rest.Skipped = "--no-kafka-connect", "--no-kafka-connect"
		return res, rest
	}
	group := "bench-kc-failover-" + delay
	if delay == "" {
		group = "bench-kc-failover-default"
	}
	c := &benchCluster{group: group}
	defer c.close()
	b.logf("kafka-connect failover (%s): starting 3 Kafka Connect 4.4 workers", res.Settings)
	nodes := make([]*node, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); nodes[i], errs[i] = b.kafkaConnectNode(ctx, group, props) }()
	}
	wg.Wait()
	for i, n := range nodes {
		if n != nil {
			c.nodes = append(c.nodes, n)
		}
		if errs[i] != nil {
			if errors.Is(errs[i], harness.ErrUnavailable) {
				res.Skipped, rest.Skipped = errs[i].Error(), errs[i].Error()
			} else {
				res.Error, rest.Error = errs[i].Error(), errs[i].Error()
			}
			return res, rest
		}
	}
	pipes := b.filePipes(group, 3)
	ictx, stop := context.WithCancel(ctx)
	iwg := startInput(ictx, pipes, 500)
	defer func() { stop(); iwg.Wait() }()
	if err := createPipes(ctx, c.nodes[0].url, pipes); err != nil {
		res.Error = err.Error()
		return res, rest
	}
	b.failoverRuns(ctx, c, pipes, runs, &res)
	if delay != "" {
		if _, err := b.settled(ctx, c, 4*len(pipes)); err != nil {
			rest.Error = err.Error()
			return res, rest
		}
		b.restLatency(ctx, c, pipes[0], &rest)
	}
	return res, rest
}

// join measures a fourth Tributary worker joining three.
func (b *clusterBench) join(ctx context.Context) JoinResult {
	var res JoinResult
	group := "bench-join"
	c := &benchCluster{group: group}
	defer c.close()
	b.logf("join: starting 3 workers with 3 file pipelines and 2 datagen connectors of 3 tasks")
	for i := 0; i < 3; i++ {
		n, err := b.tributaryNode(ctx, group, nil)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		c.nodes = append(c.nodes, n)
	}
	pipes := b.filePipes(group, 3)
	ictx, stop := context.WithCancel(ctx)
	wg := startInput(ictx, pipes, 200)
	defer func() { stop(); wg.Wait() }()
	if err := createPipes(ctx, c.nodes[0].url, pipes); err != nil {
		res.Error = err.Error()
		return res
	}
	for k := 0; k < 2; k++ {
		if err := putConnector(ctx, c.nodes[0].url, fmt.Sprintf("gen-%d", k), map[string]string{"connector.class": "dev.tributary.connect.datagen.DatagenConnector",
			"kafka.topic": fmt.Sprintf("%s-gen-%d", group, k), "tasks.max": "3", "records.per.sec": "100"}); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	want := 4*len(pipes) + 2*4
	var first []float64
	for run := 1; run <= b.o.Runs; run++ {
		before, err := b.settled(ctx, c, want)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		time.Sleep(time.Second)
		mark := time.Now()
		n, err := b.tributaryNode(ctx, group, nil)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		c.nodes = append(c.nodes, n)
		var firstAt time.Time
		deadline := time.Now().Add(b.o.Timeout)
		for firstAt.IsZero() && time.Now().Before(deadline) {
			w, err := status(ctx, n.url)
			if err == nil {
				for k, id := range w.on {
					if id == n.id() && w.tasks[k] && !slices.Contains(w.bad, k) {
						firstAt = time.Now()
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		after, err := b.settled(ctx, c, want)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		time.Sleep(time.Second)
		starts, err := taskStartsSince(ctx, b.bootstrap, group+"-status", mark)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		moved, elsewhere := 0, 0
		for k, id := range after.on {
			if before.on[k] != id && id == n.id() {
				moved++
			}
		}
		for k := range starts {
			if after.on[k] != n.id() {
				elsewhere++
			}
		}
		// The process start is before mark + the worker's start-up:
		// measured from mark, the moment the process was started.
		first = append(first, firstAt.Sub(mark).Seconds())
		res.Moved = append(res.Moved, moved)
		res.RestartedElsewhere = append(res.RestartedElsewhere, elsewhere)
		b.logf("join run %d/%d: new worker's first task RUNNING %.2fs after its start; %d tasks moved to it, %d restarted elsewhere",
			run, b.o.Runs, first[len(first)-1], moved, elsewhere)
		n.kill()
		c.nodes = c.nodes[:3]
	}
	res.FirstRunning = statOf(first)
	return res
}

// taskStartsSince counts the RUNNING task statuses written since mark.
func taskStartsSince(ctx context.Context, bootstrap, topic string, mark time.Time) (map[string]int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	got := map[int32]int64{}
	out := map[string]int{}
	for {
		done := true
		for p, e := range want {
			done = done && got[p] >= e
		}
		if done {
			return out, nil
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = r.Offset + 1
			k, ok := strings.CutPrefix(string(r.Key), "status-task-")
			if !ok || r.Value == nil || r.Timestamp.Before(mark) {
				return
			}
			var v struct{ State string }
			if json.Unmarshal(r.Value, &v) == nil && v.State == "RUNNING" {
				out[k]++
			}
		})
	}
}

// throughput runs datagen → discard (two tasks each, a two-partition
// topic) on workers workers.
func (b *clusterBench) throughput(ctx context.Context, workers int) ThroughputResult {
	res := ThroughputResult{Workers: workers, Records: int64(b.o.Records)}
	group := fmt.Sprintf("bench-e2e-%d", workers)
	c := &benchCluster{group: group}
	defer c.close()
	var pids []int
	for i := 0; i < workers; i++ {
		n, err := b.tributaryNode(ctx, group, nil)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		c.nodes = append(c.nodes, n)
		pids = append(pids, findPID(filepath.Join(filepath.Dir(n.log), "worker.properties")))
	}
	topic := group + "-topic"
	if _, err := b.adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		res.Error = err.Error()
		return res
	}
	conv := map[string]string{"key.converter": "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
	sink := map[string]string{"connector.class": "dev.tributary.connect.discard.DiscardSinkConnector", "tasks.max": "2", "topics": topic}
	src := map[string]string{"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "tasks.max": "2", "kafka.topic": topic,
		"payload.bytes": strconv.Itoa(ConnectPayloadBytes), "iterations": strconv.Itoa(b.o.Records / 2), "batch.size": "2000"}
	for k, v := range conv {
		sink[k], src[k] = v, v
	}
	if err := putConnector(ctx, c.nodes[0].url, "discard", sink); err != nil {
		res.Error = err.Error()
		return res
	}
	cpu0 := treesCPU(pids)
	if err := putConnector(ctx, c.nodes[0].url, "datagen", src); err != nil {
		res.Error = err.Error()
		return res
	}
	b.logf("datagen → discard on %d worker(s): %d records", workers, b.o.Records)
	var firstT time.Time
	var firstC int64
	deadline := time.Now().Add(b.o.Timeout)
	for {
		var committed int64
		if offs, err := b.adm.FetchOffsets(ctx, "connect-discard"); err == nil {
			offs.Each(func(r kadm.OffsetResponse) {
				if r.Topic == topic && r.Err == nil {
					committed += r.At
				}
			})
		}
		now := time.Now()
		if committed > 0 && firstT.IsZero() {
			firstT, firstC = now, committed
		}
		if committed >= int64(b.o.Records) {
			cpu := treesCPU(pids) - cpu0
			if now.After(firstT) && firstC < committed {
				res.RecordsPerSec = float64(committed-firstC) / now.Sub(firstT).Seconds()
			}
			res.CPUPerRecord = cpu / float64(b.o.Records)
			b.logf("datagen → discard on %d worker(s): %s records/s, %.2f µs CPU per record", workers, group3(res.RecordsPerSec), res.CPUPerRecord*1e6)
			return res
		}
		if now.After(deadline) || ctx.Err() != nil {
			res.Error = fmt.Sprintf("%d/%d records after %v", committed, b.o.Records, b.o.Timeout)
			return res
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func group3(f float64) string { return group(f) }

// syscallKillGroup sends SIGKILL to a process group (kill -9 of a worker
// and its plugins).
func syscallKillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// treesCPU is the user and system CPU seconds of the processes and their
// descendants.
func treesCPU(pids []int) float64 {
	var total float64
	for _, p := range pids {
		for _, q := range append([]int{p}, descendants(p)...) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", q))
			if err != nil {
				continue
			}
			i := strings.LastIndexByte(string(b), ')')
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 15 {
				u, _ := strconv.ParseFloat(f[11], 64)
				s, _ := strconv.ParseFloat(f[12], 64)
				cu, _ := strconv.ParseFloat(f[13], 64)
				cs, _ := strconv.ParseFloat(f[14], 64)
				total += (u + s + cu + cs) / 100 // clock ticks (USER_HZ 100)
			}
		}
	}
	return total
}

// WriteText prints the report as tables.
func (r *ClusterReport) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintf(w, "tributary-bench cluster — %d CPUs, %s; broker: %s; %.0fs\n\n", r.Host.CPUs, r.Host.GoVersion, r.Broker, r.Elapsed)
	fmt.Fprintln(w, "FAILOVER (kill -9 of a follower running tasks; 3 workers, 3 FileStream pipelines)")
	fmt.Fprintln(w, "runtime\tsettings\truns\tRUNNING median\tmax\tflowing median\tmax")
	var trib float64
	for _, f := range r.Failover {
		switch {
		case f.Skipped != "":
			fmt.Fprintf(w, "%s\t%s\tskipped: %s\n", f.Runtime, f.Settings, f.Skipped)
		case f.Error != "":
			fmt.Fprintf(w, "%s\t%s\tfailed: %s\n", f.Runtime, f.Settings, f.Error)
		default:
			fmt.Fprintf(w, "%s\t%s\t%d\t%.1fs\t%.1fs\t%.1fs\t%.1fs\n", f.Runtime, f.Settings, len(f.Running.Runs), f.Running.Median, f.Running.Max, f.Flowing.Median, f.Flowing.Max)
			if f.Runtime == "tributary" {
				trib = f.Flowing.Median
			}
		}
	}
	for _, f := range r.Failover {
		if f.Runtime != "tributary" && f.Error == "" && f.Skipped == "" && trib > 0 {
			fmt.Fprintf(w, "ratio\tkafka-connect (%s) / tributary, flowing median\t\t%.1fx\n", f.Settings, f.Flowing.Median/trib)
		}
	}
	goal := "met"
	for _, f := range r.Failover {
		if f.Runtime == "tributary" && (f.Error != "" || f.Running.Median > 15) {
			goal = "NOT met"
		}
	}
	fmt.Fprintf(w, "goal\ttributary failover <= 15s median with defaults\t\t%s\n\n", goal)
	fmt.Fprintln(w, "JOIN (a 4th tributary worker joins 3; 14 tasks)")
	if r.Join.Error != "" {
		fmt.Fprintf(w, "failed: %s\n", r.Join.Error)
	} else {
		fmt.Fprintf(w, "start to first task RUNNING\tmedian %.2fs\tmax %.2fs\n", r.Join.FirstRunning.Median, r.Join.FirstRunning.Max)
		fmt.Fprintf(w, "tasks moved to it\t%v\n", r.Join.Moved)
		g := "met"
		for _, n := range r.Join.RestartedElsewhere {
			if n != 0 {
				g = "NOT met"
			}
		}
		fmt.Fprintf(w, "tasks restarted elsewhere\t%v\tgoal 0: %s\n\n", r.Join.RestartedElsewhere, g)
	}
	fmt.Fprintln(w, "REST (PUT /connectors/{name}/config, milliseconds)")
	fmt.Fprintln(w, "runtime\tleader median\tmax\tfollower median\tmax")
	for _, x := range r.REST {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(w, "%s\tskipped: %s\n", x.Runtime, x.Skipped)
		case x.Error != "":
			fmt.Fprintf(w, "%s\tfailed: %s\n", x.Runtime, x.Error)
		default:
			fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t%.1f\n", x.Runtime, x.Leader.Median, x.Leader.Max, x.Follower.Median, x.Follower.Max)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "THROUGHPUT (datagen → discard, 2 tasks each, 2-partition topic, ~1 KiB values)")
	fmt.Fprintln(w, "workers\trecords\trecords/s\tCPU µs/record (workers + plugins)")
	for _, x := range r.Throughput {
		if x.Error != "" {
			fmt.Fprintf(w, "%d\tfailed: %s\n", x.Workers, x.Error)
			continue
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%.2f\n", x.Workers, x.Records, group(x.RecordsPerSec), x.CPUPerRecord*1e6)
	}
	return w.Flush()
}

// WriteJSON prints the report as JSON.
func (r *ClusterReport) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

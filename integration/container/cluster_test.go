package container

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// cluster is the bundled broker and n workers, each in a container of the
// image, on a network of their own; the workers share a host directory
// mounted at /data for the file connectors' input and output.
type cluster struct {
	t       *testing.T
	image   string
	net     *testcontainers.DockerNetwork
	data    string // the host directory mounted at /data
	workers []testcontainers.Container
	names   []string // the workers' host names, which name them in statuses
}

// startCluster starts the broker and n workers and waits until every
// worker's REST API answers.
func startCluster(t *testing.T, image string, n int) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatalf("create a network: %v", err)
	}
	t.Cleanup(func() {
		if err := nw.Remove(context.Background()); err != nil {
			t.Logf("remove network %s: %v", nw.Name, err)
		}
	})
	c := &cluster{t: t, image: image, net: nw, data: hostDir(t)}
	broker, err := testcontainers.Run(ctx, image,
		testcontainers.WithCmd("broker", "--override", "group.initial.rebalance.delay.ms=0", "--override", "num.partitions=3"),
		testcontainers.WithConfigModifier(func(cfg *container.Config) { cfg.Hostname = "broker" }),
		network.WithNetwork([]string{"broker"}, nw),
		testcontainers.WithExposedPorts(),
		testcontainers.WithWaitStrategy(wait.ForLog("broker ready").WithStartupTimeout(time.Minute)),
	)
	if broker != nil {
		terminate(t, broker)
	}
	if err != nil {
		t.Fatalf("start the broker: %v", err)
	}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("worker-%d", i)
		w, err := testcontainers.Run(ctx, image,
			testcontainers.WithCmd("worker"),
			testcontainers.WithEnv(map[string]string{
				"CONNECT_BOOTSTRAP_SERVERS":                 "broker:9092",
				"CONNECT_GROUP_ID":                          "cluster",
				"CONNECT_CONFIG_STORAGE_TOPIC":              "connect-configs",
				"CONNECT_OFFSET_STORAGE_TOPIC":              "connect-offsets",
				"CONNECT_STATUS_STORAGE_TOPIC":              "connect-status",
				"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "1",
				"CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "1",
				"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "1",
				"CONNECT_OFFSET_FLUSH_INTERVAL_MS":          "1000",
			}),
			testcontainers.WithConfigModifier(func(cfg *container.Config) { cfg.Hostname = name }),
			network.WithNetwork([]string{name}, nw),
			testcontainers.WithExposedPorts("8083/tcp"),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: c.data, Target: "/data"})
				bindLoopback(hc)
			}),
			testcontainers.WithWaitStrategy(wait.ForHTTP("/health").WithPort("8083/tcp").WithStartupTimeout(time.Minute)),
		)
		if w != nil {
			terminate(t, w)
		}
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		c.workers = append(c.workers, w)
		c.names = append(c.names, name)
	}
	return c
}

// url is the REST URL of worker i.
func (c *cluster) url(i int) string { return restURL(c.t, c.workers[i]) }

// statuses returns every connector's status as worker i answers.
func (c *cluster) statuses(i int) (map[string]connectorStatus, error) {
	var all map[string]struct {
		Status connectorStatus `json:"status"`
	}
	if code := getJSON(c.url(i)+"/connectors?expand=status", &all); code != http.StatusOK {
		return nil, fmt.Errorf("GET /connectors?expand=status on %s: %d", c.names[i], code)
	}
	out := map[string]connectorStatus{}
	for name, s := range all {
		out[name] = s.Status
	}
	return out, nil
}

// settled waits until worker i reports the connectors of want (name: task
// count) all RUNNING on workers of alive, and returns how many tasks each
// worker runs.
func (c *cluster) settled(i int, want map[string]int, alive []string, timeout time.Duration) map[string]int {
	c.t.Helper()
	var tasks map[string]int
	eventually(c.t, timeout, "every connector and task RUNNING on "+strings.Join(alive, ", "), func() string {
		all, err := c.statuses(i)
		if err != nil {
			return err.Error()
		}
		tasks = map[string]int{}
		for name, n := range want {
			s, ok := all[name]
			if !ok || !s.running(n) {
				return fmt.Sprintf("%s: %+v", name, s)
			}
			for _, w := range append([]string{s.Connector.WorkerID}, taskWorkers(s)...) {
				if !contains(alive, strings.TrimSuffix(w, ":8083")) {
					return fmt.Sprintf("%s still shown on %s", name, w)
				}
			}
			for _, w := range taskWorkers(s) {
				tasks[strings.TrimSuffix(w, ":8083")]++
			}
		}
		return ""
	})
	return tasks
}

func taskWorkers(s connectorStatus) []string {
	var ws []string
	for _, task := range s.Tasks {
		ws = append(ws, task.WorkerID)
	}
	return ws
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kill sends SIGKILL to worker i's container, as `docker kill` does.
func (c *cluster) kill(i int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.ContainerKill(ctx, c.workers[i].GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		c.t.Fatalf("docker kill %s: %v", c.names[i], err)
	}
}

// writeLines appends n numbered lines to each of files, about rate a second
// in all, and closes done when it is through.
func writeLines(t *testing.T, files []string, n int, rate int) <-chan struct{} {
	t.Helper()
	outs := make([]*os.File, len(files))
	for i, f := range files {
		var err error
		if outs[i], err = os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, 0o666)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		const batch = 50
		tick := time.NewTicker(time.Second * batch / time.Duration(rate))
		defer tick.Stop()
		for i := 0; i < n; i += batch {
			for j, o := range outs {
				var b strings.Builder
				for k := i; k < i+batch && k < n; k++ {
					fmt.Fprintf(&b, "%s line %06d\n", filepath.Base(files[j]), k)
				}
				o.WriteString(b.String())
			}
			<-tick.C
		}
		for _, o := range outs {
			o.Close()
		}
	}()
	return done
}

// readLines returns the set of lines of path.
func readLines(path string) map[string]int {
	seen := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return seen
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seen[sc.Text()]++
	}
	return seen
}

// TestImageClusterFailover: a broker and three workers in containers of
// the image on a test network, configured by CONNECT_* variables. Three
// FileStreamSource -> topic -> FileStreamSink pipelines spread over the
// workers; `docker kill` of the worker running the most tasks, mid-stream,
// moves its work to the two others within 15 s, and no line is lost; the
// killed container started again (same name, same host name) rejoins and
// gets work back.
func TestImageClusterFailover(t *testing.T) {
	t.Parallel()
	image := tributaryImage(t)
	c := startCluster(t, image, 3)
	const pipelines, lines = 3, 15000
	var inputs []string
	want := map[string]int{}
	for p := 0; p < pipelines; p++ {
		in := filepath.Join(c.data, fmt.Sprintf("in-%d.txt", p))
		if err := os.WriteFile(in, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(in, 0o666)
		inputs = append(inputs, in)
		topic := fmt.Sprintf("lines-%d", p)
		createConnector(t, c.url(p%3), fmt.Sprintf("source-%d", p), map[string]string{
			"connector.class": "FileStreamSource", "file": "/data/" + filepath.Base(in), "topic": topic})
		createConnector(t, c.url((p+1)%3), fmt.Sprintf("sink-%d", p), map[string]string{
			"connector.class": "FileStreamSink", "topics": topic, "file": fmt.Sprintf("/data/out-%d.txt", p)})
		want[fmt.Sprintf("source-%d", p)], want[fmt.Sprintf("sink-%d", p)] = 1, 1
	}
	all := append([]string(nil), c.names...)
	tasks := c.settled(0, want, all, 90*time.Second)
	t.Logf("tasks per worker: %v", tasks)
	if len(tasks) < 2 {
		t.Errorf("the six tasks did not spread: %v", tasks)
	}
	done := writeLines(t, inputs, lines, 1000) // 15 s of lines, longer than a failover
	eventually(t, time.Minute, "the first lines through every pipeline", func() string {
		for p := 0; p < pipelines; p++ {
			if n := len(readLines(filepath.Join(c.data, fmt.Sprintf("out-%d.txt", p)))); n < 500 {
				return fmt.Sprintf("out-%d.txt has %d lines", p, n)
			}
		}
		return ""
	})

	victim := 0
	for i, name := range c.names {
		if tasks[name] > tasks[c.names[victim]] {
			victim = i
		}
	}
	var alive []string
	survivor := -1
	for i, name := range c.names {
		if i != victim {
			alive = append(alive, name)
			survivor = i
		}
	}
	killed := time.Now()
	c.kill(victim)
	c.settled(survivor, want, alive, 90*time.Second)
	took := time.Since(killed)
	t.Logf("docker kill %s (%d tasks): everything RUNNING on %v %v later", c.names[victim], tasks[c.names[victim]], alive, took.Round(10*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("failover took %v, more than 15 s", took)
	}

	<-done
	for p := 0; p < pipelines; p++ {
		out := filepath.Join(c.data, fmt.Sprintf("out-%d.txt", p))
		in := readLines(inputs[p])
		eventually(t, 2*time.Minute, fmt.Sprintf("every line of in-%d.txt in out-%d.txt", p, p), func() string {
			got := readLines(out)
			var missing []string
			for line := range in {
				if got[line] == 0 {
					missing = append(missing, line)
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				return fmt.Sprintf("%d of %d lines missing, first %q", len(missing), len(in), missing[0])
			}
			return ""
		})
		dup := 0
		for _, n := range readLines(out) {
			dup += n - 1
		}
		t.Logf("pipeline %d: all %d lines arrived (%d written twice, at least once after a kill)", p, len(in), dup)
	}

	// The killed worker, started again: same container, same host name,
	// so the same worker id; it rejoins and is given tasks again.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.workers[victim].Start(ctx); err != nil {
		t.Fatalf("start %s again: %v", c.names[victim], err)
	}
	createConnector(t, c.url(victim), "spread", map[string]string{
		"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "kafka.topic": "spread",
		"tasks.max": "3", "records.per.sec": "10"})
	want["spread"] = 3
	eventually(t, time.Minute, c.names[victim]+" running tasks again", func() string {
		all, err := c.statuses(victim)
		if err != nil {
			return err.Error()
		}
		for _, s := range all {
			for _, w := range taskWorkers(s) {
				if w == c.names[victim]+":8083" {
					return ""
				}
			}
		}
		return fmt.Sprintf("no task on %s yet", c.names[victim])
	})
	c.settled(victim, want, all, time.Minute)
}

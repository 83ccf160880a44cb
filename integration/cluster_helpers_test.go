package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// workerCluster is several `tributary worker` processes with one group.id.
type workerCluster struct {
	t         *testing.T
	bin       string
	bootstrap string
	group     string
	dir       string
	mu        sync.Mutex
	workers   []*harness.WorkerProcess // nil: not running
	props     []map[string]string
}

// newWorkerCluster starts n workers in group on bootstrap; extra are
// worker properties for all.
func newWorkerCluster(t *testing.T, bin, bootstrap, group string, n int, extra map[string]string) *workerCluster {
	t.Helper()
	c := &workerCluster{t: t, bin: bin, bootstrap: bootstrap, group: group, dir: t.TempDir()}
	// After the workers are killed (their cleanups run first): no worker
	// may have panicked or, built with TRIBUTARY_BUILD_RACE, raced.
	t.Cleanup(func() {
		logs, _ := filepath.Glob(filepath.Join(c.dir, "w*", "worker.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			for _, bad := range []string{"WARNING: DATA RACE", "panic: ", "fatal error: "} {
				if i := strings.Index(string(b), bad); i >= 0 {
					t.Errorf("%s: %s", l, b[i:min(len(b), i+3000)])
				}
			}
		}
	})
	for i := 0; i < n; i++ {
		c.add(extra)
	}
	return c
}

// add starts one more worker and returns its index.
func (c *workerCluster) add(extra map[string]string) int {
	c.t.Helper()
	props := harness.WorkerProps(c.t, c.bootstrap, c.group, extra)
	c.mu.Lock()
	i := len(c.workers)
	c.workers = append(c.workers, nil)
	c.props = append(c.props, props)
	c.mu.Unlock()
	c.start(i)
	return i
}

// start starts worker i (again, on the same port and directory).
func (c *workerCluster) start(i int) {
	c.t.Helper()
	w := harness.StartWorkerProcess(c.t, c.bin, filepath.Join(c.dir, fmt.Sprintf("w%d", i)), c.props[i])
	c.mu.Lock()
	c.workers[i] = w
	c.mu.Unlock()
}

func (c *workerCluster) worker(i int) *harness.WorkerProcess {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workers[i]
}

// kill SIGKILLs worker i.
func (c *workerCluster) kill(i int) {
	c.worker(i).Kill()
	c.mu.Lock()
	c.workers[i] = nil
	c.mu.Unlock()
}

// stop stops worker i cleanly (SIGTERM).
func (c *workerCluster) stop(i int) {
	c.t.Helper()
	if err := c.worker(i).Stop(); err != nil {
		c.t.Errorf("worker %d did not stop cleanly: %v", i, err)
	}
	c.mu.Lock()
	c.workers[i] = nil
	c.mu.Unlock()
}

// alive lists the running workers.
func (c *workerCluster) alive() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for i, w := range c.workers {
		if w != nil {
			out = append(out, i)
		}
	}
	return out
}

// id is worker i's worker_id (host:port of its REST listener).
func (c *workerCluster) id(i int) string {
	return strings.TrimPrefix(c.props[i]["listeners"], "http://")
}

func (c *workerCluster) rest(i int) rest { return rest{c.t, c.props[i]["listeners"]} }

// leader is the index of the worker that led the last generation it
// joined, from the workers' logs (-1 if none says so).
func (c *workerCluster) leader() int {
	best, bestGen := -1, -1
	for _, i := range c.alive() {
		gen, lead := lastGeneration(c.worker(i).LogPath())
		if lead && gen > bestGen {
			best, bestGen = i, gen
		}
	}
	return best
}

// lastGeneration reads the last "joined the group" line of a worker log.
func lastGeneration(path string) (gen int, leader bool) {
	f, err := os.Open(path)
	if err != nil {
		return -1, false
	}
	defer f.Close()
	gen = -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, "joined the group") {
			continue
		}
		var g int
		if i := strings.Index(l, "generation="); i >= 0 {
			fmt.Sscanf(l[i+len("generation="):], "%d", &g)
		}
		gen, leader = g, strings.Contains(l, "leader=true")
	}
	return gen, leader
}

// placement is where the cluster says everything runs.
type placement struct {
	conns map[string]string // connector -> worker_id
	tasks map[string]string // connector-task -> worker_id
	bad   []string          // not RUNNING
}

type expandedStatus map[string]struct {
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

// placement reads GET /connectors?expand=status from worker i.
func (c *workerCluster) placement(i int) (placement, error) {
	code, body := c.rest(i).do("GET", "/connectors?expand=status", nil)
	if code != 200 {
		return placement{}, fmt.Errorf("status %d: %s", code, body)
	}
	var st expandedStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return placement{}, err
	}
	p := placement{conns: map[string]string{}, tasks: map[string]string{}}
	for name, s := range st {
		p.conns[name] = s.Status.Connector.WorkerID
		if s.Status.Connector.State != "RUNNING" {
			p.bad = append(p.bad, name+"="+s.Status.Connector.State)
		}
		for _, tk := range s.Status.Tasks {
			k := fmt.Sprintf("%s-%d", name, tk.ID)
			p.tasks[k] = tk.WorkerID
			if tk.State != "RUNNING" {
				p.bad = append(p.bad, k+"="+tk.State)
			}
		}
	}
	return p, nil
}

// counts is how many connectors and tasks each alive worker runs.
func (c *workerCluster) counts(p placement) (conns, tasks map[string]int) {
	return c.countsOn(c.alive(), p)
}

// countsOn is counts for the workers members.
func (c *workerCluster) countsOn(members []int, p placement) (conns, tasks map[string]int) {
	conns, tasks = map[string]int{}, map[string]int{}
	for _, i := range members {
		conns[c.id(i)], tasks[c.id(i)] = 0, 0
	}
	for _, w := range p.conns {
		conns[w]++
	}
	for _, w := range p.tasks {
		tasks[w]++
	}
	return conns, tasks
}

func spreadOf(m map[string]int) int {
	lo, hi := 1<<30, -1
	for _, n := range m {
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

// waitSettled waits until conns connectors and tasks tasks run, all
// RUNNING, all on alive workers, balanced (max - min <= 1 for connectors
// and for tasks), and returns the placement and when it was first seen.
func (c *workerCluster) waitSettled(conns, tasks int, within time.Duration) (placement, time.Time) {
	c.t.Helper()
	return c.waitSettledOn(c.alive, conns, tasks, within)
}

// waitSettledOn is waitSettled on the workers members lists.
func (c *workerCluster) waitSettledOn(members func() []int, conns, tasks int, within time.Duration) (placement, time.Time) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	var last placement
	var lastErr error
	for {
		alive := members()
		ok := false
		if p, err := c.placement(alive[0]); err != nil {
			lastErr = err
		} else {
			last = p
			cc, tc := c.countsOn(alive, p)
			ok = len(p.conns) == conns && len(p.tasks) == tasks && len(p.bad) == 0 &&
				len(cc) == len(alive) && len(tc) == len(alive) && spreadOf(cc) <= 1 && spreadOf(tc) <= 1
		}
		if ok {
			return last, time.Now()
		}
		if time.Now().After(deadline) {
			cc, tc := c.countsOn(alive, last)
			c.t.Fatalf("cluster not settled after %v: %d connectors, %d tasks, not running %v, per worker connectors %v tasks %v (%v)",
				within, len(last.conns), len(last.tasks), last.bad, cc, tc, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// statusRecord is one record of the status topic.
type statusRecord struct {
	Key        string
	State      string
	WorkerID   string
	Generation int32
	Time       time.Time
	Offset     int64
	Partition  int32
}

// readStatusTopic reads the whole status topic of group.
func readStatusTopic(t *testing.T, bootstrap, group string) []statusRecord {
	t.Helper()
	topic := group + "-status"
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var out []statusRecord
	got := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			if got[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = r.Offset + 1
			rec := statusRecord{Key: string(r.Key), Time: r.Timestamp, Offset: r.Offset, Partition: r.Partition}
			if r.Value != nil {
				var v struct {
					State      string `json:"state"`
					WorkerID   string `json:"worker_id"`
					Generation int32  `json:"generation"`
				}
				json.Unmarshal(r.Value, &v)
				rec.State, rec.WorkerID, rec.Generation = v.State, v.WorkerID, v.Generation
			}
			out = append(out, rec)
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// taskStarts counts, per task key, the RUNNING statuses written at or
// after since.
func taskStarts(recs []statusRecord, since time.Time) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if strings.HasPrefix(r.Key, "status-task-") && r.State == "RUNNING" && !r.Time.Before(since) {
			out[strings.TrimPrefix(r.Key, "status-task-")]++
		}
	}
	return out
}

// filePipelines creates n FileStreamSource -> topic -> FileStreamSink
// pipelines through worker i, each input file growing in the background
// to total lines, and returns the output files and a channel closed when
// all input is written.
func (c *workerCluster) filePipelines(i, n, total int, pause time.Duration) (ins, outs []string, done <-chan struct{}) {
	c.t.Helper()
	r := c.rest(i)
	var chans []<-chan struct{}
	for k := 0; k < n; k++ {
		in, out := filepath.Join(c.dir, fmt.Sprintf("in-%d.txt", k)), filepath.Join(c.dir, fmt.Sprintf("out-%d.txt", k))
		appendLines(c.t, in, 0, 1)
		topic := fmt.Sprintf("stream-%d", k)
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("src-%d", k), "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": topic}}, 201)
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("sink-%d", k), "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": topic}}, 201)
		ins, outs = append(ins, in), append(outs, out)
	}
	for _, in := range ins {
		chans = append(chans, growInput(c.t, in, total, pause))
	}
	all := make(chan struct{})
	go func() {
		for _, ch := range chans {
			<-ch
		}
		close(all)
	}()
	return ins, outs, all
}

// checkNoLoss waits until every output holds every input line and
// reports the duplicates.
func checkNoLoss(t *testing.T, outs []string, total int, within time.Duration) {
	t.Helper()
	dups := 0
	for _, out := range outs {
		got, distinct, missing := waitAllLines(out, total, within)
		if missing > 0 {
			t.Errorf("%s: %d of %d input lines missing", filepath.Base(out), missing, total)
		}
		dups += len(got) - distinct
	}
	t.Logf("no line lost in %d pipelines of %d lines; %d duplicates (%.2f%%)", len(outs), total, dups, 100*float64(dups)/float64(len(outs)*total))
}

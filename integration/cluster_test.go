package integration

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// datagen creates n datagen connectors of tasks tasks each through r.
func datagen(r rest, n, tasks int) {
	for k := 0; k < n; k++ {
		r.must("POST", "/connectors", map[string]any{"name": fmt.Sprintf("gen-%d", k), "config": map[string]string{
			"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "kafka.topic": fmt.Sprintf("gen-%d", k),
			"tasks.max": fmt.Sprint(tasks), "records.per.sec": "20"}}, 201)
	}
}

// Three workers share the connectors and tasks evenly; a fourth joins and
// gets its share, and only the tasks moved to it restart (counted from
// the status topic: a RUNNING status is written when a task starts).
func TestClusterBalanceAndJoin(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "balance", 3, nil)
	datagen(c.rest(1), 4, 3)
	before, _ := c.waitSettled(4, 12, 60*time.Second)
	cc, tc := c.counts(before)
	t.Logf("3 workers: connectors %v, tasks %v", cc, tc)

	mark := time.Now()
	w4 := c.add(nil)
	after, _ := c.waitSettled(4, 12, 60*time.Second)
	cc, tc = c.counts(after)
	t.Logf("4 workers: connectors %v, tasks %v", cc, tc)
	time.Sleep(time.Second) // let the last statuses land
	starts := taskStarts(readStatusTopic(t, bootstrap, "balance"), mark)
	var moved []string
	for k, w := range after.tasks {
		if before.tasks[k] != w {
			moved = append(moved, k)
			if w != c.id(w4) {
				t.Errorf("task %s moved from %s to %s, not to the new worker", k, before.tasks[k], w)
			}
		}
	}
	slices.Sort(moved)
	if tc[c.id(w4)] != 3 || len(moved) != 3 {
		t.Fatalf("the new worker runs %d tasks; %d moved (%v)", tc[c.id(w4)], len(moved), moved)
	}
	for k, n := range starts {
		if !slices.Contains(moved, k) || n != 1 {
			t.Errorf("task %s started %d times after the join (moved: %v)", k, n, moved)
		}
	}
	if len(starts) != len(moved) {
		t.Errorf("%d tasks restarted, %d moved: %v", len(starts), len(moved), starts)
	}
	t.Logf("join: %d tasks moved to the new worker and restarted there; no other task restarted", len(moved))
}

// failoverTargets are the brokers the failover test runs on; kill, when
// set, SIGKILLs one broker of the cluster too.
type failoverTarget struct {
	bootstrap string
	props     map[string]string
	kill      func()
	// unbounded, when set, says why the failover time is only logged:
	// the 15 s bound holds for Kafka's group coordinator, not this one.
	unbounded string
}

// Kill -9 one worker while files stream through sources and sinks on three
// workers: its connectors and tasks run on the others within 15 s (with the
// default session timeout and scheduled.rebalance.max.delay.ms), and no
// input line is missing from the outputs. On a three-broker Apache Kafka
// cluster (internal topics with replication factor 3) a broker is killed
// as well.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	targets := map[string]func(t *testing.T) failoverTarget{
		"broker=tributary": func(t *testing.T) failoverTarget {
			return failoverTarget{bootstrap: harness.TributaryBroker(t).Bootstrap()}
		},
		"broker=kfake": func(t *testing.T) failoverTarget {
			// kfake expires a member that waits in JoinGroup once its
			// session timeout has passed since its last heartbeat
			// (groups.go atSessionTimeoutIn; Kafka's coordinator keeps a
			// member awaiting join alive) and removes it without answering
			// the join (removeMember), which then waits for its request
			// timeout, rebalance.timeout.ms plus 10 s. A kill during a
			// rebalance can so take 70 s here (one CI run: 71 s).
			return failoverTarget{bootstrap: harness.KFake(t), unbounded: "kfake drops a member awaiting join at its session timeout"}
		},
		"broker=apache-kafka-4.4-x3": func(t *testing.T) failoverTarget {
			k := harness.ApacheKafkaCluster(t, 3)
			return failoverTarget{bootstrap: k.Bootstrap(), kill: func() { k.Kill(2) }, props: map[string]string{
				"config.storage.replication.factor": "3", "offset.storage.replication.factor": "3", "status.storage.replication.factor": "3"}}
		},
	}
	for _, name := range []string{"broker=tributary", "broker=kfake", "broker=apache-kafka-4.4-x3"} {
		t.Run(name, func(t *testing.T) {
			tg := targets[name](t)
			c := newWorkerCluster(t, bin, tg.bootstrap, "failover", 3, tg.props)
			// About 2000 lines/s per pipeline for 10 s: the kill and the
			// failover happen mid-stream.
			// TRIBUTARY_SOAK=N kills (and restarts) a worker N times over a
			// longer stream.
			kills, total := 1, 20000
			if n, err := strconv.Atoi(os.Getenv("TRIBUTARY_SOAK")); err == nil && n > 1 {
				kills, total = n, 20000*n
			}
			_, outs, done := c.filePipelines(0, 3, total, 100*time.Millisecond)
			c.waitSettled(6, 6, 90*time.Second)
			waitLines(t, outs[0], 2000, 60*time.Second)
			for k := 1; k <= kills; k++ {
				before, _ := c.waitSettled(6, 6, 90*time.Second)
				// A follower (the leader's death is not delayed: a new
				// leader knows of no lost work) that runs something.
				leader := c.leader()
				victim := -1
				_, tc := c.counts(before)
				for _, i := range c.alive() {
					if i != leader && tc[c.id(i)] > 0 {
						victim = i
						break
					}
				}
				if victim < 0 {
					t.Fatalf("no follower runs a task: %+v", before)
				}
				killed := time.Now()
				c.kill(victim)
				if tg.kill != nil && k == 1 {
					tg.kill()
				}
				_, at := c.waitSettled(6, 6, 90*time.Second)
				took := at.Sub(killed)
				t.Logf("worker kill -9 %d: everything RUNNING on the %d others %v later", k, len(c.alive()), took.Round(10*time.Millisecond))
				switch {
				case tg.unbounded != "" && took > 15*time.Second:
					t.Logf("failover took %v, more than 15s, not an error on this broker: %s", took, tg.unbounded)
				case tg.unbounded != "":
				case took > 15*time.Second && (tg.kill == nil || k > 1):
					t.Errorf("failover took %v, more than 15s", took)
				case took > 30*time.Second:
					t.Errorf("failover took %v", took)
				}
				if k < kills {
					c.start(victim)
				}
			}
			<-done
			checkNoLoss(t, outs, total, 120*time.Second)
		})
	}
}

// SIGSTOP a worker past its session timeout: the others take its work
// over; after SIGCONT it does not run its old tasks (it gave them up when
// its lease ran out) nor overwrite the newer statuses, and the cluster
// converges with it back in.
func TestClusterZombie(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "zombie", 3, nil)
	const total = 20000 // about 10 s of input: the suspension is mid-stream
	_, outs, done := c.filePipelines(0, 2, total, 100*time.Millisecond)
	before, _ := c.waitSettled(4, 4, 60*time.Second)
	waitLines(t, outs[0], 2000, 60*time.Second)
	leader := c.leader()
	victim := -1
	_, tc := c.counts(before)
	for _, i := range c.alive() {
		if i != leader && tc[c.id(i)] > 0 {
			victim = i
			break
		}
	}
	if victim < 0 {
		t.Fatalf("no follower runs a task: %+v", before)
	}
	others := func() []int {
		return slices.DeleteFunc(c.alive(), func(i int) bool { return i == victim })
	}
	if err := c.worker(victim).Suspend(); err != nil {
		t.Fatal(err)
	}
	suspended := time.Now()
	_, at := c.waitSettledOn(others, 4, 4, 60*time.Second)
	t.Logf("SIGSTOP: the others run everything %v later", at.Sub(suspended).Round(10*time.Millisecond))
	time.Sleep(2 * time.Second) // well past the session timeout
	resumed := time.Now()
	if err := c.worker(victim).Continue(); err != nil {
		t.Fatal(err)
	}
	after, _ := c.waitSettled(4, 4, 60*time.Second)
	cc, tcs := c.counts(after)
	t.Logf("SIGCONT: converged %v later; connectors %v tasks %v", time.Since(resumed).Round(10*time.Millisecond), cc, tcs)
	time.Sleep(time.Second)

	// Statuses: nothing the zombie wrote after it woke up may be older
	// (by generation) than what another worker wrote before for the key.
	recs := readStatusTopic(t, bootstrap, "zombie")
	newest := map[string]int32{}
	for _, r := range recs {
		if r.Time.Before(resumed) {
			if r.WorkerID != c.id(victim) && r.Generation > newest[r.Key] {
				newest[r.Key] = r.Generation
			}
			continue
		}
		if r.WorkerID == c.id(victim) && r.Generation < newest[r.Key] {
			t.Errorf("the woken worker wrote %s %s with generation %d over generation %d", r.Key, r.State, r.Generation, newest[r.Key])
		}
	}
	log, _ := os.ReadFile(c.worker(victim).LogPath())
	if !strings.Contains(string(log), "treating the membership as lost") && !strings.Contains(string(log), "membership lost") {
		t.Errorf("the woken worker's log does not say it gave up its membership (%s)", c.worker(victim).LogPath())
	}
	<-done
	checkNoLoss(t, outs, total, 120*time.Second)
}

// REST writes through any worker: a follower forwards them to the leader
// and returns its answer. During rebalances (a worker joins, the leader is
// killed) clients get the held answer or a 409, never a 500.
func TestClusterRESTThroughFollowers(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "rest", 3, nil)
	c.waitSettled(0, 0, 60*time.Second)
	leader := c.leader()
	if leader < 0 {
		t.Fatal("no leader in the logs")
	}
	var followers []int
	for _, i := range c.alive() {
		if i != leader {
			followers = append(followers, i)
		}
	}
	f, g := c.rest(followers[0]), c.rest(followers[1])
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 100)
	cfg := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "rest-t"}
	code, body := f.do("POST", "/connectors", map[string]any{"name": "s", "config": cfg})
	if code != 201 || !strings.Contains(string(body), `"name":"s"`) {
		t.Fatalf("create through a follower: %d %s", code, body)
	}
	f.must("POST", "/connectors", map[string]any{"name": "s", "config": cfg}, 409)
	cfg["batch.size"] = "10"
	g.must("PUT", "/connectors/s/config", cfg, 200)
	g.must("PATCH", "/connectors/s/config", map[string]any{"batch.size": "20"}, 200)
	g.waitState("s", "RUNNING", 1)
	f.must("PUT", "/connectors/s/pause", nil, 202)
	g.waitState("s", "PAUSED", 1)
	g.must("PUT", "/connectors/s/resume", nil, 202)
	f.waitState("s", "RUNNING", 1)
	f.must("POST", "/connectors/s/restart", nil, 204)
	g.must("POST", "/connectors/s/restart?includeTasks=true", nil, 202)
	f.must("POST", "/connectors/s/tasks/0/restart", nil, 204)
	g.must("POST", "/connectors/s/tasks/7/restart", nil, 404)
	f.waitState("s", "RUNNING", 1)
	g.must("PUT", "/connectors/s/stop", nil, 204)
	f.waitState("s", "STOPPED", 0)
	f.must("PATCH", "/connectors/s/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"filename": in}, "offset": map[string]any{"position": 7}}}}, 200)
	if _, body := g.do("GET", "/connectors/s/offsets", nil); !strings.Contains(string(body), `"position":7`) {
		t.Errorf("offsets after the alter through a follower: %s", body)
	}
	g.must("DELETE", "/connectors/s/offsets", nil, 200)
	f.must("PUT", "/connectors/s/resume", nil, 202)
	g.waitState("s", "RUNNING", 1)
	// The internal task-config endpoint refuses unsigned and wrongly
	// signed requests (the group is sessioned).
	l := c.rest(leader)
	if code, body := l.do("POST", "/connectors/s/tasks", []map[string]string{{"task.class": "x"}}); code != 400 || !strings.Contains(string(body), "missing required signature") {
		t.Errorf("unsigned internal request: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", l.url+"/connectors/s/tasks", strings.NewReader(`[{"task.class":"x"}]`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Connect-Authorization", "bm90IGEgc2lnbmF0dXJl")
	req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("wrongly signed internal request: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	f.must("DELETE", "/connectors/s", nil, 204)
	g.must("DELETE", "/connectors/s", nil, 404)

	// A REST storm through the followers while a worker joins and then
	// the leader is killed.
	var n, held atomic.Int64
	var mu sync.Mutex
	codes := map[int]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, fi := range followers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.rest(fi)
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("storm-%d-%d", fi, k)
				t0 := time.Now()
				code, body := r.do("POST", "/connectors", map[string]any{"name": name, "config": map[string]string{
					"connector.class": "dev.tributary.connect.datagen.DatagenConnector", "kafka.topic": "storm", "records.per.sec": "1"}})
				if time.Since(t0) > time.Second {
					held.Add(1)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
				n.Add(1)
				if code >= 500 {
					t.Errorf("POST %s answered %d during a rebalance: %s", name, code, body)
				}
				if code == 201 {
					if code, body := r.do("DELETE", "/connectors/"+name, nil); code >= 500 {
						t.Errorf("DELETE %s answered %d during a rebalance: %s", name, code, body)
					}
				}
			}
		}()
	}
	time.Sleep(time.Second)
	c.add(nil)
	time.Sleep(2 * time.Second)
	c.kill(leader)
	time.Sleep(20 * time.Second) // past the session timeout and the new leader's election
	close(stop)
	wg.Wait()
	t.Logf("%d creates during the rebalances: status codes %v; %d waited over 1 s", n.Load(), codes, held.Load())
	if codes[http.StatusCreated] == 0 {
		t.Error("no create succeeded during the rebalances")
	}
}

// Restart every worker in turn (SIGTERM, start again) while files stream:
// nothing is lost.
func TestClusterRollingRestart(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "rolling", 3, nil)
	const total = 40000 // about 20 s of input: the restarts are mid-stream
	_, outs, done := c.filePipelines(0, 3, total, 100*time.Millisecond)
	c.waitSettled(6, 6, 60*time.Second)
	for i := 0; i < 3; i++ {
		began := time.Now()
		c.stop(i)
		c.start(i)
		_, at := c.waitSettled(6, 6, 60*time.Second)
		t.Logf("worker %d restarted; cluster settled %v after the stop", i, at.Sub(began).Round(10*time.Millisecond))
	}
	<-done
	checkNoLoss(t, outs, total, 120*time.Second)
}

// A mixed cluster: Kafka Connect 4.4 workers join a group of Tributary
// workers (and the other way round) with the sessioned protocol. Writes
// are forwarded to the leader whichever runtime leads, and task configs
// generated on a follower reach the leader signed with the session key the
// leader wrote (Kafka Connect's format and HMAC checked both ways). Both
// sides need the connector's plugin: FileStream connectors here.
func TestClusterMixedWithKafkaConnect(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "mixed", 1, nil) // Tributary leads
	c.waitSettled(0, 0, 60*time.Second)
	kc := harness.KafkaConnect(t, bootstrap, harness.WithConnectGroup("mixed"))
	k := rest{t, kc.URL()}
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 10)
	file := func(topic string) map[string]string {
		return map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": topic}
	}
	// Through Kafka Connect (a follower: forwarded to Tributary's leader)
	// and through Tributary.
	k.must("POST", "/connectors", map[string]any{"name": "a", "config": file("mixed-a")}, 201)
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "b", "config": file("mixed-b")}, 201)
	kcID := strings.TrimPrefix(kc.URL(), "http://")
	c.waitMixed(0, kcID, 2, 90*time.Second)
	log, _ := os.ReadFile(c.worker(0).LogPath())
	if !strings.Contains(string(log), "writing task configs sent by a follower") {
		t.Error("Tributary's leader did not receive Kafka Connect's task configs")
	}
	// Kafka Connect leads once the Tributary worker leaves; a new Tributary
	// worker joins it as a follower.
	c.stop(0)
	w := c.add(nil)
	c.rest(w).must("POST", "/connectors", map[string]any{"name": "c", "config": file("mixed-c")}, 201)
	k.must("PUT", "/connectors/a/pause", nil, 202)
	k.must("PUT", "/connectors/a/resume", nil, 202)
	c.rest(w).must("DELETE", "/connectors/b", nil, 204)
	c.waitMixed(w, kcID, 2, 90*time.Second)
	if gen, lead := lastGeneration(c.worker(w).LogPath()); lead || gen < 0 {
		t.Errorf("the new Tributary worker leads (generation %d); Kafka Connect should", gen)
	}
	// Reconfigure the connector the Tributary follower runs: it sends the
	// new task configs to Kafka Connect's leader, signed.
	p, _ := c.placement(w)
	mine := ""
	for name, id := range p.conns {
		if id == c.id(w) {
			mine = name
		}
	}
	cfg := file("mixed-" + mine)
	cfg["batch.size"] = "7"
	k.must("PUT", "/connectors/"+mine+"/config", cfg, 200)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, body := k.do("GET", "/connectors/"+mine+"/tasks", nil)
		if strings.Contains(string(body), `"batch.size":"7"`) {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(c.worker(w).LogPath())
			t.Fatalf("Kafka Connect's leader did not take the task configs of the Tributary follower: %s\n%s", body, tail(string(log), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.waitMixed(w, kcID, 2, 60*time.Second)
	log, _ = os.ReadFile(c.worker(w).LogPath())
	if !strings.Contains(string(log), "sending task configs to the leader") || strings.Contains(string(log), "sending task configs to the leader failed") {
		t.Errorf("the Tributary follower's task configs did not go to Kafka Connect's leader in one signed request")
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitMixed waits until n connectors with one task each run, all RUNNING,
// one connector and one task on Tributary worker i and the others on the
// Kafka Connect worker kc.
func (c *workerCluster) waitMixed(i int, kc string, n int, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		p, err := c.placement(i)
		conns, tasks := map[string]int{}, map[string]int{}
		for _, w := range p.conns {
			conns[w]++
		}
		for _, w := range p.tasks {
			tasks[w]++
		}
		if err == nil && len(p.conns) == n && len(p.tasks) == n && len(p.bad) == 0 &&
			conns[c.id(i)] == 1 && tasks[c.id(i)] == 1 && conns[kc] == n-1 && tasks[kc] == n-1 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("mixed cluster not settled: connectors %v tasks %v not running %v (%v)", p.conns, p.tasks, p.bad, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

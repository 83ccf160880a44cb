package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// readCommitted reads topic from the start read_committed until nothing
// more comes for quiet.
func readCommitted(t *testing.T, bootstrap, topic string, quiet time.Duration) []*kgo.Record {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	var out []*kgo.Record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), quiet)
		fs := cl.PollFetches(ctx)
		cancel()
		if len(fs.Records()) == 0 {
			return out
		}
		out = append(out, fs.Records()...)
	}
}

// lineCounts counts the FileStream records of a topic (JsonConverter
// string payloads) by line.
func lineCounts(t *testing.T, recs []*kgo.Record) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range recs {
		var v struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		out[v.Payload]++
	}
	return out
}

// checkExactlyOnce fails unless counts holds line-000000 … line-<n-1>
// once each and nothing else.
func checkExactlyOnce(t *testing.T, counts map[string]int, n int) {
	t.Helper()
	missing, dups := 0, 0
	var first []int
	for i := range n {
		switch c := counts[fmt.Sprintf("line-%06d", i)]; {
		case c == 0:
			missing++
			if len(first) < 5 {
				first = append(first, i)
			}
		case c > 1:
			dups += c - 1
		}
	}
	if missing > 0 || dups > 0 || len(counts) != n {
		t.Fatalf("%d lines: %d missing (first %v), %d duplicates, %d distinct", n, missing, first, dups, len(counts))
	}
}

// TestExactlyOnceFileSourceKill9 runs a FileStream source with
// exactly.once.support=required on a worker with exactly-once support,
// SIGKILLs the worker while lines are appended, restarts it, several
// times: read_committed, every line is in the topic exactly once. The
// config topic holds the connector's task count record, the offsets topic
// the offsets, both written in transactions.
func TestExactlyOnceFileSourceKill9(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	group := "eosfile"
	c := newWorkerCluster(t, bin, bootstrap, group, 1, map[string]string{"exactly.once.source.support": "enabled"})
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 1000)
	// A kill can leave the task's transaction open on the offsets topic;
	// the restarted worker reads that topic read_committed to its end, as
	// Kafka Connect's KafkaBasedLog does (end offsets read uncommitted),
	// so it starts once the broker has aborted the transaction: after
	// transaction.timeout.ms (a minute by default, as long as the harness
	// waits for a worker to answer). A shorter one keeps that within the
	// wait.
	cfg := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": "eos-lines",
		"exactly.once.support": "required", "batch.size": "50", "producer.override.transaction.timeout.ms": "10000"}
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "f", "config": cfg}, 201)
	c.rest(0).waitState("f", "RUNNING", 1)
	total := 1000
	for k := range 4 {
		appendLines(t, in, total, total+2000)
		total += 2000
		time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
		c.kill(0)
		t.Logf("SIGKILL %d", k+1)
		c.start(0)
		c.rest(0).waitState("f", "RUNNING", 1)
	}
	deadline := time.Now().Add(60 * time.Second)
	var counts map[string]int
	for {
		counts = lineCounts(t, readCommitted(t, bootstrap, "eos-lines", time.Second))
		if len(counts) >= total || time.Now().After(deadline) {
			break
		}
	}
	checkExactlyOnce(t, counts, total)
	// The task count record, as Kafka Connect writes it.
	var fencing string
	for _, r := range readCommitted(t, bootstrap, group+"-configs", time.Second) {
		if string(r.Key) == "tasks-fencing-f" {
			fencing = string(r.Value)
		}
	}
	if !strings.Contains(fencing, `"task-count":1`) {
		t.Errorf("tasks-fencing-f = %q", fencing)
	}
	offs := readCommitted(t, bootstrap, group+"-offsets", time.Second)
	if len(offs) == 0 {
		t.Error("no committed offsets")
	}
	t.Logf("%d lines exactly once through 4 SIGKILLs; %d offset records; %s", total, len(offs), fencing)

	// Resetting the offsets of the stopped connector fences its task's
	// producer first, and records that no task runs.
	c.rest(0).must("PUT", "/connectors/f/stop", nil, 204)
	c.rest(0).waitState("f", "STOPPED", 0)
	c.rest(0).must("DELETE", "/connectors/f/offsets", nil, 200)
	cfgs, _ := internalRecords(t, bootstrap, group+"-configs")
	if got := string(cfgs["tasks-fencing-f"]); !strings.Contains(got, `"task-count":0`) {
		t.Errorf("after the reset, tasks-fencing-f = %q", got)
	}
	log, _ := os.ReadFile(c.worker(0).LogPath())
	if !strings.Contains(string(log), "fencing out the producers of older task generations") {
		t.Error("no round of zombie fencing before the offsets reset")
	}
}

// TestExactlyOncePostgresKill9Cluster is the kill -9 loop: a
// Postgres source with exactly-once support on three workers, a steady
// stream of transactions, a worker SIGKILLed at random every few seconds
// (and started again) for at least 10 kills; read_committed, every row's
// change is in the topic exactly once, in commit order.
func TestExactlyOncePostgresKill9Cluster(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	eosPostgresKillLoop(t, bin, bootstrap, 10)
}

// TestExactlyOncePostgresKill9ApacheKafka is the kill -9 loop on Apache
// Kafka 4.4.
func TestExactlyOncePostgresKill9ApacheKafka(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.ApacheKafka(t).Bootstrap()
	eosPostgresKillLoop(t, bin, bootstrap, 10)
}

func eosPostgresKillLoop(t *testing.T, bin, bootstrap string, kills int) {
	pg := harness.StartPostgresT(t)
	id := pgID("eos")
	pg.Exec(t, `CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL)`)
	group := "eos" + id
	c := newWorkerCluster(t, bin, bootstrap, group, 3, map[string]string{"exactly.once.source.support": "enabled"})
	cfg := pgConnectorConfig(pg, id, "public.ledger")
	cfg["exactly.once.support"] = "required"
	// As in TestExactlyOnceFileSourceKill9: a restarted worker waits for
	// a killed task's open transaction to be aborted.
	cfg["producer.override.transaction.timeout.ms"] = "10000"
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	c.rest(0).waitState("pg", "RUNNING", 1)

	// The workload: transactions of 1 to 9 rows.
	load := startLedgerLoad(t, pg)
	topic := id + ".public.ledger"
	er := &eventReader{t: t, cl: newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))}
	er.until(90*time.Second, "the first rows", func(es []cdcEvent) bool { return len(es) >= 200 })
	for k := 1; k <= kills; k++ {
		time.Sleep(time.Duration(2000+rand.IntN(2000)) * time.Millisecond)
		alive := c.alive()
		victim := alive[rand.IntN(len(alive))]
		if k%2 == 0 {
			// Every other kill is the task's worker (when it runs), so
			// that the task dies mid-transaction and moves.
			w := taskWorker(c.rest(alive[0]), "pg")
			for _, i := range alive {
				if c.id(i) == w {
					victim = i
				}
			}
		}
		c.kill(victim)
		t.Logf("SIGKILL %d: worker %d", k, victim)
		time.Sleep(500 * time.Millisecond)
		c.start(victim)
	}
	er.until(3*time.Minute, "more rows after the kills", func(es []cdcEvent) bool { return len(es) >= 200+500 })
	n := load.end()
	seen := map[string]int{}
	done := 0
	events := er.until(3*time.Minute, fmt.Sprintf("all %d rows", n), func(es []cdcEvent) bool {
		for _, e := range es[done:] {
			seen[keyString(e.key)]++
		}
		done = len(es)
		return len(seen) >= n
	})
	missing, dups := 0, 0
	for i := range n {
		switch c := seen[fmt.Sprintf(`{"id":%d}`, i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups += c - 1
		}
	}
	// Commit order: ids were inserted in increasing order, one
	// transaction after another, into one partition.
	disorder := 0
	last := int64(-1)
	for _, e := range events {
		var id int64
		if _, err := fmt.Sscan(fmt.Sprint(e.key["id"]), &id); err != nil {
			t.Fatalf("event key %v: %v", e.key, err)
		}
		if id <= last {
			disorder++
		}
		last = id
	}
	if missing > 0 || dups > 0 || disorder > 0 || len(events) != n {
		for _, i := range c.alive() {
			log, _ := os.ReadFile(c.worker(i).LogPath())
			t.Logf("worker %d log tail:\n%s", i, tail(string(log), 30))
		}
		t.Fatalf("%d rows, %d events: %d missing, %d duplicates, %d out of order", n, len(events), missing, dups, disorder)
	}
	moves := 0
	for _, i := range c.alive() {
		log, _ := os.ReadFile(c.worker(i).LogPath())
		moves += strings.Count(string(log), "transactional producer initialized")
	}
	t.Logf("%d rows exactly once, in commit order, through %d SIGKILLs on 3 workers (task producer initializations logged by the live workers: %d)", n, kills, moves)
	if moves < 1+kills/2 {
		t.Errorf("the task started only %d times: too few kills hit it", moves)
	}
}

// taskWorker is the worker_id the status of task 0 of name reports.
func taskWorker(r rest, name string) string {
	_, body := r.do("GET", "/connectors/"+name+"/status", nil)
	var s struct {
		Tasks []struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
		} `json:"tasks"`
	}
	json.Unmarshal(body, &s)
	if len(s.Tasks) == 0 || s.Tasks[0].State != "RUNNING" {
		return ""
	}
	return s.Tasks[0].WorkerID
}

// TestExactlyOnceZombieSIGSTOP suspends (SIGSTOP) the worker whose task is
// in the middle of a transaction, past its session timeout; the task
// starts on the other worker, whose producer fences the zombie's; the
// zombie is resumed (SIGCONT). Nothing the zombie wrote is visible to
// read_committed consumers: every line once, though the topic holds the
// zombie's aborted copies too.
func TestExactlyOnceZombieSIGSTOP(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	c := newWorkerCluster(t, bin, bootstrap, "eoszombie", 2, map[string]string{"exactly.once.source.support": "enabled"})
	c.waitSettled(0, 0, 60*time.Second)
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 100)
	// Interval boundaries a minute apart and a long transaction timeout:
	// the first transaction stays open until fenced.
	cfg := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": "eos-zombie",
		"exactly.once.support": "required", "transaction.boundary": "interval", "transaction.boundary.interval.ms": "60000",
		"producer.override.transaction.timeout.ms": "300000"}
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "z", "config": cfg}, 201)
	var zombie int
	waitFor(t, "the task running", func() bool {
		w := taskWorker(c.rest(0), "z")
		for _, i := range c.alive() {
			if c.id(i) == w {
				zombie = i
				return true
			}
		}
		return false
	})
	adm := newAdmin(t, bootstrap)
	waitFor(t, "the zombie's records in the topic, uncommitted", func() bool {
		ends, err := adm.ListEndOffsets(context.Background(), "eos-zombie")
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return err == nil && n >= 100
	})
	if got := len(readCommitted(t, bootstrap, "eos-zombie", time.Second)); got != 0 {
		t.Fatalf("read_committed sees %d records of the open transaction", got)
	}
	if err := c.worker(zombie).Suspend(); err != nil {
		t.Fatal(err)
	}
	t.Logf("worker %d suspended mid-transaction", zombie)
	other := 1 - zombie
	waitFor(t, "the task running on the other worker", func() bool { return taskWorker(c.rest(other), "z") == c.id(other) })
	appendLines(t, in, 100, 150)
	if err := c.worker(zombie).Continue(); err != nil {
		t.Fatal(err)
	}
	t.Logf("worker %d resumed", zombie)
	// The zombie notices it lost its membership and stops its task; its
	// transaction was aborted by the fencing.
	time.Sleep(5 * time.Second)
	// Pausing commits the new instance's open transaction.
	c.rest(other).must("PUT", "/connectors/z/pause", nil, 202)
	waitFor(t, "every line committed", func() bool {
		return len(readCommitted(t, bootstrap, "eos-zombie", time.Second)) >= 150
	})
	checkExactlyOnce(t, lineCounts(t, readCommitted(t, bootstrap, "eos-zombie", time.Second)), 150)
	all := newClient(t, bootstrap, kgo.ConsumeTopics("eos-zombie"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var uncommitted int
	for ctx.Err() == nil {
		uncommitted += len(all.PollFetches(ctx).Records())
	}
	if uncommitted < 250 {
		t.Errorf("read_uncommitted sees %d records, want the zombie's 100 aborted ones beside the 150", uncommitted)
	}
	log, _ := os.ReadFile(c.worker(zombie).LogPath())
	t.Logf("the zombie's log: %s", tail(grepLines(string(log), "connector=z"), 8))
}

// internalRecords reads an internal topic read_committed as key → the
// last value (nil for a tombstone), with the keys in first-seen order.
func internalRecords(t *testing.T, bootstrap, topic string) (map[string][]byte, []string) {
	t.Helper()
	last := map[string][]byte{}
	var order []string
	for _, r := range readCommitted(t, bootstrap, topic, 2*time.Second) {
		k := string(r.Key)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = r.Value
	}
	return last, order
}

// jsonFields is the sorted field names of a JSON object.
func jsonFields(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// TestExactlyOncePostgresDebeziumDiff runs Debezium 3.6.1's Postgres
// connector on Kafka Connect 4.4 and Tributary's, each on a worker with
// exactly.once.source.support=enabled and exactly.once.support=required,
// on one broker, over the same table and changes: the same config-topic
// records (tasks-fencing-pg = {"task-count":1}), the same offsets-topic
// keys and offset fields, the same transactional ids, and each change
// once, read_committed.
func TestExactlyOncePostgresDebeziumDiff(t *testing.T) {
	t.Parallel()
	harness.RequireDebezium(t)
	bin := harness.BuildTributary(t)
	pg := harness.StartPostgresT(t)
	pg.Exec(t, `CREATE TABLE ledger (id bigint PRIMARY KEY, v text NOT NULL)`)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	kc := harness.KafkaConnect(t, bootstrap, harness.WithConnectGroup("eosdiff-kc"), harness.WithWorkerProperty("exactly.once.source.support", "enabled"))
	props := harness.WorkerProps(t, bootstrap, "eosdiff-tr", map[string]string{"exactly.once.source.support": "enabled"})
	tr := harness.StartWorkerProcess(t, bin, t.TempDir(), props)
	workers := map[string]rest{"kc": {t, kc.URL()}, "tr": {t, tr.URL()}}
	for _, side := range []string{"kc", "tr"} {
		cfg := pgConnectorConfig(pg, side, "public.ledger")
		cfg["slot.name"], cfg["publication.name"] = "eos_"+side, "eos_"+side+"_pub"
		cfg["plugin.name"], cfg["tasks.max"] = "pgoutput", "1"
		cfg["exactly.once.support"] = "required"
		workers[side].must("POST", "/connectors", map[string]any{"name": "pg", "config": cfg}, 201)
	}
	for _, side := range []string{"kc", "tr"} {
		deadline := time.Now().Add(3 * time.Minute)
		for taskWorker(workers[side], "pg") == "" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the task is not running: %s", side, workers[side].statusOf("pg")())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := 0; i < 20; i++ {
		pg.Exec(t, fmt.Sprintf(`INSERT INTO ledger SELECT g, 'v' || g FROM generate_series(%d, %d) g`, i*10, i*10+9))
	}
	pg.Exec(t, `UPDATE ledger SET v = 'w' WHERE id < 50`)
	const want = 200 + 50
	for _, side := range []string{"kc", "tr"} {
		topic := side + ".public.ledger"
		er := &eventReader{t: t, cl: newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()))}
		er.diag = workers[side].statusOf("pg")
		er.until(3*time.Minute, fmt.Sprintf("%s: %d events", side, want), func(es []cdcEvent) bool { return len(es) >= want })
		time.Sleep(2 * time.Second)
		if got := er.until(time.Second, "", func([]cdcEvent) bool { return true }); len(got) != want {
			t.Errorf("%s: %d events read_committed, want %d", side, len(got), want)
		}
	}
	// Config topics: the same kinds of records, the same task count record.
	kinds := func(keys []string) string {
		var out []string
		for _, k := range keys {
			if i := strings.LastIndex(k, "-"); i > 0 && !strings.HasPrefix(k, "session-key") {
				k = k[:i]
			}
			out = append(out, k)
		}
		sort.Strings(out)
		return strings.Join(slices.Compact(out), " ")
	}
	kcCfg, kcKeys := internalRecords(t, bootstrap, "eosdiff-kc-configs")
	trCfg, trKeys := internalRecords(t, bootstrap, "eosdiff-tr-configs")
	if kinds(kcKeys) != kinds(trKeys) {
		t.Errorf("config topic records: Kafka Connect %q, Tributary %q", kcKeys, trKeys)
	}
	if a, b := string(kcCfg["tasks-fencing-pg"]), string(trCfg["tasks-fencing-pg"]); a == "" || a != b {
		t.Errorf("tasks-fencing-pg: Kafka Connect %s, Tributary %s", a, b)
	}
	// Offsets topics: the same key for the partition, the same fields.
	kcOff, _ := internalRecords(t, bootstrap, "eosdiff-kc-offsets")
	trOff, _ := internalRecords(t, bootstrap, "eosdiff-tr-offsets")
	kk, tk := `["pg",{"server":"kc"}]`, `["pg",{"server":"tr"}]`
	if kcOff[kk] == nil || trOff[tk] == nil {
		t.Fatalf("offsets: Kafka Connect %q, Tributary %q", mapKeys(kcOff), mapKeys(trOff))
	}
	if a, b := jsonFields(t, kcOff[kk]), jsonFields(t, trOff[tk]); a != b {
		t.Errorf("offset fields: Kafka Connect %s (%s), Tributary %s (%s)", a, kcOff[kk], b, trOff[tk])
	}
	// The transactional ids: the leaders' and the tasks'.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	txns, err := newAdmin(t, bootstrap).ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Join(txns.TransactionalIDs(), " ")
	for _, want := range []string{"connect-cluster-eosdiff-kc", "connect-cluster-eosdiff-tr", "eosdiff-kc-pg-0", "eosdiff-tr-pg-0"} {
		if !strings.Contains(" "+ids+" ", " "+want+" ") {
			t.Errorf("transactional id %s missing: %s", want, ids)
		}
	}
	t.Logf("config records %q; tasks-fencing-pg %s; offsets %s; transactional ids %s", trKeys, trCfg["tasks-fencing-pg"], trOff[tk], ids)
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestExactlyOnceMixedWithKafkaConnect runs a group of a Tributary worker
// and a Kafka Connect 4.4 worker, both with exactly-once support, through
// rebalances (the Tributary leader leaves, another Tributary worker joins
// Kafka Connect's lead): two FileStream sources with
// exactly.once.support=required keep running, tasks on either kind of
// worker fenced by either kind of leader, and every line is in their
// topics once, read_committed.
func TestExactlyOnceMixedWithKafkaConnect(t *testing.T) {
	t.Parallel()
	eosMixed(t, harness.TributaryBroker(t).Bootstrap())
}

// TestExactlyOnceMixedWithKafkaConnectApacheKafka is the mixed group on
// Apache Kafka 4.4.
func TestExactlyOnceMixedWithKafkaConnectApacheKafka(t *testing.T) {
	t.Parallel()
	eosMixed(t, harness.ApacheKafka(t).Bootstrap())
}

func eosMixed(t *testing.T, bootstrap string) {
	bin := harness.BuildTributary(t)
	eos := map[string]string{"exactly.once.source.support": "enabled"}
	c := newWorkerCluster(t, bin, bootstrap, "eosmixed", 1, eos) // Tributary leads
	c.waitSettled(0, 0, 60*time.Second)
	kc := harness.KafkaConnect(t, bootstrap, harness.WithConnectGroup("eosmixed"), harness.WithWorkerProperty("exactly.once.source.support", "enabled"))
	k := rest{t, kc.URL()}
	kcID := strings.TrimPrefix(kc.URL(), "http://")
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 500)
	// The default batch.size (2000): Kafka's FileStreamSourceTask returns
	// a full batch and keeps the lines left in its read buffer until the
	// file grows again, so with small batches its last lines would wait
	// for an append that never comes.
	file := func(topic string) map[string]string {
		return map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": topic,
			"exactly.once.support": "required"}
	}
	k.must("POST", "/connectors", map[string]any{"name": "a", "config": file("eosmixed-a")}, 201)
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "b", "config": file("eosmixed-b")}, 201)
	c.waitMixed(0, kcID, 2, 90*time.Second)
	appendLines(t, in, 500, 1000)
	// Kafka Connect leads once the Tributary worker leaves; a new one joins.
	c.stop(0)
	appendLines(t, in, 1000, 1500)
	w := c.add(eos)
	c.waitMixed(w, kcID, 2, 90*time.Second)
	appendLines(t, in, 1500, 2000)
	for _, topic := range []string{"eosmixed-a", "eosmixed-b"} {
		t.Logf("checking %s (connector %s runs on %s)", topic, topic[len(topic)-1:], taskWorker(k, topic[len(topic)-1:]))
		deadline := time.Now().Add(90 * time.Second)
		var counts map[string]int
		for {
			counts = lineCounts(t, readCommitted(t, bootstrap, topic, time.Second))
			if len(counts) >= 2000 || time.Now().After(deadline) {
				break
			}
		}
		if len(counts) < 2000 {
			// What the topic holds beyond the committed records, and what
			// Kafka Connect says.
			all := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			n := 0
			for ctx.Err() == nil {
				n += len(all.PollFetches(ctx).Records())
			}
			cancel()
			log, _ := os.ReadFile(kc.LogPath())
			t.Logf("%s: %d records read_uncommitted; Kafka Connect's log: %s", topic, n,
				tail(grepLines(string(log), "ERROR", "WARN", "|task-0]"), 20))
			t.Logf("Kafka Connect's task threads: %s", javaThreads(kc.Dir(), "task-thread"))
		}
		checkExactlyOnce(t, counts, 2000)
	}
	cfg, _ := internalRecords(t, bootstrap, "eosmixed-configs")
	t.Logf("tasks-fencing-a %s, tasks-fencing-b %s", cfg["tasks-fencing-a"], cfg["tasks-fencing-b"])
	if cfg["tasks-fencing-a"] == nil || cfg["tasks-fencing-b"] == nil {
		t.Error("a task count record is missing")
	}
}

// javaThreads is the stacks of the threads whose name holds name in the
// JVM whose command line mentions dir (jstack), for diagnostics.
func javaThreads(dir, name string) string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), dir) || !strings.Contains(string(b), "java") {
			continue
		}
		pid := strings.Split(p, "/")[2]
		out, err := exec.Command("jstack", pid).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("jstack %s: %v", pid, err)
		}
		var keep []string
		for _, th := range strings.Split(string(out), "\n\n") {
			if strings.Contains(th, name) {
				keep = append(keep, th)
			}
		}
		return strings.Join(keep, "\n\n")
	}
	return "(no JVM found)"
}

// TestExactlyOnceConnectorOffsetsTopic runs an exactly-once FileStream
// source with offsets.storage.topic: its offsets are written in its
// transactions to its own topic (created), with a copy in the worker's;
// a SIGKILLed and restarted worker resumes from them, every line once;
// the REST API reads them, and a reset tombstones both.
func TestExactlyOnceConnectorOffsetsTopic(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	group := "eosown"
	c := newWorkerCluster(t, bin, bootstrap, group, 1, map[string]string{"exactly.once.source.support": "enabled"})
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 1000)
	cfg := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": "eos-own",
		"exactly.once.support": "required", "offsets.storage.topic": "eos-own-offsets", "batch.size": "100"}
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "f", "config": cfg}, 201)
	c.rest(0).waitState("f", "RUNNING", 1)
	waitFor(t, "the first lines", func() bool { return len(readCommitted(t, bootstrap, "eos-own", 500*time.Millisecond)) >= 1000 })
	c.kill(0)
	appendLines(t, in, 1000, 2000)
	c.start(0)
	c.rest(0).waitState("f", "RUNNING", 1)
	var counts map[string]int
	waitFor(t, "every line", func() bool {
		counts = lineCounts(t, readCommitted(t, bootstrap, "eos-own", 500*time.Millisecond))
		return len(counts) >= 2000
	})
	checkExactlyOnce(t, counts, 2000)
	key := fmt.Sprintf(`["f",{"filename":%q}]`, in)
	want := fmt.Sprintf(`{"position":%d}`, 2000*len("line-000000\n"))
	waitFor(t, "the offsets in both topics", func() bool {
		own, _ := internalRecords(t, bootstrap, "eos-own-offsets")
		global, _ := internalRecords(t, bootstrap, group+"-offsets")
		return string(own[key]) == want && string(global[key]) == want
	})
	body := c.rest(0).must("GET", "/connectors/f/offsets", nil, 200)
	if !strings.Contains(string(body), fmt.Sprintf(`"position":%d`, 2000*len("line-000000\n"))) {
		t.Errorf("GET offsets: %s", body)
	}
	c.rest(0).must("PUT", "/connectors/f/stop", nil, 204)
	c.rest(0).waitState("f", "STOPPED", 0)
	c.rest(0).must("DELETE", "/connectors/f/offsets", nil, 200)
	own, _ := internalRecords(t, bootstrap, "eos-own-offsets")
	global, _ := internalRecords(t, bootstrap, group+"-offsets")
	if own[key] != nil || global[key] != nil {
		t.Errorf("after the reset: own %s, worker's %s", own[key], global[key])
	}
	t.Logf("offsets in eos-own-offsets and %s-offsets: %s; reset in both", group, want)
}

// TestExactlyOncePreparing runs a worker with
// exactly.once.source.support=preparing, the first of Kafka Connect's two
// rolling upgrades: the leader already writes the config topic through
// its transactional producer (connect-cluster-<group.id>), while source
// tasks still run without transactions (no <group.id>-<connector>-<task>
// producer) and nothing is fenced; exactly.once.support=required is
// refused, as the worker does not have exactly-once support enabled.
func TestExactlyOncePreparing(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	group := "eosprep"
	c := newWorkerCluster(t, bin, bootstrap, group, 1, map[string]string{"exactly.once.source.support": "preparing"})
	in := c.dir + "/in.txt"
	appendLines(t, in, 0, 100)
	cfg := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": "eos-prep"}
	c.rest(0).must("POST", "/connectors", map[string]any{"name": "f", "config": cfg}, 201)
	c.rest(0).waitState("f", "RUNNING", 1)
	waitFor(t, "the lines", func() bool { return len(readCommitted(t, bootstrap, "eos-prep", 500*time.Millisecond)) >= 100 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	txns, err := newAdmin(t, bootstrap).ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := " " + strings.Join(txns.TransactionalIDs(), " ") + " "
	if !strings.Contains(ids, " connect-cluster-"+group+" ") || strings.Contains(ids, " "+group+"-f-0 ") {
		t.Errorf("transactional ids %q: want the leader's, not the task's", ids)
	}
	cfgs, _ := internalRecords(t, bootstrap, group+"-configs")
	if cfgs["tasks-fencing-f"] != nil {
		t.Errorf("tasks-fencing-f = %s under preparing", cfgs["tasks-fencing-f"])
	}
	req := map[string]any{"name": "g", "config": map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"file": in, "topic": "eos-prep-g", "exactly.once.support": "required"}}
	if code, body := c.rest(0).do("POST", "/connectors", req); code != 400 || !strings.Contains(string(body), "does not have exactly-once source support enabled") {
		t.Errorf("required under preparing: %d %s", code, body)
	}
}

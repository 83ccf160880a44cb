package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
)

// produceRaw writes records as they are into a topic, the way another
// worker (Kafka Connect, an older or newer Tributary) or a broken tool may
// have written them.
func produceRaw(t *testing.T, bootstrap string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ProducerBatchMaxBytes(16<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func (r rest) createSource(name, dir string) {
	r.t.Helper()
	r.must(http.MethodPost, "/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": "FileStreamSource", "topic": "robust-t", "file": filepath.Join(dir, "in.txt")}}, http.StatusCreated)
}

// Case 1 of issue 23: a connector name of 32,768 bytes or more used to be
// accepted (201) and then brick the worker for good: the leader's
// assignment wrapped the name's int16 length, every member failed to decode
// it and rejoined every few seconds, nothing new started, and after a
// restart the worker never became healthy. Now the REST API refuses names
// over MaxConnectorNameBytes with Kafka Connect's validation message, and
// a stored one (written by Kafka Connect, which dies on it, or an older
// version) is left out of the assignment and reported FAILED with the
// reason, deletable, while everything else runs, before and after a
// kill -9 and restart.
func TestLongConnectorName(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts a broker and a worker process")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	props := harness.WorkerProps(t, b.Bootstrap(), "longname", nil)
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), props)
	r := rest{t: t, url: w.URL()}

	for _, n := range []int{1025, 32768, 40000} {
		code, body := r.do(http.MethodPost, "/connectors", map[string]any{"name": strings.Repeat("n", n),
			"config": map[string]string{"connector.class": "FileStreamSource", "topic": "t"}})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "for configuration name: String may not be longer than 1024 bytes") {
			t.Fatalf("create with a %d-byte name: %d %s, want the 400 of the name's length", n, code, clipBody(body))
		}
	}
	// 1,024 bytes is fine, and its own Location addresses it.
	okName := strings.Repeat("k", 1024)
	r.createSource(okName, dir)
	r.waitState(okName, "RUNNING", 1)
	r.createSource("before", dir)
	r.waitState("before", "RUNNING", 1)

	long := strings.Repeat("L", 40000)
	produceRaw(t, b.Bootstrap(), &kgo.Record{Topic: "longname-configs", Key: []byte("connector-" + long),
		Value: []byte(`{"properties":{"connector.class":"FileStreamSource","topic":"t","name":"` + long + `"}}`)})

	checkLong := func() {
		t.Helper()
		waitFor(t, "the long-named connector to be FAILED", func() bool {
			s, code := r.status(long)
			return code == 200 && s.Connector.State == "FAILED" && strings.Contains(s.Connector.Trace, "group protocol carries at most")
		})
		// The rest of the worker goes on: a new connector starts.
		r.createSource("after", dir)
		r.waitState("after", "RUNNING", 1)
		r.must(http.MethodDelete, "/connectors/after", nil, http.StatusNoContent)
	}
	checkLong()

	w.Kill()
	w = harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), props) // waits for /health 200
	r = rest{t: t, url: w.URL()}
	r.waitState("before", "RUNNING", 1)
	r.waitState(okName, "RUNNING", 1)
	checkLong()

	r.must(http.MethodDelete, "/connectors/"+long, nil, http.StatusNoContent)
	waitFor(t, "the long-named connector and its status to go", func() bool {
		code, _ := r.do(http.MethodGet, "/connectors/"+long+"/status", nil)
		var names []string
		json.Unmarshal(r.must(http.MethodGet, "/connectors", nil, 200), &names)
		return code == http.StatusNotFound && len(names) == 2
	})
}

func clipBody(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "…"
	}
	return string(b)
}

// Issue 23, case 4: a config body between about 999,900 bytes and the
// REST limit (1 MiB) used to answer 500 MESSAGE_TOO_LARGE. The config topic
// is now created taking what the REST API accepts, so such a body is
// stored (as Kafka Connect stores a 1.04 MB one); where an existing config
// topic takes less, the write is a 413 that says why, and nothing is
// written.
func TestConfigSizes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts a broker and worker processes")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w1"), harness.WorkerProps(t, b.Bootstrap(), "sizes", nil))
	r := rest{t: t, url: w.URL()}

	pad := strings.Repeat("x", 1040000)
	cfg := map[string]string{"connector.class": "FileStreamSource", "topic": "sizes-t", "file": filepath.Join(dir, "in.txt"), "pad": pad}
	r.must(http.MethodPut, "/connectors/big/config", cfg, http.StatusCreated)
	var got map[string]string
	json.Unmarshal(r.must(http.MethodGet, "/connectors/big/config", nil, 200), &got)
	if got["pad"] != pad {
		t.Fatalf("stored pad of %d bytes", len(got["pad"]))
	}
	r.waitState("big", "RUNNING", 1) // its task config (as large) was stored too

	cfg["pad"] = strings.Repeat("x", 1<<20)
	code, body := r.do(http.MethodPut, "/connectors/bigger/config", cfg)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "Request body is larger than the limit of 1048576 bytes") {
		t.Fatalf("a body over 1 MiB: %d %s", code, clipBody(body))
	}

	// A config topic created elsewhere with a lower limit.
	adm := kadm.NewClient(newClient(t, b.Bootstrap()))
	if _, err := adm.CreateTopic(context.Background(), 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "max.message.bytes": kadm.StringPtr("100000")}, "small-configs"); err != nil {
		t.Fatal(err)
	}
	w2 := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "w2"), harness.WorkerProps(t, b.Bootstrap(), "small", nil))
	r2 := rest{t: t, url: w2.URL()}
	cfg["pad"] = strings.Repeat("x", 200000)
	code, body = r2.do(http.MethodPut, "/connectors/big/config", cfg)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "more than the 100000 bytes the config topic small-configs takes (its max.message.bytes); nothing was written") {
		t.Fatalf("a config over the topic's limit: %d %s", code, clipBody(body))
	}
	r2.must(http.MethodGet, "/connectors/big", nil, http.StatusNotFound)
	delete(cfg, "pad")
	r2.must(http.MethodPut, "/connectors/small/config", cfg, http.StatusCreated)
	r2.waitState("small", "RUNNING", 1)
}

// Issue 23, case 5: a config change that changes connector.class
// (FileStreamSource → Datagen) used to restart the task with its old task
// config, which failed ("Missing required configuration kafka.topic") and
// stayed FAILED although GET /tasks showed the new one. Tasks now restart
// only with the task configs of the new config.
func TestReconfigureConnectorClass(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts a broker and a worker process")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, b.Bootstrap(), "reconf", nil))
	r := rest{t: t, url: w.URL()}
	r.createSource("re", dir)
	r.waitState("re", "RUNNING", 1)

	// Watch the task's status through the change: it must never be FAILED.
	stop := make(chan struct{})
	failed := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if s, code := r.status("re"); code == 200 {
				for _, tk := range s.Tasks {
					if tk.State == "FAILED" {
						select {
						case failed <- tk.Trace:
						default:
						}
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	r.must(http.MethodPut, "/connectors/re/config", map[string]string{"connector.class": "dev.tributary.connect.datagen.DatagenConnector",
		"kafka.topic": "reconf-dg", "records.per.sec": "10"}, http.StatusOK)
	waitFor(t, "the Datagen task to run", func() bool {
		var tasks []struct {
			Config map[string]string `json:"config"`
		}
		json.Unmarshal(r.must(http.MethodGet, "/connectors/re/tasks", nil, 200), &tasks)
		s, _ := r.status("re")
		return len(tasks) == 1 && strings.Contains(tasks[0].Config["task.class"], "Datagen") &&
			s.Connector.State == "RUNNING" && len(s.Tasks) == 1 && s.Tasks[0].State == "RUNNING"
	})
	time.Sleep(time.Second) // a failure right after the start would show now
	close(stop)
	select {
	case tr := <-failed:
		t.Fatalf("the task failed during the change: %s", firstLine(tr))
	default:
	}
	// And back, with a change only its tasks see.
	r.must(http.MethodPut, "/connectors/re/config", map[string]string{"connector.class": "FileStreamSource", "topic": "reconf-t2",
		"file": filepath.Join(dir, "in.txt")}, http.StatusOK)
	waitFor(t, "the FileStream task to run with the new topic", func() bool {
		var tasks []struct {
			Config map[string]string `json:"config"`
		}
		json.Unmarshal(r.must(http.MethodGet, "/connectors/re/tasks", nil, 200), &tasks)
		s, _ := r.status("re")
		return len(tasks) == 1 && tasks[0].Config["topic"] == "reconf-t2" && len(s.Tasks) == 1 && s.Tasks[0].State == "RUNNING"
	})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// A worker never lets one stored record stop it (issue 23): config, status
// and offsets records it cannot apply (undecodable, written by a newer
// version, larger than the topic normally takes) are written straight into
// the internal topics, as another worker or a broken tool might. Each is
// logged with its key; the connector it belongs to is FAILED with the
// reason, can be deleted or mended through the REST API, and everything
// else starts and runs, also after a kill -9 and restart.
func TestStoredRecordsCannotStopWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts a broker and a worker process")
	}
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	props := harness.WorkerProps(t, b.Bootstrap(), "stored", nil)
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), props)
	r := rest{t: t, url: w.URL()}

	for _, n := range []string{"good", "good2", "stat"} {
		r.createSource(n, dir)
	}
	in := filepath.Join(dir, "offs.txt")
	appendLines(t, in, 0, 10)
	r.must(http.MethodPost, "/connectors", map[string]any{"name": "offs", "config": map[string]string{
		"connector.class": "FileStreamSource", "topic": "stored-t", "file": in}}, http.StatusCreated)
	for _, n := range []string{"good", "good2", "stat", "offs"} {
		r.waitState(n, "RUNNING", 1)
	}
	waitFor(t, "offs's offsets", func() bool {
		return strings.Contains(string(r.must(http.MethodGet, "/connectors/offs/offsets", nil, 200)), `"position"`)
	})

	// A config topic that someone let take larger records.
	adm := kadm.NewClient(newClient(t, b.Bootstrap()))
	if _, err := adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Name: "max.message.bytes", Value: kadm.StringPtr("8388608")}}, "stored-configs"); err != nil {
		t.Fatal(err)
	}
	offsKey, _ := json.Marshal([]any{"offs", map[string]string{"filename": in}})
	produceRaw(t, b.Bootstrap(),
		&kgo.Record{Topic: "stored-configs", Key: []byte("connector-badcfg"), Value: []byte(`{"properties":{"connector.class":`)},
		&kgo.Record{Topic: "stored-configs", Key: []byte("connector-newer"), Value: []byte(`{"properties":{"connector.class":"FileStreamSource","topic":"t","tasks.max":2}}`)},
		&kgo.Record{Topic: "stored-configs", Key: []byte("connector-huge"), Value: append([]byte(`{"properties":{"pad":"`), strings.Repeat("x", 3<<20)...)},
		&kgo.Record{Topic: "stored-configs", Key: []byte("target-state-good2"), Value: []byte(`{"state":"PAUSED","state.v2":"SUSPENDED"}`)},
		&kgo.Record{Topic: "stored-configs", Key: []byte("commit-good"), Value: []byte(`{"tasks":"many"}`)},
		&kgo.Record{Topic: "stored-configs", Key: []byte("some-future-record"), Value: []byte(`{}`)},
		&kgo.Record{Topic: "stored-status", Key: []byte("status-connector-stat"), Value: []byte(`not json`)},
		&kgo.Record{Topic: "stored-status", Key: []byte("status-task-stat-0"), Value: []byte(`{"state":`)},
		&kgo.Record{Topic: "stored-status", Key: []byte("status-task-"), Value: []byte(`{}`)},
		&kgo.Record{Topic: "stored-offsets", Key: offsKey, Value: []byte(`[1,2]`)},
		&kgo.Record{Topic: "stored-offsets", Key: []byte(`{"not":"an array"}`), Value: []byte(`{}`)},
	)

	failedWith := func(name, reason string) {
		t.Helper()
		waitFor(t, name+" FAILED with "+reason, func() bool {
			s, code := r.status(name)
			return code == 200 && s.Connector.State == "FAILED" && strings.Contains(s.Connector.Trace, reason)
		})
	}
	stillRuns := func() {
		t.Helper()
		r.waitState("good", "RUNNING", 1)
		r.createSource("fresh", dir)
		r.waitState("fresh", "RUNNING", 1)
		r.must(http.MethodDelete, "/connectors/fresh", nil, http.StatusNoContent)
	}
	failedWith("badcfg", "config record (offset")
	failedWith("newer", "cannot be read")
	failedWith("huge", "cannot be read")
	failedWith("good2", `unknown target state "SUSPENDED"`)
	failedWith("stat", "The status record (offset")
	failedWith("offs", "An offsets record of this connector")
	stillRuns()

	// Mend what can be mended: a new target state, a restart.
	r.must(http.MethodPut, "/connectors/good2/resume", nil, http.StatusAccepted)
	r.waitState("good2", "RUNNING", 1)
	r.must(http.MethodPost, "/connectors/stat/restart?includeTasks=true", nil, http.StatusAccepted)
	r.waitState("stat", "RUNNING", 1)

	w.Kill()
	w = harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), props) // waits for /health 200
	r = rest{t: t, url: w.URL()}
	for _, n := range []string{"good", "good2", "stat"} {
		r.waitState(n, "RUNNING", 1)
	}
	failedWith("badcfg", "config record (offset")
	failedWith("newer", "cannot be read")
	failedWith("huge", "cannot be read")
	failedWith("offs", "An offsets record of this connector")
	stillRuns()

	// Bad offsets: stop, reset, resume.
	r.must(http.MethodPut, "/connectors/offs/stop", nil, http.StatusNoContent)
	waitFor(t, "offs STOPPED", func() bool {
		code, _ := r.do(http.MethodDelete, "/connectors/offs/offsets", nil)
		return code == 200
	})
	r.must(http.MethodPut, "/connectors/offs/resume", nil, http.StatusAccepted)
	r.waitState("offs", "RUNNING", 1)

	for _, n := range []string{"badcfg", "newer", "huge"} {
		r.must(http.MethodDelete, "/connectors/"+n, nil, http.StatusNoContent)
	}
	waitFor(t, "the broken connectors to go", func() bool {
		var names []string
		json.Unmarshal(r.must(http.MethodGet, "/connectors", nil, 200), &names)
		return strings.Join(names, ",") == "good,good2,offs,stat"
	})
	// The log names the records.
	log := readFile(t, w.LogPath())
	for _, want := range []string{"key=connector-badcfg", "key=target-state-good2", "key=status-connector-stat", `key="[\"offs\"`, "key=commit-good", "key=some-future-record"} {
		if !strings.Contains(log, want) {
			t.Errorf("the worker log does not name the record %s", want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Case 8 of issue 23: a burst of concurrent creates used to queue every
// create on the herder loop, which wrote, read back, started the connector
// and its task within the request: 200 creates took a minute, /health
// (queued behind them, 10 s budget) answered 500 during the burst, and
// with 1,000 some creates answered 500 "Request timed out" yet created
// their connector. Now every create of a burst of 100 (a queue of about
// 12 s on the old loop, beyond /health's 10 s) is answered 201, /health
// stays 200 throughout, and every connector and task runs afterwards.
// How fast is measured by `tributary-bench rest`, not here.
func TestCreateBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts a broker and a worker process")
	}
	const creates = 100
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, b.Bootstrap(), "burst", nil))
	r := rest{t: t, url: w.URL()}

	var (
		mu                   sync.Mutex
		healthBad            []string
		healthSamples        int
		stopHealth, healthed = make(chan struct{}), make(chan struct{})
	)
	go func() {
		defer close(healthed)
		hc := &http.Client{Timeout: 15 * time.Second}
		for {
			select {
			case <-stopHealth:
				return
			case <-time.After(250 * time.Millisecond):
			}
			resp, err := hc.Get(w.URL() + "/health")
			mu.Lock()
			healthSamples++
			if err != nil {
				healthBad = append(healthBad, err.Error())
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					healthBad = append(healthBad, fmt.Sprintf("%d %s", resp.StatusCode, clipBody(body)))
				}
			}
			mu.Unlock()
		}
	}()

	client := &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: creates}}
	defer client.CloseIdleConnections()
	answers := make([]string, creates)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range creates {
		name := fmt.Sprintf("burst-%03d", i)
		file := filepath.Join(dir, name+".txt")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"name": name, "config": map[string]string{
			"connector.class": "FileStreamSource", "tasks.max": "1", "file": file, "topic": "burst-t"}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			resp, err := client.Post(w.URL()+"/connectors", "application/json", bytes.NewReader(body))
			if err != nil {
				answers[i] = err.Error()
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				answers[i] = fmt.Sprintf("%d %s", resp.StatusCode, clipBody(out))
			}
		}()
	}
	close(gate)
	wg.Wait()
	for i, a := range answers {
		if a != "" {
			t.Errorf("create burst-%03d: %s, want 201", i, a)
		}
	}

	// Every connector and its task run; /health is sampled until then.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var names []string
		json.Unmarshal(r.must(http.MethodGet, "/connectors", nil, http.StatusOK), &names)
		if len(names) != creates {
			t.Fatalf("%d connectors listed after the burst, want %d", len(names), creates)
		}
		// A connector whose status is not written yet is UNASSIGNED
		// (Kafka Connect leaves it out).
		var st map[string]struct {
			Status statusBody `json:"status"`
		}
		raw := r.must(http.MethodGet, "/connectors?expand=status", nil, http.StatusOK)
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("GET /connectors?expand=status: %v: %s", err, clipBody(raw))
		}
		running := 0
		for _, s := range st {
			if s.Status.Connector.State == "RUNNING" && len(s.Status.Tasks) == 1 && s.Status.Tasks[0].State == "RUNNING" {
				running++
			}
		}
		if running == creates {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connectors and tasks RUNNING 3 minutes after the burst", running, creates)
		}
		time.Sleep(250 * time.Millisecond)
	}
	close(stopHealth)
	<-healthed
	mu.Lock()
	defer mu.Unlock()
	if len(healthBad) > 0 {
		t.Errorf("/health answered other than 200 in %d of %d samples during the burst; first: %s", len(healthBad), healthSamples, healthBad[0])
	}
	if healthSamples == 0 {
		t.Error("/health was not sampled during the burst")
	}
}

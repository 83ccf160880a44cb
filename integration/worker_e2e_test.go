package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
)

// rest is a tiny Kafka Connect REST client for the tests.
type rest struct {
	t   *testing.T
	url string
}

func (r rest) do(method, path string, body any) (int, []byte) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, r.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (r rest) must(method, path string, body any, want int) []byte {
	r.t.Helper()
	code, out := r.do(method, path, body)
	if code != want {
		r.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, out)
	}
	return out
}

type statusBody struct {
	Connector struct {
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		Trace    string `json:"trace"`
		WorkerID string `json:"worker_id"`
	} `json:"tasks"`
}

func (r rest) status(name string) (statusBody, int) {
	code, out := r.do("GET", "/connectors/"+name+"/status", nil)
	var s statusBody
	json.Unmarshal(out, &s)
	return s, code
}

// waitState waits until the connector and all its (want tasks) tasks are in state.
func (r rest) waitState(name, state string, tasks int) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, code := r.status(name)
		ok := code == 200 && s.Connector.State == state && len(s.Tasks) == tasks
		for _, tk := range s.Tasks {
			ok = ok && tk.State == state
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("connector %s not %s with %d tasks after 30s: %d %+v", name, state, tasks, code, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func appendLines(t *testing.T, path string, from, to int) {
	t.Helper()
	if err := writeLines(path, from, to); err != nil {
		t.Fatal(err)
	}
}

// writeLines appends line-<from> … line-<to-1> to path.
func writeLines(path string, from, to int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "line-%06d\n", i)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// waitLines waits until path has at least n lines.
func waitLines(t *testing.T, path string, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l := readLines(path)
		if len(l) >= n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d lines after %v, want %d", filepath.Base(path), len(l), within, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// filePipeline creates the connectors src (FileStreamSource reading in
// into topic) and sink (FileStreamSink writing topic to out).
func (r rest) filePipeline(in, out, topic string) {
	r.t.Helper()
	r.must("POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": topic}}, 201)
	r.must("POST", "/connectors", map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": topic}}, 201)
}

// fileStream starts a worker process on bootstrap (group and extra as for
// harness.WorkerProps) in dir, creates the src/sink file pipeline on a
// one-line input and waits until both run. It returns the worker, its REST
// client and the input and output files.
func fileStream(t *testing.T, bin, bootstrap, dir, group string, extra map[string]string) (*harness.WorkerProcess, rest, string, string) {
	t.Helper()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, group, extra))
	r := rest{t, w.URL()}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	appendLines(t, in, 0, 1)
	r.filePipeline(in, out, "stream")
	r.waitState("src", "RUNNING", 1)
	r.waitState("sink", "RUNNING", 1)
	return w, r, in, out
}

// growInput appends the lines 1 … total-1 to path in the background, 200
// at a time with pause between; the channel is closed when all are written.
func growInput(t *testing.T, path string, total int, pause time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for written := 1; written < total; written += 200 {
			if err := writeLines(path, written, min(written+200, total)); err != nil {
				t.Error(err) // not Fatal: this is not the test's goroutine
				return
			}
			time.Sleep(pause)
		}
	}()
	return done
}

// waitAllLines waits until the output file holds each of the input lines
// line-000000 … line-<total-1> at least once, or within has passed. It
// returns the output lines, how many of them are distinct and how many
// input lines are missing.
func waitAllLines(path string, total int, within time.Duration) (got []string, distinct, missing int) {
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		got = readLines(path)
		seen := make(map[string]bool, len(got))
		for _, l := range got {
			seen[l] = true
		}
		missing = 0
		for i := 0; i < total; i++ {
			if !seen[fmt.Sprintf("line-%06d", i)] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return got, len(seen), missing
		}
	}
}

// brokerTargets are the Kafka-protocol brokers the worker tests run on.
func brokerTargets(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"broker=tributary":        func(t *testing.T) string { return harness.TributaryBroker(t).Bootstrap() },
		"broker=kfake":            func(t *testing.T) string { return harness.KFake(t) },
		"broker=apache-kafka-4.4": func(t *testing.T) string { return harness.ApacheKafka(t).Bootstrap() },
	}
}

// TestWorkerFileToFile runs FileStreamSource -> topic -> FileStreamSink
// through a worker process and real plugin processes, on three different
// brokers, and checks that lifecycle operations visibly change the flow.
func TestWorkerFileToFile(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	for name, start := range brokerTargets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each broker target has its own broker, worker and files
			bootstrap := start(t)
			dir := t.TempDir()
			w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, "e2e", nil))
			t.Logf("worker ready %v after start", w.ReadyAfter())
			r := rest{t, w.URL()}
			in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
			appendLines(t, in, 0, 1000)

			r.must("POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
				"connector.class": "FileStreamSource", "file": in, "topic": "lines", "tasks.max": "1",
			}}, 201)
			r.must("POST", "/connectors", map[string]any{"name": "sink", "config": map[string]string{
				"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "file": out, "topics": "lines",
			}}, 201)
			r.must("POST", "/connectors", map[string]any{"name": "sink", "config": map[string]string{
				"connector.class": "FileStreamSink", "file": out, "topics": "lines",
			}}, 409)
			r.waitState("src", "RUNNING", 1)
			r.waitState("sink", "RUNNING", 1)
			got := waitLines(t, out, 1000, 60*time.Second)
			for i, l := range got[:1000] {
				if want := fmt.Sprintf("line-%06d", i); l != want {
					t.Fatalf("out line %d = %q, want %q", i, l, want)
				}
			}

			// Pause the source: new lines stay out of the output.
			r.must("PUT", "/connectors/src/pause", nil, 202)
			r.waitState("src", "PAUSED", 1)
			appendLines(t, in, 1000, 1500)
			time.Sleep(2 * time.Second)
			if n := len(readLines(out)); n != 1000 {
				t.Fatalf("output grew to %d lines while the source was paused", n)
			}
			r.must("PUT", "/connectors/src/resume", nil, 202)
			r.waitState("src", "RUNNING", 1)
			waitLines(t, out, 1500, 30*time.Second)

			// Stop the sink: its tasks go; resume brings them back.
			r.must("PUT", "/connectors/sink/stop", nil, 204)
			r.waitState("sink", "STOPPED", 0)
			appendLines(t, in, 1500, 2000)
			time.Sleep(2 * time.Second)
			if n := len(readLines(out)); n != 1500 {
				t.Fatalf("output grew to %d lines while the sink was stopped", n)
			}
			r.must("PUT", "/connectors/sink/resume", nil, 202)
			r.waitState("sink", "RUNNING", 1)
			waitLines(t, out, 2000, 30*time.Second)

			// Restarts.
			r.must("POST", "/connectors/src/restart", nil, 204)
			r.must("POST", "/connectors/src/restart?includeTasks=true", nil, 202)
			r.must("POST", "/connectors/sink/tasks/0/restart", nil, 204)
			r.waitState("src", "RUNNING", 1)
			r.waitState("sink", "RUNNING", 1)
			appendLines(t, in, 2000, 2500)
			got = waitLines(t, out, 2500, 30*time.Second)
			seen := map[string]int{}
			for _, l := range got {
				seen[l]++
			}
			for i := 0; i < 2500; i++ {
				if seen[fmt.Sprintf("line-%06d", i)] == 0 {
					t.Fatalf("line %d missing from the output", i)
				}
			}
			t.Logf("%d output lines for 2500 input lines (%d duplicates from restarts)", len(got), len(got)-len(seen))

			// Delete: the connector goes away.
			r.must("DELETE", "/connectors/src", nil, 204)
			r.must("GET", "/connectors/src", nil, 404)
		})
	}
}

// TestWorkerKill9 kills the worker with SIGKILL while a file source streams
// into a file sink (the input keeps growing), restarts it, and checks that no
// input line is missing from the output (at-least-once), reporting the
// duplicates. The sink consumer's session timeout is 6 s so that the group
// drops the killed worker's member quickly (Kafka's default is 45 s).
func TestWorkerKill9(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	props := harness.WorkerProps(t, bootstrap, "kill9", map[string]string{
		"consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000",
	})
	wdir := filepath.Join(dir, "worker")
	w := harness.StartWorkerProcess(t, bin, wdir, props)
	r := rest{t, w.URL()}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	appendLines(t, in, 0, 1)
	r.filePipeline(in, out, "stream")

	// The input grows steadily in the background while the worker is killed.
	const total, kills = 40000, 3
	done := growInput(t, in, total, 25*time.Millisecond)
	for k := 1; k <= kills; k++ {
		// Kill once the output has made progress since the last start.
		waitLines(t, out, k*total/(kills+2), 90*time.Second)
		w.Kill()
		t.Logf("SIGKILL %d: %d output lines so far", k, len(readLines(out)))
		w = harness.StartWorkerProcess(t, bin, wdir, props)
	}
	<-done
	got, distinct, missing := waitAllLines(out, total, 90*time.Second)
	if missing > 0 {
		t.Fatalf("%d of %d input lines missing from the output after %d kill -9 restarts", missing, total, kills)
	}
	t.Logf("no line lost across %d SIGKILL restarts: %d output lines for %d input lines, %d duplicates (%.1f%%)",
		kills, len(got), total, len(got)-distinct, 100*float64(len(got)-distinct)/float64(total))
}

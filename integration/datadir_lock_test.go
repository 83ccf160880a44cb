package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 21: a second process on a data directory another one holds must
// refuse to start, naming the directory and the holder's pid, and leave
// every byte of the holder's data as it was; a holder killed with SIGKILL
// must never block the restart.

// dirSnapshot maps every file under dir (relative path) to its size and
// SHA-256.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = fmt.Sprintf("%d:%x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// quietSnapshot waits until dir stops changing (the holder is idle) and
// returns its snapshot.
func quietSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	last := dirSnapshot(t, dir)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		s := dirSnapshot(t, dir)
		if sameSnapshot(last, s) == "" {
			return s
		}
		last = s
	}
	t.Fatalf("%s kept changing for 30 s", dir)
	return nil
}

// sameSnapshot returns "" when a and b are equal, else what differs.
func sameSnapshot(a, b map[string]string) string {
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if w != v {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "created "+k)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}

// produceAcked writes n records with acks=all to topic and fails t unless
// every one is acknowledged.
func produceAcked(t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	createTopicAt(t, bootstrap, topic, 1)
	cl := newClient(t, bootstrap, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: []byte("acked-" + strconv.Itoa(i) + "-" + strings.Repeat("x", 200))})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// checkAcked fails t unless topic holds exactly the n records produceAcked
// wrote, in order.
func checkAcked(t *testing.T, bootstrap, topic string, n int) {
	t.Helper()
	got := consumeAll(t, bootstrap, topic)
	var all []*kgo.Record
	for _, rs := range got {
		all = append(all, rs...)
	}
	if len(all) != n {
		t.Fatalf("%s holds %d records, want %d", topic, len(all), n)
	}
	for i, r := range all {
		if !bytes.HasPrefix(r.Value, []byte("acked-"+strconv.Itoa(i)+"-")) {
			t.Fatalf("%s record %d is %.20q", topic, i, r.Value)
		}
	}
}

// checkRefused fails t unless res is a prompt non-zero exit whose stderr
// names dir and the holder's pid.
func checkRefused(t *testing.T, res harness.Result, dir string, holder int) {
	t.Helper()
	if res.ExitCode == 0 {
		t.Fatalf("second process on %s exited 0; stderr: %s", dir, res.Stderr)
	}
	if res.Elapsed > 10*time.Second {
		t.Errorf("second process took %v to refuse", res.Elapsed)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(holder)} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, res.Stderr)
		}
	}
	if n := strings.Count(strings.TrimSpace(res.Stderr), "\n"); n > 0 {
		t.Errorf("want a one-line reason, got %d lines:\n%s", n+1, res.Stderr)
	}
}

func healthy(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatalf("GET %s/health: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/health: %s", url, resp.Status)
	}
}

func TestDevDataDirLock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs tributary dev processes")
	}
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "data")
	bport, rport := harness.FreePort(t), harness.FreePort(t)
	first := harness.StartDevProcess(t, bin, dir, bport, rport)
	const n = 3000
	produceAcked(t, first.Bootstrap(), "acked", n)
	before := quietSnapshot(t, dir)

	res := harness.RunTributary(t, bin, 30*time.Second, "dev", "--data-dir", dir,
		"--broker-port", strconv.Itoa(harness.FreePort(t)), "--rest-port", strconv.Itoa(harness.FreePort(t)))
	checkRefused(t, res, dir, first.Pid())
	if d := sameSnapshot(before, dirSnapshot(t, dir)); d != "" {
		t.Fatalf("the refused second dev changed the first one's data: %s", d)
	}
	// A second dev in a subdirectory's clothes: the broker's own log.dirs
	// lock holds too (a broker pointed at dev's broker directory).
	res = harness.RunTributary(t, bin, 30*time.Second, "broker", "--override", "log.dirs="+filepath.Join(dir, "broker"),
		"--override", "listeners=PLAINTEXT://127.0.0.1:"+strconv.Itoa(harness.FreePort(t)))
	checkRefused(t, res, filepath.Join(dir, "broker"), first.Pid())
	if d := sameSnapshot(before, dirSnapshot(t, dir)); d != "" {
		t.Fatalf("the refused broker changed dev's data: %s", d)
	}
	if first.Exited() {
		t.Fatal("the first dev exited")
	}
	healthy(t, first.URL())
	checkAcked(t, first.Bootstrap(), "acked", n)

	// A crash leaves the lock file behind with the dead pid in it; the
	// restart takes the lock all the same and serves every acked record.
	first.Kill()
	second := harness.StartDevProcess(t, bin, dir, bport, rport)
	checkAcked(t, second.Bootstrap(), "acked", n)
	b, err := os.ReadFile(filepath.Join(dir, ".lock"))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(second.Pid()) {
		t.Fatalf("lock file after restart: %q %v, want pid %d", b, err, second.Pid())
	}
}

func TestBrokerLogDirLock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs tributary broker processes")
	}
	bin := harness.BuildTributary(t)
	dir := filepath.Join(t.TempDir(), "broker")
	port := harness.FreePort(t)
	first := harness.StartBrokerProcess(t, bin, dir, port)
	const n = 3000
	produceAcked(t, first.Addr(), "acked", n)
	before := quietSnapshot(t, dir)

	res := harness.RunTributary(t, bin, 30*time.Second, "broker", "--override", "log.dirs="+dir,
		"--override", "listeners=PLAINTEXT://127.0.0.1:"+strconv.Itoa(harness.FreePort(t)))
	checkRefused(t, res, dir, first.Pid())
	if d := sameSnapshot(before, dirSnapshot(t, dir)); d != "" {
		t.Fatalf("the refused second broker changed the first one's log: %s", d)
	}
	if first.Exited() {
		t.Fatal("the first broker exited")
	}
	checkAcked(t, first.Addr(), "acked", n)

	first.Kill()
	second := harness.StartBrokerProcess(t, bin, dir, port)
	checkAcked(t, second.Addr(), "acked", n)
	// A clean stop releases the lock for the next start at once.
	if err := second.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	third := harness.StartBrokerProcess(t, bin, dir, port)
	checkAcked(t, third.Addr(), "acked", n)
}

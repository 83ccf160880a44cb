package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMongoPollKill9 SIGKILLs the worker in the middle of the snapshot,
// again while documents stream in, and then the connector's plugin
// process: after each restart the connector resumes from its committed
// offsets, and in the end every document has its event (some twice, none
// missing).
func TestMongoPollKill9(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux /proc to find the plugin process")
	}
	fdb := harness.StartFerretDBT(t)
	mc := mongoClient(t, fdb.URI)
	id := mgID("mkill")
	coll := mc.Database(id).Collection("docs")
	const initial, later = 15000, 3000
	want := map[string]bool{}
	insert := func(from, to int) error {
		var docs []any
		for i := from; i < to; i++ {
			oid := bson.NewObjectID()
			want[fmt.Sprintf(`{"$oid": "%s"}`, oid.Hex())] = true
			docs = append(docs, bson.D{{Key: "_id", Value: oid}, {Key: "i", Value: int32(i)}, {Key: "pad", Value: strings.Repeat("x", 100)}})
		}
		_, err := coll.InsertMany(context.Background(), docs)
		return err
	}
	for i := 0; i < initial; i += 5000 {
		if err := insert(i, i+5000); err != nil {
			t.Fatal(err)
		}
	}
	bootstrap, r, w, restart := startWorker(t, "mkill", map[string]string{"offset.flush.interval.ms": "300"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "mg")
	cfg := mongoPollConfig(fdb.URI, id, id)
	cfg["max.batch.size"] = "500"
	r.must("POST", "/connectors", map[string]any{"name": "mg", "config": cfg}, 201)
	r.waitState("mg", "RUNNING", 1)

	c := newMgConsumer(t, bootstrap, "^"+id+`\.`)
	seen := map[string]int{}
	var events int
	count := func(ev []mgEvent) {
		for _, e := range ev {
			seen[e.key]++
			events++
		}
	}
	// Kill 1: mid-snapshot.
	count(c.until(2*time.Minute, func(ev []mgEvent) bool { return len(ev) >= initial/3 }))
	if len(seen) >= initial {
		t.Fatalf("the snapshot finished before the kill (%d documents seen)", len(seen))
	}
	t.Logf("kill -9 of the worker after %d of %d snapshot events", events, initial)
	w.Kill()
	w = restart() // same properties, same REST address

	// Kill 2: while documents stream in.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := initial; i < initial+later; i += 50 {
			if err := insert(i, i+50); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	count(c.until(2*time.Minute, func(ev []mgEvent) bool {
		n := distinct(seen, ev)
		return n >= initial+500 // the snapshot is over, changes stream
	}))
	t.Logf("kill -9 of the worker with %d events seen, %d documents", events, len(seen))
	w.Kill()
	w = restart() // same properties, same REST address
	r.waitState("mg", "RUNNING", 1)
	// The status topic still holds the killed worker's RUNNING, and the
	// restarted one joins only once the old membership's session is over
	// (about 10 s): wait for documents the restarted worker's task sends
	// before looking for its plugin process. (A CI run found and killed
	// the plugin process while it was still starting, which failed the
	// connector at its start; its task, started afterwards, ran on, and the
	// test waited for a FAILED task in vain.)
	resumed := len(seen)
	count(c.until(2*time.Minute, func(ev []mgEvent) bool { return distinct(seen, ev) >= resumed+200 }))

	// Kill 3: the plugin process; the task fails, a REST restart resumes it.
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pid = pluginChild(w.Pid(), "mongodb")
	}
	if pid == 0 {
		t.Fatal("no plugin process under the worker")
	}
	t.Logf("kill -9 of the plugin process %d with %d events seen", pid, events)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The connector and its task share the plugin process: both go
	// FAILED, and one restart brings back both.
	r.waitFailed("mg")
	r.must("POST", "/connectors/mg/restart?includeTasks=true&onlyFailed=true", nil, 202)
	<-done
	count(c.until(3*time.Minute, func(ev []mgEvent) bool {
		n := distinct(seen, ev)
		return n >= initial+later
	}))
	missing := 0
	for k := range want {
		if seen[k] == 0 {
			missing++
		}
	}
	if missing > 0 || len(want) != initial+later {
		t.Fatalf("%d of %d documents have no event", missing, len(want))
	}
	t.Logf("%d documents, %d events (%d delivered again after the kills)", len(want), events, events-len(want))
}

// distinct counts the documents seen so far and in ev.
func distinct(seen map[string]int, ev []mgEvent) int {
	n := len(seen)
	extra := map[string]bool{}
	for _, e := range ev {
		if seen[e.key] == 0 && !extra[e.key] {
			extra[e.key] = true
			n++
		}
	}
	return n
}

// TestMongoPollSurvivesServerCrash kills the MongoDB-wire server (FerretDB,
// SIGKILL) twice, during the poll-mode source's snapshot and while
// documents stream in, keeps it down for 4 s each time and starts it again
// on the same address and data: the task
// never fails, and every document the collection holds at the end has its
// event (the collection is the truth: an insert the crash cut off may or
// may not be there).
func TestMongoPollSurvivesServerCrash(t *testing.T) {
	t.Parallel()
	fdb := harness.StartFerretDBT(t)
	id := mgID("mcrash")
	bootstrap, r, w, _ := startWorker(t, "mcrash", map[string]string{"offset.flush.interval.ms": "300"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "mg")
	mc := mongoClient(t, fdb.URI) // the driver reconnects once the server is back
	coll := mc.Database(id).Collection("docs")
	// Scanned by the field seq (every insert takes the next value), so
	// that the snapshot's end does not tell where the scans start.
	var seq atomic.Int64
	doc := func() bson.D {
		return bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "seq", Value: seq.Add(1)}, {Key: "pad", Value: strings.Repeat("p", 1000)}}
	}
	const initial = 12000 // read by the snapshot, in batches of 100
	for i := 0; i < initial; i += 2000 {
		var docs []any
		for j := i; j < i+2000; j++ {
			docs = append(docs, doc())
		}
		if _, err := coll.InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	}
	cfg := mongoPollConfig(fdb.URI, id, id)
	cfg["max.batch.size"] = "200"
	cfg["snapshot.fetch.size"] = "100"
	cfg["capture.poll.field"] = "seq"
	r.must("POST", "/connectors", map[string]any{"name": "mg", "config": cfg}, 201)
	r.waitState("mg", "RUNNING", 1)
	c := newMgConsumer(t, bootstrap, "^"+id+`\.`)
	seen := map[string]int{}
	count := func(ev []mgEvent) {
		for _, e := range ev {
			seen[e.key]++
		}
	}
	// Crash 1: mid-snapshot.
	count(c.until(time.Minute, func(ev []mgEvent) bool { return len(ev) >= initial/6 }))
	if len(seen) >= initial {
		t.Fatalf("the snapshot finished before the crash (%d documents seen)", len(seen))
	}
	t.Logf("killing FerretDB mid-snapshot, %d of %d documents seen", len(seen), initial)
	fdb = harness.RestartFerretDBT(t, fdb, 4*time.Second)
	t.Log("FerretDB back")

	stop := make(chan struct{})
	loadDone := make(chan struct{})
	var failed int
	go func() { // batches of 20 documents; a failed batch is given up
		defer close(loadDone)
		for i := 0; ; i += 20 {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			var docs []any
			for j := i; j < i+20; j++ {
				docs = append(docs, doc())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				failed++
			}
			cancel()
		}
	}()

	// Crash 2: while documents stream in.
	count(c.until(2*time.Minute, func(ev []mgEvent) bool { return distinct(seen, ev) >= initial+500 }))
	t.Logf("killing FerretDB while documents stream in, %d documents seen", len(seen))
	harness.RestartFerretDBT(t, fdb, 4*time.Second)
	t.Log("FerretDB back")
	before := len(seen)
	count(c.until(time.Minute, func(ev []mgEvent) bool { return distinct(seen, ev) >= before+500 }))
	close(stop)
	<-loadDone

	// The truth: every _id the collection holds.
	cur, err := coll.Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for cur.Next(context.Background()) {
		want[fmt.Sprintf(`{"$oid": "%s"}`, cur.Current.Lookup("_id").ObjectID().Hex())] = true
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	missingOf := func(ev []mgEvent) int {
		for _, e := range ev {
			seen[e.key]++
		}
		m := 0
		for k := range want {
			if seen[k] == 0 {
				m++
			}
		}
		return m
	}
	c.until(time.Minute, func(ev []mgEvent) bool { return missingOf(ev) == 0 })
	if s, _ := r.status("mg"); len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
		t.Fatalf("task after the server crash: %+v", s.Tasks)
	}
	t.Logf("no document lost: %d documents, all with an event; %d insert batches cut off by the crash", len(want), failed)
}

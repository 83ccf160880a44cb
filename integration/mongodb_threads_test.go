package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/integration/harness"
)

// mgSnapshotDocs fills collections c0…c<n-1> of database db with size
// documents each ({_id: ObjectId, i, pad}) and returns, by topic and key
// (as mgEvent has them), the i of every document.
func mgSnapshotDocs(t *testing.T, uri, db string, n, size int) map[string]int {
	t.Helper()
	mc := mongoClient(t, uri)
	want := map[string]int{}
	for c := range n {
		coll := fmt.Sprintf("c%d", c)
		for from := 0; from < size; from += 2000 {
			var docs []any
			for i := from; i < min(from+2000, size); i++ {
				oid := bson.NewObjectID()
				want[fmt.Sprintf(`%s.%s.%s {"$oid": "%s"}`, db, db, coll, oid.Hex())] = i
				docs = append(docs, bson.D{{Key: "_id", Value: oid}, {Key: "i", Value: int32(i)}, {Key: "pad", Value: strings.Repeat("x", 100)}})
			}
			if _, err := mc.Database(db).Collection(coll).InsertMany(context.Background(), docs); err != nil {
				t.Fatal(err)
			}
		}
	}
	return want
}

// checkSnapshotEvent fails the test unless e is the read event of a
// document of want, with the document's content.
func checkSnapshotEvent(t *testing.T, want map[string]int, e mgEvent) string {
	t.Helper()
	k := e.topic + " " + e.key
	i, ok := want[k]
	if !ok {
		t.Fatalf("an event of no document: %s", k)
	}
	if e.op() != "r" {
		t.Fatalf("%s: op %q, want r", k, e.op())
	}
	if s := e.source()["snapshot"]; s != "true" && s != "last" {
		t.Fatalf("%s: source.snapshot %v", k, s)
	}
	var after map[string]any
	if err := json.Unmarshal([]byte(e.after()), &after); err != nil {
		t.Fatalf("%s: after %q: %v", k, e.after(), err)
	}
	if got, _ := after["i"].(float64); int(got) != i {
		t.Fatalf("%s: after %s, want i=%d", k, e.after(), i)
	}
	return k
}

// TestMongoPollSnapshotThreads: snapshot.max.threads=3 over five
// collections (FerretDB, capture.mode=poll). Without a fault every
// document arrives once, as a read event with its content. Then, on
// another connector, the worker is SIGKILLed mid-snapshot while several
// collections are being copied at once; after the restart every document
// arrives (those after the committed offsets again, none missing), and
// changes stream after it.
func TestMongoPollSnapshotThreads(t *testing.T) {
	t.Parallel()
	fdb := harness.StartFerretDBT(t)
	const colls, size = 5, 3000
	idOnce, idKill := mgID("mthr"), mgID("mthrk")
	wantOnce := mgSnapshotDocs(t, fdb.URI, idOnce, colls, size)
	wantKill := mgSnapshotDocs(t, fdb.URI, idKill, colls, size)

	bootstrap, r, w, restart := startWorker(t, "mthreads", map[string]string{"offset.flush.interval.ms": "300"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "once", "kill")

	// Without a fault: each document once.
	cfg := mongoPollConfig(fdb.URI, idOnce, idOnce)
	cfg["snapshot.max.threads"] = "3"
	cfg["snapshot.fetch.size"] = "200"
	begin := time.Now()
	r.must("POST", "/connectors", map[string]any{"name": "once", "config": cfg}, 201)
	c := newMgConsumer(t, bootstrap, "^"+idOnce+`\.`)
	seen := map[string]int{}
	last := 0
	for _, e := range c.until(2*time.Minute, func(ev []mgEvent) bool { return len(ev) >= colls*size }) {
		seen[checkSnapshotEvent(t, wantOnce, e)]++
		if e.source()["snapshot"] == "last" {
			last++
		}
	}
	t.Logf("threads=3: %d documents of %d collections in %v", len(seen), colls, time.Since(begin).Round(time.Millisecond))
	for k := range wantOnce {
		if seen[k] != 1 {
			t.Fatalf("%s arrived %d times", k, seen[k])
		}
	}
	if last > 1 {
		t.Fatalf("%d events are the snapshot's last", last)
	}
	// Nothing more arrives (no document twice).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for extra := 0; ctx.Err() == nil; {
		extra += c.cl.PollFetches(ctx).NumRecords()
		if extra > 0 {
			t.Fatalf("%d events after the snapshot's %d, of no new document", extra, colls*size)
		}
	}

	// A kill -9 of the worker mid-snapshot.
	cfg = mongoPollConfig(fdb.URI, idKill, idKill)
	cfg["snapshot.max.threads"] = "3"
	cfg["snapshot.fetch.size"] = "200"
	cfg["max.batch.size"] = "300"
	r.must("POST", "/connectors", map[string]any{"name": "kill", "config": cfg}, 201)
	ck := newMgConsumer(t, bootstrap, "^"+idKill+`\.`)
	seen = map[string]int{}
	events := 0
	count := func(ev []mgEvent) {
		for _, e := range ev {
			if e.op() == "r" {
				seen[checkSnapshotEvent(t, wantKill, e)]++
			} else {
				seen[e.topic+" "+e.key]++
			}
			events++
		}
	}
	count(ck.until(2*time.Minute, func(ev []mgEvent) bool { return len(ev) >= colls*size/4 }))
	perColl := map[string]int{}
	for k := range seen {
		perColl[strings.Fields(k)[0]]++
	}
	partial := 0
	for _, n := range perColl {
		if n > 0 && n < size {
			partial++
		}
	}
	t.Logf("kill -9 of the worker after %d snapshot events; documents by collection: %v", events, perColl)
	if len(seen) >= colls*size {
		t.Fatalf("the snapshot finished before the kill")
	}
	if partial < 2 {
		t.Fatalf("%d collections partly copied at the kill, want several (threads=3): %v", partial, perColl)
	}
	w.Kill()
	w = restart()
	r.waitState("kill", "RUNNING", 1)
	count(ck.until(3*time.Minute, func(ev []mgEvent) bool { return distinct(seen, ev) >= colls*size }))
	for k := range wantKill {
		if seen[k] == 0 {
			t.Fatalf("%s has no event after the kill", k)
		}
	}
	t.Logf("after the kill: all %d documents arrived, %d events (%d again)", len(wantKill), events, events-len(wantKill))

	// Changes stream after the resumed snapshot.
	mc := mongoClient(t, fdb.URI)
	oid := bson.NewObjectID()
	if _, err := mc.Database(idKill).Collection("c1").InsertOne(context.Background(), bson.D{{Key: "_id", Value: oid}, {Key: "i", Value: int32(-1)}}); err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf(`%s.%s.c1 {"$oid": "%s"}`, idKill, idKill, oid.Hex())
	ck.until(time.Minute, func(ev []mgEvent) bool {
		for _, e := range ev {
			if e.topic+" "+e.key == key && e.op() == "c" {
				return true
			}
		}
		return false
	})
}

package mongodb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk"
)

func idAfter(t testing.TB, id int) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(bson.D{{Key: "_id", Value: int32(id)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func planNSs(names ...string) []namespace {
	out := make([]namespace, len(names))
	for i, n := range names {
		out[i] = namespace{"db", n}
	}
	return out
}

// planTrace steps a plan, checking what it starts and its state after
// each step.
type planTrace struct {
	t *testing.T
	p *snapshotPlan
}

func (tr *planTrace) check(what, want string) {
	tr.t.Helper()
	if got := tr.p.String(); got != want {
		tr.t.Errorf("after %s: got %q, want %q", what, got, want)
	}
}

func (tr *planTrace) start(wantStarted []int, want string) {
	tr.t.Helper()
	if got := tr.p.start(); !slices.Equal(got, wantStarted) {
		tr.t.Errorf("start: started %v, want %v", got, wantStarted)
	}
	tr.check("start", want)
}

func (tr *planTrace) read(i, id int, want string) {
	tr.t.Helper()
	tr.p.read(i, idAfter(tr.t, id))
	tr.check(fmt.Sprintf("read(%d, %d)", i, id), want)
}

func (tr *planTrace) finish(i int, want string) {
	tr.t.Helper()
	tr.p.finish(i)
	tr.check(fmt.Sprintf("finish(%d)", i), want)
}

func (tr *planTrace) stopped(i int, want string) {
	tr.t.Helper()
	tr.p.stopped(i)
	tr.check(fmt.Sprintf("stopped(%d)", i), want)
}

// One thread: the collections are copied one after the other, as before
// snapshot.max.threads.
func TestSnapshotPlanOneThread(t *testing.T) {
	tr := &planTrace{t, newSnapshotPlan(planNSs("a", "b"), 1)}
	tr.start([]int{0}, "db.a:reading db.b:waiting")
	tr.start(nil, "db.a:reading db.b:waiting")
	tr.read(0, 1, `db.a:reading@{"$numberInt":"1"} db.b:waiting`)
	tr.finish(0, "db.a:copied db.b:waiting")
	tr.start([]int{1}, "db.a:copied db.b:reading")
	tr.finish(1, "db.a:copied db.b:copied")
	if !tr.p.done() || tr.p.start() != nil {
		t.Fatal("a copied plan is not done, or starts a reader")
	}
}

// Three threads over four collections: the fourth starts when one of the
// first three ends, whichever; a reader that fails is started again
// before any waiting collection, after its last document.
func TestSnapshotPlanThreads(t *testing.T) {
	tr := &planTrace{t, newSnapshotPlan(planNSs("a", "b", "c", "d"), 3)}
	tr.start([]int{0, 1, 2}, "db.a:reading db.b:reading db.c:reading db.d:waiting")
	tr.read(1, 7, `db.a:reading db.b:reading@{"$numberInt":"7"} db.c:reading db.d:waiting`)
	tr.finish(2, `db.a:reading db.b:reading@{"$numberInt":"7"} db.c:copied db.d:waiting`)
	tr.stopped(1, `db.a:reading db.b:stopped@{"$numberInt":"7"} db.c:copied db.d:waiting`)
	tr.start([]int{1, 3}, `db.a:reading db.b:reading@{"$numberInt":"7"} db.c:copied db.d:reading`)
	tr.stopped(2, `db.a:reading db.b:reading@{"$numberInt":"7"} db.c:copied db.d:reading`) // a copied one stays copied
	if got := tr.p.remaining(); got != 3 {
		t.Errorf("remaining: %d, want 3", got)
	}
	tr.finish(0, `db.a:copied db.b:reading@{"$numberInt":"7"} db.c:copied db.d:reading`)
	tr.finish(3, `db.a:copied db.b:reading@{"$numberInt":"7"} db.c:copied db.d:copied`)
	tr.finish(1, "db.a:copied db.b:copied db.c:copied db.d:copied")
	if !tr.p.done() {
		t.Fatal("not done")
	}
}

// The stored progress of a snapshot of one thread is what it was before
// snapshot.max.threads (snapshot_collection and snapshot_after alone), and
// an offset of that shape resumes.
func TestSnapshotProgressOneThreadShape(t *testing.T) {
	p := newSnapshotPlan(planNSs("a", "b", "c"), 1)
	p.start()
	p.finish(0)
	p.start()
	p.read(1, idAfter(t, 42))
	off := sdk.Offset{}
	p.storeProgress(off)
	if len(off) != 2 || off[offSnapshotColl] != "db.b" || off[offSnapshotAfter] != tokenString(idAfter(t, 42)) {
		t.Fatalf("one thread's progress: %v", off)
	}
	r, err := resumePlan(planNSs("a", "b", "c"), 1, off)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), `db.a:copied db.b:waiting@{"$numberInt":"42"} db.c:waiting`; got != want {
		t.Fatalf("resumed: %q, want %q", got, want)
	}
}

// A resumed plan goes on with the collections that were being read before
// it starts others, whatever its number of threads.
func TestSnapshotPlanResume(t *testing.T) {
	p := newSnapshotPlan(planNSs("a", "b", "c", "d", "e"), 3)
	p.start()
	p.read(0, idAfter(t, 3))
	p.finish(1)
	p.read(2, idAfter(t, 9))
	off := sdk.Offset{}
	p.storeProgress(off)
	if off[offSnapshotColl] != "db.a" || off[offSnapshotCopied] != `["db.b"]` || off[offSnapshotReading] != `{"db.c":"`+tokenString(idAfter(t, 9))+`"}` {
		t.Fatalf("progress: %v", off)
	}
	// A collection created since (db.bb) is copied; one dropped (db.d) is gone.
	r, err := resumePlan(planNSs("a", "b", "bb", "c", "e"), 2, off)
	if err != nil {
		t.Fatal(err)
	}
	tr := &planTrace{t, r}
	tr.check("resume", `db.a:waiting@{"$numberInt":"3"} db.b:copied db.bb:waiting db.c:waiting@{"$numberInt":"9"} db.e:waiting`)
	tr.start([]int{0, 3}, `db.a:reading@{"$numberInt":"3"} db.b:copied db.bb:waiting db.c:reading@{"$numberInt":"9"} db.e:waiting`)
}

func TestSnapshotProgressRefused(t *testing.T) {
	for name, off := range map[string]sdk.Offset{
		"after":   {offSnapshotColl: "db.a", offSnapshotAfter: "%%"},
		"reading": {offSnapshotColl: "db.a", offSnapshotReading: "{"},
		"token":   {offSnapshotColl: "db.a", offSnapshotReading: `{"db.b":"%%"}`},
		"copied":  {offSnapshotColl: "db.a", offSnapshotCopied: `"db.b"`},
	} {
		if _, err := resumePlan(planNSs("a", "b"), 2, off); err == nil {
			t.Errorf("%s: %v resumed", name, off)
		}
	}
}

// A property test against a naive copier: collections of random sizes,
// copied by a random interleaving of readers (each handing out its
// documents in order, sometimes failing), with a restart from the last
// stored progress at random points. Every document is handed out, none
// twice after the progress that covers it, and at most threads
// collections are read at once.
func TestSnapshotPlanRandomInterleavings(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(6)
		names := make([]string, n)
		size := map[string]int{}
		for i := range names {
			names[i] = fmt.Sprintf("c%d", i)
			size["db."+names[i]] = rng.IntN(5)
		}
		threads := 1 + rng.IntN(4)
		nss := planNSs(names...)
		// committed: for each collection, the documents whose records
		// precede the last stored progress (the naive model: what a
		// restart must not hand out again, and must not lose).
		seen := map[string]map[int]int{}
		for _, ns := range nss {
			seen[ns.String()] = map[int]int{}
		}
		p := newSnapshotPlan(nss, int32(threads))
		pos := map[int]int{} // reader of collection i: next _id it hands out
		for steps := 0; !p.done(); steps++ {
			if steps > 10000 {
				t.Fatalf("seed %d: no progress: %s", seed, p)
			}
			for _, i := range p.start() {
				pos[i] = 0
				if a := p.colls[i].after; a != nil {
					pos[i] = int(a.Lookup("_id").Int32()) + 1
				}
			}
			var reading []int
			for i, c := range p.colls {
				if c.phase == phaseReading {
					reading = append(reading, i)
				}
			}
			if len(reading) > threads {
				t.Fatalf("seed %d: %d readers, threads=%d: %s", seed, len(reading), threads, p)
			}
			if len(reading) == 0 {
				t.Fatalf("seed %d: nothing reading and not done: %s", seed, p)
			}
			i := reading[rng.IntN(len(reading))]
			ns := p.colls[i].ns.String()
			switch r := rng.IntN(10); {
			case r == 0:
				p.stopped(i)
			case r == 1:
				// A restart: the plan comes back from its stored progress.
				off := sdk.Offset{}
				p.storeProgress(off)
				var err error
				if p, err = resumePlan(nss, int32(1+rng.IntN(4)), off); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				threads = p.threads
				// What was handed out after the last read of each
				// collection is nothing: progress is stored with each
				// read, so the model needs no rollback.
			case pos[i] >= size[ns]:
				p.finish(i)
			default:
				seen[ns][pos[i]]++
				p.read(i, idAfter(t, pos[i]))
				pos[i]++
			}
		}
		for ns, n := range size {
			for id := range n {
				if c := seen[ns][id]; c != 1 {
					t.Fatalf("seed %d: %s _id %d handed out %d times", seed, ns, id, c)
				}
			}
		}
	}
}

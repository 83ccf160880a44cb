package postgres

import (
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// The incremental snapshot's queue: tables added once, in order, with the
// additional condition whose pattern matches; stop removes tables, the
// current one last.
func TestIncrementalQueue(t *testing.T) {
	in := &incremental{}
	cond := []condition{{pattern: regexp.MustCompile("(?i)^(?:public.b)$"), filter: "x > 1"}}
	if got := in.add([]string{"public.a", "public.b"}, cond, "", "sig-1"); !reflect.DeepEqual(got, []string{"public.a", "public.b"}) {
		t.Fatalf("added %v", got)
	}
	if got := in.add([]string{"public.b", "public.c"}, nil, "", "sig-2"); !reflect.DeepEqual(got, []string{"public.c"}) {
		t.Fatalf("added again %v", got)
	}
	if in.queue[1].condition() != "x > 1" || in.queue[0].condition() != "" {
		t.Errorf("conditions %+v", in.queue)
	}
	// Stop a queued table: the current one goes on.
	in.lastSent = []string{"5"}
	if got := in.stop([]string{"public.c"}); !reflect.DeepEqual(got, []string{"public.c"}) {
		t.Fatalf("stopped %v", got)
	}
	if in.current().ID != "public.a" || in.lastSent == nil {
		t.Fatalf("current %v lastSent %v", in.current(), in.lastSent)
	}
	// Stop the current table: its chunk is dropped, the next one starts.
	in.startChunk()
	in.put(windowRow{key: "1\x00", vals: []any{int32(1)}})
	if got := in.stop([]string{"public.a"}); !reflect.DeepEqual(got, []string{"public.a"}) {
		t.Fatalf("stopped %v", got)
	}
	if in.current().ID != "public.b" || in.lastSent != nil || len(in.window) != 0 || in.pending {
		t.Fatalf("after stop: %+v", in)
	}
	// Stop without collections stops everything.
	in.stop(nil)
	if in.running() {
		t.Fatal("still running")
	}
}

// Windows open and close only for the current chunk's id; changes inside
// an open window remove their rows.
func TestIncrementalWindow(t *testing.T) {
	in := &incremental{}
	in.add([]string{"public.a"}, nil, "", "s")
	id := tableID{"public", "a"}
	in.startChunk()
	chunk := in.chunkID
	for _, k := range []string{"1", "2", "3"} {
		in.put(windowRow{key: k + "\x00", chunkKey: []string{k}})
	}
	in.dedupe(id, "1\x00") // before the window opens: kept
	if in.openWindow("other-open") {
		t.Fatal("opened another chunk's window")
	}
	if !in.openWindow(chunk + "-open") {
		t.Fatal("window not opened")
	}
	in.dedupe(tableID{"public", "b"}, "2\x00") // another table
	in.dedupe(id, "2\x00")
	in.dedupe(id, "9\x00")
	var left []string
	for _, r := range in.window {
		if !r.removed {
			left = append(left, r.chunkKey[0])
		}
	}
	if !reflect.DeepEqual(left, []string{"1", "3"}) {
		t.Errorf("window %v", left)
	}
	if in.closeWindow("stale-close") {
		t.Fatal("closed with a stale id")
	}
	if !in.closeWindow(chunk + "-close") {
		t.Fatal("not closed")
	}
	if in.closeWindow(chunk + "-close") {
		t.Fatal("closed twice")
	}
}

// A transaction in progress for the chunk's snapshot that commits before
// the window opens taints the chunk; after the window opens it does not.
func TestIncrementalTaint(t *testing.T) {
	in := &incremental{}
	in.add([]string{"public.a"}, nil, "", "s")
	in.startChunk()
	in.xip = map[uint32]bool{100: true}
	in.sawTransaction(99, true)
	if in.tainted {
		t.Fatal("tainted by a transaction the snapshot saw")
	}
	in.openWindow(in.chunkID + "-open")
	in.sawTransaction(100, true)
	if in.tainted {
		t.Fatal("tainted inside the window")
	}
	in.startChunk()
	in.xip = map[uint32]bool{100: true}
	in.sawTransaction(100, false)
	if in.tainted {
		t.Fatal("tainted by a transaction that did not change the table")
	}
	in.sawTransaction(100, true)
	if !in.tainted {
		t.Fatal("not tainted")
	}
}

// The state goes into offsets and comes back; a Debezium key (Java
// serialization in hex) restarts the table.
func TestIncrementalOffsets(t *testing.T) {
	in := &incremental{}
	in.add([]string{"public.a", "public.b"}, []condition{{pattern: regexp.MustCompile("^public.a$"), filter: "id > 10"}}, "", "sig-1")
	in.lastSent, in.maxKey = []string{"42", "it's"}, []string{"99", "z"}
	o := sdk.Offset{offLSN: int64(1)}
	in.store(o)
	want := `[{"incremental_snapshot_collections_id":"public.a","incremental_snapshot_collections_additional_condition":"id \u003e 10","incremental_snapshot_collections_surrogate_key":null,"incremental_snapshot_collections_correlation_id":"sig-1"},` +
		`{"incremental_snapshot_collections_id":"public.b","incremental_snapshot_collections_additional_condition":null,"incremental_snapshot_collections_surrogate_key":null,"incremental_snapshot_collections_correlation_id":"sig-1"}]`
	if o[offIncrCollections] != want {
		t.Errorf("collections\n%s\nwant\n%s", o[offIncrCollections], want)
	}
	if o[offIncrPrimaryKey] != `["42","it's"]` || o[offIncrCorrelation] != "sig-1" {
		t.Errorf("offset %v", o)
	}
	back, warn, err := loadIncremental(o)
	if err != nil || warn != "" {
		t.Fatal(err, warn)
	}
	if !reflect.DeepEqual(back.queue, in.queue) || !reflect.DeepEqual(back.chunkEnd, in.lastSent) || !reflect.DeepEqual(back.maxKey, in.maxKey) {
		t.Errorf("loaded %+v", back)
	}
	o[offIncrPrimaryKey] = "ACED0005757200135B4C6A6176612E6C616E672E4F626A6563743B"
	back, warn, err = loadIncremental(o)
	if err != nil || warn == "" || back.lastSent != nil || back.maxKey != nil {
		t.Errorf("Debezium key: %+v %q %v", back, warn, err)
	}
	if in, _, _ := loadIncremental(sdk.Offset{offLSN: int64(1)}); in != nil {
		t.Error("state from an offset without one")
	}
	in.next()
	in.next()
	o = sdk.Offset{}
	in.store(o)
	if len(o) != 0 {
		t.Errorf("stored a finished snapshot: %v", o)
	}
}

func TestExpandCollections(t *testing.T) {
	tables := []tableID{{"public", "a"}, {"public", "b1"}, {"public", "b2"}, {"other", "b1"}}
	got := expandCollections([]string{`public\.b.*`, "public.a", "public.missing", "PUBLIC.A"}, tables)
	want := []string{"public.b1", "public.b2", "public.a", "public.missing", "PUBLIC.A"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPgSnapshot(t *testing.T) {
	ps, err := parsePgSnapshot("4294967396:4294967405:4294967398,4294967400")
	if err != nil {
		t.Fatal(err)
	}
	if ps.xmin != 100 || ps.xmax != 109 || !reflect.DeepEqual(ps.xip, []uint32{102, 104}) {
		t.Fatalf("got %+v", ps)
	}
	for xid, want := range map[uint32]bool{50: true, 101: true, 102: false, 104: false, 108: true, 109: false, 200: false} {
		if ps.visible(xid) != want {
			t.Errorf("visible(%d) = %v", xid, !want)
		}
	}
	seen := map[uint32]bool{50: true, 103: true}
	if !ps.seesAll(seen) || seen[50] || !seen[103] {
		t.Errorf("seesAll: %v", seen)
	}
	seen[104] = true
	if ps.seesAll(seen) {
		t.Error("seesAll with an in-progress transaction")
	}
	// Wrap-around: xmin near 2^32, a small xid is after it.
	ps = pgSnapshot{xmin: 4294967290, xmax: 5}
	if !ps.visible(4294967280) || ps.visible(6) || !ps.visible(2) {
		t.Error("wrap-around")
	}
	for _, bad := range []string{"1:2", "a:2:", "1:2:x"} {
		if _, err := parsePgSnapshot(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSignalMetadata(t *testing.T) {
	ts := time.Date(2026, 12, 6, 9, 30, 0, 123000000, time.UTC)
	got := signalMetadata(ts, time.Time{}, "ad-hoc-1", "public.a")
	want := `{"openWindowTimestamp": "2026-12-06T09:30:00.123Z", "correlationId": "ad-hoc-1", "dataCollectionId": "public.a"}`
	if got != want {
		t.Errorf("got %s", got)
	}
}

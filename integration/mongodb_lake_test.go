package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/integration/harness"
)

// readmeMongoLake is the configuration of a connector of the README's
// MongoDB → S3 example: the body of its curl command to
// connectors/NAME/config (shop-mongo, the source; shop-lake, the sink).
func readmeMongoLake(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)connectors/` + name + `/config [^\n]*-d '(\{.*?\})'`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no MongoDB → S3 example (curl … connectors/%s/config … -d '{…}')", name)
	}
	var cfg map[string]string
	if err := json.Unmarshal(m[1], &cfg); err != nil {
		t.Fatalf("README's MongoDB → S3 configuration of %s: %v\n%s", name, err, m[1])
	}
	return cfg
}

// mgLakeDoc is the test's document number k (of batch b): every field is a
// function of k, so that a row read back from the lake can be checked
// whole. From the fourth batch on the documents have one more field, so the
// rows' schema changes mid-stream.
func mgLakeDoc(oid bson.ObjectID, k, b int) (bson.D, map[string]any) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC).Add(time.Duration(k) * time.Minute)
	bin := []byte{byte(k), 0xff, byte(k >> 8)}
	doc := bson.D{
		{Key: "_id", Value: oid},
		{Key: "n", Value: int32(k)},
		{Key: "price", Value: float64(k) + 0.25},
		{Key: "at", Value: bson.NewDateTimeFromTime(at)},
		{Key: "bin", Value: bson.Binary{Data: bin}},
		{Key: "shipping", Value: bson.D{
			{Key: "address", Value: bson.D{{Key: "city", Value: "Zürich"}, {Key: "zip", Value: fmt.Sprint(8000 + k)}}},
			{Key: "express", Value: k%2 == 0}}},
		{Key: "tags", Value: bson.A{"a", fmt.Sprint("t", k%5)}},
		{Key: "scores", Value: bson.A{float64(k), 0.5}},
	}
	row := map[string]any{
		"_id": oid.Hex(), "n": float64(k), "price": float64(k) + 0.25,
		"at":        map[string]any{"timestamp": pyISO(at)},
		"bin":       map[string]any{"bytes": base64.StdEncoding.EncodeToString(bin)},
		"shipping":  map[string]any{"address": map[string]any{"city": "Zürich", "zip": fmt.Sprint(8000 + k)}, "express": k%2 == 0},
		"tags":      []any{"a", fmt.Sprint("t", k%5)},
		"scores":    []any{float64(k), 0.5},
		"__deleted": false,
	}
	if b >= 3 {
		doc = append(doc, bson.E{Key: "note", Value: fmt.Sprintf("note %d", k)})
		row["note"] = fmt.Sprintf("note %d", k)
	}
	return doc, row
}

// TestMongoToS3Lake runs the README's MongoDB → S3 lake pipeline through a
// real worker process, adapted to FerretDB (capture.mode=poll) and the
// test's endpoints, on a worker with tributary dev's converters: the
// MongoDB source snapshots, then polls, a collection
// of documents with nested documents, arrays, ObjectIds, dates, doubles,
// booleans and binary data, inserted in six batches; the S3 sink, with the
// README's configuration (ExtractNewDocumentState in its chain), writes
// them to versitygw as Parquet. The worker is killed (-9) mid-stream and
// restarted. After the workload settles, pyarrow reads every object: every
// document is there (by _id) with every column as inserted and typed as the
// inferred schema says; a document twice only as the kill allows
// (reported).
func TestMongoToS3Lake(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts FerretDB, versitygw and a worker, and kills the worker")
	}
	fdb := harness.StartFerretDBT(t)
	s := harness.VersityGW(t, "lake")
	mc := mongoClient(t, fdb.URI)
	ctx := context.Background()
	id := mgID("mlake")
	db := id + "shop"
	coll := mc.Database(db).Collection("orders")

	const batches, perBatch = 6, 60
	want := map[string]map[string]any{} // _id → the row
	k := 0
	insertBatch := func(b int) {
		var docs []any
		for range perBatch {
			oid := bson.NewObjectID()
			doc, row := mgLakeDoc(oid, k, b)
			row["__op"] = "c"
			if b == 0 {
				row["__op"] = "r" // the snapshot's
			}
			want[oid.Hex()] = row
			docs = append(docs, doc)
			k++
		}
		mustInsert(t, coll, docs)
	}
	insertBatch(0)

	// The worker's converters are tributary dev's (keys as strings,
	// values as schemaless JSON): the README's connectors bring their own.
	bootstrap, r, w, restart := startWorker(t, "mlake", map[string]string{
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter.schemas.enable": "false",
		"offset.flush.interval.ms": "500", "consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "1000"})
	dumpOnFailure(t, r, func() string { return w.LogPath() }, "mlake-src", "mlake-sink")
	// The README's source on FerretDB: poll mode (no change streams), the
	// test's server, names and database.
	src := readmeMongoLake(t, "shop-mongo")
	maps.Copy(src, mongoPollConfig(fdb.URI, id, db))
	sink := readmeMongoLake(t, "shop-lake")
	if sink["transforms.unwrap.type"] != "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState" {
		t.Fatalf("README's MongoDB → S3 sink does not unwrap with ExtractNewDocumentState: %v", sink)
	}
	topic := id + "." + db + ".orders"
	sink["topics.regex"] = regexp.QuoteMeta(topic)
	maps.Copy(sink, s.SinkConfig("lake"))
	// Small files, rotated often, so that the kill lands between uploads.
	maps.Copy(sink, map[string]string{"flush.size": "40", "rotate.schedule.interval.ms": "2000", "timezone": "UTC"})
	start := time.Now()
	r.must("POST", "/connectors", map[string]any{"name": "mlake-src", "config": src}, 201)
	r.waitState("mlake-src", "RUNNING", 1)

	// The sink once the snapshot is in the topic (a topics.regex consumer
	// sees a topic created later only at a metadata refresh).
	adm := kadm.NewClient(newClient(t, bootstrap))
	for deadline := time.Now().Add(90 * time.Second); ; {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if o, ok := ends.Lookup(topic, 0); err == nil && ok && o.Offset >= perBatch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot's %d events are not in %s after 90s: %v", perBatch, topic, r.statusOf("mlake-src")())
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.must("POST", "/connectors", map[string]any{"name": "mlake-sink", "config": sink}, 201)
	r.waitState("mlake-sink", "RUNNING", 1)

	prefix := "topics/" + topic + "/"
	for b := 1; b < batches; b++ {
		insertBatch(b)
		time.Sleep(700 * time.Millisecond)
		if b == 3 {
			// kill -9 mid-stream, once objects are up.
			for deadline := time.Now().Add(60 * time.Second); len(listKeys(t, s, "lake", prefix)) == 0; {
				if time.Now().After(deadline) {
					t.Fatalf("no object in the lake after 60s: %s", r.statusOf("mlake-sink")())
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("kill -9 of the worker after %d of %d batches, %d objects up", b+1, batches, len(listKeys(t, s, "lake", prefix)))
			w.Kill()
			w = restart()
			r = rest{t, w.URL()}
		}
	}
	end := time.Now()

	// Wait until the lake holds every document, then check it whole.
	var files []lakeFile
	var got map[string]int
	for deadline := time.Now().Add(120 * time.Second); ; {
		files = readLake(t, s, prefix)
		got = map[string]int{}
		for _, f := range files {
			for _, row := range f.Rows {
				oid, _ := row["_id"].(string)
				got[oid]++
			}
		}
		missing := 0
		for oid := range want {
			if got[oid] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d documents missing from the lake after 120s\nsource: %s\nsink: %s", missing, len(want),
				r.statusOf("mlake-src")(), r.statusOf("mlake-sink")())
		}
		time.Sleep(2 * time.Second)
	}
	repeats := 0
	for oid, n := range got {
		if want[oid] == nil {
			t.Errorf("the lake holds a document the test did not insert: %s", oid)
		}
		repeats += n - 1
	}

	// Column types as ExtractNewDocumentState infers them, in every file;
	// nested documents as structs, arrays as lists.
	wantTypes := map[string]string{
		"_id": "string", "n": "int32", "price": "double", "at": "timestamp[ms, tz=UTC]", "bin": "binary",
		"shipping": "struct<address: struct<city: string, zip: string>, express: bool>",
		"tags":     "list<element: string>", "scores": "list<element: double>", "note": "string",
		"__op": "string", "__source_ts_ms": "int64", "__deleted": "bool",
	}
	withNote, withoutNote := 0, 0
	for _, f := range files {
		cols := slices.Sorted(maps.Keys(f.Types))
		for _, c := range cols {
			if f.Types[c] != wantTypes[c] {
				t.Errorf("%s: column %s is %s, want %s", f.Path, c, f.Types[c], wantTypes[c])
			}
		}
		if want := len(wantTypes) - 1; len(cols) == want+1 && f.Types["note"] != "" {
			withNote++
		} else if len(cols) == want && f.Types["note"] == "" {
			withoutNote++
		} else {
			t.Errorf("%s: columns %v", f.Path, cols)
		}
	}
	if withNote == 0 || withoutNote == 0 {
		t.Errorf("%d files with the note column, %d without: want both (the schema changes at the fourth batch)", withNote, withoutNote)
	}

	// Every row whole.
	lo, hi := start.Add(-time.Minute).UnixMilli(), time.Now().UnixMilli()
	for _, f := range files {
		for _, row := range f.Rows {
			oid, _ := row["_id"].(string)
			w := want[oid]
			if w == nil {
				continue
			}
			ts, _ := row["__source_ts_ms"].(float64)
			if int64(ts) < lo || int64(ts) > hi {
				t.Errorf("%s: __source_ts_ms %v is outside the test's run", f.Path, row["__source_ts_ms"])
			}
			row = maps.Clone(row)
			delete(row, "__source_ts_ms")
			if row["__op"] == "r" && w["__op"] == "c" && got[oid] > 1 {
				// A document inserted after the snapshot is created, never read.
				t.Errorf("%s: document %s read by a snapshot", f.Path, oid)
			}
			if fmt.Sprint(row) != fmt.Sprint(w) {
				t.Errorf("%s: row\n %v\nwant\n %v", f.Path, row, w)
			}
		}
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	t.Logf("%d documents in %d batches → %d Parquet objects (%d with the later schema) after a kill -9, %d rows delivered twice, in %v; objects: %s",
		len(want), batches, len(files), withNote, repeats, end.Sub(start).Round(time.Second), strings.Join(paths, " "))
}

package integration

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// The change-stream tests need a real MongoDB replica set (change streams
// exist only there). They run against the one TRIBUTARY_TEST_MONGODB_URI
// names, e.g.
//
//	mongod --replSet rs0 --dbpath /tmp/rs0 --port 27017 &
//	mongosh --eval 'rs.initiate()'
//	TRIBUTARY_TEST_MONGODB_URI='mongodb://127.0.0.1:27017/?replicaSet=rs0' go test -run TestMongoLive ./integration/
//
// (MongoDB 6.0 or later for the pre-image test, 7.0 for split events);
// else, where a Docker engine answers (DOCKER_HOST, or /var/run/docker.sock)
// and has the image, against a single-node replica set of mongo:8.0 (or
// TRIBUTARY_TEST_MONGODB_IMAGE) that the harness starts through
// testcontainers-go, shared by the tests of the run and removed after them
// (see harness.LiveMongo); else they skip saying so. The CI machine has an
// engine but no MongoDB image, and no registry to pull one from: they skip
// there, saying so (TRIBUTARY_TEST_MONGODB_PULL=1 lets testcontainers pull).

// liveMongo is the replica set of this test binary's live tests; TestMain
// removes its container, if it started one.
var liveMongo harness.LiveMongo

func liveMongoURI(t *testing.T) string {
	t.Helper()
	return liveMongo.URIT(t)
}

// liveContext is the runtime seen by a task run in the test: offsets the
// test commits.
type liveContext struct {
	mu   sync.Mutex
	offs map[string]sdk.Offset
	log  *slog.Logger
}

func newLiveContext(t *testing.T) *liveContext {
	return &liveContext{offs: map[string]sdk.Offset{}, log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
}

func (c *liveContext) Info() sdk.TaskInfo   { return sdk.TaskInfo{Connector: "live"} }
func (c *liveContext) Logger() *slog.Logger { return c.log }
func (c *liveContext) Offset(ctx context.Context, p sdk.Partition) (sdk.Offset, error) {
	o, err := c.Offsets(ctx, []sdk.Partition{p})
	return o[0], err
}
func (c *liveContext) Offsets(_ context.Context, ps []sdk.Partition) ([]sdk.Offset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]sdk.Offset, len(ps))
	for i, p := range ps {
		k, _ := json.Marshal(p)
		out[i] = c.offs[string(k)]
	}
	return out, nil
}

// commit stores a record's offset as the worker does (through JSON).
func (c *liveContext) commit(r sdk.SourceRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, _ := json.Marshal(r.Partition)
	b, _ := json.Marshal(r.Offset)
	var o sdk.Offset
	json.Unmarshal(b, &o)
	c.offs[string(k)] = o
}

func openLive(t *testing.T, cfg map[string]string, lc *liveContext) sdk.SourceTask {
	t.Helper()
	sp := mongodb.Connector().(sdk.SourcePlugin)
	infos, err := mongodb.Connector().Validate(context.Background(), cfg)
	if err != nil || infos.ErrorCount != 0 {
		t.Fatalf("validate: %v %v", err, infos.Errors())
	}
	task, err := sp.NewSourceTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Open(context.Background(), lc); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { task.Close(context.Background()) })
	return task
}

// pollLive polls until enough holds for the data records (those with a
// topic) or 30 s pass; every record's offset is committed.
func pollLive(t *testing.T, task sdk.SourceTask, lc *liveContext, enough func([]sdk.SourceRecord) bool) []sdk.SourceRecord {
	t.Helper()
	var out []sdk.SourceRecord
	deadline := time.Now().Add(30 * time.Second)
	for !enough(out) {
		if time.Now().After(deadline) {
			t.Fatalf("%d records after 30s", len(out))
		}
		recs, err := task.Poll(context.Background(), 500)
		if err != nil && !sdk.IsRetriable(err) {
			t.Fatalf("poll: %v", err)
		}
		for _, r := range recs {
			lc.commit(r)
			if r.Topic != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

func envField(r sdk.SourceRecord, name string) any {
	if r.Value == nil {
		return nil
	}
	return r.Value.(*schema.Struct).Get(name)
}

func liveConfig(uri, prefix, db string) map[string]string {
	return map[string]string{"mongodb.connection.string": uri, "topic.prefix": prefix, "database.include.list": db,
		"poll.interval.ms": "100", "cursor.max.await.time.ms": "300"}
}

// TestMongoLiveSnapshotThenStream: snapshot, then every operation type
// from the change stream with Debezium's envelope, a tombstone after the
// delete, and a resume from committed offsets that continues right after
// them.
func TestMongoLiveSnapshotThenStream(t *testing.T) {
	t.Parallel()
	uri := liveMongoURI(t)
	mc := mongoClient(t, uri)
	db := mgID("live")
	coll := mc.Database(db).Collection("c")
	t.Cleanup(func() { mc.Database(db).Drop(context.Background()) })
	mustInsert(t, coll, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: "x"}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: "y"}}})
	lc := newLiveContext(t)
	cfg := liveConfig(uri, db, db)
	task := openLive(t, cfg, lc)
	reads := pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 2 })
	for _, r := range reads {
		if envField(r, "op") != "r" {
			t.Fatalf("snapshot op %v", envField(r, "op"))
		}
	}
	ctx := context.Background()
	mustInsert(t, coll, []any{bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: "z"}}})
	coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: "x2"}}}, {Key: "$unset", Value: bson.D{{Key: "gone", Value: ""}}}})
	coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "b", Value: 1}})
	coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}})
	ev := pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 5 })
	var ops []string
	for _, r := range ev {
		if r.Value == nil {
			ops = append(ops, "tombstone")
			continue
		}
		ops = append(ops, envField(r, "op").(string))
	}
	if strings.Join(ops, ",") != "c,u,u,d,tombstone" {
		t.Fatalf("ops %v", ops)
	}
	if after := envField(ev[1], "after"); after != `{"_id": 1,"a": "x2"}` {
		t.Errorf("update after %v", after)
	}
	ud := envField(ev[1], "updateDescription").(*schema.Struct)
	if ud.Get("updatedFields") != `{"a": "x2"}` {
		t.Errorf("updatedFields %v", ud.Get("updatedFields"))
	}
	if k := ev[3].Key.(*schema.Struct).Get("id"); k != "3" {
		t.Errorf("delete key %v", k)
	}
	// Resume: offsets are committed up to the replace; a new task starts
	// after it (the delete and its tombstone come again, nothing else).
	task.Close(ctx)
	lc.commit(ev[2])
	task = openLive(t, cfg, lc)
	again := pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 2 })
	if envField(again[0], "op") != "d" || again[1].Value != nil {
		t.Fatalf("after resuming: %v %v", envField(again[0], "op"), again[1].Value)
	}
}

// TestMongoLiveHeartbeatAndHistoryLost: an idle captured database's offset
// advances with heartbeats while another database changes; a stored
// position older than the oplog fails the task saying what to do, or, with
// snapshot.mode=when_needed, takes a new snapshot.
func TestMongoLiveHeartbeatAndHistoryLost(t *testing.T) {
	t.Parallel()
	uri := liveMongoURI(t)
	mc := mongoClient(t, uri)
	db := mgID("livehb")
	t.Cleanup(func() {
		mc.Database(db).Drop(context.Background())
		mc.Database(db + "other").Drop(context.Background())
	})
	mustInsert(t, mc.Database(db).Collection("c"), []any{bson.D{{Key: "_id", Value: 1}}})
	lc := newLiveContext(t)
	cfg := liveConfig(uri, db, db)
	cfg["heartbeat.interval.ms"] = "200"
	task := openLive(t, cfg, lc)
	pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 1 })
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				mc.Database(db+"other").Collection("x").InsertOne(context.Background(), bson.D{{Key: "i", Value: i}})
			}
		}
	}()
	hb := pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 2 })
	for _, r := range hb {
		if r.Topic != "__debezium-heartbeat."+db || r.Offset["resume_token"] == nil {
			t.Fatalf("heartbeat %s %v", r.Topic, r.Offset)
		}
	}
	if hb[0].Offset["resume_token"] == hb[1].Offset["resume_token"] {
		t.Errorf("heartbeats did not advance the resume token")
	}
	task.Close(context.Background())

	// A position from 1970 is not in any oplog.
	lost := newLiveContext(t)
	lost.commit(sdk.SourceRecord{Partition: sdk.Partition{"server_id": db}, Offset: sdk.Offset{"sec": 1, "ord": 1}})
	sp := mongodb.Connector().(sdk.SourcePlugin)
	tk, _ := sp.NewSourceTask(cfg)
	err := tk.Open(context.Background(), lost)
	if err == nil {
		_, err = tk.Poll(context.Background(), 10)
	}
	tk.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "snapshot.mode=when_needed") {
		t.Fatalf("a lost position gave %v, want guidance", err)
	}
	cfg["snapshot.mode"] = "when_needed"
	task = openLive(t, cfg, lost)
	again := pollLive(t, task, lost, func(r []sdk.SourceRecord) bool {
		for _, x := range r {
			if envField(x, "op") == "r" {
				return true
			}
		}
		return false
	})
	_ = again
}

// TestMongoLivePreImages: with change_streams_update_full_with_pre_image on
// a collection with pre- and post-images enabled (MongoDB 6.0+), updates
// and deletes carry before.
func TestMongoLivePreImages(t *testing.T) {
	t.Parallel()
	uri := liveMongoURI(t)
	mc := mongoClient(t, uri)
	db := mgID("livepre")
	t.Cleanup(func() { mc.Database(db).Drop(context.Background()) })
	ctx := context.Background()
	if err := mc.Database(db).CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := mc.Database(db).RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err(); err != nil {
		t.Skipf("skipping: the server has no pre-images (MongoDB 6.0+ needed): %v", err)
	}
	coll := mc.Database(db).Collection("c")
	mustInsert(t, coll, []any{bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 1}}})
	lc := newLiveContext(t)
	cfg := liveConfig(uri, db, db)
	cfg["capture.mode"] = "change_streams_update_full_with_pre_image"
	task := openLive(t, cfg, lc)
	pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 1 })
	coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 2}}}})
	coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}})
	ev := pollLive(t, task, lc, func(r []sdk.SourceRecord) bool { return len(r) >= 2 })
	if envField(ev[0], "before") != `{"_id": 1,"v": 1}` || envField(ev[1], "before") != `{"_id": 1,"v": 2}` {
		t.Fatalf("before of update %v, of delete %v", envField(ev[0], "before"), envField(ev[1], "before"))
	}
}

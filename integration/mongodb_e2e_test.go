package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/integration/harness"
)

// TestMongoPollSnapshotThenChanges runs the MongoDB source in poll mode in
// a worker process against FerretDB: a snapshot of three collections in two
// databases (a third database is filtered out) with nested documents,
// arrays (FerretDB v1 refuses nested arrays and Decimal128; the golden
// tests cover those), ObjectIds, string and integer _ids, dates, fractional numbers and
// binary data, then the documents inserted after it (also in a collection
// created later), and, with capture.poll.field=updatedAt, updates. Each
// document arrives with the key and the after string Debezium would write;
// excluded fields are left out.
func TestMongoPollSnapshotThenChanges(t *testing.T) {
	t.Parallel()
	fdb := harness.StartFerretDBT(t)
	mc := mongoClient(t, fdb.URI)
	ctx := context.Background()
	id := mgID("mpoll")
	dbA, dbB, dbX, dbU := mc.Database(id+"a"), mc.Database(id+"b"), mc.Database(id+"x"), mc.Database(id+"u")

	base := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC)
	var orders []any
	oids := make([]bson.ObjectID, 300)
	for i := range oids {
		oids[i] = bson.NewObjectIDFromTimestamp(base.Add(time.Duration(i) * time.Second))
		orders = append(orders, bson.D{
			{Key: "_id", Value: oids[i]},
			{Key: "n", Value: int32(i)},
			{Key: "price", Value: float64(i) + 0.25},
			{Key: "at", Value: bson.NewDateTimeFromTime(base.Add(time.Duration(i) * time.Minute))},
			{Key: "bin", Value: bson.Binary{Data: []byte{byte(i), 0xff}}},
			{Key: "shipping", Value: bson.D{{Key: "address", Value: bson.D{{Key: "city", Value: "Zürich"}, {Key: "zip", Value: fmt.Sprint(8000 + i)}}}}},
			{Key: "tags", Value: bson.A{"a", int32(i), bson.D{{Key: "k", Value: int64(i)}, {Key: "e", Value: bson.A{}}}}},
		})
	}
	mustInsert(t, dbA.Collection("orders"), orders)
	var customers []any
	for i := range 10 {
		customers = append(customers, bson.D{{Key: "_id", Value: fmt.Sprintf("c-%d", i)}, {Key: "name", Value: fmt.Sprintf("Ann \"%d\"", i)}, {Key: "secret", Value: "hunter2"}})
	}
	mustInsert(t, dbA.Collection("customers"), customers)
	var events []any
	for i := range 20 {
		events = append(events, bson.D{{Key: "_id", Value: int64(1000 + i)}, {Key: "m", Value: bson.A{int32(i), bson.D{}}}, {Key: "ok", Value: i%2 == 0}, {Key: "none", Value: nil}})
	}
	mustInsert(t, dbB.Collection("events"), events)
	mustInsert(t, dbX.Collection("ignored"), []any{bson.D{{Key: "_id", Value: 1}}})

	bootstrap, r, w, _ := startWorker(t, "mpoll", nil)
	dumpOnFailure(t, r, w.LogPath, "mg", "mgu")
	cfg := mongoPollConfig(fdb.URI, id, id+"[ab]")
	cfg["field.exclude.list"] = id + "a.customers.secret"
	// The worker's validate endpoint passes the config through the plugin.
	var infos struct {
		ErrorCount int `json:"error_count"`
	}
	vcfg := maps.Clone(cfg)
	vcfg["name"] = "mg"
	body := r.must("PUT", "/connector-plugins/MongoDbConnector/config/validate", vcfg, 200)
	json.Unmarshal(body, &infos)
	if infos.ErrorCount != 0 {
		t.Fatalf("valid config has %d errors: %s", infos.ErrorCount, body)
	}
	r.must("POST", "/connectors", map[string]any{"name": "mg", "config": cfg}, 201)
	r.waitState("mg", "RUNNING", 1)

	c := newMgConsumer(t, bootstrap, "^"+id+`\..*`)
	snap := c.until(90*time.Second, func(ev []mgEvent) bool { return len(ev) >= 330 })
	if len(snap) != 330 {
		t.Fatalf("%d events, want 330 read events", len(snap))
	}
	byKey := map[string]mgEvent{}
	lasts := 0
	var lastOfLast mgEvent // the last event of the last collection
	for _, e := range snap {
		if e.topic == id+"."+id+"b.events" {
			lastOfLast = e
		}
		if e.op() != "r" {
			t.Fatalf("snapshot event op %q: %+v", e.op(), e)
		}
		if e.source()["snapshot"] == "last" {
			lasts++
		}
		if e.source()["connector"] != "mongodb" || e.source()["name"] != id || e.source()["version"] != "3.6.1.Final" {
			t.Fatalf("source %v", e.source())
		}
		byKey[e.topic+" "+e.key] = e
	}
	if lasts != 1 || lastOfLast.source()["snapshot"] != "last" {
		t.Errorf("%d events with snapshot=last, want one: the last of the last collection", lasts)
	}
	// Exact Debezium strings for a few documents.
	want := map[string]string{
		fmt.Sprintf(`%s.%sa.orders {"$oid": "%s"}`, id, id, oids[7].Hex()): fmt.Sprintf(
			`{"_id": {"$oid": "%s"},"n": 7,"price": 7.25,"at": {"$date": %d},"bin": {"$binary": "B/8=","$type": "00"},"shipping": {"address": {"city": "Zürich","zip": "8007"}},"tags": ["a",7,{"k": {"$numberLong": "7"},"e": []}]}`,
			oids[7].Hex(), base.Add(7*time.Minute).UnixMilli()),
		id + `.` + id + `a.customers "c-3"`: `{"_id": "c-3","name": "Ann \"3\""}`,
		id + `.` + id + `b.events 1005`:     `{"_id": {"$numberLong": "1005"},"m": [5,{}],"ok": false,"none": null}`,
	}
	for k, w := range want {
		e, ok := byKey[k]
		if !ok {
			t.Errorf("no event for %s", k)
			continue
		}
		if e.after() != w {
			t.Errorf("%s: after\n %s\nwant\n %s", k, e.after(), w)
		}
	}
	for k := range byKey {
		if strings.Contains(k, id+"x.") {
			t.Errorf("event of a filtered-out database: %s", k)
		}
	}

	// Changes after the snapshot: inserts, also in a new collection.
	var more []any
	for i := range 40 {
		more = append(more, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "n", Value: int32(300 + i)}})
	}
	mustInsert(t, dbA.Collection("orders"), more)
	mustInsert(t, dbB.Collection("late"), []any{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "x", Value: 1.5}}})
	changes := c.until(60*time.Second, func(ev []mgEvent) bool { return len(ev) >= 41 })
	for _, e := range changes {
		if e.op() != "c" || e.source()["snapshot"] != "false" {
			t.Fatalf("change after the snapshot: op %q snapshot %v", e.op(), e.source()["snapshot"])
		}
	}

	// capture.poll.field=updatedAt: updates are seen.
	items := dbU.Collection("items")
	t0 := time.Now().Add(-time.Hour)
	item := bson.NewObjectID()
	mustInsert(t, items, []any{bson.D{{Key: "_id", Value: item}, {Key: "v", Value: 1}, {Key: "updatedAt", Value: bson.NewDateTimeFromTime(t0)}}})
	ucfg := mongoPollConfig(fdb.URI, id+"u", id+"u")
	ucfg["capture.poll.field"] = "updatedAt"
	r.must("POST", "/connectors", map[string]any{"name": "mgu", "config": ucfg}, 201)
	uc := newMgConsumer(t, bootstrap, "^"+id+`u\.`)
	uev := uc.until(60*time.Second, func(ev []mgEvent) bool { return len(ev) >= 1 })
	if _, err := items.UpdateOne(ctx, bson.D{{Key: "_id", Value: item}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 2}, {Key: "updatedAt", Value: bson.NewDateTimeFromTime(time.Now())}}}}); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, items, []any{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "v", Value: 1}, {Key: "updatedAt", Value: bson.NewDateTimeFromTime(time.Now().Add(time.Second))}}})
	uev = append(uev, uc.until(60*time.Second, func(ev []mgEvent) bool { return len(ev) >= 2 })...)
	if ops := uev[0].op() + uev[1].op() + uev[2].op(); ops != "ruc" || !strings.Contains(uev[1].after(), `"v": 2`) {
		t.Fatalf("ops %q, update after %s", ops, uev[1].after())
	}
}

// TestMongoValidation: configurations the connector refuses before it
// starts, each with the error on its key and a message that says what to do.
func TestMongoValidation(t *testing.T) {
	t.Parallel()
	fdb := harness.StartFerretDBT(t)
	host := strings.TrimSuffix(strings.TrimPrefix(fdb.URI, "mongodb://"), "/")
	for _, tc := range []struct {
		name, key, msg string
		set            map[string]string
	}{
		{"unparsable", "mongodb.connection.string", "Invalid connection string", map[string]string{"mongodb.connection.string": "mongodb://host:port:x/"}},
		{"unreachable", "mongodb.connection.string", "cannot reach the server", map[string]string{"mongodb.connection.string": fmt.Sprintf("mongodb://127.0.0.1:%d/", harness.FreePort(t))}},
		// FerretDB v1 refuses SCRAM: any credentials are refused, as wrong
		// ones are by MongoDB.
		{"credentials", "mongodb.connection.string", "authentication failed", map[string]string{"mongodb.connection.string": "mongodb://someone:wrong@" + host + "/"}},
		{"no change streams", "capture.mode", "capture.mode=poll", map[string]string{"capture.mode": "change_streams_update_full"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mongoPollConfig(fdb.URI, "v", "x")
			delete(cfg, "connector.class")
			cfg["mongodb.server.selection.timeout.ms"] = "2000"
			for k, v := range tc.set {
				cfg[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			infos, err := mongodb.Connector().Validate(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			errs := infos.Errors()
			if len(errs) != 1 || !strings.Contains(strings.Join(errs[tc.key], " "), tc.msg) {
				t.Fatalf("errors %v, want one on %s saying %q", errs, tc.key, tc.msg)
			}
			if strings.Contains(fmt.Sprint(errs), "wrong") {
				t.Fatalf("the error shows the password: %v", errs)
			}
			t.Logf("%s: %s", tc.key, errs[tc.key][0])
		})
	}
}

func mustInsert(t testing.TB, c *mongo.Collection, docs []any) {
	t.Helper()
	if _, err := c.InsertMany(context.Background(), docs); err != nil {
		t.Fatalf("insert into %s: %v", c.Name(), err)
	}
}

package harness

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestFerretDB builds FerretDB (once: later runs reuse the cached binary),
// starts it, writes and reads back a document of the BSON types the MongoDB
// source's tests use, and checks that Close stops the process. .ci/run runs
// it first so that the build is its own, visible step.
func TestFerretDB(t *testing.T) {
	f := StartFerretDBT(t)
	if !strings.HasPrefix(f.URI, "mongodb://127.0.0.1:") {
		t.Fatalf("URI %q, want mongodb://127.0.0.1:<port>/", f.URI)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(f.URI))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	coll := c.Database("d").Collection("c")
	oid := bson.NewObjectID()
	// FerretDB v1 has no Decimal128 (a document holding one makes it drop
	// the connection) and no nested arrays.
	doc := bson.D{{Key: "_id", Value: oid}, {Key: "at", Value: bson.DateTime(1705000000123)}, {Key: "dbl", Value: 12.345},
		{Key: "bin", Value: bson.Binary{Subtype: 0, Data: []byte{1, 2}}}, {Key: "nested", Value: bson.D{{Key: "a", Value: bson.A{1, "x"}}}}}
	if _, err := coll.InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	var got bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: oid}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want, _ := bson.Marshal(doc); string(got) != string(want) {
		t.Fatalf("read back %s, want %s", got, bson.Raw(want))
	}
	pid := f.Pid()
	f.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("FerretDB (pid %d) still running after Close", pid)
	}
}

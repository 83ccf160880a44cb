package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestServes runs the server as the harness does (a process printing
// "ready <uri>") and checks that a MongoDB driver can write and read
// documents of the types the connector's tests use.
//
// It builds the server itself (not the harness's cached build).
func TestServes(t *testing.T) {
	bin := t.TempDir() + "/ferretdb"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--data", t.TempDir())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("no ready line")
	}
	uri, ok := strings.CutPrefix(sc.Text(), "ready ")
	if !ok || !strings.HasPrefix(uri, "mongodb://127.0.0.1:") {
		t.Fatalf("first line %q", sc.Text())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	coll := c.Database("d").Collection("c")
	oid := bson.NewObjectID()
	// FerretDB v1 has no Decimal128: a document holding one makes it drop
	// the connection.
	doc := bson.D{{Key: "_id", Value: oid}, {Key: "at", Value: bson.DateTime(1705000000123)}, {Key: "dbl", Value: 12.345},
		{Key: "bin", Value: bson.Binary{Subtype: 0, Data: []byte{1, 2}}}, {Key: "nested", Value: bson.D{{Key: "a", Value: bson.A{1, "x"}}}}}
	if _, err := coll.InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	var got bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: oid}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want, _ := bson.Marshal(doc)
	if string(got) != string(want) {
		t.Fatalf("read back %s, want %s", got, bson.Raw(want))
	}
}

package integration

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

// TestMongoAcceptance runs the SDK's acceptance kit on the MongoDB source
// in poll mode against FerretDB: spec, validation (with the live check),
// records, resumption from committed offsets (in the snapshot and after
// it) and a prompt stop.
func TestMongoAcceptance(t *testing.T) {
	// Not parallel: sdktest's leak check counts every goroutine of the
	// process, so no other test may run beside it.
	fdb := harness.StartFerretDBT(t)
	mc := mongoClient(t, fdb.URI)
	sdktest.RunSource(t, sdktest.SourceDriver{
		Connector: mongodb.Connector(),
		Timeout:   30 * time.Second,
		Config: func(t *testing.T) map[string]string {
			db := mgID("acc")
			cfg := mongoPollConfig(fdb.URI, db, db)
			delete(cfg, "connector.class")
			return cfg
		},
		Seed: func(t *testing.T, cfg map[string]string, n int) {
			var docs []any
			for i := range n {
				docs = append(docs, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "i", Value: int32(i)}, {Key: "s", Value: fmt.Sprint("doc ", i)}})
			}
			mustInsert(t, mc.Database(cfg["database.include.list"]).Collection("items"), docs)
		},
	})
}

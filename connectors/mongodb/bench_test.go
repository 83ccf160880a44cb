package mongodb

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk"
)

// BenchmarkReadRecord measures the connector's own work per snapshotted
// document (key, after string, envelope) for a ~400-byte document.
func BenchmarkReadRecord(b *testing.B) {
	doc, err := bson.Marshal(bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "n", Value: int64(12345)},
		{Key: "name", Value: "customer 00012345"},
		{Key: "at", Value: bson.NewDateTimeFromTime(time.UnixMilli(1700000000000))},
		{Key: "price", Value: 123.45},
		{Key: "address", Value: bson.D{{Key: "city", Value: "Zürich"}, {Key: "zip", Value: "8001"}, {Key: "lines", Value: bson.A{"Bahnhofstrasse 1", "4th floor"}}}},
		{Key: "tags", Value: bson.A{"a", "b", int32(3)}},
		{Key: "note", Value: strings.Repeat("lorem ipsum ", 10)},
	})
	if err != nil {
		b.Fatal(err)
	}
	env := newEnvelopes("bench", &filters{})
	c := env.collection("db", "coll")
	si := &sourceInfo{snapshot: snapTrue}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var r sdk.SourceRecord
	for b.Loop() {
		if err := env.readRecord(c, doc, si, "r", &r); err != nil {
			b.Fatal(err)
		}
	}
}

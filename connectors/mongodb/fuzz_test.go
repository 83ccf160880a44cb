package mongodb

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk"
)

// FuzzChangeEvent feeds arbitrary bytes as change stream event documents:
// parsing and building the event either fail with an error or make a
// record that matches its schema; nothing panics.
func FuzzChangeEvent(f *testing.F) {
	for _, doc := range []string{
		`{"_id": {"_data": "82"}, "operationType": "insert", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "fullDocument": {"_id": 1, "a": [1, {"b": "c"}], "d": {"$date": {"$numberLong": "5"}}}}`,
		`{"_id": {"_data": "82"}, "operationType": "update", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": "x"}, "updateDescription": {"updatedFields": {"a.b": 1}, "removedFields": ["c"], "truncatedArrays": [{"field": "e", "newSize": 1}]}}`,
		`{"_id": {"_data": "82"}, "operationType": "delete", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": {"$oid": "65a1b2c3d4e5f60718293a4b"}}, "lsid": {"id": 1}, "txnNumber": {"$numberLong": "1"}}`,
	} {
		var d bson.D
		if err := bson.UnmarshalExtJSON([]byte(doc), false, &d); err != nil {
			f.Fatal(err)
		}
		b, _ := bson.Marshal(d)
		f.Add(b)
	}
	env := newEnvelopes("p", &filters{fields: mustExcludes(f, "d.c.a.b,*.*.z")})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseChangeEvent(bson.Raw(b))
		if err != nil {
			return
		}
		var r sdk.SourceRecord
		ok, err := env.changeRecord(&ev, &r)
		if err != nil || !ok {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("record does not match its schema: %v", err)
		}
	})
}

func mustExcludes(f *testing.F, s string) []fieldExclude {
	fe, err := parseFieldExcludes(s)
	if err != nil {
		f.Fatal(err)
	}
	return fe
}

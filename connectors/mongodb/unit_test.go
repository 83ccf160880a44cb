package mongodb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/tributary-dev/tributary/sdk"
)

func mustRaw(t *testing.T, extJSON string) bson.Raw {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(extJSON), true, &d); err != nil {
		t.Fatal(err)
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", -2.25: "-2.25", 1e7: "1.0E7", 9999999: "9999999.0", 0.001: "0.001",
		0.0001: "1.0E-4", 1e20: "1.0E20", 123456789: "1.23456789E8", 1.7976931348623157e308: "1.7976931348623157E308",
	} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestKeyForms(t *testing.T) {
	c := newEnvelopes("p", &filters{}).collection("d", "c")
	for doc, want := range map[string]string{
		`{"_id": {"$oid": "65a1b2c3d4e5f60718293a4b"}}`: `{"$oid": "65a1b2c3d4e5f60718293a4b"}`,
		`{"_id": "abc"}`:                                            `"abc"`,
		`{"_id": {"$numberLong": "5"}}`:                             `5`,
		`{"_id": {"$date": {"$numberLong": "1500"}}}`:               `{"$date": "1970-01-01T00:00:01.5Z"}`,
		`{"_id": {"$date": {"$numberLong": "-1"}}}`:                 `{"$date": {"$numberLong": "-1"}}`,
		`{"_id": {"$numberDouble": "NaN"}}`:                         `{"$numberDouble": "NaN"}`,
		`{"_id": {"a": {"$numberInt": "1"}, "b": [1, 2]}}`:          `{"a": 1,"b": [1,2]}`,
		`{"_id": {"$binary": {"base64": "AQ==", "subType": "04"}}}`: `{"$binary": {"base64": "AQ==","subType": "04"}}`,
	} {
		k, err := keyOf(c, mustRaw(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := k.GetIndex(0); got != want {
			t.Errorf("key of %s = %s, want %s", doc, got, want)
		}
	}
}

func TestParseChangeEventRefusesMalformed(t *testing.T) {
	for _, doc := range []string{
		`{"operationType": "insert"}`,
		`{"_id": "x", "operationType": "insert"}`,
		`{"_id": {"_data": "82"}}`,
		`{"_id": {"_data": "82"}, "operationType": "update", "updateDescription": {"removedFields": [1]}}`,
		`{"_id": {"_data": "82"}, "operationType": "update", "updateDescription": {"truncatedArrays": [{"field": "a"}]}}`,
		`{"_id": {"_data": "82"}, "operationType": "insert", "splitEvent": {"fragment": 3, "of": 2}}`,
	} {
		if _, err := parseChangeEvent(mustRaw(t, doc)); err == nil {
			t.Errorf("parseChangeEvent(%s) accepted it", doc)
		}
	}
	if _, err := parseChangeEvent(bson.Raw{5, 0, 0, 0}); err == nil {
		t.Error("parseChangeEvent accepted a truncated document")
	}
	// An insert without documentKey is refused when the event is built.
	ev, err := parseChangeEvent(mustRaw(t, `{"_id": {"_data": "82"}, "operationType": "insert", "ns": {"db": "d", "coll": "c"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var r sdk.SourceRecord
	if _, err := newEnvelopes("p", &filters{}).changeRecord(&ev, &r); err == nil {
		t.Error("an insert without documentKey built an event")
	}
}

// TestOtherOperationTypes: drop, rename, invalidate and the like make no
// event (the server-side $match keeps them out; this is the second line).
func TestOtherOperationTypes(t *testing.T) {
	for _, op := range []string{"drop", "rename", "dropDatabase", "invalidate", "createIndexes", "create", "modify"} {
		ev, err := parseChangeEvent(mustRaw(t, `{"_id": {"_data": "82"}, "operationType": "`+op+`", "ns": {"db": "d", "coll": "c"}}`))
		if err != nil {
			t.Fatal(err)
		}
		var r sdk.SourceRecord
		if ok, err := newEnvelopes("p", &filters{}).changeRecord(&ev, &r); ok || err != nil {
			t.Errorf("%s: event %v, error %v", op, ok, err)
		}
	}
}

func TestSplitJoiner(t *testing.T) {
	frag := func(n int, body string) changeEvent {
		ev, err := parseChangeEvent(mustRaw(t, `{"_id": {"_data": "8`+string(rune('0'+n))+`"}, "splitEvent": {"fragment": `+string(rune('0'+n))+`, "of": 3}`+body+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	var j splitJoiner
	parts := []changeEvent{
		frag(1, `, "operationType": "update", "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1}, "clusterTime": {"$timestamp": {"t": 5, "i": 6}}`),
		frag(2, `, "fullDocumentBeforeChange": {"_id": 1, "big": "b"}`),
		frag(3, `, "fullDocument": {"_id": 1, "big": "a"}, "updateDescription": {"updatedFields": {"big": "a"}}`),
	}
	for i, p := range parts {
		ev, ok, err := j.add(p)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (i == 2) {
			t.Fatalf("fragment %d: complete=%v", i+1, ok)
		}
		if ok {
			if ev.op != "update" || ev.before == nil || ev.after == nil || ev.update == nil || ev.clusterT != 5 || ev.key == nil {
				t.Fatalf("joined event %+v", ev)
			}
			if ev.token.Lookup("_data").StringValue() != "83" {
				t.Fatalf("joined event's token %s, want the last fragment's", ev.token)
			}
		}
	}
	if _, _, err := j.add(parts[1]); err == nil {
		t.Error("a second fragment without the first was accepted")
	}
	j = splitJoiner{}
	j.add(parts[0])
	whole, _ := parseChangeEvent(mustRaw(t, `{"_id": {"_data": "90"}, "operationType": "insert"}`))
	if _, _, err := j.add(whole); err == nil {
		t.Error("an event between fragments was accepted")
	}
}

func TestTokenTime(t *testing.T) {
	tok := mustRaw(t, `{"_data": "8265A1B2C3000000012B022C0100296E5A1004AB"}`)
	ts, inc, ok := tokenTime(tok)
	if !ok || ts != 0x65A1B2C3 || inc != 1 {
		t.Fatalf("tokenTime = %d %d %v", ts, inc, ok)
	}
	back, err := parseToken(tokenString(tok))
	if err != nil || !bytesEqual(back, tok) {
		t.Fatalf("token round trip: %v %v", back, err)
	}
	// Debezium 1.x stored the _data string itself.
	old, err := parseToken("8265A1B2C3000000012B022C0100296E5A1004AB")
	if err != nil || old.Lookup("_data").StringValue() != "8265A1B2C3000000012B022C0100296E5A1004AB" {
		t.Fatalf("old token form: %v %v", old, err)
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

func TestFiltersAfter(t *testing.T) {
	qs, err := filtersAfter(mustRaw(t, `{"_id": "m"}`))
	if err != nil || len(qs) != 2 {
		t.Fatalf("filtersAfter: %v %v", qs, err)
	}
	later := qs[1][0].Value.(bson.D)[0].Value.(bson.A)
	if later[0] != "object" || later[len(later)-1] != "timestamp" {
		t.Fatalf("brackets after string: %v", later)
	}
	if qs, _ := filtersAfter(mustRaw(t, `{"_id": {"$timestamp": {"t": 1, "i": 1}}}`)); len(qs) != 1 {
		t.Fatalf("after a timestamp: %v", qs)
	}
}

func TestConfigValidation(t *testing.T) {
	base := map[string]string{"mongodb.connection.string": "mongodb://127.0.0.1:1/", "topic.prefix": "p", "capture.mode": "poll"}
	for name, tc := range map[string]struct {
		set map[string]string
		key string
		msg string
	}{
		"bad uri":           {map[string]string{"mongodb.connection.string": "postgres://x"}, "mongodb.connection.string", "Invalid connection string"},
		"uri with secret":   {map[string]string{"mongodb.connection.string": "mongodb://u:s3cret@h:notaport/"}, "mongodb.connection.string", "Invalid connection string"},
		"include+exclude":   {map[string]string{"database.include.list": "a", "database.exclude.list": "b"}, "database.exclude.list", "cannot both"},
		"bad regex":         {map[string]string{"collection.include.list": "a.(b"}, "collection.include.list", "not a valid regular expression"},
		"field format":      {map[string]string{"field.exclude.list": "db.coll"}, "field.exclude.list", "invalid format"},
		"capture target":    {map[string]string{"capture.scope": "collection", "capture.target": "nodot"}, "capture.target", "<db>.<collection>"},
		"capture mode":      {map[string]string{"capture.mode": "oplog"}, "capture.mode", ""},
		"bad topic prefix":  {map[string]string{"topic.prefix": "a b"}, "topic.prefix", ""},
		"pipeline not json": {map[string]string{"cursor.pipeline": `[{"$match": `}, "cursor.pipeline", "not a JSON array of pipeline stages"},
		"pipeline object":   {map[string]string{"cursor.pipeline": `{"$match": {}}`}, "cursor.pipeline", "not a JSON array"},
		"pipeline stage":    {map[string]string{"cursor.pipeline": `[{"match": {}}]`}, "cursor.pipeline", "stage 1 is not a pipeline stage"},
		"pipeline order":    {map[string]string{"cursor.pipeline.order": "last"}, "cursor.pipeline.order", ""},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := map[string]string{}
			for k, v := range base {
				cfg[k] = v
			}
			for k, v := range tc.set {
				cfg[k] = v
			}
			infos, err := Connector().Validate(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			errs := infos.Errors()
			if len(errs[tc.key]) == 0 || !strings.Contains(strings.Join(errs[tc.key], " "), tc.msg) {
				t.Fatalf("errors %v, want one on %s saying %q", errs, tc.key, tc.msg)
			}
			if strings.Contains(strings.Join(errs[tc.key], " "), "s3cret") {
				t.Fatalf("the error shows the password: %v", errs)
			}
		})
	}
}

func TestMatchStage(t *testing.T) {
	f, err := newFilters(&Config{FiltersMatchMode: "regex", DatabaseInclude: []string{"shop", "inv.*"}, CollectionExclude: []string{`shop\.tmp.*`}})
	if err != nil {
		t.Fatal(err)
	}
	got := bson.Raw(mustMarshal(t, f.matchStage())).String()
	for _, want := range []string{`"$in":["insert","update","replace","delete"]`, `"ns.db":{"$regex":"^(?:shop|inv.*)$","$options":"i"}`, `"$not":[{"$regexMatch"`} {
		if !strings.Contains(strings.ReplaceAll(got, " ", ""), want) {
			t.Errorf("match stage %s lacks %s", got, want)
		}
	}
	if !f.collection("shop", "orders") || f.collection("shop", "tmp1") || f.collection("other", "x") || f.collection("admin", "x") || !f.collection("INVENTORY", "x") {
		t.Error("collection filter")
	}
}

// TestChangeStreamPipeline: cursor.pipeline's stages go where
// cursor.pipeline.order puts them, between the size filter of skip and the
// split stage of split, as in Debezium's ChangeStreamPipelineFactory.
func TestChangeStreamPipeline(t *testing.T) {
	user, err := parsePipeline(`[{"$match": {"fullDocument.region": "eu"}}, {"$project": {"fullDocument.secret": 0}}]`)
	if err != nil {
		t.Fatal(err)
	}
	internal := bson.D{{Key: "$match", Value: bson.D{{Key: "internal", Value: true}}}}
	names := func(p []bson.D) string {
		var out []string
		for _, st := range p {
			name := st[0].Key
			if name == "$match" {
				b, _ := bson.MarshalExtJSON(st[0].Value, false, false)
				switch {
				case strings.Contains(string(b), "internal"):
					name = "internal"
				case strings.Contains(string(b), "region"):
					name = "user-match"
				case strings.Contains(string(b), "bsonSize"):
					name = "size"
				}
			}
			out = append(out, name)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		order, oversize, want string
	}{
		{"internal_first", "fail", "internal user-match $project"},
		{"user_first", "fail", "user-match $project internal"},
		{"user_only", "fail", "user-match $project"},
		{"internal_first", "skip", "size internal user-match $project"},
		{"user_first", "split", "user-match $project internal $changeStreamSplitLargeEvent"},
	} {
		c := &Config{CursorPipelineOrder: tc.order, OversizeMode: tc.oversize}
		if got := names(c.changeStreamPipeline(internal, user)); got != tc.want {
			t.Errorf("order %s, oversize %s: stages %q, want %q", tc.order, tc.oversize, got, tc.want)
		}
	}
	if p, err := parsePipeline("  "); err != nil || p != nil {
		t.Errorf("empty cursor.pipeline: %v %v", p, err)
	}
	// Extended JSON: a date in a stage arrives as a BSON date.
	p, err := parsePipeline(`[{"$match": {"fullDocument.at": {"$gte": {"$date": "2026-01-01T00:00:00Z"}}}}]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := bson.Raw(mustMarshal(t, p[0])).String(); !strings.Contains(got, `"$date"`) {
		t.Errorf("stage %s lost its date", got)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTransientErrors: server errors that pass with time (a cursor the
// server dropped among them: the scans reopen theirs) are retriable; the
// others fail the task; a cancelled context is no error.
func TestTransientErrors(t *testing.T) {
	for _, tc := range []struct {
		err       error
		retriable bool
	}{
		{mongo.CommandError{Code: 43, Name: "CursorNotFound"}, true},
		{mongo.CommandError{Code: 237, Name: "CursorKilled"}, true},
		{mongo.CommandError{Code: 175, Name: "QueryPlanKilled"}, true},
		{mongo.CommandError{Code: 91, Name: "ShutdownInProgress"}, true},
		{mongo.CommandError{Code: 2, Name: "BadValue"}, false},
		{mongo.CommandError{Code: 13, Name: "Unauthorized"}, false},
	} {
		err := transient(context.Background(), fmt.Errorf("mongodb: poll x.y: %w", tc.err))
		if got := sdk.IsRetriable(err); got != tc.retriable {
			t.Errorf("%v: retriable %v, want %v", tc.err, got, tc.retriable)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := transient(ctx, mongo.CommandError{Code: 2}); err != nil {
		t.Errorf("cancelled: %v, want nil", err)
	}
}

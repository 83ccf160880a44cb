package schemaregistry

import (
	"strings"
	"testing"
)

const userV1 = `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"id","type":"long"}]}`
const userV2 = `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"id","type":"long"},{"name":"email","type":["null","string"],"default":null}]}`
const userBad = `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"id","type":"long"},{"name":"age","type":"int"}]}`

// TestServerOverKafka runs the REST API against the topic on kfake: a
// table of exchanges, then a second instance that reads the same topic and
// answers the same.
func TestServerOverKafka(t *testing.T) {
	brokers := kfakeBrokers(t)
	_, url := startServer(t, brokers)
	steps := []struct {
		method, path string
		body         any
		want         exchange
	}{
		{"GET", "/subjects", nil, exchange{200, `[]`}},
		{"GET", "/schemas/types", nil, exchange{200, `["JSON","PROTOBUF","AVRO"]`}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": userV1}, exchange{200, `{"id":1}`}},
		// Same schema again, other whitespace: same id, no new version.
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": strings.ReplaceAll(userV1, ",", ", ")}, exchange{200, `{"id":1}`}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": userBad}, exchange{409, ""}},
		{"POST", "/compatibility/subjects/users-value/versions/latest", map[string]any{"schema": userV2}, exchange{200, `{"is_compatible":true}`}},
		{"POST", "/compatibility/subjects/users-value/versions/latest", map[string]any{"schema": userBad}, exchange{200, `{"is_compatible":false}`}},
		{"POST", "/compatibility/subjects/users-value/versions/9", map[string]any{"schema": userV2}, exchange{404, `{"error_code":40402,"message":"Version 9 not found."}`}},
		{"POST", "/compatibility/subjects/nosuch/versions/latest", map[string]any{"schema": userV2}, exchange{200, `{"is_compatible":true}`}},
		{"POST", "/compatibility/subjects/users-value/versions/latest", map[string]any{"schema": `{"type":"nope"}`}, exchange{422, ""}},
		{"POST", "/compatibility/subjects/users-value/versions/latest?verbose=true", map[string]any{"schema": userV2}, exchange{200, `{"is_compatible":true,"messages":[]}`}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": `{"type":"object"}`, "schemaType": "JSON"}, exchange{409, ""}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": userV2}, exchange{200, `{"id":2}`}},
		// The same schema under another subject keeps its id.
		{"POST", "/subjects/other-value/versions", map[string]any{"schema": userV1}, exchange{200, `{"id":1}`}},
		{"GET", "/subjects", nil, exchange{200, `["other-value","users-value"]`}},
		{"GET", "/subjects/users-value/versions", nil, exchange{200, `[1,2]`}},
		{"GET", "/schemas?subjectPrefix=other&latestOnly=true", nil, exchange{200, `[{"subject":"other-value","version":1,"id":1,"schema":` + jsonQuote(userV1) + `}]`}},
		{"GET", "/subjects/users-value/versions/latest", nil, exchange{200, `{"subject":"users-value","version":2,"id":2,"schema":` + jsonQuote(userV2) + `}`}},
		{"GET", "/subjects/users-value/versions/1/schema", nil, exchange{200, userV1}},
		{"GET", "/schemas/ids/1", nil, exchange{200, `{"schema":` + jsonQuote(userV1) + `}`}},
		{"GET", "/schemas/ids/1/subjects", nil, exchange{200, `["other-value","users-value"]`}},
		{"GET", "/schemas/ids/1/versions", nil, exchange{200, `[{"subject":"other-value","version":1},{"subject":"users-value","version":1}]`}},
		{"GET", "/schemas/ids/99", nil, exchange{404, `{"error_code":40403,"message":"Schema 99 not found"}`}},
		{"GET", "/subjects/nope/versions", nil, exchange{404, `{"error_code":40401,"message":"Subject 'nope' not found."}`}},
		{"GET", "/subjects/users-value/versions/7", nil, exchange{404, `{"error_code":40402,"message":"Version 7 not found."}`}},
		{"GET", "/subjects/users-value/versions/x", nil, exchange{422, `{"error_code":42202,"message":"The specified version 'x' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""}`}},
		{"POST", "/subjects/users-value", map[string]any{"schema": userV1}, exchange{200, `{"subject":"users-value","version":1,"id":1,"schema":` + jsonQuote(userV1) + `}`}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": `{"type":"recrd"}`}, exchange{422, ""}},
		{"GET", "/config", nil, exchange{200, `{"compatibilityLevel":"BACKWARD"}`}},
		{"PUT", "/config/users-value", map[string]any{"compatibility": "none"}, exchange{200, `{"compatibility":"NONE"}`}},
		{"PUT", "/config/users-value", map[string]any{"compatibility": "sideways"}, exchange{422, `{"error_code":42203,"message":"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}`}},
		{"GET", "/config/users-value", nil, exchange{200, `{"compatibilityLevel":"NONE"}`}},
		{"GET", "/config/other-value", nil, exchange{404, `{"error_code":40408,"message":"Subject 'other-value' does not have subject-level compatibility configured"}`}},
		{"GET", "/config/other-value?defaultToGlobal=true", nil, exchange{200, `{"compatibilityLevel":"BACKWARD"}`}},
		{"POST", "/subjects/users-value/versions", map[string]any{"schema": userBad}, exchange{200, `{"id":3}`}},
		{"DELETE", "/config/users-value", nil, exchange{200, `{"compatibilityLevel":"NONE"}`}},
		{"GET", "/mode", nil, exchange{200, `{"mode":"READWRITE"}`}},
		{"PUT", "/mode/other-value", map[string]any{"mode": "READONLY"}, exchange{200, `{"mode":"READONLY"}`}},
		{"POST", "/subjects/other-value/versions", map[string]any{"schema": userV2}, exchange{422, `{"error_code":42205,"message":"Subject other-value in context  is in read-only mode"}`}},
		{"DELETE", "/mode/other-value", nil, exchange{200, `{"mode":"READONLY"}`}},
		{"DELETE", "/subjects/users-value/versions/3?permanent=true", nil, exchange{404, `{"error_code":40407,"message":"Subject 'users-value' Version 3 was not deleted first before being permanently deleted"}`}},
		{"DELETE", "/subjects/users-value/versions/3", nil, exchange{200, `3`}},
		{"DELETE", "/subjects/users-value/versions/3", nil, exchange{404, `{"error_code":40406,"message":"Subject 'users-value' Version 3 was soft deleted.Set permanent=true to delete permanently"}`}},
		{"GET", "/subjects/users-value/versions/3", nil, exchange{404, `{"error_code":40402,"message":"Version 3 not found."}`}},
		{"GET", "/subjects/users-value/versions/3?deleted=true", nil, exchange{200, ""}},
		{"DELETE", "/subjects/users-value/versions/3?permanent=true", nil, exchange{200, `3`}},
		{"DELETE", "/subjects/other-value?permanent=true", nil, exchange{404, `{"error_code":40405,"message":"Subject 'other-value' was not deleted first before being permanently deleted"}`}},
		{"DELETE", "/subjects/other-value", nil, exchange{200, `[1]`}},
		{"GET", "/subjects", nil, exchange{200, `["users-value"]`}},
		{"GET", "/subjects?deleted=true", nil, exchange{200, `["other-value","users-value"]`}},
		{"DELETE", "/subjects/other-value", nil, exchange{404, `{"error_code":40404,"message":"Subject 'other-value' was soft deleted.Set permanent=true to delete permanently"}`}},
		{"DELETE", "/subjects/other-value?permanent=true", nil, exchange{200, `[1]`}},
		{"GET", "/subjects?deleted=true", nil, exchange{200, `["users-value"]`}},
		// A new schema after the hard delete of id 3's only user: id 4.
		{"POST", "/subjects/fresh/versions", map[string]any{"schema": `"string"`}, exchange{200, `{"id":4}`}},
		{"POST", "/subjects/users-value/versions", "{not json", exchange{400, ""}},
		{"GET", "/nowhere", nil, exchange{404, `{"error_code":404,"message":"HTTP 404 Not Found"}`}},
	}
	for i, s := range steps {
		got := call(t, s.method, url+s.path, s.body)
		if got.status != s.want.status || (s.want.body != "" && got.body != s.want.body) {
			t.Fatalf("step %d %s %s: got %d %s, want %d %s", i, s.method, s.path, got.status, got.body, s.want.status, s.want.body)
		}
	}
	// A second instance on the same topic rebuilds the same state.
	_, url2 := startServer(t, brokers)
	for _, p := range []string{"/subjects?deleted=true", "/subjects/users-value/versions", "/schemas/ids/2", "/schemas/ids/3", "/subjects/fresh/versions/1"} {
		a, b := call(t, "GET", url+p, nil), call(t, "GET", url2+p, nil)
		if a != b {
			t.Fatalf("GET %s: first instance %v, second %v", p, a, b)
		}
	}
	// Writes through the second instance fence the first, whose next
	// write takes over again; ids stay unique.
	if got := call(t, "POST", url2+"/subjects/two/versions", map[string]any{"schema": `"int"`}); got.body != `{"id":5}` {
		t.Fatalf("register on the second instance: %v", got)
	}
	if got := call(t, "POST", url+"/subjects/one/versions", map[string]any{"schema": `"long"`}); got.body != `{"id":6}` {
		t.Fatalf("register on the first instance after the second wrote: %v", got)
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

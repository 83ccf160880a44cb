package schemaregistry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeyEncoding pins the key bytes: Confluent's Jackson output (property
// order keytype, subject, version, magic; NON_EMPTY drops a null subject),
// which compaction needs byte for byte.
func TestKeyEncoding(t *testing.T) {
	cases := []struct {
		k    Key
		want string
	}{
		{SchemaKey("users-value", 3), `{"keytype":"SCHEMA","subject":"users-value","version":3,"magic":1}`},
		{ConfigKey(""), `{"keytype":"CONFIG","magic":0}`},
		{ConfigKey("s"), `{"keytype":"CONFIG","subject":"s","magic":0}`},
		{ModeKey(""), `{"keytype":"MODE","magic":0}`},
		{ModeKey("s"), `{"keytype":"MODE","subject":"s","magic":0}`},
		{NoopKey(), `{"keytype":"NOOP","magic":0}`},
		{DeleteSubjectKey("s\"x"), `{"keytype":"DELETE_SUBJECT","subject":"s\"x","magic":0}`},
	}
	for _, c := range cases {
		if got := string(c.k.Encode()); got != c.want {
			t.Errorf("%+v: %s, want %s", c.k, got, c.want)
		}
		back, err := DecodeKey([]byte(c.want))
		if err != nil || back != c.k {
			t.Errorf("DecodeKey(%s) = %+v, %v; want %+v", c.want, back, err, c.k)
		}
	}
	// Karapace writes the global config's subject as null.
	if k, err := DecodeKey([]byte(`{"keytype":"CONFIG","subject":null,"magic":0}`)); err != nil || k != ConfigKey("") {
		t.Errorf("null subject: %+v, %v", k, err)
	}
	for _, bad := range []string{``, `{}`, `[]`, `{"keytype":"SCHEMA","subject":"s","magic":1}`, `{"keytype":"SCHEMA","subject":"s","version":0,"magic":1}`} {
		if _, err := DecodeKey([]byte(bad)); err == nil {
			t.Errorf("DecodeKey(%q) accepted", bad)
		}
	}
}

// confluentTopic is a _schemas history as Confluent Schema Registry 7.x
// writes it (values with their Jackson field order and the fields this
// registry does not use), with a soft-deleted subject, a hard-deleted
// version and configs.
var confluentTopic = []struct{ key, value string }{
	{`{"keytype":"NOOP","magic":0}`, ``},
	{`{"keytype":"SCHEMA","subject":"a-value","version":1,"magic":1}`, `{"subject":"a-value","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":false}`},
	{`{"keytype":"SCHEMA","subject":"a-value","version":2,"magic":1}`, `{"subject":"a-value","version":2,"id":2,"schema":"\"long\"","deleted":false,"metadata":null,"ruleSet":null}`},
	{`{"keytype":"SCHEMA","subject":"b-value","version":1,"magic":1}`, `{"subject":"b-value","version":1,"id":1,"schema":"\"string\"","deleted":false}`},
	{`{"keytype":"SCHEMA","subject":"c-value","version":1,"magic":1}`, `{"subject":"c-value","version":1,"id":3,"schemaType":"JSON","schema":"{\"type\":\"object\"}","deleted":false}`},
	{`{"keytype":"CONFIG","magic":0}`, `{"compatibilityLevel":"FULL"}`},
	{`{"keytype":"CONFIG","subject":"a-value","magic":0}`, `{"subject":"a-value","compatibilityLevel":"NONE","normalize":false}`},
	{`{"keytype":"DELETE_SUBJECT","subject":"b-value","magic":0}`, `{"subject":"b-value","version":1}`},
	{`{"keytype":"SCHEMA","subject":"a-value","version":2,"magic":1}`, `{"subject":"a-value","version":2,"id":2,"schema":"\"long\"","deleted":true}`},
	{`{"keytype":"SCHEMA","subject":"a-value","version":2,"magic":1}`, ``},
	{`{"keytype":"MODE","subject":"c-value","magic":0}`, `{"subject":"c-value","mode":"READONLY"}`},
	{`{"keytype":"SOMETHING_NEWER","magic":0}`, `{"x":1}`},
}

// TestReplayConfluentTopic rebuilds the state from a Confluent-written
// history and checks what the API answers.
func TestReplayConfluentTopic(t *testing.T) {
	reg, _ := newMemRegistry()
	for _, r := range confluentTopic {
		k, err := DecodeKey([]byte(r.key))
		if err != nil {
			t.Fatal(err)
		}
		var v []byte
		if r.value != "" {
			v = []byte(r.value)
		}
		if err := reg.Apply(Record{Key: k, Value: v}); err != nil {
			t.Fatalf("apply %s: %v", r.key, err)
		}
	}
	h := httptest.NewServer(Handler(reg, nil))
	defer h.Close()
	for _, c := range []struct {
		path string
		want exchange
	}{
		{"/subjects", exchange{200, `["a-value","c-value"]`}},
		{"/subjects?deleted=true", exchange{200, `["a-value","b-value","c-value"]`}},
		{"/subjects/a-value/versions", exchange{200, `[1]`}},
		{"/schemas/ids/2", exchange{404, `{"error_code":40403,"message":"Schema 2 not found"}`}},
		{"/schemas/ids/3", exchange{200, `{"schemaType":"JSON","schema":"{\"type\":\"object\"}"}`}},
		{"/schemas/ids/1/subjects?deleted=true", exchange{200, `["a-value","b-value"]`}},
		{"/config", exchange{200, `{"compatibilityLevel":"FULL"}`}},
		{"/config/a-value", exchange{200, `{"compatibilityLevel":"NONE"}`}},
		{"/mode/c-value", exchange{200, `{"mode":"READONLY"}`}},
	} {
		if got := call(t, "GET", h.URL+c.path, nil); got != c.want {
			t.Errorf("GET %s: %v, want %v", c.path, got, c.want)
		}
	}
	// Id 2 was hard-deleted but is never handed out again.
	id, err := reg.Register(context.Background(), "d", SchemaRequest{Schema: `"double"`})
	if err != nil || id != 4 {
		t.Fatalf("register after replay: id %d, %v; want 4", id, err)
	}
}

// TestReferences registers a schema that references another, lists who
// references it, and refuses to delete it while it is referenced.
func TestReferences(t *testing.T) {
	reg, ml := newMemRegistry()
	h := httptest.NewServer(Handler(reg, nil))
	defer h.Close()
	addr := `{"type":"record","name":"Address","namespace":"ex","fields":[{"name":"city","type":"string"}]}`
	user := `{"type":"record","name":"User","namespace":"ex","fields":[{"name":"home","type":"ex.Address"}]}`
	refs := []map[string]any{{"name": "ex.Address", "subject": "address", "version": 1}}
	steps := []struct {
		method, path string
		body         any
		want         exchange
	}{
		{"POST", "/subjects/address/versions", map[string]any{"schema": addr}, exchange{200, `{"id":1}`}},
		{"POST", "/subjects/user/versions", map[string]any{"schema": user}, exchange{422, ""}},
		{"POST", "/subjects/user/versions", map[string]any{"schema": user, "references": refs}, exchange{200, `{"id":2}`}},
		{"GET", "/subjects/user/versions/1", nil, exchange{200, `{"subject":"user","version":1,"id":2,"references":[{"name":"ex.Address","subject":"address","version":1}],"schema":` + jsonQuote(user) + `}`}},
		{"GET", "/schemas/ids/2", nil, exchange{200, `{"schema":` + jsonQuote(user) + `,"references":[{"name":"ex.Address","subject":"address","version":1}]}`}},
		{"GET", "/subjects/address/versions/1/referencedby", nil, exchange{200, `[2]`}},
		{"DELETE", "/subjects/address/versions/1", nil, exchange{422, `{"error_code":42206,"message":"One or more references exist to the schema {subject=address,version=1}."}`}},
		{"DELETE", "/subjects/user", nil, exchange{200, `[1]`}},
		{"DELETE", "/subjects/address/versions/1", nil, exchange{200, `1`}},
		{"POST", "/subjects/user/versions", map[string]any{"schema": user, "references": []map[string]any{{"name": "ex.Address", "subject": "nope", "version": 1}}}, exchange{422, ""}},
	}
	for i, s := range steps {
		got := call(t, s.method, h.URL+s.path, s.body)
		if got.status != s.want.status || (s.want.body != "" && got.body != s.want.body) {
			t.Fatalf("step %d %s %s: got %d %s, want %d %s", i, s.method, s.path, got.status, got.body, s.want.status, s.want.body)
		}
	}
	// The writes are SCHEMA records, then a DELETE_SUBJECT and a soft
	// delete of one version.
	var kinds []string
	for _, r := range ml.records {
		kinds = append(kinds, r.Key.Type)
	}
	if got := strings.Join(kinds, ","); got != "SCHEMA,SCHEMA,DELETE_SUBJECT,SCHEMA" {
		t.Fatalf("records written: %s", got)
	}
}

// TestImportMode registers with explicit ids and versions in IMPORT mode,
// as a migration from another registry does.
func TestImportMode(t *testing.T) {
	reg, _ := newMemRegistry()
	h := httptest.NewServer(Handler(reg, nil))
	defer h.Close()
	steps := []struct {
		method, path string
		body         any
		want         exchange
	}{
		{"PUT", "/mode", map[string]any{"mode": "IMPORT"}, exchange{200, `{"mode":"IMPORT"}`}},
		{"POST", "/subjects/s/versions", map[string]any{"schema": `"string"`, "id": 100, "version": 5}, exchange{200, `{"id":100}`}},
		{"POST", "/subjects/t/versions", map[string]any{"schema": `"int"`, "id": 100, "version": 1}, exchange{422, ""}},
		{"GET", "/subjects/s/versions", nil, exchange{200, `[5]`}},
		{"PUT", "/mode", map[string]any{"mode": "READWRITE"}, exchange{200, `{"mode":"READWRITE"}`}},
		{"PUT", "/mode", map[string]any{"mode": "IMPORT"}, exchange{422, `{"error_code":42205,"message":"Cannot import since found existing subjects"}`}},
		{"PUT", "/mode", map[string]any{"mode": "SIDEWAYS"}, exchange{422, `{"error_code":42204,"message":"Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD."}`}},
		{"POST", "/subjects/u/versions", map[string]any{"schema": `"bytes"`}, exchange{200, `{"id":101}`}},
	}
	for i, s := range steps {
		got := call(t, s.method, h.URL+s.path, s.body)
		if got.status != s.want.status || (s.want.body != "" && got.body != s.want.body) {
			t.Fatalf("step %d %s %s: got %d %s, want %d %s", i, s.method, s.path, got.status, got.body, s.want.status, s.want.body)
		}
	}
}

// TestContentTypes accepts Confluent's request media types and refuses
// others with 415, answering in application/vnd.schemaregistry.v1+json.
func TestContentTypes(t *testing.T) {
	reg, _ := newMemRegistry()
	h := httptest.NewServer(Handler(reg, nil))
	defer h.Close()
	for ct, want := range map[string]int{
		"application/vnd.schemaregistry.v1+json": 200,
		"application/vnd.schemaregistry+json":    200,
		"application/json; charset=utf-8":        200,
		"application/octet-stream":               200,
		"text/plain":                             415,
	} {
		resp, err := http.Post(h.URL+"/subjects/s/versions", ct, strings.NewReader(`{"schema":"\"string\""}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get("Content-Type") != ContentType {
			t.Errorf("%s: %d %s, want %d %s", ct, resp.StatusCode, resp.Header.Get("Content-Type"), want, ContentType)
		}
	}
}

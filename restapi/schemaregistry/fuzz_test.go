package schemaregistry

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzParse feeds every schema parser arbitrary text: it must return a
// schema or a 42201 error, never panic, and a schema that parses must be
// compatible with itself in both directions.
func FuzzParse(f *testing.F) {
	for _, s := range []string{userV1, userV2, `"string"`, `["null","int"]`, `{"type":"enum","name":"E","symbols":["A"]}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `syntax = "proto3"; message M { string a = 1; }`} {
		f.Add(byte(0), s)
		f.Add(byte(1), s)
		f.Add(byte(2), s)
	}
	types := []string{TypeAvro, TypeJSON, TypeProtobuf}
	f.Fuzz(func(t *testing.T, typ byte, text string) {
		// Identity is total: it never panics and is idempotent.
		if id := protoIdentity(text); protoIdentity(id) != id {
			t.Fatalf("protoIdentity is not idempotent on %q: %q then %q", text, id, protoIdentity(id))
		}
		p, err := Parse(types[int(typ)%3], text, nil)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != CodeInvalidSchema {
				t.Fatalf("error %v is not a 42201", err)
			}
			return
		}
		if msgs := CanRead(p, p); len(msgs) > 0 {
			t.Fatalf("%q cannot read itself: %v", text, msgs)
		}
	})
}

// FuzzApply feeds the state arbitrary _schemas records: nothing panics,
// and the state stays consistent (every version's id resolves).
func FuzzApply(f *testing.F) {
	for _, r := range confluentTopic {
		f.Add([]byte(r.key), []byte(r.value))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		s := NewState()
		k, err := DecodeKey(key)
		if err != nil {
			return
		}
		if len(value) == 0 {
			value = nil
		}
		_ = s.Apply(Record{Key: k, Value: value})
		for _, name := range s.Subjects(true) {
			for _, v := range s.Versions(name, true) {
				if s.ByID(v.ID) == nil {
					t.Fatalf("version %s/%d has id %d the state does not resolve", name, v.Version, v.ID)
				}
			}
		}
	})
}

// FuzzRequests sends arbitrary bodies to the write endpoints of a
// registry in memory: every answer is JSON with Confluent's error body
// when it is an error, and never a 500.
func FuzzRequests(f *testing.F) {
	f.Add(uint8(0), []byte(`{"schema":"\"string\""}`))
	f.Add(uint8(1), []byte(`{"schema":"{\"type\":\"object\"}","schemaType":"JSON"}`))
	f.Add(uint8(2), []byte(`{"compatibility":"FULL"}`))
	f.Add(uint8(3), []byte(`{"mode":"IMPORT"}`))
	f.Add(uint8(0), []byte(`{"schema":"\"int\"","references":[{"name":"x","subject":"s","version":1}]}`))
	f.Add(uint8(0), []byte(`{"schema":"\"int\"","id":-4,"version":2147483647}`))
	paths := []struct{ method, path string }{
		{"POST", "/subjects/s/versions"},
		{"POST", "/subjects/s"},
		{"PUT", "/config/s"},
		{"PUT", "/mode/s"},
		{"POST", "/compatibility/subjects/s/versions/latest?verbose=true"},
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		reg, _ := newMemRegistry()
		h := Handler(reg, nil)
		// One good version first, so lookups and checks have something.
		seed := httptest.NewRecorder()
		h.ServeHTTP(seed, httptest.NewRequest("POST", "/subjects/s/versions", bytes.NewBufferString(`{"schema":"\"string\""}`)))
		p := paths[int(which)%len(paths)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(p.method, p.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ContentType)
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", p.method, p.path, body, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			var e errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.ErrorCode == 0 || e.Message == "" {
				t.Fatalf("%s %s %q: %d with body %s", p.method, p.path, body, rec.Code, rec.Body)
			}
		}
	})
}

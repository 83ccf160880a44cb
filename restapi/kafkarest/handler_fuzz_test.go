package kafkarest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func endOffsets(t testing.TB, adm *kadm.Client) int64 {
	ends, err := adm.ListEndOffsets(context.Background(), "fz")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// FuzzProduceHandlers posts fuzzed bodies to the v2 and v3 produce
// endpoints (the protobuf content type and v3 PROTOBUF payloads through a
// schema registry): a body that is refused (4xx) produces nothing, and
// nothing ends in a 5xx or a panic.
func FuzzProduceHandlers(f *testing.F) {
	schema, _ := json.Marshal(testProto)
	f.Add(uint8(0), []byte(`{"records":[{"key":"k","value":{"a":1}},{"value":2,"partition":1}]}`))
	f.Add(uint8(1), []byte(`{"records":[{"value":"YQ=="},{"value":"!"}]}`))
	f.Add(uint8(2), []byte(`{"records":[{"value":1,"partition":5}]}`))
	f.Add(uint8(3), []byte(`{"partition_id":1,"value":{"type":"JSON","data":{"a":1}}}`))
	f.Add(uint8(3), []byte(`{"value":{"type":"BINARY","data":"!"}}`))
	f.Add(uint8(3), []byte(`{"value":{"type":"PROTOBUF","schema":`+string(schema)+`,"data":{"id":"a","line":{"qty":1}}}}`))
	f.Add(uint8(3), []byte(`{"value":{"type":"PROTOBUF","subject_name_strategy":"RECORD_NAME","schema":`+string(schema)+`,"data":{"tags":"x"}}}`))
	f.Add(uint8(3), []byte(`{"value":{"subject":"fz-value","schema_version":1,"data":{"amount":"7"}}}`))
	f.Add(uint8(4), []byte(`{"value_schema":`+string(schema)+`,"records":[{"value":{"id":"a","counts":{"k":1}}},{"value":{"nope":1}}]}`))
	f.Add(uint8(4), []byte(`{"value_schema_id":1,"records":[{"value":{"unitPrice":"NaN"},"partition":1}]}`))
	p, adm, _ := registryProxy(f)
	h := p.Handler()
	id := ""
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		if id == "" {
			m, err := p.clusterMeta(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			id = m.Cluster
		}
		var req *http.Request
		switch kind % 5 {
		case 0:
			req = httptest.NewRequest("POST", "/topics/fz", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.json.v2+json")
		case 1:
			req = httptest.NewRequest("POST", "/topics/fz", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.binary.v2+json")
		case 2:
			req = httptest.NewRequest("POST", "/topics/fz/partitions/1", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.json.v2+json")
		case 4:
			req = httptest.NewRequest("POST", "/topics/fz", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kafka.protobuf.v2+json")
		default:
			req = httptest.NewRequest("POST", "/v3/clusters/"+id+"/topics/fz/records", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		before := endOffsets(t, adm)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if after := endOffsets(t, adm); after != before {
				t.Fatalf("refused with %d %s, yet %d records were produced", rec.Code, rec.Body, after-before)
			}
		}
	})
}

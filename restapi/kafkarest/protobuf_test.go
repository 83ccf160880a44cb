package kafkarest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/restapi/schemaregistry"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

const testProto = `syntax = "proto3";
package t;
message Order {
  string id = 1;
  int64 amount = 2;
  repeated string tags = 3;
  Line line = 4;
  map<string, int32> counts = 5;
  double unit_price = 6;
  message Line { string sku = 1; int32 qty = 2; }
}
message Other { bool b = 1; }
`

// registryProxy is a proxy over franz-go's kfake with topic fz (two
// partitions) and Tributary's schema registry stored in the same kfake;
// it returns the proxy, an admin client and the registry's URL.
func registryProxy(t testing.TB) (*Proxy, *kadm.Client, string) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "fz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg, err := schemaregistry.New(ctx, schemaregistry.Config{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = reg.Serve(ln) }()
	t.Cleanup(func() { _ = reg.Close(context.Background()) })
	url := "http://" + ln.Addr().String()
	p, err := New(Config{Seeds: c.ListenAddrs(), SchemaRegistryURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return p, kadm.NewClient(cl), url
}

func post(t testing.TB, h http.Handler, path, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestProtobufProduce: v2 and v3 Protobuf bodies that cannot be encoded
// are refused with a 4xx naming the field (or the schema) and nothing
// produced; good ones are produced in Confluent's wire format and read
// back as Protobuf's JSON mapping with the defaults.
func TestProtobufProduce(t *testing.T) {
	p, adm, regURL := registryProxy(t)
	h := p.Handler()
	m, err := p.clusterMeta(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v3URL := "/v3/clusters/" + m.Cluster + "/topics/fz/records"
	schema, _ := json.Marshal(testProto)
	v2 := func(records string) string {
		return `{"value_schema":` + string(schema) + `,"records":[` + records + `]}`
	}
	v3 := func(data string) string {
		return `{"value":{"type":"PROTOBUF","schema":` + string(schema) + `,"data":` + data + `}}`
	}
	for _, tc := range []struct {
		what, path, body string
		status, code     int
		mention          []string
	}{
		{"unknown field", "/topics/fz", v2(`{"value":{"id":"a"}},{"value":{"nope":1}}`), 422, 42203, []string{"records[1].value.nope", `unknown field "nope"`}},
		{"wrong scalar", "/topics/fz", v2(`{"value":{"amount":"x"}}`), 422, 42203, []string{"records[0].value.amount"}},
		{"a list given a string", "/topics/fz", v2(`{"value":{"tags":"x"}}`), 422, 42203, []string{"records[0].value.tags"}},
		{"nested", "/topics/fz", v2(`{"value":{"line":{"qty":"many"}}}`), 422, 42203, []string{"records[0].value.line.qty"}},
		{"not an object", "/topics/fz", v2(`{"value":[1]}`), 422, 42203, []string{"records[0].value"}},
		{"invalid schema", "/topics/fz", `{"value_schema":"syntax = \"proto3\"; message M { strin x = 1; }","records":[{"value":{}}]}`, 422, 42205, []string{"Invalid schema", "strin"}},
		{"no message", "/topics/fz", `{"value_schema":"syntax = \"proto3\"; enum E { A = 0; }","records":[{"value":{}}]}`, 422, 42205, []string{"Invalid schema"}},
		{"key without a key schema", "/topics/fz", v2(`{"key":{"id":"k"},"value":{}}`), 422, 42201, nil},
		{"v3 unknown field", v3URL, v3(`{"line":{"nope":true}}`), 400, 400, []string{"value.data.line.nope"}},
		{"v3 invalid schema", v3URL, `{"value":{"type":"PROTOBUF","schema":"message {","data":{}}}`, 422, 42205, []string{"Invalid schema"}},
		{"v3 schema without type", v3URL, `{"value":{"schema":"message M {}","data":{}}}`, 400, 400, []string{"type"}},
		{"v3 unknown strategy", v3URL, `{"value":{"type":"PROTOBUF","subject_name_strategy":"NOPE","data":{}}}`, 400, 400, []string{"subject_name_strategy"}},
		{"v3 RECORD_NAME of a JSON Schema without a title", v3URL, `{"value":{"type":"JSONSCHEMA","subject_name_strategy":"RECORD_NAME","schema":"{\"type\":\"object\"}","data":{}}}`, 400, 400, []string{"no name"}},
		{"v3 subject and strategy", v3URL, `{"value":{"type":"PROTOBUF","subject":"s","subject_name_strategy":"RECORD_NAME","data":{}}}`, 400, 400, []string{"Only one of"}},
		{"v3 no such version", v3URL, `{"value":{"subject":"none","schema_version":3,"data":{}}}`, 400, 400, []string{"Schema does not exist for subject: none, version: 3"}},
		{"v3 no subject", v3URL, `{"value":{"subject":"none","data":{}}}`, 422, 40401, nil},
	} {
		ct := "application/vnd.kafka.protobuf.v2+json"
		if strings.HasPrefix(tc.path, "/v3") {
			ct = "application/json"
		}
		before := endOffsets(t, adm)
		rec := post(t, h, tc.path, ct, tc.body)
		var e Error
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d with error_code %d", tc.what, rec.Code, rec.Body, tc.status, tc.code)
			continue
		}
		for _, s := range tc.mention {
			if !strings.Contains(e.Message, s) {
				t.Errorf("%s: %q does not mention %q", tc.what, e.Message, s)
			}
		}
		if after := endOffsets(t, adm); after != before {
			t.Errorf("%s: refused, yet %d records were produced", tc.what, after-before)
		}
	}

	rec := post(t, h, "/topics/fz/partitions/1", "application/vnd.kafka.protobuf.v2+json",
		`{"key_schema":"syntax = \"proto3\"; message K { string k = 1; }",`+v2(`{"key":{"k":"x"},"value":{"id":"a","amount":"-3","tags":["x"],"line":{"sku":"s"},"counts":{"k":2},"unitPrice":1.5}},{"value":{"unit_price":2}}`)[1:])
	if rec.Code != 200 {
		t.Fatalf("produce: %d %s", rec.Code, rec.Body)
	}
	cl, err := sr.New(sr.Config{URLs: []string{regURL}})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := cl.Latest(context.Background(), "fz-value")
	if err != nil || latest.Type != "PROTOBUF" {
		t.Fatalf("fz-value: %+v %v", latest, err)
	}
	for i, want := range []string{
		`{"id":"a","amount":"-3","tags":["x"],"line":{"sku":"s","qty":0},"counts":{"k":2},"unitPrice":1.5}`,
		`{"id":"","amount":"0","tags":[],"counts":{},"unitPrice":2}`,
	} {
		r := fetchOne(t, p, 1, int64(i)).Value
		if !bytes.HasPrefix(r, append(sr.AppendHeader(nil, latest.ID), 0)) {
			t.Fatalf("record %d: %x does not start with magic, id %d, indexes [0]", i, r, latest.ID)
		}
		got, err := p.embedRecord(context.Background(), formatProtobuf, r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		var compacted bytes.Buffer
		_ = json.Compact(&compacted, got)
		if compacted.String() != want {
			t.Errorf("record %d as JSON: %s, want %s", i, compacted.String(), want)
		}
	}

	key, err := cl.Latest(context.Background(), "fz-key")
	if err != nil {
		t.Fatalf("fz-key: %v", err)
	}
	if k := fetchOne(t, p, 1, 0).Key; string(k) != string(append(sr.AppendHeader(nil, key.ID), 0, 0x0a, 1, 'x')) {
		t.Errorf("key %x: not magic, key schema id %d, indexes [0], K{k: x}", k, key.ID)
	}

	// A record of another format's schema, or not a message, is an error.
	if _, err := p.embedRecord(context.Background(), formatAvro, fetchOne(t, p, 1, 0).Value); err == nil || !strings.Contains(err.Error(), "PROTOBUF, not AVRO") {
		t.Errorf("a Protobuf record read as Avro: %v", err)
	}
	bad := append(sr.AppendHeader(nil, latest.ID), 0, 0xff)
	if _, err := p.embedRecord(context.Background(), formatProtobuf, bad); err == nil || !strings.Contains(err.Error(), "t.Order") {
		t.Errorf("a record that is not an Order: %v", err)
	}
	other := append(sr.AppendIndexes(sr.AppendHeader(nil, latest.ID), []int{1}), 8, 1)
	if got, err := p.embedRecord(context.Background(), formatProtobuf, other); err != nil || string(got) != `{"b":true}` {
		t.Errorf("an Other (indexes [1]): %s %v", got, err)
	}
}

// fetchOne reads the record at offset of partition part of fz.
func fetchOne(t testing.TB, p *Proxy, part int32, offset int64) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.cfg.Seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"fz": {part: kgo.NewOffset().At(offset)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("fz-%d at %d: %v", part, offset, err)
		}
		var out *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if out == nil && r.Offset == offset {
				out = r
			}
		})
		if out != nil {
			return out
		}
	}
}

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

const v2Protobuf = "application/vnd.kafka.protobuf.v2+json"

// testOrderProto has a second top-level message, so that the records'
// message indexes matter: the proxy writes the first ([0]); Other is [1].
const testOrderProto = `syntax = "proto3";
package shop;

message Order {
  string id = 1;
  int64 amount = 2;
  repeated string tags = 3;
  Status status = 4;
  Line line = 5;
  double unit_price = 6;
  enum Status {
    NEW = 0;
    PAID = 1;
  }
  message Line {
    string sku = 1;
    int32 qty = 2;
  }
}

message Other {
  string x = 1;
}
`

// orderBytes is the Protobuf encoding of an Order, written field by field
// with protowire (fields in number order, as a deterministic marshal
// writes them), independently of the proxy's dynamicpb.
func orderBytes(id string, amount int64, tags []string, status uint64, sku string, qty int32) []byte {
	var b []byte
	if id != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, id)
	}
	if amount != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(amount))
	}
	for _, t := range tags {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, t)
	}
	if status != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, status)
	}
	if sku != "" || qty != 0 {
		var line []byte
		if sku != "" {
			line = protowire.AppendTag(line, 1, protowire.BytesType)
			line = protowire.AppendString(line, sku)
		}
		if qty != 0 {
			line = protowire.AppendTag(line, 2, protowire.VarintType)
			line = protowire.AppendVarint(line, uint64(qty))
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, line)
	}
	return b
}

// TestRESTProxyProtobuf: records produced through the protobuf content
// type are Confluent's wire format (magic byte, the id the proxy
// registered under <topic>-value, message indexes [0], the Order message)
// byte for byte and decode with the registered schema; bad records (a
// field the message does not have, a value of the wrong type) and an
// invalid schema are refused with nothing produced; records a Kafka client
// wrote (of the first message and of the second) come back as JSON
// through a protobuf consumer instance.
func TestRESTProxyProtobuf(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	reg := harness.SchemaRegistry(t, b.Bootstrap(), "")
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{SchemaRegistryURL: reg})
	const topic = "pb-orders"
	schemaJSON, _ := json.Marshal(testOrderProto)
	schemaArg := `"value_schema":` + string(schemaJSON)

	unknown := curl(t, http.MethodPost, h+"/topics/"+topic, v2Protobuf, v2,
		`{`+schemaArg+`,"records":[{"value":{"id":"ok"}},{"value":{"id":"x","nope":1}}]}`)
	if unknown.status != 422 || jsonField(t, unknown.body, "error_code") != 42203.0 ||
		!strings.Contains(string(unknown.body), "records[1].value") || !strings.Contains(string(unknown.body), "nope") {
		t.Fatalf("a field Order does not have: %d %s", unknown.status, unknown.body)
	}
	wrongType := curl(t, http.MethodPost, h+"/topics/"+topic, v2Protobuf, v2,
		`{`+schemaArg+`,"records":[{"value":{"id":"ok","amount":"many"}}]}`)
	if wrongType.status != 422 || jsonField(t, wrongType.body, "error_code") != 42203.0 || !strings.Contains(string(wrongType.body), "amount") {
		t.Fatalf("a value of the wrong type: %d %s", wrongType.status, wrongType.body)
	}
	badSchema := curl(t, http.MethodPost, h+"/topics/"+topic, v2Protobuf, v2,
		`{"value_schema":"syntax = \"proto3\"; message M { strin x = 1; }","records":[{"value":{"x":"a"}}]}`)
	if badSchema.status != 422 || jsonField(t, badSchema.body, "error_code") != 42205.0 || !strings.Contains(string(badSchema.body), "strin") {
		t.Fatalf("an invalid schema: %d %s", badSchema.status, badSchema.body)
	}
	curl(t, http.MethodPost, h+"/topics/"+topic, v2Protobuf, v2, `{"records":[{"value":{"id":"x"}}]}`).
		expect(t, "no schema", 422, `{"error_code":42202,"message":"Request includes values but does not include value schema"}`)

	e := curl(t, http.MethodPost, h+"/topics/"+topic, v2Protobuf, v2,
		`{`+schemaArg+`,"records":[{"value":{"id":"o1","amount":"42","tags":["a","b"],"status":"PAID","line":{"sku":"s-9","qty":2}}},{"value":{"id":"o2","amount":7,"status":0}},{"value":null}]}`)
	e.expect(t, "produce", 200, `{"key_schema_id":null,"value_schema_id":"*","offsets":[{"partition":0,"offset":0,"error_code":null,"error":null},{"partition":0,"offset":1,"error_code":null,"error":null},{"partition":0,"offset":2,"error_code":null,"error":null}]}`)
	cl, err := sr.New(sr.Config{URLs: []string{reg}})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := cl.Latest(context.Background(), topic+"-value")
	if err != nil {
		t.Fatalf("the subject %s-value: %v", topic, err)
	}
	if latest.Type != "PROTOBUF" || jsonField(t, e.body, "value_schema_id") != float64(latest.ID) {
		t.Fatalf("registered %+v, the response's value_schema_id %v", latest, jsonField(t, e.body, "value_schema_id"))
	}
	// By id, the second time.
	curl(t, http.MethodPost, h+"/topics/"+topic+"/partitions/0", v2Protobuf, v2,
		fmt.Sprintf(`{"value_schema_id":%d,"records":[{"value":{"tags":["z"]}}]}`, latest.ID)).
		expect(t, "produce by id", 200, fmt.Sprintf(`{"key_schema_id":null,"value_schema_id":%d,"offsets":[{"partition":0,"offset":3,"error_code":null,"error":null}]}`, latest.ID))

	recs := consumeN(t, b.Bootstrap(), topic, 4)
	header := append(sr.AppendHeader(nil, latest.ID), 0)
	want := [][]byte{
		append(header, orderBytes("o1", 42, []string{"a", "b"}, 1, "s-9", 2)...),
		append(header, orderBytes("o2", 7, nil, 0, "", 0)...),
		nil,
		append(header, orderBytes("", 0, []string{"z"}, 0, "", 0)...),
	}
	fd, err := sr.CompileProtobuf("", latest.Schema.Schema, nil)
	if err != nil {
		t.Fatalf("the registered schema: %v", err)
	}
	for i, r := range recs {
		if string(r.Value) != string(want[i]) {
			t.Fatalf("record %d: %x\nwant       %x", i, r.Value, want[i])
		}
		if r.Value == nil {
			continue
		}
		m := dynamicpb.NewMessage(fd.Messages().ByName("Order"))
		if err := proto.Unmarshal(r.Value[6:], m); err != nil {
			t.Fatalf("record %d does not decode as shop.Order: %v", i, err)
		}
	}

	// Records a Kafka client wrote: an Order with every field at its
	// default, and an Other (message indexes [1]).
	other := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "hi")
	produceSync(t, b.Bootstrap(),
		&kgo.Record{Topic: topic, Value: append(sr.AppendHeader(nil, latest.ID), 0)},
		&kgo.Record{Topic: topic, Value: append(sr.AppendIndexes(sr.AppendHeader(nil, latest.ID), []int{1}), other...)})

	curl(t, http.MethodPost, h+"/consumers/pb-g", v2, "", `{"name":"i","format":"protobuf","auto.offset.reset":"earliest"}`).
		expect(t, "create protobuf consumer", 200, `{"instance_id":"i","base_uri":"*"}`)
	base := h + "/consumers/pb-g/instances/i"
	curl(t, http.MethodPost, base+"/subscription", v2, "", `{"topics":["`+topic+`"]}`).expect(t, "subscribe", 204, "")
	back := proxyRecords(t, base+"/records", v2Protobuf, 6)
	var got []string
	for _, r := range back {
		v, _ := json.Marshal(r["value"])
		got = append(got, string(v))
	}
	wantJSON := []string{
		`{"amount":"42","id":"o1","line":{"qty":2,"sku":"s-9"},"status":"PAID","tags":["a","b"],"unitPrice":0}`,
		`{"amount":"7","id":"o2","status":"NEW","tags":[],"unitPrice":0}`,
		`null`,
		`{"amount":"0","id":"","status":"NEW","tags":["z"],"unitPrice":0}`,
		`{"amount":"0","id":"","status":"NEW","tags":[],"unitPrice":0}`,
		`{"x":"hi"}`,
	}
	if strings.Join(got, "\n") != strings.Join(wantJSON, "\n") {
		t.Fatalf("consumed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantJSON, "\n"))
	}
	curl(t, http.MethodGet, base+"/records", "", v2Avro, "").
		expect(t, "records asked for in another format", 406, `{"error_code":40601,"message":"*"}`)
	curl(t, http.MethodDelete, base, v2, "", "").expect(t, "delete consumer", 204, "")

	// The Protobuf exchange of Confluent's REST Proxy quick start, as
	// written.
	curl(t, http.MethodPost, h+"/topics/protobuftest", v2Protobuf, v2,
		`{"value_schema": "syntax=\"proto3\"; message User { string name = 1; }", "records": [{"value": {"name": "testUser"}}]}`).
		expect(t, "quick start produce", 200, `{"offsets":[{"partition":0,"offset":0,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":"*"}`)
	curl(t, http.MethodPost, h+"/consumers/my_protobuf_consumer", v2Protobuf, "",
		`{"name": "my_consumer_instance", "format": "protobuf", "auto.offset.reset": "earliest"}`).
		expect(t, "quick start consumer", 200, `{"instance_id":"my_consumer_instance","base_uri":"*"}`)
	qs := h + "/consumers/my_protobuf_consumer/instances/my_consumer_instance"
	curl(t, http.MethodPost, qs+"/subscription", v2Protobuf, "", `{"topics":["protobuftest"]}`).expect(t, "quick start subscribe", 204, "")
	qsBack := proxyRecords(t, qs+"/records", v2Protobuf, 1)
	if v, _ := json.Marshal(qsBack); string(v) != `[{"key":null,"offset":0,"partition":0,"topic":"protobuftest","value":{"name":"testUser"}}]` {
		t.Fatalf("quick start records: %s", v)
	}
	curl(t, http.MethodDelete, qs, v2, "", "").expect(t, "quick start delete", 204, "")
}

// produceSync writes recs with a Kafka client and waits for the acks.
func produceSync(t *testing.T, bootstrap string, recs ...*kgo.Record) {
	t.Helper()
	cl := newClient(t, bootstrap)
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// TestRESTProxyV3Protobuf: v3 PROTOBUF payloads with the schema inline (its
// subject named by each subject_name_strategy), by schema_id, by
// schema_version, and by the subject's latest version, their reports
// carrying subject, schema_id and schema_version; bad data is a 400 with
// nothing produced; and a streamed request of PROTOBUF records gets one
// report per record, in order, every record in the topic.
func TestRESTProxyV3Protobuf(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	reg := harness.SchemaRegistry(t, b.Bootstrap(), "")
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{SchemaRegistryURL: reg})
	const topic = "pb3"
	createTopic(context.Background(), t, b.Bootstrap(), topic, 1, nil)
	url := h + "/v3/clusters/" + clusterID(t, h) + "/topics/" + topic + "/records"
	schemaJSON, _ := json.Marshal(testOrderProto)
	report := func(offset int, subject string, id, version any, size int) string {
		idJSON, _ := json.Marshal(id)
		verJSON, _ := json.Marshal(version)
		return fmt.Sprintf(`{"error_code":200,"cluster_id":"*","topic_name":"%s","partition_id":0,"offset":%d,"timestamp":"*","value":{"type":"PROTOBUF","subject":"%s","schema_id":%s,"schema_version":%s,"size":%d}}`,
			topic, offset, subject, idJSON, verJSON, size)
	}
	data := `"data":{"id":"a","amount":5}`
	size := 6 + len(orderBytes("a", 5, nil, 0, "", 0))

	first := curl(t, http.MethodPost, url, "application/json", "", `{"value":{"type":"PROTOBUF","schema":`+string(schemaJSON)+`,`+data+`}}`)
	first.expect(t, "inline schema", 200, report(0, topic+"-value", "*", 1, size))
	id := int(jsonField(t, first.body, "value", "schema_id").(float64))
	curl(t, http.MethodPost, url, "application/json", "", `{"value":{"type":"PROTOBUF",`+data+`}}`).
		expect(t, "the subject's latest", 200, report(1, topic+"-value", id, 1, size))
	curl(t, http.MethodPost, url, "application/json", "", fmt.Sprintf(`{"value":{"schema_id":%d,%s}}`, id, data)).
		expect(t, "schema_id, no type", 200, report(2, topic+"-value", id, 1, size))
	curl(t, http.MethodPost, url, "application/json", "", `{"value":{"schema_version":1,`+data+`}}`).
		expect(t, "schema_version", 200, report(3, topic+"-value", id, 1, size))
	curl(t, http.MethodPost, url, "application/json", "", `{"value":{"type":"PROTOBUF","subject_name_strategy":"RECORD_NAME","schema":`+string(schemaJSON)+`,`+data+`}}`).
		expect(t, "RECORD_NAME", 200, report(4, "shop.Order", id, 1, size))
	curl(t, http.MethodPost, url, "application/json", "", `{"value":{"type":"PROTOBUF","subject_name_strategy":"TOPIC_RECORD_NAME","schema":`+string(schemaJSON)+`,`+data+`}}`).
		expect(t, "TOPIC_RECORD_NAME", 200, report(5, topic+"-shop.Order", id, 1, size))
	curl(t, http.MethodPost, url, "application/json", "", `{"value":{"subject":"shop.Order","schema_version":1,`+data+`}}`).
		expect(t, "subject and schema_version", 200, report(6, "shop.Order", id, 1, size))

	for _, bad := range []struct{ what, body, mention string }{
		{"a field Order does not have", `{"value":{"type":"PROTOBUF","data":{"nope":1}}}`, "nope"},
		{"a value of the wrong type", `{"value":{"type":"PROTOBUF","data":{"tags":"x"}}}`, "tags"},
		{"an invalid schema", `{"value":{"type":"PROTOBUF","schema":"message {","data":{}}}`, "Invalid schema"},
		{"RECORD_NAME without a schema", `{"value":{"type":"PROTOBUF","subject_name_strategy":"RECORD_NAME","data":{}}}`, "RECORD_NAME"},
		{"schema_id and schema_version", fmt.Sprintf(`{"value":{"schema_id":%d,"schema_version":1,"data":{}}}`, id), "Only one of"},
	} {
		e := curl(t, http.MethodPost, url, "application/json", "", bad.body)
		if e.status < 400 || e.status >= 500 || !strings.Contains(string(e.body), bad.mention) {
			t.Fatalf("%s: %d %s", bad.what, e.status, e.body)
		}
	}

	// Streaming: one chunked request, the first record with the schema,
	// the others with the subject's latest.
	const n = 2000
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriter(pw)
		for i := range n {
			rec := `{"value":{"type":"PROTOBUF","data":{"id":"s` + strconv.Itoa(i) + `","amount":` + strconv.Itoa(i) + `}}}`
			if i == 0 {
				rec = `{"value":{"type":"PROTOBUF","schema":` + string(schemaJSON) + `,"data":{"id":"s0"}}}`
			}
			if _, err := bw.WriteString(rec); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != -1 {
		t.Fatalf("status %d, length %d; want a streamed 200", resp.StatusCode, resp.ContentLength)
	}
	dec := json.NewDecoder(resp.Body)
	const before = 7 // the records produced above
	for i := range n {
		var rep struct {
			ErrorCode int   `json:"error_code"`
			Offset    int64 `json:"offset"`
			Value     struct {
				Type     string `json:"type"`
				SchemaID int    `json:"schema_id"`
			} `json:"value"`
		}
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if rep.ErrorCode != 200 || rep.Offset != int64(before+i) || rep.Value.Type != "PROTOBUF" || rep.Value.SchemaID != id {
			t.Fatalf("report %d: %+v", i, rep)
		}
	}
	if err := dec.Decode(new(any)); err != io.EOF {
		t.Fatalf("after %d reports: %v, want the end", n, err)
	}
	recs := consumeN(t, b.Bootstrap(), topic, before+n)
	if len(recs) != before+n {
		t.Fatalf("%d records, want %d: the refused ones were produced", len(recs), before+n)
	}
	header := append(sr.AppendHeader(nil, id), 0)
	for i, r := range recs[before:] {
		want := append(header, orderBytes("s"+strconv.Itoa(i), int64(i), nil, 0, "", 0)...)
		if string(r.Value) != string(want) {
			t.Fatalf("streamed record %d at offset %d: %x, want %x", i, r.Offset, r.Value, want)
		}
	}
}

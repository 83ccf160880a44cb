package integration

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

const (
	v2Avro       = "application/vnd.kafka.avro.v2+json"
	v2JSONSchema = "application/vnd.kafka.jsonschema.v2+json"
)

// TestRESTProxyAvro: records produced through the proxy in the Avro format
// are in Confluent's wire format with the schema the proxy registered
// under <topic>-value (decoded field by field from the raw record), a
// record not matching the schema is refused with nothing produced, and an
// avro consumer instance reads the records back as JSON.
func TestRESTProxyAvro(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	reg := harness.SchemaRegistry(t, b.Bootstrap(), "")
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{SchemaRegistryURL: reg})
	const topic = "avro-users"
	schema := `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":["null","int"],"default":null},{"name":"tags","type":{"type":"array","items":"string"}}]}`
	schemaJSON, _ := json.Marshal(schema)

	bad := curl(t, http.MethodPost, h+"/topics/"+topic, v2Avro, v2,
		`{"value_schema":`+string(schemaJSON)+`,"records":[{"value":{"name":"ok","tags":[]}},{"value":{"name":7,"tags":[]}}]}`)
	if bad.status != 422 || jsonField(t, bad.body, "error_code") != 42203.0 {
		t.Fatalf("a record not matching the schema: %d %s", bad.status, bad.body)
	}
	curl(t, http.MethodPost, h+"/topics/"+topic, v2Avro, v2, `{"records":[{"value":{"name":"x","tags":[]}}]}`).
		expect(t, "no schema", 422, `{"error_code":42202,"message":"Request includes values but does not include value schema"}`)
	badSchema := curl(t, http.MethodPost, h+"/topics/"+topic, v2Avro, v2, `{"value_schema":"{\"type\":\"nope\"}","records":[{"value":1}]}`)
	if badSchema.status != 422 || jsonField(t, badSchema.body, "error_code") != 42205.0 {
		t.Fatalf("an invalid schema: %d %s", badSchema.status, badSchema.body)
	}

	e := curl(t, http.MethodPost, h+"/topics/"+topic, v2Avro, v2,
		`{"value_schema":`+string(schemaJSON)+`,"records":[{"value":{"name":"ann","age":{"int":41},"tags":["a","b"]}},{"value":{"name":"bob","age":null,"tags":[]}}]}`)
	if e.status != 200 {
		t.Fatalf("produce: %d %s", e.status, e.body)
	}
	cl, err := sr.New(sr.Config{URLs: []string{reg}})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := cl.Latest(context.Background(), topic+"-value")
	if err != nil {
		t.Fatalf("the subject %s-value: %v", topic, err)
	}
	if got := jsonField(t, e.body, "value_schema_id"); got != float64(latest.ID) {
		t.Fatalf("value_schema_id %v, registered id %d", got, latest.ID)
	}
	// By id, the second time.
	e2 := curl(t, http.MethodPost, h+"/topics/"+topic, v2Avro, v2,
		fmt.Sprintf(`{"value_schema_id":%d,"records":[{"value":{"name":"cy","tags":["z"]}}]}`, latest.ID))
	if e2.status != 200 {
		t.Fatalf("produce by id: %d %s", e2.status, e2.body)
	}

	// v3: the subject's latest schema, and a schema id.
	cluster := jsonField(t, curl(t, http.MethodGet, h+"/v3/clusters", "", "application/json", "").body, "data", "0", "cluster_id").(string)
	v3 := h + "/v3/clusters/" + cluster + "/topics/" + topic + "/records"
	curl(t, http.MethodPost, v3, "application/json", "", `{"value":{"type":"AVRO","data":{"name":"dee","age":{"int":7},"tags":[]}}}`).
		expect(t, "v3 produce avro", 200, fmt.Sprintf(`{"error_code":200,"cluster_id":"*","topic_name":"%s","partition_id":0,"offset":3,"timestamp":"*","value":{"type":"AVRO","subject":"%s-value","schema_id":%d,"schema_version":1,"size":12}}`, topic, topic, latest.ID))
	curl(t, http.MethodPost, v3, "application/json", "", fmt.Sprintf(`{"value":{"schema_id":%d,"type":"AVRO","data":{"name":"eve","tags":["q"]}}}`, latest.ID)).
		expect(t, "v3 produce avro by id", 200, `{"error_code":200,"cluster_id":"*","topic_name":"*","partition_id":0,"offset":4,"timestamp":"*","value":{"type":"AVRO","subject":"*","schema_id":"*","schema_version":1,"size":"*"}}`)
	v3bad := curl(t, http.MethodPost, v3, "application/json", "", `{"value":{"type":"AVRO","data":{"name":1}}}`)
	if v3bad.status != 400 {
		t.Fatalf("v3 produce of a bad record: %d %s", v3bad.status, v3bad.body)
	}

	recs := consumeN(t, b.Bootstrap(), topic, 5)
	if len(recs) != 5 {
		t.Fatalf("%d records in %s, want 3 (the refused request produced some)", len(recs), topic)
	}
	type user struct {
		Name string   `avro:"name"`
		Age  *int32   `avro:"age"`
		Tags []string `avro:"tags"`
	}
	s := avro.MustParse(latest.Schema.Schema)
	var got []string
	for _, r := range recs {
		if len(r.Value) < 5 || r.Value[0] != 0 || int(binary.BigEndian.Uint32(r.Value[1:5])) != latest.ID {
			t.Fatalf("record %x: not magic 0 + schema id %d", r.Value, latest.ID)
		}
		var u user
		if err := avro.Unmarshal(s, r.Value[5:], &u); err != nil {
			t.Fatalf("decode %x: %v", r.Value, err)
		}
		age := "null"
		if u.Age != nil {
			age = fmt.Sprint(*u.Age)
		}
		got = append(got, fmt.Sprintf("%s/%s/%s", u.Name, age, strings.Join(u.Tags, ",")))
	}
	if strings.Join(got, " ") != "ann/41/a,b bob/null/ cy/null/z dee/7/ eve/null/q" {
		t.Fatalf("records %v", got)
	}

	curl(t, http.MethodPost, h+"/consumers/avro-g", v2, "", `{"name":"i","format":"avro","auto.offset.reset":"earliest"}`).
		expect(t, "create avro consumer", 200, `{"instance_id":"i","base_uri":"*"}`)
	base := h + "/consumers/avro-g/instances/i"
	curl(t, http.MethodPost, base+"/subscription", v2, "", `{"topics":["`+topic+`"]}`).expect(t, "subscribe", 204, "")
	back := proxyRecords(t, base+"/records", v2Avro, 5)
	vals, _ := json.Marshal([]any{back[0]["value"], back[1]["value"], back[2]["value"], back[4]["value"]})
	want := `[{"age":{"int":41},"name":"ann","tags":["a","b"]},{"age":null,"name":"bob","tags":[]},{"age":null,"name":"cy","tags":["z"]},{"age":null,"name":"eve","tags":["q"]}]`
	if string(vals) != want {
		t.Fatalf("consumed %s\nwant     %s", vals, want)
	}
	curl(t, http.MethodDelete, base, v2, "", "").expect(t, "delete consumer", 204, "")
}

// TestRESTProxyJSONSchema: JSON Schema records carry the magic byte and
// the registered id before their JSON, and come back through a jsonschema
// consumer instance.
func TestRESTProxyJSONSchema(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	reg := harness.SchemaRegistry(t, b.Bootstrap(), "")
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{SchemaRegistryURL: reg})
	const topic = "js-users"
	bad := curl(t, http.MethodPost, h+"/topics/"+topic, v2JSONSchema, v2,
		`{"value_schema":"{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}","records":[{"value":{"n": 1}},{"value":{"n":"x"}}]}`)
	if bad.status != 422 || jsonField(t, bad.body, "error_code") != 42203.0 {
		t.Fatalf("a record not matching the schema: %d %s", bad.status, bad.body)
	}
	e := curl(t, http.MethodPost, h+"/topics/"+topic, v2JSONSchema, v2,
		`{"value_schema":"{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}","records":[{"value":{"n": 1}}]}`)
	if e.status != 200 {
		t.Fatalf("produce: %d %s", e.status, e.body)
	}
	id := int(jsonField(t, e.body, "value_schema_id").(float64))
	r := consumeN(t, b.Bootstrap(), topic, 1)[0]
	if r.Offset != 0 {
		t.Fatalf("the first record is at offset %d: the refused request produced some", r.Offset)
	}
	if want := append(sr.AppendHeader(nil, id), `{"n":1}`...); string(r.Value) != string(want) {
		t.Fatalf("record %q, want %q", r.Value, want)
	}
	curl(t, http.MethodPost, h+"/consumers/js-g", v2, "", `{"name":"i","format":"jsonschema","auto.offset.reset":"earliest"}`).
		expect(t, "create jsonschema consumer", 200, `{"instance_id":"i","base_uri":"*"}`)
	base := h + "/consumers/js-g/instances/i"
	curl(t, http.MethodPost, base+"/subscription", v2, "", `{"topics":["`+topic+`"]}`).expect(t, "subscribe", 204, "")
	back := proxyRecords(t, base+"/records", v2JSONSchema, 1)
	if fmt.Sprint(back[0]["value"]) != "map[n:1]" {
		t.Fatalf("consumed %v", back)
	}
}

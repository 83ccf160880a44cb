package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

const (
	v2       = "application/vnd.kafka.v2+json"
	v2JSON   = "application/vnd.kafka.json.v2+json"
	v2Binary = "application/vnd.kafka.binary.v2+json"
)

// TestRESTProxyDocsExamples runs the curl exchanges of Confluent REST
// Proxy's documentation (the v2 quick start, the API reference's
// examples and error answers, the v3 examples) against the bundled broker:
// the same content types, status codes and JSON shapes. The one change:
// replication_factor 1 where the docs create a topic with 3 (one broker).
func TestRESTProxyDocsExamples(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	host := strings.TrimPrefix(h, "http://")

	t.Run("v2 quick start json", func(t *testing.T) {
		curl(t, "POST", h+"/topics/jsontest", v2JSON, v2, `{"records":[{"value":{"foo":"bar"}}]}`).
			expect(t, "produce", 200, `{"offsets":[{"partition":0,"offset":0,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":null}`)
		curl(t, "POST", h+"/consumers/my_json_consumer", v2, "", `{"name": "my_consumer_instance", "format": "json", "auto.offset.reset": "earliest"}`).
			expect(t, "create consumer", 200, `{"instance_id":"my_consumer_instance","base_uri":"http://`+host+`/consumers/my_json_consumer/instances/my_consumer_instance"}`)
		base := h + "/consumers/my_json_consumer/instances/my_consumer_instance"
		curl(t, "POST", base+"/subscription", v2, "", `{"topics":["jsontest"]}`).expect(t, "subscribe", 204, "")
		recs := proxyRecords(t, base+"/records", v2JSON, 1)
		if fmt.Sprint(recs) != fmt.Sprint([]map[string]any{{"key": nil, "value": map[string]any{"foo": "bar"}, "partition": 0.0, "offset": 0.0, "topic": "jsontest"}}) {
			t.Fatalf("records: %v", recs)
		}
		curl(t, "GET", base+"/subscription", "", v2, "").expect(t, "subscription", 200, `{"topics":["jsontest"]}`)
		curl(t, "GET", base+"/assignments", "", v2, "").expect(t, "assignments", 200, `{"partitions":[{"topic":"jsontest","partition":0}]}`)
		curl(t, "GET", base+"/records", "", v2Binary, "").
			expect(t, "wrong format", 406, `{"error_code":40601,"message":"The requested embedded data format does not match the deserializer for this consumer instance"}`)
		curl(t, "POST", base+"/offsets", v2, "", "").expect(t, "commit", 200, "")
		curl(t, "GET", base+"/offsets", v2, v2, `{"partitions":[{"topic":"jsontest","partition":0}]}`).
			expect(t, "committed", 200, `{"offsets":[{"topic":"jsontest","partition":0,"offset":1,"metadata":"*"}]}`)
		curl(t, "DELETE", base, v2, "", "").expect(t, "delete consumer", 204, "")
		curl(t, "GET", base+"/records", "", v2JSON, "").
			expect(t, "deleted consumer", 404, `{"error_code":40403,"message":"Consumer instance not found."}`)
	})

	t.Run("v2 quick start binary", func(t *testing.T) {
		curl(t, "POST", h+"/topics/binarytest", v2Binary, v2, `{"records":[{"value":"S2Fma2E="}]}`).
			expect(t, "produce", 200, `{"offsets":[{"partition":0,"offset":0,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":null}`)
		curl(t, "POST", h+"/consumers/my_binary_consumer", v2, "", `{"name": "my_consumer_instance", "format": "binary", "auto.offset.reset": "earliest"}`).
			expect(t, "create consumer", 200, `{"instance_id":"my_consumer_instance","base_uri":"http://`+host+`/consumers/my_binary_consumer/instances/my_consumer_instance"}`)
		base := h + "/consumers/my_binary_consumer/instances/my_consumer_instance"
		curl(t, "POST", base+"/subscription", v2, "", `{"topics":["binarytest"]}`).expect(t, "subscribe", 204, "")
		recs := proxyRecords(t, base+"/records", v2Binary, 1)
		if fmt.Sprint(recs) != fmt.Sprint([]map[string]any{{"key": nil, "value": "S2Fma2E=", "partition": 0.0, "offset": 0.0, "topic": "binarytest"}}) {
			t.Fatalf("records: %v", recs)
		}
		curl(t, "DELETE", base, v2, "", "").expect(t, "delete consumer", 204, "")
	})

	t.Run("v2 reference", func(t *testing.T) {
		ctx := context.Background()
		createTopic(ctx, t, b.Bootstrap(), "test", 2, map[string]*string{"retention.ms": kadm.StringPtr("86400000")})
		curl(t, "POST", h+"/topics/test", v2Binary, v2, `{"records":[{"key":"a2V5","value":"Y29uZmx1ZW50"},{"value":"a2Fma2E=","partition":1},{"value":"bG9ncw=="}]}`).
			expect(t, "produce", 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[{"partition":"*","offset":"*","error_code":null,"error":null},{"partition":1,"offset":"*","error_code":null,"error":null},{"partition":"*","offset":"*","error_code":null,"error":null}]}`)
		curl(t, "POST", h+"/topics/test/partitions/1", v2JSON, v2, `{"records":[{"key":"somekey","value":{"foo":"bar"}},{"value":53.5}]}`).
			expect(t, "produce to a partition", 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[{"partition":1,"offset":"*","error_code":null,"error":null},{"partition":1,"offset":"*","error_code":null,"error":null}]}`)
		e := curl(t, "GET", h+"/topics", "", v2, "")
		if e.status != 200 || !bytes.Contains(e.body, []byte(`"test"`)) {
			t.Fatalf("topics: %d %s", e.status, e.body)
		}
		e = curl(t, "GET", h+"/topics/test", "", v2, "")
		e.expect(t, "topic", 200, `{"name":"test","configs":"*","partitions":[{"partition":0,"leader":1,"replicas":[{"broker":1,"leader":true,"in_sync":true}]},{"partition":1,"leader":1,"replicas":[{"broker":1,"leader":true,"in_sync":true}]}]}`)
		if jsonField(t, e.body, "configs", "retention.ms") != "86400000" {
			t.Fatalf("topic configs: %s", e.body)
		}
		curl(t, "GET", h+"/topics/test/partitions", "", v2, "").
			expect(t, "partitions", 200, `[{"partition":0,"leader":1,"replicas":[{"broker":1,"leader":true,"in_sync":true}]},{"partition":1,"leader":1,"replicas":[{"broker":1,"leader":true,"in_sync":true}]}]`)
		curl(t, "GET", h+"/topics/test/partitions/1", "", v2, "").
			expect(t, "partition", 200, `{"partition":1,"leader":1,"replicas":[{"broker":1,"leader":true,"in_sync":true}]}`)
		curl(t, "GET", h+"/topics/test/partitions/1/offsets", "", v2, "").expect(t, "offsets", 200, `{"beginning_offset":0,"end_offset":"*"}`)
		curl(t, "GET", h+"/brokers", "", v2, "").expect(t, "brokers", 200, `{"brokers":[1]}`)

		// Errors.
		curl(t, "GET", h+"/topics/nosuchtopic", "", v2, "").expect(t, "unknown topic", 404, `{"error_code":40401,"message":"Topic not found."}`)
		curl(t, "GET", h+"/topics/test/partitions/7", "", v2, "").expect(t, "unknown partition", 404, `{"error_code":40402,"message":"Partition not found."}`)
		curl(t, "POST", h+"/topics/test/partitions/7", v2JSON, v2, `{"records":[{"value":1}]}`).expect(t, "produce to an unknown partition", 404, `{"error_code":40402,"message":"Partition not found."}`)
		curl(t, "POST", h+"/topics/test", v2+"x", v2, `{"records":[{"value":1}]}`).expect(t, "bad content type", 415, `{"error_code":415,"message":"*"}`)
		curl(t, "POST", h+"/topics/test", "application/vnd.kafka.avro.v2+json", v2, `{"value_schema":"{\"type\":\"int\"}","records":[{"value":1}]}`).
			expect(t, "avro without a registry", 422, `{"error_code":42206,"message":"Payload error. Schema Registry must be configured when using schemas."}`)
		curl(t, "POST", h+"/topics/test", v2Binary, v2, `{"records":[{"value":"a2Fma2E="},{"value":"not base64!"}]}`).
			expect(t, "bad base64", 422, `{"error_code":42203,"message":"*"}`)
		curl(t, "POST", h+"/topics/test", v2JSON, v2, `{"records":[{"value":1}`).expect(t, "bad JSON", 400, `{"error_code":400,"message":"*"}`)
		// Nothing of the refused bodies reached the topic.
		curl(t, "GET", h+"/topics/test/partitions/0/offsets", "", v2, "").expect(t, "offsets after bad bodies", 200, `{"beginning_offset":0,"end_offset":"*"}`)
		ends, err := newAdmin(t, b.Bootstrap()).ListEndOffsets(ctx, "test")
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
		if total != 5 {
			t.Fatalf("topic test has %d records, want the 5 accepted", total)
		}

		curl(t, "POST", h+"/consumers/testgroup", v2, v2, `{"name":"my_consumer","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).
			expect(t, "create", 200, `{"instance_id":"my_consumer","base_uri":"http://`+host+`/consumers/testgroup/instances/my_consumer"}`)
		curl(t, "POST", h+"/consumers/testgroup", v2, v2, `{"name":"my_consumer","format":"binary"}`).
			expect(t, "create twice", 409, `{"error_code":40902,"message":"Consumer with specified consumer ID already exists in the specified consumer group."}`)
		curl(t, "POST", h+"/consumers/testgroup", v2, v2, `{"name":"other","format":"avro"}`).
			expect(t, "avro consumer", 422, `{"error_code":42206,"message":"*"}`)
		base := h + "/consumers/testgroup/instances/my_consumer"
		curl(t, "POST", base+"/assignments", v2, "", `{"partitions":[{"topic":"test","partition":0},{"topic":"test","partition":1}]}`).expect(t, "assign", 204, "")
		curl(t, "GET", base+"/assignments", "", v2, "").expect(t, "assignments", 200, `{"partitions":[{"topic":"test","partition":0},{"topic":"test","partition":1}]}`)
		curl(t, "POST", base+"/subscription", v2, "", `{"topics":["test"]}`).expect(t, "subscribe while assigned", 409, `{"error_code":40903,"message":"*"}`)
		curl(t, "POST", base+"/positions", v2, "", `{"offsets":[{"topic":"test","partition":1,"offset":2}]}`).expect(t, "seek", 204, "")
		curl(t, "POST", base+"/positions/beginning", v2, "", `{"partitions":[{"topic":"test","partition":0}]}`).expect(t, "seek to beginning", 204, "")
		curl(t, "POST", base+"/positions/end", v2, "", `{"partitions":[{"topic":"test","partition":0}]}`).expect(t, "seek to end", 204, "")
		recs := proxyRecords(t, base+"/records?timeout=3000&max_bytes=300000", v2Binary, 2)
		for _, r := range recs {
			if r["partition"] != 1.0 || r["offset"].(float64) < 2 {
				t.Fatalf("after seeking partition 1 to 2 and 0 to its end, got %v", r)
			}
		}
		curl(t, "POST", base+"/offsets", v2, "", `{"offsets":[{"topic":"test","partition":1,"offset":3}]}`).expect(t, "commit given", 200, "")
		curl(t, "GET", base+"/offsets", v2, v2, `{"partitions":[{"topic":"test","partition":1}]}`).
			expect(t, "committed", 200, `{"offsets":[{"topic":"test","partition":1,"offset":3,"metadata":"*"}]}`)
		curl(t, "POST", base+"/positions", v2, "", `{"offsets":[{"topic":"test","partition":9,"offset":2}]}`).expect(t, "seek unassigned", 409, `{"error_code":40903,"message":"*"}`)
		curl(t, "POST", base+"/positions", v2, "", `{"offsets":[{"topic":"test","partition":1}`).expect(t, "bad seek body", 400, `{"error_code":400,"message":"*"}`)
		curl(t, "DELETE", base, v2, "", "").expect(t, "delete", 204, "")
		curl(t, "DELETE", base, v2, "", "").expect(t, "delete again", 404, `{"error_code":40403,"message":"Consumer instance not found."}`)
	})

	t.Run("v3", func(t *testing.T) {
		e := curl(t, "GET", h+"/v3/clusters", "", "", "")
		id, _ := jsonField(t, e.body, "data", "0", "cluster_id").(string)
		c := h + "/v3/clusters/" + id
		link := func(p string) string { return `{"related":"` + c + p + `"}` }
		cluster := `{"kind":"KafkaCluster","metadata":{"self":"` + c + `","resource_name":"crn:///kafka=` + id + `"},"cluster_id":"` + id + `",` +
			`"controller":` + link("/brokers/1") + `,"acls":` + link("/acls") + `,"brokers":` + link("/brokers") + `,"broker_configs":` + link("/broker-configs") +
			`,"consumer_groups":` + link("/consumer-groups") + `,"topics":` + link("/topics") + `,"partition_reassignments":` + link("/topics/-/partitions/-/reassignment") + `}`
		e.expect(t, "clusters", 200, `{"kind":"KafkaClusterList","metadata":{"self":"`+h+`/v3/clusters","next":null},"data":[`+cluster+`]}`)
		curl(t, "GET", c, "", "", "").expect(t, "cluster", 200, cluster)
		curl(t, "GET", h+"/v3/clusters/nope", "", "", "").expect(t, "unknown cluster", 404, `{"error_code":404,"message":"Cluster nope cannot be found."}`)
		curl(t, "GET", c+"/brokers", "", "", "").expect(t, "brokers", 200, `{"kind":"KafkaBrokerList","metadata":{"self":"`+c+`/brokers","next":null},"data":[{"kind":"KafkaBroker","metadata":{"self":"`+c+`/brokers/1","resource_name":"crn:///kafka=`+id+`/broker=1"},"cluster_id":"`+id+`","broker_id":1,"host":"127.0.0.1","port":"*","rack":null,"configs":`+link("/brokers/1/configs")+`,"partition_replicas":`+link("/brokers/1/partition-replicas")+`}]}`)

		topic := func(name string, parts int) string {
			return `{"kind":"KafkaTopic","metadata":{"self":"` + c + `/topics/` + name + `","resource_name":"crn:///kafka=` + id + `/topic=` + name + `"},"cluster_id":"` + id + `","topic_name":"` + name + `","is_internal":false,"replication_factor":1,"partitions_count":` + fmt.Sprint(parts) +
				`,"partitions":` + link("/topics/"+name+"/partitions") + `,"configs":` + link("/topics/"+name+"/configs") + `,"partition_reassignments":` + link("/topics/"+name+"/partitions/-/reassignment") + `,"authorized_operations":[]}`
		}
		curl(t, "POST", c+"/topics", "application/json", "", `{"topic_name":"topic-X","partitions_count":64,"replication_factor":1,"configs":[{"name":"cleanup.policy","value":"compact"},{"name":"compression.type","value":"gzip"}]}`).
			expect(t, "create topic", 201, topic("topic-X", 64))
		curl(t, "POST", c+"/topics", "application/json", "", `{"topic_name":"topic-X","partitions_count":64,"replication_factor":1}`).
			expect(t, "create it again", 400, `{"error_code":40002,"message":"Topic 'topic-X' already exists."}`)
		curl(t, "POST", c+"/topics", "application/json", "", `{"partitions_count":1}`).expect(t, "create without a name", 400, `{"error_code":400,"message":"*"}`)
		curl(t, "GET", c+"/topics/topic-X", "", "", "").expect(t, "topic", 200, topic("topic-X", 64))
		curl(t, "GET", c+"/topics/nope", "", "", "").expect(t, "unknown topic", 404, `{"error_code":404,"message":"This server does not host this topic-partition."}`)
		cfg := func(name, value, source string, def bool) string {
			return `{"kind":"KafkaTopicConfig","metadata":{"self":"` + c + `/topics/topic-X/configs/` + name + `","resource_name":"crn:///kafka=` + id + `/topic=topic-X/config=` + name + `"},"cluster_id":"` + id + `","topic_name":"topic-X","name":"` + name + `","value":"` + value +
				`","is_default":` + fmt.Sprint(def) + `,"is_read_only":false,"is_sensitive":false,"source":"` + source + `","synonyms":"*"}`
		}
		curl(t, "GET", c+"/topics/topic-X/configs/cleanup.policy", "", "", "").expect(t, "config", 200, cfg("cleanup.policy", "compact", "DYNAMIC_TOPIC_CONFIG", false))
		curl(t, "PUT", c+"/topics/topic-X/configs/cleanup.policy", "application/json", "", `{"value":"delete"}`).expect(t, "set config", 204, "")
		curl(t, "GET", c+"/topics/topic-X/configs/cleanup.policy", "", "", "").expect(t, "config set", 200, cfg("cleanup.policy", "delete", "DYNAMIC_TOPIC_CONFIG", false))
		curl(t, "POST", c+"/topics/topic-X/configs:alter", "application/json", "", `{"data":[{"name":"cleanup.policy","operation":"DELETE"},{"name":"compression.type","value":"producer"}]}`).expect(t, "alter configs", 204, "")
		curl(t, "GET", c+"/topics/topic-X/configs/compression.type", "", "", "").expect(t, "config altered", 200, cfg("compression.type", "producer", "DYNAMIC_TOPIC_CONFIG", false))
		e = curl(t, "GET", c+"/topics/topic-X/configs/cleanup.policy", "", "", "")
		if e.status != 200 || jsonField(t, e.body, "source") == "DYNAMIC_TOPIC_CONFIG" {
			t.Fatalf("cleanup.policy not reset: %s", e.body)
		}
		curl(t, "PUT", c+"/topics/topic-X/configs/no.such.config", "application/json", "", `{"value":"x"}`).expect(t, "unknown config", 404, `{"error_code":404,"message":"*"}`)
		e = curl(t, "GET", c+"/topics/topic-X/configs", "", "", "")
		if e.status != 200 || jsonField(t, e.body, "kind") != "KafkaTopicConfigList" {
			t.Fatalf("configs: %d %s", e.status, e.body)
		}
		curl(t, "GET", c+"/topics/topic-X/partitions/3", "", "", "").expect(t, "partition", 200, `{"kind":"KafkaPartition","metadata":{"self":"`+c+`/topics/topic-X/partitions/3","resource_name":"crn:///kafka=`+id+`/topic=topic-X/partition=3"},"cluster_id":"`+id+`","topic_name":"topic-X","partition_id":3,"leader":`+link("/topics/topic-X/partitions/3/replicas/1")+`,"replicas":`+link("/topics/topic-X/partitions/3/replicas")+`,"reassignment":`+link("/topics/topic-X/partitions/3/reassignment")+`}`)

		curl(t, "POST", c+"/topics/topic-X/records", "application/json", "", `{"partition_id":3,"headers":[{"name":"Header-1","value":"SGVhZGVyLTE="}],"key":{"type":"BINARY","data":"Zm9vYmFy"},"value":{"type":"JSON","data":{"foo":"bar"}},"timestamp":"2021-02-05T19:14:42Z"}`).
			expect(t, "produce", 200, `{"error_code":200,"cluster_id":"`+id+`","topic_name":"topic-X","partition_id":3,"offset":0,"timestamp":"2021-02-05T19:14:42.000Z","key":{"type":"BINARY","size":6},"value":{"type":"JSON","size":13}}`)
		curl(t, "POST", c+"/topics/topic-X/records", "application/json", "", `{"value":{"type":"AVRO","data":1}}`).
			expect(t, "produce avro", 422, `{"error_code":42206,"message":"Payload error. Schema Registry must be configured when using schemas."}`)
		curl(t, "POST", c+"/topics/topic-X/records", "application/json", "", `{"value":{"type":"BINARY","data":"?"}}`).expect(t, "bad base64", 400, `{"error_code":400,"message":"*"}`)
		curl(t, "POST", c+"/topics/nope/records", "application/json", "", `{"value":{"type":"STRING","data":"x"}}`).expect(t, "unknown topic", 404, `{"error_code":404,"message":"*"}`)
		// Several records in one body: one report each, a bad one refused
		// alone, and a body that stops parsing ends the stream.
		e = curl(t, "POST", c+"/topics/topic-X/records", "application/json", "",
			`{"partition_id":5,"value":{"type":"STRING","data":"a"}} {"partition_id":"x"} {"partition_id":5,"value":{"type":"BINARY","data":"!"}} {"partition_id":5,"value":{"type":"STRING","data":"b"}} {"value":`)
		lines := strings.Split(strings.TrimSpace(string(e.body)), "\n")
		if e.status != 200 || len(lines) != 5 {
			t.Fatalf("stream of 5: %d %s", e.status, e.body)
		}
		for i, want := range []string{`{"error_code":200,"cluster_id":"` + id + `","topic_name":"topic-X","partition_id":5,"offset":0,`, `{"error_code":422,`, `{"error_code":400,`, `{"error_code":200,"cluster_id":"` + id + `","topic_name":"topic-X","partition_id":5,"offset":1,`, `{"error_code":400,"message":"Error processing JSON`} {
			if !strings.HasPrefix(lines[i], want) {
				t.Fatalf("report %d: %s, want %s…", i, lines[i], want)
			}
		}
		got := consumeRecords(context.Background(), t, b.Bootstrap(), "topic-X", 3)
		slices.SortFunc(got, func(a, b *kgo.Record) int { return int(a.Partition - b.Partition) })
		if r := got[0]; string(r.Key) != "foobar" || string(r.Value) != `{"foo":"bar"}` || r.Partition != 3 || len(r.Headers) != 1 || string(r.Headers[0].Value) != "Header-1" || r.Timestamp.Unix() != 1612552482 {
			t.Fatalf("record read back: %+v", r)
		}

		// Consumer groups and lag, from a franz-go group member.
		createTopic(context.Background(), t, b.Bootstrap(), "lagged", 1, nil)
		cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic("lagged"))
		for i := range 10 {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := newAdmin(t, b.Bootstrap()).CommitAllOffsets(context.Background(), "lag-group", kadm.Offsets{"lagged": {0: {Topic: "lagged", Partition: 0, At: 4, LeaderEpoch: -1}}}); err != nil {
			t.Fatal(err)
		}
		group := `{"kind":"KafkaConsumerGroup","metadata":{"self":"` + c + `/consumer-groups/lag-group","resource_name":"crn:///kafka=` + id + `/consumer-group=lag-group"},"cluster_id":"` + id + `","consumer_group_id":"lag-group","is_simple":true,"partition_assignor":"","state":"EMPTY","coordinator":` + link("/brokers/1") + `,"consumers":` + link("/consumer-groups/lag-group/consumers") + `,"lag_summary":` + link("/consumer-groups/lag-group/lag-summary") + `}`
		curl(t, "GET", c+"/consumer-groups/lag-group", "", "", "").expect(t, "group", 200, group)
		curl(t, "GET", c+"/consumer-groups/lag-group/consumers", "", "", "").expect(t, "consumers", 200, `{"kind":"KafkaConsumerList","metadata":{"self":"`+c+`/consumer-groups/lag-group/consumers","next":null},"data":[]}`)
		curl(t, "GET", c+"/consumer-groups/lag-group/lags", "", "", "").expect(t, "lags", 200, `{"kind":"KafkaConsumerLagList","metadata":{"self":"`+c+`/consumer-groups/lag-group/lags","next":null},"data":[{"kind":"KafkaConsumerLag","metadata":"*","cluster_id":"`+id+`","consumer_group_id":"lag-group","topic_name":"lagged","partition_id":0,"current_offset":4,"log_end_offset":10,"lag":6,"consumer_id":"","instance_id":null,"client_id":""}]}`)
		curl(t, "GET", c+"/consumer-groups/lag-group/lag-summary", "", "", "").expect(t, "lag summary", 200, `{"kind":"KafkaConsumerGroupLagSummary","metadata":"*","cluster_id":"`+id+`","consumer_group_id":"lag-group","max_lag_consumer_id":"","max_lag_instance_id":null,"max_lag_client_id":"","max_lag_topic_name":"lagged","max_lag_partition_id":0,"max_lag":6,"total_lag":6,"max_lag_consumer":"*","max_lag_partition":`+link("/topics/lagged/partitions/0")+`}`)
		curl(t, "GET", c+"/consumer-groups/nogroup", "", "", "").expect(t, "unknown group", 404, `{"error_code":404,"message":"*"}`)

		curl(t, "DELETE", c+"/topics/topic-X", "", "", "").expect(t, "delete topic", 204, "")
		curl(t, "DELETE", c+"/topics/topic-X", "", "", "").expect(t, "delete it again", 404, `{"error_code":404,"message":"This server does not host this topic-partition."}`)
	})
}

// TestRESTProxyV2RoundTrip: a record produced through each v2 content type
// is read back byte for byte by franz-go, records produced by franz-go are
// read back through a v2 consumer instance byte for byte, and the offsets
// the instance commits are the group's committed offsets for Kafka clients.
func TestRESTProxyV2RoundTrip(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	ctx := context.Background()
	createTopic(ctx, t, b.Bootstrap(), "rt", 1, nil)

	rnd := rand.New(rand.NewPCG(1, 2))
	bin := make([]byte, 300)
	for i := range bin {
		bin[i] = byte(rnd.UintN(256))
	}
	curl(t, "POST", h+"/topics/rt", v2Binary, v2, `{"records":[{"key":"`+base64.StdEncoding.EncodeToString(bin[:7])+`","value":"`+base64.StdEncoding.EncodeToString(bin)+`"}]}`).
		expect(t, "binary", 200, `{"offsets":[{"partition":0,"offset":0,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":null}`)
	curl(t, "POST", h+"/topics/rt", v2JSON, v2, `{"records":[{"key":{"id":7},"value":{"name":"Ünïcode \u2603","n":[1,2.5,null,true]}}]}`).
		expect(t, "json", 200, `{"offsets":[{"partition":0,"offset":1,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":null}`)
	got := consumeRecords(ctx, t, b.Bootstrap(), "rt", 2)
	if !bytes.Equal(got[0].Key, bin[:7]) || !bytes.Equal(got[0].Value, bin) {
		t.Fatalf("binary record read back differs: %x / %x", got[0].Key, got[0].Value)
	}
	if string(got[1].Key) != `{"id":7}` || string(got[1].Value) != `{"name":"Ünïcode \u2603","n":[1,2.5,null,true]}` {
		t.Fatalf("json record read back: %s / %s", got[1].Key, got[1].Value)
	}

	// franz-go produces; a v2 binary instance reads the same bytes.
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic("rt"))
	var sent [][]byte
	for i := range 20 {
		v := make([]byte, 1+rnd.IntN(2000))
		for j := range v {
			v[j] = byte(rnd.UintN(256))
		}
		sent = append(sent, v)
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	curl(t, "POST", h+"/consumers/rtgroup", v2, v2, `{"name":"c","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).expect(t, "create", 200, `{"instance_id":"c","base_uri":"*"}`)
	base := h + "/consumers/rtgroup/instances/c"
	curl(t, "POST", base+"/subscription", v2, "", `{"topic_pattern":"r.*"}`).expect(t, "subscribe", 204, "")
	// Small max_bytes: several GETs, each returning what it can.
	recs := proxyRecords(t, base+"/records?max_bytes=4000", v2Binary, 22)
	if len(recs) != 22 {
		t.Fatalf("got %d records, want 22", len(recs))
	}
	for i, r := range recs[2:] {
		v, err := base64.StdEncoding.DecodeString(r["value"].(string))
		if err != nil || !bytes.Equal(v, sent[i]) || r["offset"] != float64(i+2) {
			t.Fatalf("record %d read through the proxy differs: %v", i, r)
		}
	}
	// Nothing committed yet (auto commit off); commit what was returned.
	adm := newAdmin(t, b.Bootstrap())
	if os, err := adm.FetchOffsets(ctx, "rtgroup"); err != nil || len(os) != 0 && func() bool { o, ok := os.Lookup("rt", 0); return ok && o.At >= 0 }() {
		t.Fatalf("offsets committed before any commit: %v %v", os, err)
	}
	curl(t, "POST", base+"/offsets", v2, "", "").expect(t, "commit", 200, "")
	os, err := adm.FetchOffsets(ctx, "rtgroup")
	if o, ok := os.Lookup("rt", 0); err != nil || !ok || o.At != 22 {
		t.Fatalf("the group's committed offset for Kafka clients: %+v %v, want 22", o, err)
	}
	// v3 sees the instance as the group's consumer, its assignment and no lag.
	c := h + "/v3/clusters/" + clusterID(t, h) + "/consumer-groups/rtgroup"
	e := curl(t, "GET", c+"/consumers", "", "", "")
	member, _ := jsonField(t, e.body, "data", "0", "consumer_id").(string)
	if e.status != 200 || jsonField(t, e.body, "data", "0", "client_id") != "kafka-rest-c" || member == "" {
		t.Fatalf("v3 consumers: %d %s", e.status, e.body)
	}
	e = curl(t, "GET", c+"/consumers/"+member+"/assignments", "", "", "")
	if e.status != 200 || jsonField(t, e.body, "data", "0", "topic_name") != "rt" || jsonField(t, e.body, "data", "0", "kind") != "KafkaConsumerAssignment" {
		t.Fatalf("v3 assignments: %d %s", e.status, e.body)
	}
	e = curl(t, "GET", c+"/lag-summary", "", "", "")
	if e.status != 200 || jsonField(t, e.body, "total_lag") != 0.0 || jsonField(t, e.body, "max_lag_consumer_id") != member {
		t.Fatalf("v3 lag summary: %d %s", e.status, e.body)
	}
	curl(t, "DELETE", base, v2, "", "").expect(t, "delete", 204, "")

	// A Kafka client of the same group starts where the proxy committed.
	cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")})
	gc := newClient(t, b.Bootstrap(), kgo.ConsumerGroup("rtgroup"), kgo.ConsumeTopics("rt"))
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fs := gc.PollFetches(pctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	first := fs.Records()[0]
	if first.Offset != 22 || string(first.Value) != "after" {
		t.Fatalf("a Kafka consumer of the group starts at %d (%q), want 22", first.Offset, first.Value)
	}
}

// TestRESTProxyInstanceExpiry: a consumer instance unused for longer than
// consumer.instance.timeout.ms is closed and its group left.
func TestRESTProxyInstanceExpiry(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{InstanceTimeout: time.Second})
	createTopic(context.Background(), t, b.Bootstrap(), "exp", 1, nil)
	curl(t, "POST", h+"/consumers/expgroup", v2, v2, `{"name":"c"}`).expect(t, "create", 200, `{"instance_id":"c","base_uri":"*"}`)
	base := h + "/consumers/expgroup/instances/c"
	curl(t, "POST", base+"/subscription", v2, "", `{"topics":["exp"]}`).expect(t, "subscribe", 204, "")
	curl(t, "GET", base+"/records?timeout=500", "", v2Binary, "").expect(t, "records", 200, `[]`)
	time.Sleep(800 * time.Millisecond)
	curl(t, "GET", base+"/subscription", "", v2, "").expect(t, "used again in time", 200, `{"topics":["exp"]}`)
	time.Sleep(2500 * time.Millisecond)
	curl(t, "GET", base+"/subscription", "", v2, "").expect(t, "expired", 404, `{"error_code":40403,"message":"Consumer instance not found."}`)
	dg, err := newAdmin(t, b.Bootstrap()).DescribeGroups(context.Background(), "expgroup")
	if err != nil {
		t.Fatal(err)
	}
	if g := dg["expgroup"]; len(g.Members) != 0 {
		t.Fatalf("the expired instance is still a member of its group: %+v", g.Members)
	}
}

// TestRESTProxyDev: tributary dev serves the REST proxy on
// --rest-proxy-port; a record produced through it is read back by kcat
// byte for byte.
func TestRESTProxyDev(t *testing.T) {
	t.Parallel()
	requireKcat(t)
	bin := harness.BuildTributary(t)
	proxyPort := harness.FreePort(t)
	dev := harness.StartDevProcess(t, bin, t.TempDir()+"/data", harness.FreePort(t), harness.FreePort(t), "--rest-proxy-port", fmt.Sprint(proxyPort))
	h := fmt.Sprintf("http://127.0.0.1:%d", proxyPort)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(dev.Output(), "REST proxy:      "+h); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("dev does not name the REST proxy's URL:\n%s", dev.Output())
		}
	}
	curl(t, "POST", h+"/topics/devtopic", v2Binary, v2, `{"records":[{"key":"a2V5","value":"AAEC/w=="}]}`).
		expect(t, "produce", 200, `{"offsets":[{"partition":0,"offset":0,"error_code":null,"error":null}],"key_schema_id":null,"value_schema_id":null}`)
	out := kcat(context.Background(), t, "", "-b", dev.Bootstrap(), "-t", "devtopic", "-C", "-e", "-f", "%k|%s")
	if out != "key|\x00\x01\x02\xff" {
		t.Fatalf("kcat read %q", out)
	}
}

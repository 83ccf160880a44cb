package kafkarest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseV2MediaType(t *testing.T) {
	for ct, want := range map[string]format{
		"application/vnd.kafka.json.v2+json":                formatJSON,
		"application/vnd.kafka.binary.v2+json":              formatBinary,
		"application/vnd.kafka.avro.v2+json; charset=utf-8": formatAvro,
		"application/vnd.kafka.protobuf.v2+json":            formatProtobuf,
		"application/vnd.kafka.jsonschema.v2+json":          formatJSONSchema,
	} {
		if f, ok := parseV2MediaType(ct); !ok || f != want {
			t.Errorf("%s: got %v %v, want %v", ct, f, ok, want)
		}
	}
	for _, ct := range []string{"", "application/json", "application/vnd.kafka.v2+json", "application/vnd.kafka.xml.v2+json", "application/vnd.kafka.json.v1+json"} {
		if _, ok := parseV2MediaType(ct); ok {
			t.Errorf("%q accepted", ct)
		}
	}
	if f := acceptedFormat("application/vnd.kafka.v2+json, application/vnd.kafka.binary.v2+json"); f != formatBinary {
		t.Errorf("accept: got %v", f)
	}
}

func TestParseV2Produce(t *testing.T) {
	recs, err := parseV2Produce(formatJSON, []byte(`{"records":[{"key":"k","value":{"a": [1, 2]}},{"value":null,"partition":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(recs[0].Key) != `"k"` || string(recs[0].Value) != `{"a":[1,2]}` || recs[0].Partition != -1 {
		t.Errorf("record 0: %+v", recs[0])
	}
	if recs[1].Key != nil || recs[1].Value != nil || recs[1].Partition != 3 {
		t.Errorf("record 1: %+v", recs[1])
	}
	recs, err = parseV2Produce(formatBinary, []byte(`{"records":[{"key":"a2V5","value":"Y29uZmx1ZW50"}]}`))
	if err != nil || string(recs[0].Key) != "key" || string(recs[0].Value) != "confluent" {
		t.Fatalf("binary: %+v %v", recs, err)
	}
	for _, c := range []struct {
		f          format
		body       string
		status     int
		code       int
		mentioning string
	}{
		{formatJSON, `{"records":[{"value":1}`, 400, 400, "JSON"},
		{formatJSON, `{}`, 422, 422, "records"},
		{formatJSON, `{"records":[]}`, 422, 422, "records"},
		{formatJSON, `{"records":{}}`, 422, 422, "records"},
		{formatJSON, `{"records":[{"value":1,"partition":-1}]}`, 422, 422, "records[0].partition"},
		{formatJSON, `{"records":[{"value":1,"partition":"x"}]}`, 422, 422, "partition"},
		{formatBinary, `{"records":[{"value":"a"},{"value":"!!"}]}`, 422, codeConversion, "records[0].value"},
		{formatBinary, `{"records":[{"value":"YQ=="},{"key":5}]}`, 422, codeConversion, "records[1].key"},
		{formatAvro, `{"records":[{"value":1}]}`, 422, codeRegistryMissing, "Schema Registry"},
		{formatJSON, `{"records":[{"value":1}]} x`, 400, 400, "after"},
	} {
		_, err := parseV2Produce(c.f, []byte(c.body))
		if err == nil || err.Status != c.status || err.Code != c.code || !strings.Contains(err.Message, c.mentioning) {
			t.Errorf("%s: got %+v, want %d/%d mentioning %q", c.body, err, c.status, c.code, c.mentioning)
		}
	}
}

func TestParseConsumerCreate(t *testing.T) {
	c, err := parseConsumerCreate([]byte(`{"name":"c1","format":"JSON","auto.offset.reset":"earliest","auto.commit.enable":"false"}`))
	if err != nil || c.Name != "c1" || c.Format != formatJSON || c.AutoOffsetReset != "earliest" || c.AutoCommit {
		t.Fatalf("got %+v %v", c, err)
	}
	c, err = parseConsumerCreate(nil)
	if err != nil || c.Format != formatBinary || !c.AutoCommit || c.AutoOffsetReset != "latest" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for body, field := range map[string]string{
		`{"format":"xml"}`:               "format",
		`{"auto.offset.reset":"middle"}`: "auto.offset.reset",
		`{"auto.commit.enable":"yes"}`:   "auto.commit.enable",
		`{"name":"a/b"}`:                 "name",
		`{"fetch.min.bytes":"-3"}`:       "fetch.min.bytes",
	} {
		if _, err := parseConsumerCreate([]byte(body)); err == nil || !strings.Contains(err.Message, field) {
			t.Errorf("%s: %v, want an error naming %s", body, err, field)
		}
	}
}

func TestDecodeV3Record(t *testing.T) {
	var req v3Produce
	body := `{"partition_id":1,"headers":[{"name":"h","value":"dg=="}],"key":{"type":"STRING","data":"k"},"value":{"type":"BINARY","data":"Y29uZmx1ZW50"},"timestamp":"2021-02-05T19:14:42Z"}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	rec, err := decodeV3Record(&req)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Partition != 1 || string(rec.Key.Bytes) != "k" || string(rec.Value.Bytes) != "confluent" || rec.Headers[0].Key != "h" || string(rec.Headers[0].Value) != "v" || rec.Timestamp.Unix() != 1612552482 {
		t.Errorf("got %+v", rec)
	}
	for body, want := range map[string]int{
		`{"value":{"type":"AVRO","data":1}}`:              codeRegistryMissing,
		`{"value":{"schema_id":1,"data":1}}`:              codeRegistryMissing,
		`{"value":{"data":1}}`:                            codeRegistryMissing,
		`{"value":{"type":"XML","data":1}}`:               400,
		`{"value":{"type":"BINARY","data":"!"}}`:          400,
		`{"value":{"type":"STRING","data":1}}`:            400,
		`{"partition_id":-1}`:                             400,
		`{"headers":[{"name":"","value":null}]}`:          400,
		`{"headers":[{"name":"a","value":"not base64"}]}`: 400,
	} {
		var req v3Produce
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeV3Record(&req); err == nil || err.Code != want {
			t.Errorf("%s: got %v, want code %d", body, err, want)
		}
	}
}

func TestUpper(t *testing.T) {
	for in, want := range map[string]string{"PreparingRebalance": "PREPARING_REBALANCE", "Stable": "STABLE", "Empty": "EMPTY"} {
		if got := upper(in); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
}

// checkParsed holds for any parser answer: an error is a 4xx with a body,
// never a panic.
func checkParsed(t *testing.T, err *Error) {
	if err == nil {
		return
	}
	if err.Status < 400 || err.Status >= 500 || err.Message == "" {
		t.Fatalf("a bad body got %+v, want a 4xx with a message", err)
	}
}

func FuzzV2ProduceBody(f *testing.F) {
	f.Add(uint8(1), []byte(`{"records":[{"key":"a2V5","value":"Y29uZmx1ZW50","partition":0}]}`))
	f.Add(uint8(2), []byte(`{"records":[{"key":{"a":1},"value":[1,2,"x"]},{"value":null}]}`))
	f.Add(uint8(3), []byte(`{"value_schema":"{}","records":[{"value":1}]}`))
	f.Fuzz(func(t *testing.T, fm uint8, body []byte) {
		fmt := format(fm%5 + 1)
		recs, err := parseV2Produce(fmt, body)
		checkParsed(t, err)
		if err == nil {
			if len(recs) == 0 {
				t.Fatal("no error and no records")
			}
			for _, r := range recs {
				if fmt == formatJSON && r.Value != nil && !json.Valid(r.Value) {
					t.Fatalf("json value %q is not JSON", r.Value)
				}
			}
		}
	})
}

func FuzzV3Record(f *testing.F) {
	f.Add([]byte(`{"partition_id":0,"headers":[{"name":"h","value":"dg=="}],"key":{"type":"STRING","data":"k"},"value":{"type":"JSON","data":{"a":1}}}`))
	f.Add([]byte(`{"value":{"type":"BINARY","data":"Y29uZmx1ZW50"}}{"value":{"type":"BINARY","data":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		dec := json.NewDecoder(bytes.NewReader(body))
		for range 10 {
			var req v3Produce
			if err := dec.Decode(&req); err != nil {
				checkParsed(t, jsonError(err))
				return
			}
			_, err := decodeV3Record(&req)
			checkParsed(t, err)
		}
	})
}

func FuzzConsumerBodies(f *testing.F) {
	f.Add([]byte(`{"name":"c","format":"json","auto.offset.reset":"earliest","auto.commit.enable":"false"}`))
	f.Add([]byte(`{"topics":["a","b"]}`))
	f.Add([]byte(`{"topic_pattern":"a.*"}`))
	f.Add([]byte(`{"partitions":[{"topic":"a","partition":0}]}`))
	f.Add([]byte(`{"offsets":[{"topic":"a","partition":0,"offset":3}]}`))
	f.Add([]byte(`{"topic_name":"t","partitions_count":3,"configs":[{"name":"cleanup.policy","value":"compact"}]}`))
	f.Add([]byte(`{"data":[{"name":"a","value":"b"},{"name":"c","operation":"DELETE"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := parseConsumerCreate(body)
		checkParsed(t, err)
		_, err = parseSubscription(body)
		checkParsed(t, err)
		ps, err := parsePartitions(body, false)
		checkParsed(t, err)
		if err == nil && len(ps) == 0 {
			t.Fatal("no partitions accepted")
		}
		_, err = parseOffsets(body, true)
		checkParsed(t, err)
		_, err = parseCreateTopic(body)
		checkParsed(t, err)
		_, _, err = parseAlterConfigs(body)
		checkParsed(t, err)
		_, err = parseConfigValue(body)
		checkParsed(t, err)
	})
}

func TestAppendReportIsReportJSON(t *testing.T) {
	for _, s := range []*slot{
		{rec: &kgo.Record{Topic: "t\"x", Partition: 3, Offset: 77, Timestamp: time.UnixMilli(1612552482123)}, key: v3Payload{Type: "STRING", Bytes: []byte("abc")}, value: v3Payload{Type: "JSON", Bytes: []byte(`{"a":1}`)}},
		{rec: &kgo.Record{Topic: "t", Timestamp: time.UnixMilli(1)}, value: v3Payload{Type: "BINARY"}},
		{err: errRegistryMissing},
	} {
		_, body := s.report("cl-1")
		want, _ := json.Marshal(body)
		if got := s.appendReport(nil, "cl-1"); string(got) != string(want)+"\n" {
			t.Errorf("appendReport %s, want %s", got, want)
		}
	}
}

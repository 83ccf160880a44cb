package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
	"github.com/tributary-dev/tributary/worker/transform"
)

// consumeTopic reads n records of topic from its start.
func consumeTopic(t *testing.T, bootstrap, topic string, n int, within time.Duration) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: %d records after %v, want %d", topic, len(out), within, n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// A source connector's chain runs in a real worker process as Kafka
// Connect runs it: RegexRouter applies to the records its predicate
// matches (TopicNameMatches), InsertHeader to the others (negate).
func TestTransformsSourceThroughWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and starts a Tributary worker")
	}
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, "smt-src", nil))
	r := rest{t, w.URL()}
	chain := func(topic, file string) map[string]string {
		return map[string]string{"connector.class": "FileStreamSource", "file": file, "topic": topic,
			"value.converter":        "org.apache.kafka.connect.storage.StringConverter",
			"transforms":             "route,mark",
			"transforms.route.type":  "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.route.regex": `raw\.(.*)`, "transforms.route.replacement": "clean.$1",
			"transforms.route.predicate": "isRaw",
			"transforms.mark.type":       "InsertHeader", "transforms.mark.header": "routed", "transforms.mark.value.literal": "no",
			"transforms.mark.predicate": "isClean", "transforms.mark.negate": "true",
			"predicates":            "isRaw,isClean",
			"predicates.isRaw.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicates.isRaw.pattern": `raw\..*`,
			"predicates.isClean.type": "TopicNameMatches", "predicates.isClean.pattern": `clean\..*`}
	}
	rawIn, otherIn := filepath.Join(dir, "raw.txt"), filepath.Join(dir, "other.txt")
	appendLines(t, rawIn, 0, 50)
	appendLines(t, otherIn, 0, 30)
	r.must("POST", "/connectors", map[string]any{"name": "raw", "config": chain("raw.events", rawIn)}, 201)
	r.must("POST", "/connectors", map[string]any{"name": "other", "config": chain("other.events", otherIn)}, 201)
	r.waitState("raw", "RUNNING", 1)
	r.waitState("other", "RUNNING", 1)

	routed := consumeTopic(t, bootstrap, "clean.events", 50, 30*time.Second)
	for i, kr := range routed {
		if got := string(kr.Value); got != fmt.Sprintf("line-%06d", i) || len(kr.Headers) != 0 {
			t.Fatalf("clean.events record %d: %q headers %v", i, kr.Value, kr.Headers)
		}
	}
	kept := consumeTopic(t, bootstrap, "other.events", 30, 30*time.Second)
	for _, kr := range kept {
		if len(kr.Headers) != 1 || kr.Headers[0].Key != "routed" || string(kr.Headers[0].Value) != "no" {
			t.Fatalf("other.events record %q: headers %v, want routed=no", kr.Value, kr.Headers)
		}
	}
	// Nothing went to the unrouted topic.
	if n := topicSize(t, bootstrap, "raw.events"); n != 0 {
		t.Errorf("raw.events holds %d records, want all routed", n)
	}
}

// topicSize is a topic's end offset summed over partitions (0 for a topic
// that does not exist).
func topicSize(t *testing.T, bootstrap, topic string) int64 {
	t.Helper()
	ends, err := newAdmin(t, bootstrap).ListEndOffsets(context.Background(), topic)
	if err != nil {
		return 0
	}
	var n int64
	ends.Each(func(o kadmListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}

// debeziumUsers is a Debezium PostgreSQL change event's key and envelope
// schemas for a users table, as the Postgres source writes them.
func debeziumUsers() (key, row, envelope *schema.Schema) {
	key = schema.StructOf("dbserver1.public.users.Key").Field("id", schema.Int32).Build()
	row = schema.StructOf("dbserver1.public.users.Value").Field("id", schema.Int32).Field("name", schema.OptionalString).
		Field("email", schema.OptionalString).Optional().Build()
	source := schema.StructOf("io.debezium.connector.postgresql.Source").Field("version", schema.String).
		Field("connector", schema.String).Field("name", schema.String).Field("ts_ms", schema.Int64).
		Field("db", schema.String).Field("schema", schema.String).Field("table", schema.String).
		Field("lsn", schema.OptionalInt64).Build()
	envelope = schema.StructOf("dbserver1.public.users.Envelope").Field("before", row).Field("after", row).
		Field("source", source).Field("op", schema.String).Field("ts_ms", schema.OptionalInt64).Version(2).Build()
	return key, row, envelope
}

// A sink connector's chain runs in a real worker process: Debezium change
// events (JsonConverter with schemas, as Kafka Connect writes them) are
// unwrapped into rows by ExtractNewRecordState (deletes rewritten with
// __deleted, op and the source time added), then shaped by ReplaceField.
func TestTransformsSinkThroughWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and starts a Tributary worker")
	}
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	dir := t.TempDir()
	const topic = "dbserver1.public.users"
	conv, err := convert.New(convert.JSONClass, false, map[string]string{"schemas.enable": "true"})
	if err != nil {
		t.Fatal(err)
	}
	keyS, rowS, envS := debeziumUsers()
	row := func(id int32, name, email string) *schema.Struct {
		return schema.NewStruct(rowS).Set("id", id).Set("name", name).Set("email", email)
	}
	event := func(before, after *schema.Struct, op string, ts int64) *schema.Struct {
		src := schema.NewStruct(envS.Field("source").Schema).Set("version", "3.6.1.Final").Set("connector", "postgresql").
			Set("name", "dbserver1").Set("ts_ms", ts).Set("db", "app").Set("schema", "public").Set("table", "users").Set("lsn", ts*10)
		e := schema.NewStruct(envS).Set("source", src).Set("op", op).Set("ts_ms", ts+5)
		if before != nil {
			e.Set("before", before)
		}
		if after != nil {
			e.Set("after", after)
		}
		return e
	}
	var recs []*kgo.Record
	add := func(id int32, v *schema.Struct) {
		k, err := conv.FromConnect(topic, keyS, schema.NewStruct(keyS).Set("id", id))
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		if v != nil {
			if b, err = conv.FromConnect(topic, envS, v); err != nil {
				t.Fatal(err)
			}
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: k, Value: b})
	}
	add(1, event(nil, row(1, "Ann", "ann@x.io"), "c", 1000))
	add(2, event(nil, row(2, "Bob", "bob@x.io"), "r", 1001))
	add(1, event(row(1, "Ann", "ann@x.io"), row(1, "Ann B", "annb@x.io"), "u", 1002))
	add(2, event(row(2, "Bob", "bob@x.io"), nil, "d", 1003))
	add(2, nil) // the delete's tombstone
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, bootstrap, "smt-sink", nil))
	r := rest{t, w.URL()}
	out := filepath.Join(dir, "rows.txt")
	r.must("POST", "/connectors", map[string]any{"name": "rows", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": topic,
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"transforms":             "unwrap,shape",
		"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
		"transforms.unwrap.add.fields":                     "op,source.ts_ms",
		"transforms.shape.type":                            "org.apache.kafka.connect.transforms.ReplaceField$Value",
		"transforms.shape.exclude":                         "email", "transforms.shape.renames": "name:full_name,__source_ts_ms:changed_at"}}, 201)
	r.waitState("rows", "RUNNING", 1)
	got := waitLines(t, out, 4, 30*time.Second)
	want := []string{
		"Struct{id=1,full_name=Ann,__deleted=false,__op=c,changed_at=1000}",
		"Struct{id=2,full_name=Bob,__deleted=false,__op=r,changed_at=1001}",
		"Struct{id=1,full_name=Ann B,__deleted=false,__op=u,changed_at=1002}",
		"Struct{id=2,full_name=Bob,__deleted=true,__op=d,changed_at=1003}",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sink wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The tombstone was dropped (rewrite mode), and its offset committed
	// with the rest.
	waitCommitted(t, bootstrap, "connect-rows", topic, 5, 30*time.Second)
}

// Through a real worker's REST API, transformations and predicates are
// plugins as in Kafka Connect 4.4: listed with connectorsOnly=false with
// the type Kafka Connect gives them, their definitions served as Kafka
// Connect serves them (the recording in worker/transform/testdata), and a
// connector config with bad transforms or predicates answered with Kafka
// Connect's errors on validate and refused on create.
func TestTransformsThroughREST(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and starts a Tributary worker")
	}
	b, err := os.ReadFile(filepath.Join("..", "worker", "transform", "testdata", "kafkaconnect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec recordedPlugins
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	bin := harness.BuildTributary(t)
	bootstrap := harness.TributaryBroker(t).Bootstrap()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(t.TempDir(), "worker"), harness.WorkerProps(t, bootstrap, "smt-rest", nil))
	r := rest{t, w.URL()}

	var listed []map[string]string
	if err := json.Unmarshal(r.must("GET", "/connector-plugins?connectorsOnly=false", nil, 200), &listed); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, p := range listed {
		types[p["class"]] = p["type"]
	}
	compared := 0
	for _, p := range rec.Plugins {
		want, ok := rec.Configs[p["class"]]
		if !ok {
			continue // a Debezium transformation Tributary does not have
		}
		if types[p["class"]] != p["type"] {
			t.Errorf("%s: listed as %q, Kafka Connect lists %q", p["class"], types[p["class"]], p["type"])
		}
		got := r.must("GET", "/connector-plugins/"+url.PathEscape(p["class"])+"/config", nil, 200)
		if g, w := string(compactJSON(t, got)), string(compactJSON(t, want)); g != w {
			t.Errorf("%s definition:\n got %s\nwant %s", p["class"], g, w)
		}
		compared++
	}
	if compared != len(transform.Plugins("")) {
		t.Errorf("%d definitions compared, Tributary has %d transformations and predicates", compared, len(transform.Plugins("")))
	}

	// Validation: the recorded answer's errors, key for key.
	v := rec.Validations["missing and unknown types"]
	cfg := map[string]string{"connector.class": "FileStreamSource", "name": "bad", "topic": "t"}
	maps.Copy(cfg, v.Config)
	var ans struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(r.must("PUT", "/connector-plugins/FileStreamSource/config/validate", cfg, 200), &ans); err != nil {
		t.Fatal(err)
	}
	gotErrs := map[string][]string{}
	for _, c := range ans.Configs {
		if len(c.Value.Errors) > 0 {
			gotErrs[c.Value.Name] = c.Value.Errors
		}
	}
	wantErrs := map[string][]string{}
	for _, raw := range v.Configs {
		var e struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if len(e.Value.Errors) > 0 {
			wantErrs[e.Value.Name] = e.Value.Errors
		}
	}
	if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) || ans.ErrorCount != 3 {
		t.Errorf("validate: %d errors %v\nKafka Connect's: %v", ans.ErrorCount, gotErrs, wantErrs)
	}

	// Create refuses what validate reports, and nothing is created.
	code, body := r.do("POST", "/connectors", map[string]any{"name": "bad", "config": cfg})
	if code != 400 || !strings.Contains(string(body), "contains the following 3 error(s)") ||
		!strings.Contains(string(body), "Class com.example.NoSuchTransform could not be found.") {
		t.Errorf("create: %d %s", code, body)
	}
	if code, _ := r.do("GET", "/connectors/bad", nil); code != 404 {
		t.Errorf("GET /connectors/bad after a refused create: %d", code)
	}
	code, body = r.do("PUT", "/connectors/bad2/config", map[string]string{"connector.class": "FileStreamSource", "topic": "t",
		"transforms": "route", "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*"})
	if code != 400 || !strings.Contains(string(body), "transforms.route.replacement") || !strings.Contains(string(body), "Invalid regex") {
		t.Errorf("create with a bad regex and no replacement: %d %s", code, body)
	}
}

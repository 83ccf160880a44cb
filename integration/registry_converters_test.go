package integration

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// srPython runs testdata/sr_avro.py (and its kin) with a Python that has
// confluent-kafka's schema-registry serializers, or skips t.
func srPython(t *testing.T, script string, args ...string) []string {
	t.Helper()
	py := harness.Python(t, "confluent_kafka.schema_registry.avro", "confluent_kafka.schema_registry.json_schema", "confluent_kafka.schema_registry.protobuf")
	cmd := exec.Command(py, append([]string{"testdata/" + script}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v\n%s", script, args, err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func consumeN(t *testing.T, bootstrap, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d records from %s: %v", len(out), n, topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// TestAvroConverterWithConfluentPython: records that Confluent's Python
// AvroSerializer writes (registering their schema in a real registry) are
// read by Tributary's AvroConverter field by field, with the Connect
// schema AvroData gives them; and records Tributary's converter writes
// (registering the schema AvroData derives from a Debezium-style Connect
// schema) are read by Confluent's AvroDeserializer field by field.
func TestAvroConverterWithConfluentPython(t *testing.T) {
	t.Parallel()
	registry := harness.SchemaRegistryURL(t)
	b := harness.TributaryBroker(t)
	suffix := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	const n = 12

	// Python → Tributary.
	in := "sr-avro-py-" + suffix
	createTopicAt(t, b.Bootstrap(), in, 1)
	srPython(t, "sr_avro.py", "produce", b.Bootstrap(), registry, in, strconv.Itoa(n))
	conv, err := convert.New(convert.AvroClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, rec := range consumeN(t, b.Bootstrap(), in, n) {
		s, v, err := conv.ToConnect(in, rec.Value)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if s.Name != "shop.Order" || s.Version != 1 {
			t.Fatalf("record %d: schema %s version %d, want shop.Order version 1", i, s.Name, s.Version)
		}
		st := v.(*schema.Struct)
		amount := s.Field("amount").Schema
		if amount.Name != schema.DecimalName || amount.Parameters["scale"] != "2" || amount.Parameters["connect.decimal.precision"] != "10" {
			t.Fatalf("amount's schema %v %v, want Decimal(scale 2, precision 10)", amount.Name, amount.Parameters)
		}
		if p := s.Field("status").Schema.Parameters; p["io.confluent.connect.avro.Enum"] != "shop.Status" || p["io.confluent.connect.avro.Enum.PAID"] != "PAID" {
			t.Fatalf("status's parameters %v, want AvroData's enum parameters", p)
		}
		if c := s.Field("choice").Schema; c.Name != "io.confluent.connect.avro.Union" || !c.Optional || len(c.Fields) != 2 {
			t.Fatalf("choice's schema %v, want an optional io.confluent.connect.avro.Union of string and long", c)
		}
		var note, choice any
		if i%2 == 1 {
			note = fmt.Sprintf("n%d", i)
		}
		status := "NEW"
		if i%2 == 1 {
			status = "PAID"
		}
		switch i % 3 {
		case 1:
			choice = "string=" + fmt.Sprintf("s%d", i)
		case 2:
			choice = "long=" + strconv.Itoa(i*1000)
		}
		var gotChoice any
		if u, _ := st.Get("choice").(*schema.Struct); u != nil {
			for j, f := range u.Schema().Fields {
				if x := u.GetIndex(j); x != nil {
					gotChoice = fmt.Sprintf("%s=%v", f.Name, x)
				}
			}
		}
		checks := []struct {
			field     string
			got, want any
		}{
			{"id", st.Get("id"), int64(i)},
			{"customer", st.Get("customer"), fmt.Sprintf("c%d", i)},
			{"amount", fmt.Sprint(st.Get("amount")), strconv.Itoa(i*100 + 5)},
			{"placed", st.Get("placed"), epoch.AddDate(0, 0, i)},
			{"created", st.Get("created"), epoch.Add(time.Duration(i)*time.Second + time.Duration(i)*time.Millisecond)},
			{"note", st.Get("note"), note},
			{"tags", fmt.Sprint(st.Get("tags")), fmt.Sprint([]any{"t", strconv.Itoa(i)})},
			{"attrs", fmt.Sprint(st.Get("attrs")), fmt.Sprint(map[string]any{"a": int32(i)})},
			{"status", st.Get("status"), status},
			{"ratio", st.Get("ratio"), float64(i) / 4},
			{"flag", st.Get("flag"), i%3 == 0},
			{"choice", gotChoice, choice},
		}
		for _, c := range checks {
			if tg, ok := c.got.(time.Time); ok {
				if !tg.Equal(c.want.(time.Time)) {
					t.Errorf("record %d: %s = %v, want %v", i, c.field, c.got, c.want)
				}
				continue
			}
			if c.got != c.want {
				t.Errorf("record %d: %s = %#v, want %#v", i, c.field, c.got, c.want)
			}
		}
	}

	// Tributary → Python.
	out := "sr-avro-go-" + suffix
	createTopicAt(t, b.Bootstrap(), out, 1)
	dec := schema.Decimal(2)
	dec.Parameters["connect.decimal.precision"] = "10"
	value := schema.StructOf("shop.public.items.Value").
		Field("id", schema.Int32).Field("name", schema.OptionalString).Field("price", dec.AsOptional()).
		Field("day", schema.Date).Field("at", schema.Timestamp.AsOptional()).Field("small", schema.Int16).
		Field("tiny", schema.Int8).Field("raw", schema.Bytes).Field("f32", schema.Float32).
		Field("codes", schema.MapOf(schema.Int32, schema.String)).Optional().Build()
	env := schema.StructOf("shop.public.items.Envelope").Field("before", value).Field("after", value).
		Field("op", schema.String).Field("ts_ms", schema.Int64).Version(1).Build()
	w, err := convert.New(convert.AvroClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic(out))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := func(i int) time.Time {
		return epoch.Add(time.Duration(i)*time.Hour + time.Duration(i+1)*time.Millisecond)
	}
	for i := range n {
		row := schema.NewStruct(value).Set("id", int32(i)).Set("price", big.NewInt(int64(1999+i))).
			Set("day", epoch.AddDate(0, 0, -i)).Set("at", at(i)).Set("small", int16(-i*100)).Set("tiny", int8(i)).
			Set("raw", []byte{byte(i), 0xff}).Set("f32", float32(i)+0.5).Set("codes", map[any]any{int32(i): "c"})
		if i%2 == 0 {
			row.Set("name", fmt.Sprintf("item %d", i))
		}
		ev := schema.NewStruct(env).Set("after", row).Set("op", "c").Set("ts_ms", int64(1000+i))
		if err := ev.Validate(); err != nil {
			t.Fatal(err)
		}
		b, err := w.FromConnect(out, env, ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	lines := srPython(t, "sr_avro.py", "consume", b.Bootstrap(), registry, out, strconv.Itoa(n))
	if len(lines) != n+1 {
		t.Fatalf("Python read %d lines, want %d records and the schema:\n%s", len(lines), n, strings.Join(lines, "\n"))
	}
	for i, l := range lines[:n] {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		var name any
		if i%2 == 0 {
			name = fmt.Sprintf("item %d", i)
		}
		a := at(i)
		wantAfter := map[string]any{"id": float64(i), "name": name, "price": fmt.Sprintf("%d.%02d", (1999+i)/100, (1999+i)%100),
			"day": epoch.AddDate(0, 0, -i).Format("2006-01-02"), "at": fmt.Sprintf("%s.%06d+00:00", a.Format("2006-01-02T15:04:05"), a.Nanosecond()/1000),
			"small": float64(-i * 100), "tiny": float64(i), "raw": hex.EncodeToString([]byte{byte(i), 0xff}), "f32": float64(i) + 0.5,
			"codes": []any{map[string]any{"key": float64(i), "value": "c"}}}
		want := map[string]any{"before": nil, "after": wantAfter, "op": "c", "ts_ms": float64(1000 + i)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Python read record %d as\n%v\nwant\n%v", i, got, want)
		}
	}
	var latest struct {
		Latest string `json:"latest"`
	}
	if err := json.Unmarshal([]byte(lines[n]), &latest); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"connect.name":"shop.public.items.Envelope"`, `"connect.version":1`, `["null","Value"]`,
		`{"type":"int","connect.type":"int16"}`, `"logicalType":"decimal"`, `"name":"MapEntry","namespace":"io.confluent.connect.avro"`} {
		if !strings.Contains(latest.Latest, want) {
			t.Errorf("the registered schema lacks %s:\n%s", want, latest.Latest)
		}
	}
}

// TestJSONSchemaConverterWithConfluentPython: the JSON Schema converter
// reads what Confluent's Python JSONSerializer writes (fields in the
// schema's order, typed as JsonSchemaData types them), and Confluent's
// JSONDeserializer, which validates each record against the schema
// Tributary registered, reads what Tributary's converter writes.
func TestJSONSchemaConverterWithConfluentPython(t *testing.T) {
	t.Parallel()
	registry := harness.SchemaRegistryURL(t)
	b := harness.TributaryBroker(t)
	suffix := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	const n = 8

	in := "sr-json-py-" + suffix
	createTopicAt(t, b.Bootstrap(), in, 1)
	srPython(t, "sr_json.py", "produce", b.Bootstrap(), registry, in, strconv.Itoa(n))
	conv, err := convert.New(convert.JSONSchemaClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range consumeN(t, b.Bootstrap(), in, n) {
		s, v, err := conv.ToConnect(in, rec.Value)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		var names []string
		for _, f := range s.Fields {
			names = append(names, f.Name+":"+f.Schema.Type.String())
		}
		if s.Name != "shop.Order" || s.Version != 1 || strings.Join(names, ",") != "id:int64,customer:string,note:string,tags:array,ratio:float64,flag:boolean" {
			t.Fatalf("record %d: schema %s v%d fields %v", i, s.Name, s.Version, names)
		}
		st := v.(*schema.Struct)
		var note any
		if i%2 == 1 {
			note = fmt.Sprintf("n%d", i)
		}
		if st.Get("id") != int64(i) || st.Get("customer") != fmt.Sprintf("c%d", i) || st.Get("note") != note ||
			fmt.Sprint(st.Get("tags")) != fmt.Sprint([]any{"t", strconv.Itoa(i)}) || st.Get("ratio") != float64(i)/4 || st.Get("flag") != (i%3 == 0) {
			t.Errorf("record %d read as %v", i, st)
		}
	}

	out := "sr-json-go-" + suffix
	createTopicAt(t, b.Bootstrap(), out, 1)
	value := schema.StructOf("shop.public.items.Value").Field("id", schema.Int32).Field("name", schema.OptionalString).
		Field("small", schema.Int16).Field("f", schema.Float64).Field("tags", schema.ArrayOf(schema.String)).
		Field("attrs", schema.MapOf(schema.String, schema.Int64)).Optional().Build()
	env := schema.StructOf("shop.public.items.Envelope").Field("before", value).Field("after", value).
		Field("op", schema.String).Version(1).Build()
	w, err := convert.New(convert.JSONSchemaClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic(out))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		row := schema.NewStruct(value).Set("id", int32(i)).Set("small", int16(-i)).Set("f", float64(i)+0.25).
			Set("tags", []any{"x"}).Set("attrs", map[string]any{"k": int64(i)})
		if i%2 == 0 {
			row.Set("name", fmt.Sprintf("item %d", i))
		}
		bs, err := w.FromConnect(out, env, schema.NewStruct(env).Set("after", row).Set("op", "u"))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: bs}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	lines := srPython(t, "sr_json.py", "consume", b.Bootstrap(), registry, out, strconv.Itoa(n))
	if len(lines) != n+1 {
		t.Fatalf("Python read %d lines, want %d and the schema:\n%s", len(lines), n, strings.Join(lines, "\n"))
	}
	for i, l := range lines[:n] {
		var name any
		if i%2 == 0 {
			name = fmt.Sprintf("item %d", i)
		}
		want := map[string]any{"before": nil, "op": "u", "after": map[string]any{"id": float64(i), "name": name, "small": float64(-i),
			"f": float64(i) + 0.25, "tags": []any{"x"}, "attrs": map[string]any{"k": float64(i)}}}
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Python read record %d as %s (%v), want %v", i, l, err, want)
		}
	}
	if !strings.Contains(lines[n], `\"connect.type\":\"int16\"`) || !strings.Contains(lines[n], `\"title\":\"shop.public.items.Envelope\"`) {
		t.Errorf("registered schema: %s", lines[n])
	}
}

// TestAvroConverterInWorker runs AvroConverter inside a worker process,
// configured per connector as Kafka Connect users do
// (value.converter.schema.registry.url): a FileStreamSource's lines reach
// Confluent's Python AvroDeserializer, and records of Confluent's Python
// AvroSerializer reach a FileStreamSink as structs.
func TestAvroConverterInWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: builds and runs a worker")
	}
	registry := harness.SchemaRegistryURL(t)
	b := harness.TributaryBroker(t)
	bin := harness.BuildTributary(t)
	dir := t.TempDir()
	w := harness.StartWorkerProcess(t, bin, filepath.Join(dir, "worker"), harness.WorkerProps(t, b.Bootstrap(), "avroworker", nil))
	r := rest{t, w.URL()}
	suffix := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	const n = 6

	src := "avro-worker-src-" + suffix
	createTopicAt(t, b.Bootstrap(), src, 1)
	in := filepath.Join(dir, "in.txt")
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.must("POST", "/connectors", map[string]any{"name": "avro-src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": src,
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": registry,
	}}, 201)
	got := srPython(t, "sr_avro.py", "consume", b.Bootstrap(), registry, src, strconv.Itoa(n))
	if len(got) != n+1 {
		t.Fatalf("Python read %v, want %d lines and the schema", got, n)
	}
	for i, l := range got[:n] {
		if l != strconv.Quote(lines[i]) {
			t.Errorf("record %d read by Python as %s, want %q", i, l, lines[i])
		}
	}
	if got[n] != `{"latest": "\"string\""}` {
		t.Errorf("registered schema %s, want \"string\"", got[n])
	}

	sink := "avro-worker-sink-" + suffix
	createTopicAt(t, b.Bootstrap(), sink, 1)
	srPython(t, "sr_avro.py", "produce", b.Bootstrap(), registry, sink, strconv.Itoa(n))
	out := filepath.Join(dir, "out.txt")
	r.must("POST", "/connectors", map[string]any{"name": "avro-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": sink,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "AvroConverter", "value.converter.schema.registry.url": registry,
	}}, 201)
	for i, l := range waitLines(t, out, n, 60*time.Second)[:n] {
		for _, want := range []string{"Struct{", fmt.Sprintf("id=%d,", i), fmt.Sprintf("customer=c%d,", i), "tags=[t, " + strconv.Itoa(i) + "]"} {
			if !strings.Contains(l, want) {
				t.Errorf("line %d %q lacks %q", i, l, want)
			}
		}
	}
}

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/worker/transform"
)

// transformValidations are the connector configs whose validation Kafka
// Connect answers are recorded (on top of a valid FileStreamSource config):
// every way a transforms or predicates setting can be wrong, and right.
// worker/transform's tests validate the same configs and compare.
var transformValidations = []struct {
	Name   string
	Config map[string]string
}{
	{"valid chain with a predicate", map[string]string{"transforms": "route,mask", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-x", "transforms.route.predicate": "p", "transforms.route.negate": "true",
		"transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value", "transforms.mask.fields": "a,b",
		"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicates.p.pattern": "t.*"}},
	{"missing and unknown types", map[string]string{"transforms": "a,b", "transforms.b.type": "com.example.NoSuchTransform",
		"predicates": "p", "predicates.p.type": "com.example.NoSuchPredicate"}},
	{"missing settings", map[string]string{"transforms": "r,i,c,h", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.i.type": "org.apache.kafka.connect.transforms.InsertHeader", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Key",
		"transforms.h.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
		"predicates":        "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"}},
	{"invalid values", map[string]string{"transforms": "c,t,r,f,x,m,d", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.c.spec": "a:number", "transforms.t.type": "org.apache.kafka.connect.transforms.TimestampConverter$Value",
		"transforms.t.target.type": "epoch", "transforms.t.unix.precision": "hours", "transforms.t.replace.null.with.default": "maybe",
		"transforms.r.type": "org.apache.kafka.connect.transforms.ReplaceField$Value", "transforms.r.renames": "a:b:c", "transforms.r.exclude": "x,x",
		"transforms.f.type": "org.apache.kafka.connect.transforms.Flatten$Key", "transforms.f.negate": "true",
		"transforms.x.type": "org.apache.kafka.connect.transforms.ExtractField$Value", "transforms.x.field": "a", "transforms.x.field.syntax.version": "V3",
		"transforms.m.type": "org.apache.kafka.connect.transforms.MaskField$Key", "transforms.m.fields": "", "transforms.m.replacement": "",
		"transforms.d.type": "org.apache.kafka.connect.transforms.DropHeaders", "transforms.d.headers": "a,,b",
		"predicates": "p,q", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "predicates.p.name": "",
		"predicates.q.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicates.q.pattern": "(unclosed"}},
	{"duplicate aliases", map[string]string{"transforms": "a,a", "transforms.a.type": "org.apache.kafka.connect.transforms.Filter",
		"predicates": "p, p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"}},
	{"kinds swapped", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.Filter"}},
	{"debezium", map[string]string{"transforms": "unwrap,route", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite", "transforms.unwrap.add.fields": "op,source.ts_ms",
		"transforms.route.type": "io.debezium.transforms.ByLogicalTableRouter", "transforms.route.topic.regex": "(.*)",
		"transforms.route.topic.replacement": "all", "transforms.route.key.field.regex": "x(.*)"}},
	{"debezium invalid", map[string]string{"transforms": "unwrap,route", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.delete.tombstone.handling.mode": "sometimes", "transforms.unwrap.drop.fields.from.key": "perhaps",
		"transforms.route.type": "io.debezium.transforms.ByLogicalTableRouter", "transforms.route.topic.regex": "(bad"}},
	{"debezium mongodb", map[string]string{"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
		"transforms.unwrap.array.encoding": "document", "transforms.unwrap.flatten.struct": "true", "transforms.unwrap.add.fields": "op,source.ts_ms",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite"}},
	{"debezium mongodb invalid", map[string]string{"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
		"transforms.unwrap.array.encoding": "list", "transforms.unwrap.flatten.struct": "maybe",
		"transforms.unwrap.delete.tombstone.handling.mode": "sometimes"}},
	{"plugin versions", map[string]string{"transforms": "a,b", "transforms.a.type": "org.apache.kafka.connect.transforms.Filter",
		"transforms.a.plugin.version": "1.0.0", "transforms.b.type": "org.apache.kafka.connect.transforms.Filter"}},
	{"undeclared predicate", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.Filter",
		"transforms.a.predicate": "nope"}},
	{"short class names", map[string]string{"transforms": "a,b,c", "transforms.a.type": "RegexRouter", "transforms.a.regex": "x",
		"transforms.a.replacement": "y", "transforms.b.type": "InsertField$Value", "transforms.b.topic.field": "t",
		"transforms.c.type": "ExtractNewRecordState", "transforms.c.predicate": "p",
		"predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "x"}},
	{"every transformation", everyTransformation()},
}

// everyTransformation configures each transformation and predicate once,
// with its settings given, so that its whole definition is validated.
func everyTransformation() map[string]string {
	c := map[string]string{}
	var ts, ps []string
	for i, p := range transform.Plugins("") {
		alias := fmt.Sprintf("a%02d", i)
		if p.Kind == transform.KindPredicate {
			ps = append(ps, alias)
			c["predicates."+alias+".type"] = p.Class
			continue
		}
		ts = append(ts, alias)
		c["transforms."+alias+".type"] = p.Class
	}
	c["transforms"] = strings.Join(ts, ",")
	c["predicates"] = strings.Join(ps, ",")
	return c
}

// recordedPlugins is what the test records of Kafka Connect's answers.
type recordedPlugins struct {
	// Plugins are the transformations and predicates of
	// GET /connector-plugins?connectorsOnly=false (class and type).
	Plugins []map[string]string `json:"plugins"`
	// Configs are GET /connector-plugins/{class}/config, by class.
	Configs map[string]json.RawMessage `json:"configs"`
	// Validations are the transforms and predicates entries of
	// PUT .../config/validate for transformValidations, by name.
	Validations map[string]recordedValidation `json:"validations"`
}

type recordedValidation struct {
	Config  map[string]string `json:"config"`
	Groups  []string          `json:"groups"`
	Configs []json.RawMessage `json:"configs"`
}

// TestTransformPluginAnswers records what Kafka Connect 4.4 (with Debezium
// 3.6.1's transformations on its class path) answers about transformations
// and predicates: the plugin listing, each one's config definition, and the
// validation of transformValidations. It checks the recording committed in
// worker/transform/testdata is still the real thing's answer (with -rewrite
// it writes it); worker/transform's tests compare Tributary's answers with
// it.
func TestTransformPluginAnswers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping: starts Kafka Connect")
	}
	b := harness.TributaryBroker(t)
	c := harness.KafkaConnect(t, b.Bootstrap())
	rec := recordedPlugins{Configs: map[string]json.RawMessage{}, Validations: map[string]recordedValidation{}}
	var plugins []map[string]string
	getJSON(t, c.URL()+"/connector-plugins?connectorsOnly=false", &plugins)
	ours := map[string]bool{}
	for _, p := range transform.Plugins("") {
		ours[p.Class] = true
	}
	for _, p := range plugins {
		if p["type"] != "transformation" && p["type"] != "predicate" {
			continue
		}
		rec.Plugins = append(rec.Plugins, map[string]string{"class": p["class"], "type": p["type"]})
		if !ours[p["class"]] {
			continue // a Debezium transformation Tributary does not have
		}
		var raw json.RawMessage
		getJSON(t, c.URL()+"/connector-plugins/"+url.PathEscape(p["class"])+"/config", &raw)
		rec.Configs[p["class"]] = compactJSON(t, raw)
	}
	for _, v := range transformValidations {
		cfg := map[string]string{"connector.class": "FileStreamSource", "name": "v", "topic": "t"}
		for k, val := range v.Config {
			cfg[k] = val
		}
		body, _ := json.Marshal(cfg)
		req, _ := http.NewRequest(http.MethodPut, c.URL()+"/connector-plugins/FileStreamSource/config/validate", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("validate %q: %d %s", v.Name, resp.StatusCode, b)
		}
		var ans struct {
			Groups  []string          `json:"groups"`
			Configs []json.RawMessage `json:"configs"`
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			t.Fatal(err)
		}
		rv := recordedValidation{Config: v.Config}
		for _, g := range ans.Groups {
			if strings.HasPrefix(g, "Transforms: ") || strings.HasPrefix(g, "Predicates: ") {
				rv.Groups = append(rv.Groups, g)
			}
		}
		for _, ci := range ans.Configs {
			var n struct {
				Value struct {
					Name string `json:"name"`
				} `json:"value"`
			}
			_ = json.Unmarshal(ci, &n)
			if n.Value.Name == "transforms" || n.Value.Name == "predicates" ||
				strings.HasPrefix(n.Value.Name, "transforms.") || strings.HasPrefix(n.Value.Name, "predicates.") {
				rv.Configs = append(rv.Configs, compactJSON(t, withoutClassList(t, ci)))
			}
		}
		rec.Validations[v.Name] = rv
	}
	got, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("..", "worker", "transform", "testdata", "kafkaconnect.json")
	if *rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Kafka Connect's answers differ from %s (regenerate with -rewrite):\n%s", path, firstLineDiff(got, want))
	}
}

// withoutClassList empties the recommended values of a type key: the
// classes installed, which differ by worker (Kafka Connect's include
// Debezium transformations Tributary does not have).
func withoutClassList(t *testing.T, ci json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ci, &m); err != nil {
		t.Fatal(err)
	}
	var def struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	_ = json.Unmarshal(m["definition"], &def)
	if def.Type != "CLASS" || !strings.HasSuffix(def.Name, ".type") {
		return ci
	}
	var val map[string]json.RawMessage
	if err := json.Unmarshal(m["value"], &val); err != nil {
		t.Fatal(err)
	}
	val["recommended_values"] = json.RawMessage("[]")
	m["value"], _ = json.Marshal(val)
	out, _ := json.Marshal(m)
	return out
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func compactJSON(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func firstLineDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if !bytes.Equal(gl[i], wl[i]) {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(gl), len(wl))
}

package mongodb

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// inputLine is one line of testdata/events.txt or fieldexclude.txt.
type inputLine struct {
	kind string // change or read
	ns   string // read: <db>.<coll>
	doc  bson.Raw
}

func readInput(t *testing.T, path string) []inputLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []inputLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		in := inputLine{kind: kind}
		if kind == "read" {
			in.ns, rest, _ = strings.Cut(rest, " ")
		}
		var d bson.D
		if err := bson.UnmarshalExtJSON([]byte(rest), true, &d); err != nil {
			t.Fatalf("%s: %v", line[:min(len(line), 80)], err)
		}
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		in.doc = raw
		out = append(out, in)
	}
	return out
}

// golden is one line of testdata/golden-*.jsonl: a record as Kafka's
// JsonConverter (schemas.enable=true) wrote Debezium's.
type golden struct {
	Topic string
	Op    string
	Key   struct{ Schema, Payload any }
	Value struct{ Schema, Payload any }
}

func readGolden(t *testing.T, path string) []golden {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []golden
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var g golden
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// buildRecords makes Tributary's events of the input lines (without the
// tombstones, which Debezium's dispatcher adds after its event builder).
func buildRecords(t *testing.T, cfg Config, lines []inputLine) []sdk.SourceRecord {
	t.Helper()
	f, err := newFilters(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := newEnvelopes("golden", f)
	var out []sdk.SourceRecord
	for _, in := range lines {
		var r sdk.SourceRecord
		switch in.kind {
		case "change":
			ev, err := parseChangeEvent(in.doc)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := env.changeRecord(&ev, &r)
			if err != nil || !ok {
				t.Fatalf("change event %s: %v %v", in.doc, ok, err)
			}
		case "read":
			db, coll, _ := strings.Cut(in.ns, ".")
			// Debezium's builder, run without a stream position, reads
			// at cluster time 0.
			si := &sourceInfo{pos: position{hasTime: true}, snapshot: snapTrue}
			if err := env.readRecord(env.collection(db, coll), in.doc, si, "r", &r); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("record of %s does not match its schema: %v", in.doc, err)
		}
		out = append(out, r)
	}
	return out
}

// TestEventsMatchDebezium checks Tributary's events against the ones
// Debezium 3.6.1's MongoDB event builder made of the same change stream
// events and documents (integration/debezium-mongodb/gen-golden.sh): key
// and value schemas, and payloads byte for byte in their strings (after,
// before, updatedFields, the key's id), except the times Debezium takes
// from its clock (ts_ms of the envelope).
func TestEventsMatchDebezium(t *testing.T) {
	for _, tc := range []struct {
		name, input, golden, exclude string
	}{
		{"every-operation", "testdata/events.txt", "testdata/golden-events.jsonl", ""},
		{"field-exclude-list", "testdata/fieldexclude.txt", "testdata/golden-fieldexclude.jsonl",
			"shop.orders.secret,shop.*.nested.a.b,*.orders.arr.k,inv.items.qty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{TopicPrefix: "golden", FiltersMatchMode: "regex", FieldExclude: tc.exclude}
			lines := readInput(t, tc.input)
			want := readGolden(t, tc.golden)
			got := buildRecords(t, cfg, lines)
			if len(got) != len(want) {
				t.Fatalf("%d records, Debezium made %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Topic != w.Topic {
					t.Errorf("record %d: topic %q, want %q", i, g.Topic, w.Topic)
				}
				compare(t, i, "key schema", schemaJSON(g.KeySchema), w.Key.Schema)
				compare(t, i, "key", valueJSON(g.KeySchema, g.Key), w.Key.Payload)
				compare(t, i, "value schema", schemaJSON(g.ValueSchema), w.Value.Schema)
				gv := valueJSON(g.ValueSchema, g.Value).(map[string]any)
				wv := w.Value.Payload.(map[string]any)
				delete(gv, "ts_ms")
				delete(wv, "ts_ms")
				compare(t, i, "value", gv, wv)
			}
		})
	}
}

func compare(t *testing.T, i int, what string, got, want any) {
	t.Helper()
	// Round-trip through JSON so numbers compare as JSON numbers.
	gb, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(gb, &g)
	if !reflect.DeepEqual(g, want) {
		wb, _ := json.Marshal(want)
		t.Errorf("record %d: %s differs from Debezium's\n got: %s\nwant: %s", i, what, gb, wb)
	}
}

// schemaJSON renders a schema as Kafka's JsonConverter does.
func schemaJSON(s *schema.Schema) map[string]any {
	m := map[string]any{"type": s.Type.String(), "optional": s.Optional}
	if s.Name != "" {
		m["name"] = s.Name
	}
	if s.Version != 0 {
		m["version"] = s.Version
	}
	if s.Doc != "" {
		m["doc"] = s.Doc
	}
	if len(s.Parameters) > 0 {
		m["parameters"] = s.Parameters
	}
	if s.Default != nil {
		m["default"] = s.Default
	}
	switch s.Type {
	case schema.TypeStruct:
		fields := []any{}
		for _, f := range s.Fields {
			fm := schemaJSON(f.Schema)
			fm["field"] = f.Name
			fields = append(fields, fm)
		}
		m["fields"] = fields
	case schema.TypeArray:
		m["items"] = schemaJSON(s.ValueSchema)
	}
	return m
}

// valueJSON renders a value of s as JsonConverter's payload.
func valueJSON(s *schema.Schema, v any) any {
	if v == nil {
		return nil
	}
	switch s.Type {
	case schema.TypeStruct:
		st := v.(*schema.Struct)
		m := map[string]any{}
		for i, f := range s.Fields {
			fv := st.GetIndex(i)
			if fv == nil && f.Schema.Default != nil {
				fv = f.Schema.Default
			}
			m[f.Name] = valueJSON(f.Schema, fv)
		}
		return m
	case schema.TypeArray:
		var out []any
		for _, e := range v.([]any) {
			out = append(out, valueJSON(s.ValueSchema, e))
		}
		return out
	}
	return v
}

// TestExcludedTruncatedArray: an excluded field's truncated array is left
// out of the event (Debezium 3.6.1 fails the task on it instead: its
// TruncatedArray refuses the null name its field filter gives).
func TestExcludedTruncatedArray(t *testing.T) {
	ud := &updateDescription{truncated: []truncatedArray{{"secret", 1}, {"arr", 2}, {"list", 3}}}
	excl := exclusions{{"secret"}, {"arr", "k"}}
	s, err := updateStruct(ud, excl)
	if err != nil {
		t.Fatal(err)
	}
	got := valueJSON(updateDescriptionSchema, s).(map[string]any)["truncatedArrays"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["field"] != "list" {
		t.Fatalf("truncatedArrays %v, want only list", got)
	}
}

var _ = time.Now

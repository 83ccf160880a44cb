package transform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
)

// testdata/kafkaconnect.json holds Kafka Connect 4.4's answers about
// transformations and predicates (with Debezium 3.6.1's installed),
// recorded and kept current by the integration test
// TestTransformPluginAnswers. These tests compare Tributary's answers with
// them.

type recording struct {
	Plugins     []map[string]string        `json:"plugins"`
	Configs     map[string]json.RawMessage `json:"configs"`
	Validations map[string]struct {
		Config  map[string]string `json:"config"`
		Groups  []string          `json:"groups"`
		Configs []json.RawMessage `json:"configs"`
	} `json:"validations"`
}

func loadRecording(t *testing.T) recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kafkaconnect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// restKey is sdk.ConfigKeyInfo as the REST API writes it.
type restKey struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

func rest(k sdk.ConfigKeyInfo) restKey {
	return restKey{k.Name, k.Type, k.Required, k.DefaultValue, k.Importance, k.Documentation, k.Group, k.Order,
		k.Width, k.DisplayName, k.Dependents}
}

func canonicalJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(g)
	return string(b)
}

// Every transformation and predicate is listed with Kafka Connect's class
// and type, and GET /connector-plugins/{class}/config answers its
// definition as Kafka Connect does.
func TestDefinitionsAsKafkaConnect(t *testing.T) {
	rec := loadRecording(t)
	listed := map[string]string{}
	for _, p := range rec.Plugins {
		listed[p["class"]] = p["type"]
	}
	for _, p := range Plugins("4.4.0") {
		if listed[p.Class] != string(p.Kind) {
			t.Errorf("%s: type %q, Kafka Connect lists %q", p.Class, p.Kind, listed[p.Class])
		}
		keys, kind, ok := Definition(p.Class)
		if !ok || kind != p.Kind {
			t.Fatalf("Definition(%s): %v %v", p.Class, kind, ok)
		}
		got := make([]restKey, 0, len(keys))
		for _, k := range keys {
			got = append(got, rest(k))
		}
		var want any
		if err := json.Unmarshal(rec.Configs[p.Class], &want); err != nil {
			t.Fatalf("%s: no recorded definition: %v", p.Class, err)
		}
		if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
			t.Errorf("%s definition:\n got %s\nwant %s", p.Class, g, w)
		}
	}
}

// tributaryRefuses reports whether Tributary may add errors to an entry
// that Kafka Connect accepts: a type key (what the plugin's configure()
// refuses when the task starts in Kafka Connect, which Tributary refuses on
// create) and a transformation's predicate key (a predicate no predicates
// entry declares).
func tributaryRefuses(key string) bool {
	return strings.HasSuffix(key, ".type") || strings.HasPrefix(key, "transforms.") && strings.HasSuffix(key, ".predicate")
}

// sameErrors compares error lists; Java's regex messages are compared up
// to "Invalid regex:" (Go words its own).
func sameErrors(got, want []string) bool {
	norm := func(l []string) []string {
		out := make([]string, len(l))
		for i, e := range l {
			if j := strings.Index(e, "Invalid regex: "); j >= 0 {
				e = e[:j+len("Invalid regex: ")] + "…"
			}
			out[i] = e
		}
		return out
	}
	return slices.Equal(norm(got), norm(want))
}

// Validation of transforms and predicates settings answers as Kafka
// Connect's does, entry for entry, but for validationDeviations.
func TestValidationAsKafkaConnect(t *testing.T) {
	rec := loadRecording(t)
	for name, want := range rec.Validations {
		t.Run(name, func(t *testing.T) {
			props := map[string]string{"connector.class": "FileStreamSource", "name": "v", "topic": "t"}
			for k, v := range want.Config {
				props[k] = v
			}
			v := Validate(props, "4.4.0")
			if !slices.Equal(v.Groups, want.Groups) {
				t.Errorf("groups %q, want %q", v.Groups, want.Groups)
			}
			var got []sdk.ConfigInfo
			// The transforms and predicates keys come first, with the
			// alias errors (their definitions are the worker's).
			for _, key := range []string{TransformsKey, PredicatesKey} {
				for _, w := range want.Configs {
					var e struct {
						Value sdk.ConfigValueInfo `json:"value"`
					}
					_ = json.Unmarshal(w, &e)
					if e.Value.Name != key {
						continue
					}
					if errs := v.AliasErrors[key]; !slices.Equal(errs, e.Value.Errors) && !(len(errs) == 0 && len(e.Value.Errors) == 0) {
						t.Errorf("%s errors %q, want %q", key, errs, e.Value.Errors)
					}
				}
			}
			got = v.Configs
			var wantEntries []json.RawMessage
			for _, w := range want.Configs {
				var e struct {
					Value sdk.ConfigValueInfo `json:"value"`
				}
				_ = json.Unmarshal(w, &e)
				if e.Value.Name != TransformsKey && e.Value.Name != PredicatesKey {
					wantEntries = append(wantEntries, w)
				}
			}
			if len(got) != len(wantEntries) {
				t.Errorf("%d entries, want %d", len(got), len(wantEntries))
			}
			for i := 0; i < len(got) && i < len(wantEntries); i++ {
				c := got[i]
				c.Definition = sdk.ConfigKeyInfo(c.Definition)
				if c.Definition.Type == "CLASS" {
					c.Value.RecommendedValues = []string{}
				}
				entry := map[string]any{"definition": rest(c.Definition), "value": c.Value}
				var w map[string]any
				_ = json.Unmarshal(wantEntries[i], &w)
				var wv struct {
					Value sdk.ConfigValueInfo `json:"value"`
				}
				_ = json.Unmarshal(wantEntries[i], &wv)
				gotErrs, wantErrs := c.Value.Errors, wv.Value.Errors
				if tributaryRefuses(c.Value.Name) && len(gotErrs) > len(wantErrs) {
					gotErrs = gotErrs[:len(wantErrs)]
				}
				if !sameErrors(gotErrs, wantErrs) {
					t.Errorf("%s errors:\n got %q\nwant %q", c.Value.Name, c.Value.Errors, wantErrs)
				}
				// The rest of the entry must agree exactly.
				cv := c.Value
				cv.Errors = []string{}
				entry["value"] = cv
				w["value"].(map[string]any)["errors"] = []any{}
				if g, ww := canonicalJSON(t, entry), canonicalJSON(t, w); g != ww {
					t.Errorf("entry %d:\n got %s\nwant %s", i, g, ww)
				}
			}
		})
	}
}

package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

type jsonSchema struct {
	root      any
	canonical string
}

func (j *jsonSchema) Type() string      { return TypeJSON }
func (j *jsonSchema) Canonical() string { return j.canonical }

var jsonTypes = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// parseJSONSchema parses a JSON Schema: a JSON object (or boolean) whose
// keywords the compatibility rules read are well formed. The canonical text
// is the JSON without insignificant whitespace.
func parseJSONSchema(text string, _ []Dep) (Parsed, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, errInvalidSchema("Invalid schema %s, details: %v", text, err)
	}
	if dec.More() {
		return nil, errInvalidSchema("Invalid schema %s, details: trailing data after the schema", text)
	}
	if err := checkJSONSchema(root, "#"); err != nil {
		return nil, errInvalidSchema("Invalid schema %s, details: %v", text, err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, errInvalidSchema("Invalid schema %s, details: %v", text, err)
	}
	return &jsonSchema{root: root, canonical: b.String()}, nil
}

func checkJSONSchema(s any, path string) error {
	switch v := s.(type) {
	case bool:
		return nil
	case map[string]any:
		if t, ok := v["type"]; ok {
			if _, err := typeSet(t); err != nil {
				return fmt.Errorf("%s/type: %w", path, err)
			}
		}
		if p, ok := v["properties"]; ok {
			props, ok := p.(map[string]any)
			if !ok {
				return fmt.Errorf("%s/properties: not an object", path)
			}
			for name, sub := range props {
				if err := checkJSONSchema(sub, path+"/properties/"+name); err != nil {
					return err
				}
			}
		}
		if r, ok := v["required"]; ok {
			arr, ok := r.([]any)
			if !ok {
				return fmt.Errorf("%s/required: not an array", path)
			}
			for _, x := range arr {
				if _, ok := x.(string); !ok {
					return fmt.Errorf("%s/required: not an array of strings", path)
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not"} {
			if sub, ok := v[k]; ok {
				if _, isArr := sub.([]any); isArr && k == "items" {
					continue
				}
				if err := checkJSONSchema(sub, path+"/"+k); err != nil {
					return err
				}
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if sub, ok := v[k]; ok {
				arr, ok := sub.([]any)
				if !ok || len(arr) == 0 {
					return fmt.Errorf("%s/%s: not a non-empty array", path, k)
				}
				for i, x := range arr {
					if err := checkJSONSchema(x, fmt.Sprintf("%s/%s/%d", path, k, i)); err != nil {
						return err
					}
				}
			}
		}
		if e, ok := v["enum"]; ok {
			if _, ok := e.([]any); !ok {
				return fmt.Errorf("%s/enum: not an array", path)
			}
		}
		return nil
	}
	return fmt.Errorf("%s: a schema is an object or a boolean", path)
}

// typeSet returns the JSON types a "type" keyword allows.
func typeSet(t any) ([]string, error) {
	var out []string
	switch v := t.(type) {
	case string:
		out = []string{v}
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("not a type name: %v", x)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("not a string or an array of strings")
	}
	for _, s := range out {
		if !slices.Contains(jsonTypes, s) {
			return nil, fmt.Errorf("unknown type %q", s)
		}
	}
	return out, nil
}

// jsonCanRead lists why a document valid under writer might not be valid
// under reader: Confluent's main JSON Schema rules (types narrowed,
// properties removed from or added to open content models, required
// properties added, additionalProperties closed, enum narrowed, bounds
// tightened), in Confluent's message form.
func jsonCanRead(reader, writer *jsonSchema) []string {
	var c jsonChecker
	c.check(reader.root, writer.root, "#/")
	return c.problems
}

type jsonChecker struct{ problems []string }

func (c *jsonChecker) fail(kind, path string) {
	c.problems = append(c.problems, fmt.Sprintf("{errorType:\"%s\", description:\"Found incompatible change: Difference{jsonPath='%s', type=%s}\"}", kind, path, kind))
}

func (c *jsonChecker) check(r, w any, path string) {
	rm, rIsObj := r.(map[string]any)
	wm, wIsObj := w.(map[string]any)
	if rb, ok := r.(bool); ok {
		if !rb && !(isFalse(w)) {
			c.fail("SCHEMA_REMOVED", path)
		}
		return
	}
	if wb, ok := w.(bool); ok {
		if wb && rIsObj && len(rm) > 0 {
			c.fail("SCHEMA_ADDED", path)
		}
		return
	}
	if !rIsObj || !wIsObj {
		return
	}
	// Types: the reader must allow every type the writer allows (integer
	// is a number).
	rt, rok := rm["type"]
	wt, wok := wm["type"]
	if rok {
		rs, _ := typeSet(rt)
		var ws []string
		if wok {
			ws, _ = typeSet(wt)
		} else {
			ws = jsonTypes
		}
		for _, t := range ws {
			if !slices.Contains(rs, t) && !(t == "integer" && slices.Contains(rs, "number")) {
				if wok && len(ws) == 1 && len(rs) == 1 {
					if rs[0] == "integer" && t == "number" {
						c.fail("TYPE_NARROWED", path+"type")
					} else {
						c.fail("TYPE_CHANGED", path+"type")
					}
				} else {
					c.fail("TYPE_NARROWED", path+"type")
				}
				return
			}
		}
	}
	c.checkBounds(rm, wm, path)
	c.checkEnum(rm, wm, path)
	c.checkObject(rm, wm, path)
	if ri, ok := rm["items"]; ok {
		if wi, ok := wm["items"]; ok {
			c.check(ri, wi, path+"items/")
		} else if _, isArr := ri.([]any); !isArr && !isTrue(ri) {
			c.fail("ITEMS_ADDED", path+"items")
		}
	}
}

func isFalse(s any) bool { b, ok := s.(bool); return ok && !b }
func isTrue(s any) bool {
	switch v := s.(type) {
	case bool:
		return v
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// checkBounds: a reader maximum below the writer's (or set where the
// writer had none) rejects documents the writer accepted; minimums the
// other way round.
func (c *jsonChecker) checkBounds(rm, wm map[string]any, path string) {
	type bound struct {
		key        string
		upper      bool
		added, dec string
	}
	for _, b := range []bound{
		{"maxLength", true, "MAX_LENGTH_ADDED", "MAX_LENGTH_DECREASED"},
		{"minLength", false, "MIN_LENGTH_ADDED", "MIN_LENGTH_INCREASED"},
		{"maximum", true, "MAXIMUM_ADDED", "MAXIMUM_DECREASED"},
		{"minimum", false, "MINIMUM_ADDED", "MINIMUM_INCREASED"},
		{"maxItems", true, "MAX_ITEMS_ADDED", "MAX_ITEMS_DECREASED"},
		{"minItems", false, "MIN_ITEMS_ADDED", "MIN_ITEMS_INCREASED"},
		{"maxProperties", true, "MAX_PROPERTIES_ADDED", "MAX_PROPERTIES_DECREASED"},
		{"minProperties", false, "MIN_PROPERTIES_ADDED", "MIN_PROPERTIES_INCREASED"},
	} {
		rv, rok := num(rm[b.key])
		if !rok {
			continue
		}
		wv, wok := num(wm[b.key])
		switch {
		case !wok:
			c.fail(b.added, path+b.key)
		case b.upper && rv < wv, !b.upper && rv > wv:
			c.fail(b.dec, path+b.key)
		}
	}
	if rp, ok := rm["pattern"].(string); ok {
		wp, _ := wm["pattern"].(string)
		switch {
		case wp == "":
			c.fail("PATTERN_ADDED", path+"pattern")
		case wp != rp:
			c.fail("PATTERN_CHANGED", path+"pattern")
		}
	}
}

// checkEnum: the reader's enum must hold every writer value.
func (c *jsonChecker) checkEnum(rm, wm map[string]any, path string) {
	re, ok := rm["enum"].([]any)
	if !ok {
		return
	}
	we, ok := wm["enum"].([]any)
	if !ok {
		c.fail("ENUM_ARRAY_NARROWED", path+"enum")
		return
	}
	have := map[string]bool{}
	for _, v := range re {
		b, _ := json.Marshal(v)
		have[string(b)] = true
	}
	for _, v := range we {
		b, _ := json.Marshal(v)
		if !have[string(b)] {
			c.fail("ENUM_ARRAY_NARROWED", path+"enum")
			return
		}
	}
}

// openContent says whether an object schema allows properties it does not
// list (additionalProperties absent or true).
func openContent(m map[string]any) bool {
	ap, ok := m["additionalProperties"]
	return !ok || isTrue(ap)
}

func (c *jsonChecker) checkObject(rm, wm map[string]any, path string) {
	rp, _ := rm["properties"].(map[string]any)
	wp, _ := wm["properties"].(map[string]any)
	if !openContent(rm) && openContent(wm) {
		c.fail("ADDITIONAL_PROPERTIES_REMOVED", path+"additionalProperties")
	} else if ra, ok := rm["additionalProperties"].(map[string]any); ok && len(ra) > 0 {
		if wa, ok := wm["additionalProperties"]; ok && !isTrue(wa) {
			c.check(ra, wa, path+"additionalProperties/")
		} else if !ok || isTrue(wa) {
			c.fail("ADDITIONAL_PROPERTIES_NARROWED", path+"additionalProperties")
		}
	}
	names := make([]string, 0, len(rp)+len(wp))
	for n := range rp {
		names = append(names, n)
	}
	for n := range wp {
		if _, ok := rp[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	rreq := stringSet(rm["required"])
	wreq := stringSet(wm["required"])
	for _, n := range names {
		rs, rok := rp[n]
		ws, wok := wp[n]
		ppath := path + "properties/" + n
		switch {
		case rok && wok:
			c.check(rs, ws, ppath+"/")
		case wok && !rok:
			// The writer's documents may carry it: a closed reader rejects it.
			if !openContent(rm) {
				c.fail("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", ppath)
			}
		case rok && !wok:
			// The writer's open model allowed any value under this name.
			if openContent(wm) && !isTrue(rs) {
				c.fail("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", ppath)
			}
		}
	}
	for n := range rreq {
		if !wreq[n] {
			if m, ok := rp[n].(map[string]any); ok {
				if _, hasDefault := m["default"]; hasDefault {
					continue
				}
			}
			c.fail("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", path+"required/"+n)
		}
	}
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	arr, _ := v.([]any)
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out[s] = true
		}
	}
	return out
}

package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// JSONSchemaClass is Confluent's JSON Schema converter.
const JSONSchemaClass = "io.confluent.connect.json.JsonSchemaConverter"

// JSON Schema properties of Confluent's JsonSchemaData.
const (
	jsNamespace = "io.confluent.connect.json"
	jsOneOf     = jsNamespace + ".OneOf"
	jsEnum      = jsNamespace + ".Enum"
	jsIndexProp = "connect.index"
)

// JSONSchemaConverter is Confluent's
// io.confluent.connect.json.JsonSchemaConverter: the record as JSON (as
// JsonConverter writes a payload) after Confluent's wire-format header,
// its schema a JSON Schema in the registry, mapped to and from Connect
// schemas as Confluent's JsonSchemaData does (connect.type, connect.index,
// connect.version, connect.parameters, title as the name, oneOf with null
// for optional schemas, maps as objects with additionalProperties or
// arrays of key/value objects).
type JSONSchemaConverter struct {
	registrySettings
	opts                schema.JSONOptions
	additional          bool // object.additional.properties (default true)
	optionalNonRequired bool // use.optional.for.nonrequired
	json                *JSONConverter

	mu      sync.Mutex
	written map[*schema.Schema]*avroWritten
	read    map[readKey]*schema.Schema
	titles  map[int]string // schema id → its title, for the subject
}

// NewJSONSchema returns a JsonSchemaConverter configured with Confluent's
// settings: those of the registry client (sr.NewFromConfig),
// auto.register.schemas, use.schema.id, the subject name strategies,
// decimal.format (BASE64 or NUMERIC), object.additional.properties and
// use.optional.for.nonrequired.
func NewJSONSchema(isKey bool, config map[string]string, logger *slog.Logger) (*JSONSchemaConverter, error) {
	r := &configReader{config: config}
	c := &JSONSchemaConverter{additional: true,
		written: map[*schema.Schema]*avroWritten{}, read: map[readKey]*schema.Schema{}, titles: map[int]string{}}
	c.registrySettings = r.registry(isKey, logger)
	r.boolean("object.additional.properties", &c.additional)
	r.boolean("use.optional.for.nonrequired", &c.optionalNonRequired)
	numeric := false
	switch strings.ToUpper(strings.TrimSpace(config["decimal.format"])) {
	case "", "BASE64":
	case "NUMERIC":
		numeric = true
		c.opts.DecimalFormat = "NUMERIC"
	default:
		r.errs = append(r.errs, fmt.Errorf("invalid value %s for configuration decimal.format: must be BASE64 or NUMERIC", config["decimal.format"]))
	}
	c.json = &JSONConverter{schemas: true, replaceNull: true, numericDecimal: numeric}
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("convert: JsonSchemaConverter: %w", errors.Join(r.errs...))
	}
	return c, nil
}

// FromConnect implements Converter.
func (c *JSONSchemaConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		if s != nil && !s.Optional && s.Default == nil {
			return nil, fmt.Errorf("convert: failed to serialize JSON data from topic %s: null value for a required schema", topic)
		}
		return nil, nil
	}
	if s == nil {
		return nil, fmt.Errorf("convert: failed to serialize JSON data from topic %s: JsonSchemaConverter needs a schema", topic)
	}
	c.mu.Lock()
	w, ok := c.written[s]
	c.mu.Unlock()
	if !ok {
		var b []byte
		var err error
		if b, err = c.jsonSchemaOf(nil, s, -1, false); err != nil {
			return nil, fmt.Errorf("convert: failed to serialize JSON data from topic %s: %w", topic, err)
		}
		w = &avroWritten{text: string(b), recordName: s.Name, ids: map[string]int{}}
		if w.recordName == "" {
			w.recordName = "object"
		}
		c.mu.Lock()
		if len(c.written) > 1000 {
			clear(c.written)
		}
		c.written[s] = w
		c.mu.Unlock()
	}
	subject := c.subject(topic, c.isKey, w.recordName)
	c.mu.Lock()
	id, ok := w.ids[subject]
	c.mu.Unlock()
	if ok {
		var err error
		if ok, err = c.stillWriter(subject, id); err != nil {
			return nil, err
		}
	}
	if !ok {
		var err error
		if id, _, err = c.writerSchema(subject, sr.Schema{Schema: w.text, Type: "JSON"}); err != nil {
			return nil, err
		}
		c.mu.Lock()
		w.ids[subject] = id
		c.mu.Unlock()
	}
	out := sr.AppendHeader(nil, id)
	out, err := schema.AppendJSON(out, s, v, c.opts)
	if err != nil {
		return nil, fmt.Errorf("convert: failed to serialize JSON data from topic %s: %w", topic, err)
	}
	return out, nil
}

// jsonSchemaOf writes JsonSchemaData.fromConnectSchema's schema for s
// (index: the field's connect.index, -1 for none).
func (c *JSONSchemaConverter) jsonSchemaOf(b []byte, s *schema.Schema, index int, ignoreOptional bool) ([]byte, error) {
	var err error
	props := func(b []byte, connectType string) []byte {
		if s.Name != "" {
			b = append(b, `,"title":`...)
			b = jackson.AppendString(b, s.Name)
		}
		if s.Doc != "" {
			b = append(b, `,"description":`...)
			b = jackson.AppendString(b, s.Doc)
		}
		if connectType != "" {
			b = append(b, `,"connect.type":`...)
			b = jackson.AppendString(b, connectType)
		}
		if s.Version != 0 {
			b = append(b, `,"connect.version":`...)
			b = strconv.AppendInt(b, int64(s.Version), 10)
		}
		n := 0
		for _, k := range sortedParams(s.Parameters) {
			if strings.HasPrefix(k, jsNamespace) {
				continue
			}
			if n == 0 {
				b = append(b, `,"connect.parameters":{`...)
			} else {
				b = append(b, ',')
			}
			n++
			b = jackson.AppendString(b, k)
			b = append(b, ':')
			b = jackson.AppendString(b, s.Parameters[k])
		}
		if n > 0 {
			b = append(b, '}')
		}
		if s.Default != nil {
			if d, err2 := schema.AppendJSON(nil, s, s.Default, c.opts); err2 == nil {
				b = append(b, `,"default":`...)
				b = append(b, d...)
			}
		}
		return b
	}
	indexProp := func(b []byte) []byte {
		if index >= 0 {
			b = append(b, `,"connect.index":`...)
			b = strconv.AppendInt(b, int64(index), 10)
		}
		return b
	}
	// Optional non-union schemas: oneOf null and the schema.
	if s.Optional && !ignoreOptional && !(s.Type == schema.TypeStruct && s.Name == jsOneOf) {
		b = append(b, `{"oneOf":[{"type":"null"},`...)
		if b, err = c.jsonSchemaOf(b, nonOptional(s), -1, true); err != nil {
			return nil, err
		}
		b = append(b, ']')
		return append(indexProp(b), '}'), nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		b = append(b, `{"type":"integer"`...)
		b = props(b, s.Type.String())
	case schema.TypeFloat32, schema.TypeFloat64:
		b = append(b, `{"type":"number"`...)
		b = props(b, s.Type.String())
	case schema.TypeBoolean:
		b = append(b, `{"type":"boolean"`...)
		b = props(b, "")
	case schema.TypeString:
		if _, ok := s.Parameters[jsEnum]; ok {
			b = append(b, `{"type":"string","enum":[`...)
			n := 0
			for _, k := range sortedParams(s.Parameters) {
				if sym, ok := strings.CutPrefix(k, jsEnum+"."); ok {
					if n > 0 {
						b = append(b, ',')
					}
					n++
					b = jackson.AppendString(b, sym)
				}
			}
			b = append(b, ']')
		} else {
			b = append(b, `{"type":"string"`...)
		}
		b = props(b, "")
	case schema.TypeBytes:
		if s.Name == schema.DecimalName && c.opts.DecimalFormat == "NUMERIC" {
			b = append(b, `{"type":"number"`...)
		} else {
			b = append(b, `{"type":"string"`...)
		}
		b = props(b, "bytes")
	case schema.TypeArray:
		b = append(b, `{"type":"array","items":`...)
		if b, err = c.jsonSchemaOf(b, s.ValueSchema, -1, false); err != nil {
			return nil, err
		}
		b = props(b, "")
	case schema.TypeMap:
		if s.KeySchema.Type == schema.TypeString && !s.KeySchema.Optional {
			b = append(b, `{"type":"object","additionalProperties":`...)
			if b, err = c.jsonSchemaOf(b, s.ValueSchema, -1, false); err != nil {
				return nil, err
			}
		} else {
			b = append(b, `{"type":"array","items":{"type":"object","properties":{"key":`...)
			if b, err = c.jsonSchemaOf(b, s.KeySchema, 0, false); err != nil {
				return nil, err
			}
			b = append(b, `,"value":`...)
			if b, err = c.jsonSchemaOf(b, s.ValueSchema, 1, false); err != nil {
				return nil, err
			}
			b = append(b, `}}`...)
		}
		b = props(b, "map")
	case schema.TypeStruct:
		if s.Name == jsOneOf {
			b = append(b, `{"oneOf":[`...)
			if s.Optional {
				b = append(b, `{"type":"null"},`...)
			}
			for i, f := range s.Fields {
				if i > 0 {
					b = append(b, ',')
				}
				if b, err = c.jsonSchemaOf(b, nonOptional(f.Schema), f.Index, true); err != nil {
					return nil, err
				}
			}
			b = append(b, ']')
			return append(indexProp(b), '}'), nil
		}
		b = append(b, `{"type":"object","properties":{`...)
		for i, f := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, f.Name)
			b = append(b, ':')
			if b, err = c.jsonSchemaOf(b, f.Schema, f.Index, false); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
		if !c.additional {
			b = append(b, `,"additionalProperties":false`...)
		}
		b = props(b, "")
	default:
		return nil, fmt.Errorf("convert: unsupported schema type %v", s.Type)
	}
	return append(indexProp(b), '}'), nil
}

// ToConnect implements Converter.
func (c *JSONSchemaConverter) ToConnect(topic string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	id, payload, err := sr.ParseHeader(b)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to JSON: %w", topic, err)
	}
	s, err := c.readSchema(topic, id)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to JSON: %w", topic, err)
	}
	raw, err := decodeJSON(payload)
	if err != nil {
		return nil, nil, err
	}
	v, err := c.json.toConnect(s, raw, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to JSON: schema id %d: %w", topic, id, err)
	}
	return s, v, nil
}

func (c *JSONSchemaConverter) readSchema(topic string, id int) (*schema.Schema, error) {
	c.mu.Lock()
	title, known := c.titles[id]
	c.mu.Unlock()
	if known {
		c.mu.Lock()
		s, ok := c.read[readKey{id, c.subject(topic, c.isKey, cmpOr(title, "object"))}]
		c.mu.Unlock()
		if ok {
			return s, nil
		}
	}
	rs, err := c.client.SchemaByID(registryCtx(), id)
	if err != nil {
		return nil, fmt.Errorf("fetching schema id %d: %w", id, err)
	}
	if rs.Type != "JSON" {
		return nil, fmt.Errorf("schema id %d is a %s schema, not JSON", id, cmpOr(rs.Type, "AVRO"))
	}
	doc, err := decodeOrdered(rs.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema id %d is not JSON: %w", id, err)
	}
	root, _ := doc.(map[string]any)
	title, _ = root["title"].(string)
	subject := c.subject(topic, c.isKey, cmpOr(title, "object"))
	key := readKey{id, subject}
	c.mu.Lock()
	s, ok := c.read[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	got, err := c.client.Lookup(registryCtx(), subject, rs, false)
	if err != nil {
		return nil, fmt.Errorf("looking up the version of schema id %d under subject %s: %w", id, subject, err)
	}
	p := jsParser{root: root, optionalNonRequired: c.optionalNonRequired, conv: c.json}
	if s, err = p.convert(doc, got.Version, false, 0); err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	c.mu.Lock()
	if len(c.read) > 1000 {
		clear(c.read)
	}
	c.read[key] = s
	if len(c.titles) > 1000 {
		clear(c.titles)
	}
	c.titles[id] = title
	c.mu.Unlock()
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jsParser is JsonSchemaData.toConnectSchema over a decoded JSON Schema.
type jsParser struct {
	root                map[string]any
	optionalNonRequired bool
	conv                *JSONConverter
}

func (p *jsParser) resolve(node map[string]any, depth int) (map[string]any, error) {
	for ref, ok := node["$ref"].(string); ok; ref, ok = node["$ref"].(string) {
		if depth > maxDepth {
			return nil, errors.New("convert: $ref chain too deep")
		}
		depth++
		if ref == "#" {
			node = p.root
			continue
		}
		path, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			return nil, fmt.Errorf("convert: unsupported $ref %q (only local references)", ref)
		}
		var cur any = p.root
		for _, part := range strings.Split(path, "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("convert: $ref %q does not resolve", ref)
		}
		node = next
	}
	return node, nil
}

func jsonInt(v any) (int, bool) {
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func (p *jsParser) convert(doc any, version int, forceOptional bool, depth int) (*schema.Schema, error) {
	if depth > maxDepth {
		return nil, errors.New("convert: JSON schema nested too deeply")
	}
	node, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("convert: unsupported JSON schema %v", doc)
	}
	node, err := p.resolve(node, depth)
	if err != nil {
		return nil, err
	}
	out := &schema.Schema{}
	ctype, _ := node["connect.type"].(string)
	typ, _ := node["type"].(string)
	if types, ok := node["type"].([]any); ok {
		// ["null", T]: an optional T.
		var rest []any
		for _, t := range types {
			if t == "null" {
				forceOptional = true
			} else {
				rest = append(rest, t)
			}
		}
		if len(rest) != 1 {
			return nil, fmt.Errorf("convert: unsupported type list %v", types)
		}
		typ, _ = rest[0].(string)
	}
	var alts []any
	if a, ok := node["oneOf"].([]any); ok {
		alts = a
	} else if a, ok := node["anyOf"].([]any); ok {
		alts = a
	}
	switch {
	case alts != nil:
		if len(alts) == 1 {
			return p.convert(alts[0], 0, forceOptional, depth+1)
		}
		isNull := func(a any) bool {
			m, _ := a.(map[string]any)
			return m != nil && m["type"] == "null"
		}
		if len(alts) == 2 && (isNull(alts[0]) || isNull(alts[1])) {
			other := alts[0]
			if isNull(other) {
				other = alts[1]
			}
			return p.convert(other, version, true, depth+1)
		}
		out.Type, out.Name = schema.TypeStruct, jsOneOf
		i := 0
		for _, a := range alts {
			if isNull(a) {
				out.Optional = true
				continue
			}
			fs, err := p.convert(a, 0, true, depth+1)
			if err != nil {
				return nil, err
			}
			out.Fields = append(out.Fields, schema.Field{Name: jsOneOf + ".field." + strconv.Itoa(i), Index: i, Schema: fs})
			i++
		}
		if forceOptional {
			out.Optional = true
		}
		return out, nil
	case node["enum"] != nil:
		out.Type = schema.TypeString
		out.Parameters = map[string]string{jsEnum: ""}
		list, _ := node["enum"].([]any)
		for _, e := range list {
			sym := fmt.Sprint(e)
			if e == nil {
				sym = "<NULL>"
			}
			out.Parameters[jsEnum+"."+sym] = sym
		}
	case typ == "boolean":
		out.Type = schema.TypeBoolean
	case typ == "integer" || typ == "number":
		switch ctype {
		case "":
			out.Type = schema.TypeFloat64
			if typ == "integer" {
				out.Type = schema.TypeInt64
			}
		case "int8":
			out.Type = schema.TypeInt8
		case "int16":
			out.Type = schema.TypeInt16
		case "int32":
			out.Type = schema.TypeInt32
		case "int64":
			out.Type = schema.TypeInt64
		case "float32":
			out.Type = schema.TypeFloat32
		case "float64":
			out.Type = schema.TypeFloat64
		case "bytes":
			out.Type = schema.TypeBytes
		default:
			return nil, fmt.Errorf("convert: unsupported connect.type %q", ctype)
		}
	case typ == "string":
		out.Type = schema.TypeString
		if ctype == "bytes" {
			out.Type = schema.TypeBytes
		}
	case typ == "array":
		items, ok := node["items"]
		if !ok {
			return nil, errors.New("convert: array schema did not specify the items type")
		}
		im, _ := items.(map[string]any)
		if ctype == "map" && im != nil {
			props, _ := im["properties"].(map[string]any)
			k, err := p.convert(props["key"], 0, false, depth+1)
			if err != nil {
				return nil, err
			}
			v, err := p.convert(props["value"], 0, false, depth+1)
			if err != nil {
				return nil, err
			}
			out.Type, out.KeySchema, out.ValueSchema = schema.TypeMap, k, v
		} else {
			e, err := p.convert(items, 0, false, depth+1)
			if err != nil {
				return nil, err
			}
			out.Type, out.ValueSchema = schema.TypeArray, e
		}
	case typ == "object" || typ == "" && node["properties"] != nil:
		if ctype == "map" {
			v, err := p.convert(node["additionalProperties"], 0, false, depth+1)
			if err != nil {
				return nil, err
			}
			out.Type, out.KeySchema, out.ValueSchema = schema.TypeMap, schema.String, v
			break
		}
		out.Type = schema.TypeStruct
		props, _ := node["properties"].(map[string]any)
		required := map[string]bool{}
		if list, ok := node["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		type prop struct {
			name  string
			index int
		}
		var order []prop
		names, _ := props[orderKey].([]string)
		if names == nil { // not from decodeOrdered
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
		}
		for n, name := range names {
			m, _ := props[name].(map[string]any)
			idx, ok := jsonInt(m[jsIndexProp])
			if !ok {
				idx = n // JsonSchemaData: the properties without an index in their order
			}
			order = append(order, prop{name, idx})
		}
		sort.SliceStable(order, func(i, j int) bool { return order[i].index < order[j].index })
		for i, pr := range order {
			fs, err := p.convert(props[pr.name], 0, p.optionalNonRequired && !required[pr.name], depth+1)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", pr.name, err)
			}
			out.Fields = append(out.Fields, schema.Field{Name: pr.name, Index: i, Schema: fs})
		}
	default:
		return nil, fmt.Errorf("convert: unsupported JSON schema type %q", typ)
	}
	if title, ok := node["title"].(string); ok {
		out.Name = title
	}
	if v, ok := jsonInt(node["connect.version"]); ok {
		out.Version = int32(v)
	} else if version > 0 {
		out.Version = int32(version)
	}
	if d, ok := node["description"].(string); ok {
		out.Doc = d
	}
	if params, ok := node["connect.parameters"].(map[string]any); ok {
		if out.Parameters == nil {
			out.Parameters = map[string]string{}
		}
		for k, v := range params {
			if s, ok := v.(string); ok {
				out.Parameters[k] = s
			}
		}
	}
	if forceOptional {
		out.Optional = true
	}
	if def, ok := node["default"]; ok && def != nil {
		if v, err := p.conv.toConnect(out, stripOrder(def), depth); err == nil {
			out.Default = v
		}
	}
	return out, nil
}

// orderKey holds, in each object decodeOrdered returns, the object's keys
// in document order (JSON Schema properties keep it as Connect fields).
const orderKey = "\x00order"

// decodeOrdered decodes JSON with numbers as json.Number, recording each
// object's key order under orderKey.
func decodeOrdered(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := decodeOrderedValue(d, 0)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("convert: trailing data after the JSON schema")
	}
	return v, nil
}

func decodeOrderedValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("convert: JSON nested too deeply")
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		var order []string
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrderedValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; !dup {
				order = append(order, k)
			}
			m[k] = v
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		m[orderKey] = order
		return m, nil
	case json.Delim('['):
		list := []any{}
		for d.More() {
			v, err := decodeOrderedValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		return list, nil
	}
	return tok, nil
}

// stripOrder removes decodeOrdered's key lists from a decoded value (a
// default), leaving plain JSON.
func stripOrder(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if k != orderKey {
				out[k] = stripOrder(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = stripOrder(e)
		}
		return out
	}
	return v
}

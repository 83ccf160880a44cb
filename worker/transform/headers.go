package transform

import (
	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// InsertHeader, DropHeaders and HeaderFrom: the transformations of headers.

var insertHeaderKeys = []Key{
	{Name: "header", Type: TypeString, Default: NoDefault, Validator: nonNull, Importance: "HIGH", Doc: "The name of the header."},
	{Name: "value.literal", Type: TypeString, Default: NoDefault, Validator: nonNull, Importance: "HIGH",
		Doc: "The literal value that is to be set as the header value on all records."},
}

// insertHeader is org.apache.kafka.connect.transforms.InsertHeader: the
// literal is parsed as Values.parseString does (as SimpleHeaderConverter
// reads header strings), so "42" is an INT8 header.
type insertHeader struct {
	h sdk.Header
}

func newInsertHeader(c Config) (Transformation, error) {
	s, v := convert.ParseString(c.String("value.literal"))
	return &insertHeader{h: sdk.Header{Key: c.String("header"), Schema: s, Value: v}}, nil
}

func (t *insertHeader) Apply(r *Record) (bool, error) {
	r.Headers = r.withHeader(t.h)
	return true, nil
}

var dropHeadersKeys = []Key{
	{Name: "headers", Type: TypeList, Default: NoDefault, Validator: anyNonDuplicateValues(false, false), Importance: "HIGH",
		Doc: "The name of the headers to be removed."},
}

// dropHeaders is org.apache.kafka.connect.transforms.DropHeaders.
type dropHeaders struct {
	names map[string]bool
}

func newDropHeaders(c Config) (Transformation, error) {
	t := &dropHeaders{names: map[string]bool{}}
	for _, h := range c.List("headers") {
		t.names[h] = true
	}
	return t, nil
}

func (t *dropHeaders) Apply(r *Record) (bool, error) {
	drop := 0
	for _, h := range r.Headers {
		if t.names[h.Key] {
			drop++
		}
	}
	if drop == 0 {
		return true, nil
	}
	out := make([]sdk.Header, 0, len(r.Headers)-drop)
	for _, h := range r.Headers {
		if !t.names[h.Key] {
			out = append(out, h)
		}
	}
	r.Headers = out
	return true, nil
}

var headerFromKeys = []Key{
	{Name: "fields", Type: TypeList, Default: NoDefault, Validator: nonEmptyList, Importance: "HIGH",
		Doc: "Field names in the record whose values are to be copied or moved to headers."},
	{Name: "headers", Type: TypeList, Default: NoDefault, Validator: nonEmptyList, Importance: "HIGH",
		Doc: "Header names, in the same order as the field names listed in the fields configuration property."},
	{Name: "operation", Type: TypeString, Default: NoDefault, Validator: validString("move", "copy"), Importance: "HIGH",
		Doc: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."},
	replaceNullWithDefaultKey,
}

// replaceNullWithDefaultKey is the replace.null.with.default setting of
// Kafka's transformations (KIP-1040).
var replaceNullWithDefaultKey = Key{Name: "replace.null.with.default", Type: TypeBoolean, Default: true, Importance: "MEDIUM",
	Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."}

// headerFrom is org.apache.kafka.connect.transforms.HeaderFrom$Key/$Value.
type headerFrom struct {
	side        side
	fields      []string
	headers     []string
	move        bool
	withDefault bool
	cache       schemaCache
}

func newHeaderFrom(c Config, s side) (Transformation, error) {
	t := &headerFrom{side: s, fields: c.List("fields"), headers: c.List("headers"),
		move: c.String("operation") == "move", withDefault: c.Bool("replace.null.with.default")}
	if len(t.fields) != len(t.headers) {
		return nil, &ConfigError{"'fields' config must have the same number of elements as 'headers' config."}
	}
	return t, nil
}

func (t *headerFrom) purpose() string {
	if t.move {
		return "header move"
	}
	return "header copy"
}

func (t *headerFrom) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if s == nil {
		m, err := requireMap(v, t.purpose())
		if err != nil {
			return false, err
		}
		updated := m
		if t.move {
			updated = t.side.writable(r, m, 0)
		}
		added := make([]sdk.Header, 0, len(t.fields))
		for i, f := range t.fields {
			added = append(added, sdk.Header{Key: t.headers[i], Value: m[f]})
		}
		if t.move {
			for _, f := range t.fields {
				delete(updated, f)
			}
			t.side.setOwned(r, updated)
		}
		r.Headers = r.withHeader(added...)
		return true, nil
	}
	st, err := requireStruct(v, t.purpose())
	if err != nil {
		return false, err
	}
	added := make([]sdk.Header, 0, len(t.fields))
	for i, f := range t.fields {
		fs := s.Field(f)
		if fs == nil {
			return false, failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
		}
		var fv any
		if sf := st.Schema().Field(f); sf != nil {
			fv = get(st, sf.Index, t.withDefault)
		}
		if fv == nil && !fs.Schema.Optional {
			return false, dataErr("A null value requires an optional schema but was %s", schemaString(fs.Schema))
		}
		added = append(added, sdk.Header{Key: t.headers[i], Schema: fs.Schema, Value: fv})
	}
	if t.move {
		ns := t.cache.get(s)
		if ns == nil {
			ns = copyBasics(s, schema.TypeStruct)
			for _, f := range s.Fields {
				if !contains(t.fields, f.Name) {
					if err := withField(ns, f.Name, f.Schema); err != nil {
						return false, err
					}
				}
			}
			t.cache.put(s, ns)
		}
		out := schema.NewStruct(ns)
		for i, f := range ns.Fields {
			j, err := fieldIndex(st, f.Name)
			if err != nil {
				return false, err
			}
			if err := put(out, i, get(st, j, t.withDefault)); err != nil {
				return false, err
			}
		}
		t.side.set(r, ns, out)
	}
	r.Headers = r.withHeader(added...)
	return true, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

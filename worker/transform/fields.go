package transform

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// InsertField, ReplaceField, MaskField, ValueToKey, HoistField and
// ExtractField: the transformations of a key's or value's fields.

const optionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

var insertFieldKeys = []Key{
	{Name: "topic.field", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Field name for Kafka topic. " + optionalityDoc},
	{Name: "partition.field", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Field name for Kafka partition. " + optionalityDoc},
	{Name: "offset.field", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Field name for Kafka offset - only applicable to sink connectors.<br/>" + optionalityDoc},
	{Name: "timestamp.field", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Field name for record timestamp. " + optionalityDoc},
	{Name: "static.field", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Field name for static data field. " + optionalityDoc},
	{Name: "static.value", Type: TypeString, Default: nil, Importance: "MEDIUM", Doc: "Static field value, if field name configured."},
	replaceNullWithDefaultKey,
}

// insertion is InsertField's InsertionSpec: a field name with a ! (required)
// or ? (optional, the default) suffix.
type insertion struct {
	name     string
	optional bool
	set      bool
}

func parseInsertion(c Config, key string) insertion {
	if c.IsNull(key) {
		return insertion{}
	}
	spec := c.String(key)
	switch {
	case strings.HasSuffix(spec, "?"):
		return insertion{spec[:len(spec)-1], true, true}
	case strings.HasSuffix(spec, "!"):
		return insertion{spec[:len(spec)-1], false, true}
	}
	return insertion{spec, true, true}
}

func (in insertion) schema(required, optional *schema.Schema) *schema.Schema {
	if in.optional {
		return optional
	}
	return required
}

var optionalTimestamp = schema.Timestamp.AsOptional()

// insertField is InsertField$Key/$Value.
type insertField struct {
	side                                    side
	topic, partition, offset, ts, staticFld insertion
	staticValue                             string
	withDefault                             bool
	cache                                   schemaCache
}

func newInsertField(c Config, s side) (Transformation, error) {
	t := &insertField{side: s, topic: parseInsertion(c, "topic.field"), partition: parseInsertion(c, "partition.field"),
		offset: parseInsertion(c, "offset.field"), ts: parseInsertion(c, "timestamp.field"),
		staticFld: parseInsertion(c, "static.field"), staticValue: c.String("static.value"),
		withDefault: c.Bool("replace.null.with.default")}
	if !t.topic.set && !t.partition.set && !t.offset.set && !t.ts.set && !t.staticFld.set {
		return nil, &ConfigError{"No field insertion configured"}
	}
	if t.staticFld.set && c.IsNull("static.value") {
		return nil, invalid("static.value", nil, "No value specified for static field: "+t.staticFld.name)
	}
	return t, nil
}

const insertPurpose = "field insertion"

func (t *insertField) sinkOffset(r *Record) (int64, error) {
	if !r.Sink {
		return 0, dataErr("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", insertPurpose)
	}
	return r.Offset, nil
}

func (t *insertField) Apply(r *Record) (bool, error) {
	v := t.side.value(r)
	if v == nil {
		return true, nil
	}
	if t.side.schema(r) == nil {
		m, err := requireMap(v, insertPurpose)
		if err != nil {
			return false, err
		}
		out := t.side.writable(r, m, 5)
		if t.topic.set {
			out[t.topic.name] = r.Topic
		}
		if t.partition.set && r.HasPartition {
			out[t.partition.name] = r.Partition
		}
		if t.offset.set {
			o, err := t.sinkOffset(r)
			if err != nil {
				return false, err
			}
			out[t.offset.name] = o
		}
		if t.ts.set && !r.Timestamp.IsZero() {
			out[t.ts.name] = r.Timestamp.UnixMilli()
		}
		if t.staticFld.set {
			out[t.staticFld.name] = t.staticValue
		}
		t.side.setOwned(r, out)
		return true, nil
	}
	st, err := requireStruct(v, insertPurpose)
	if err != nil {
		return false, err
	}
	in := st.Schema()
	ns := t.cache.get(in)
	if ns == nil {
		if ns, err = t.updatedSchema(in); err != nil {
			return false, err
		}
		t.cache.put(in, ns)
	}
	out := schema.NewStruct(ns)
	for i := range in.Fields {
		if err := put(out, i, get(st, i, t.withDefault)); err != nil {
			return false, err
		}
	}
	next := len(in.Fields)
	set := func(in insertion, v any, ok bool) error {
		if !in.set {
			return nil
		}
		i := next
		next++
		if !ok {
			return nil
		}
		return put(out, i, v)
	}
	if err := set(t.topic, r.Topic, true); err != nil {
		return false, err
	}
	if err := set(t.partition, r.Partition, r.HasPartition); err != nil {
		return false, err
	}
	if t.offset.set {
		o, err := t.sinkOffset(r)
		if err != nil {
			return false, err
		}
		if err := set(t.offset, o, true); err != nil {
			return false, err
		}
	}
	if err := set(t.ts, r.Timestamp, !r.Timestamp.IsZero()); err != nil {
		return false, err
	}
	if err := set(t.staticFld, t.staticValue, true); err != nil {
		return false, err
	}
	t.side.set(r, ns, out)
	return true, nil
}

func (t *insertField) updatedSchema(in *schema.Schema) (*schema.Schema, error) {
	ns := copyBasics(in, schema.TypeStruct)
	for _, f := range in.Fields {
		if err := withField(ns, f.Name, f.Schema); err != nil {
			return nil, err
		}
	}
	for _, add := range []struct {
		in        insertion
		req, optl *schema.Schema
	}{
		{t.topic, schema.String, schema.OptionalString},
		{t.partition, schema.Int32, schema.OptionalInt32},
		{t.offset, schema.Int64, schema.OptionalInt64},
		{t.ts, schema.Timestamp, optionalTimestamp},
		{t.staticFld, schema.String, schema.OptionalString},
	} {
		if add.in.set {
			if err := withField(ns, add.in.name, add.in.schema(add.req, add.optl)); err != nil {
				return nil, err
			}
		}
	}
	return ns, nil
}

var replaceFieldKeys = []Key{
	{Name: "exclude", Type: TypeList, Default: []string{}, Validator: anyNonDuplicateValues(true, false), Importance: "MEDIUM",
		Doc: "Fields to exclude. This takes precedence over the fields to include."},
	{Name: "include", Type: TypeList, Default: []string{}, Validator: anyNonDuplicateValues(true, false), Importance: "MEDIUM",
		Doc: "Fields to include. If specified, only these fields will be used."},
	{Name: "renames", Type: TypeList, Default: []string{}, Validator: func(name string, v any) error {
		l, _ := v.([]string)
		_, err := parseRenames(l)
		return err
	}, Importance: "MEDIUM", Doc: "Field rename mappings."},
	replaceNullWithDefaultKey,
}

// javaSplit is String.split(sep) for a one-character literal separator:
// trailing empty parts are dropped.
func javaSplit(s string, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" && s != "" {
		return []string{}
	}
	return parts
}

// parseRenames is ReplaceField.parseRenameMappings.
func parseRenames(mappings []string) (map[string]string, error) {
	m := map[string]string{}
	for _, mapping := range mappings {
		parts := javaSplit(mapping, ":")
		if len(parts) != 2 {
			return nil, invalid("renames", mappings, "Invalid rename mapping: "+mapping)
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

// replaceField is ReplaceField$Key/$Value.
type replaceField struct {
	side             side
	exclude, include map[string]bool
	renames, reverse map[string]string
	withDefault      bool
	cache            schemaCache
	// plans[i] is, for the cached output schema at the same position, the
	// input field index of each output field.
	plans map[*schema.Schema][]int
}

func newReplaceField(c Config, s side) (Transformation, error) {
	renames, err := parseRenames(c.List("renames"))
	if err != nil {
		return nil, err
	}
	t := &replaceField{side: s, exclude: set(c.List("exclude")), include: set(c.List("include")), renames: renames,
		reverse: map[string]string{}, withDefault: c.Bool("replace.null.with.default")}
	for k, v := range renames {
		t.reverse[v] = k
	}
	return t, nil
}

func set(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

func (t *replaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *replaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

const replacePurpose = "field replacement"

func (t *replaceField) Apply(r *Record) (bool, error) {
	v := t.side.value(r)
	if v == nil {
		return true, nil
	}
	if t.side.schema(r) == nil {
		m, err := requireMap(v, replacePurpose)
		if err != nil {
			return false, err
		}
		if t.side.owned(r) {
			// A map of this pass: change it in place. (Where a renamed
			// field takes the name of one kept as is, the renamed one
			// wins; Kafka's outcome depends on its HashMap's order.)
			var moved []any
			for k, e := range m {
				if !t.keep(k) {
					delete(m, k)
				} else if n, ok := t.renames[k]; ok && n != k {
					moved = append(moved, n, e)
					delete(m, k)
				}
			}
			for i := 0; i < len(moved); i += 2 {
				m[moved[i].(string)] = moved[i+1]
			}
			return true, nil
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			if t.keep(k) {
				out[t.renamed(k)] = e
			}
		}
		t.side.setOwned(r, out)
		return true, nil
	}
	st, err := requireStruct(v, replacePurpose)
	if err != nil {
		return false, err
	}
	in := st.Schema()
	ns := t.cache.get(in)
	plan := t.plans[ns]
	if ns == nil {
		ns = copyBasics(in, schema.TypeStruct)
		for _, f := range in.Fields {
			if t.keep(f.Name) {
				if err := withField(ns, t.renamed(f.Name), f.Schema); err != nil {
					return false, err
				}
			}
		}
		// Each output field takes the input field its name reverses to
		// (Struct.get by name, as Kafka does).
		plan = make([]int, len(ns.Fields))
		for i, f := range ns.Fields {
			src := f.Name
			if n, ok := t.reverse[f.Name]; ok {
				src = n
			}
			j, err := fieldIndex(st, src)
			if err != nil {
				return false, err
			}
			plan[i] = j
		}
		t.cache.put(in, ns)
		if t.plans == nil || len(t.plans) >= schemaCacheSize {
			t.plans = map[*schema.Schema][]int{}
		}
		t.plans[ns] = plan
	}
	out := schema.NewStruct(ns)
	for i, j := range plan {
		if err := put(out, i, get(st, j, t.withDefault)); err != nil {
			return false, err
		}
	}
	t.side.set(r, ns, out)
	return true, nil
}

var maskFieldKeys = []Key{
	{Name: "fields", Type: TypeList, Default: NoDefault, Validator: anyNonDuplicateValues(false, false), Importance: "HIGH", Doc: "Names of fields to mask."},
	{Name: "replacement", Type: TypeString, Default: nil, Validator: nonEmptyString, Importance: "LOW",
		Doc: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."},
	replaceNullWithDefaultKey,
}

// maskField is MaskField$Key/$Value.
type maskField struct {
	side        side
	fields      []string
	masked      map[string]bool
	replacement string
	custom      bool
	withDefault bool
}

func newMaskField(c Config, s side) (Transformation, error) {
	return &maskField{side: s, fields: c.List("fields"), masked: set(c.List("fields")), replacement: c.String("replacement"),
		custom: !c.IsNull("replacement"), withDefault: c.Bool("replace.null.with.default")}, nil
}

const maskPurpose = "mask fields"

func (t *maskField) Apply(r *Record) (bool, error) {
	v := t.side.value(r)
	if s := t.side.schema(r); s == nil {
		m, err := requireMap(v, maskPurpose)
		if err != nil {
			return false, err
		}
		out := t.side.writable(r, m, len(t.fields))
		for _, f := range t.fields {
			mv, err := t.mask(nil, out[f])
			if err != nil {
				return false, err
			}
			out[f] = mv
		}
		t.side.setOwned(r, out)
		return true, nil
	}
	st, err := requireStruct(v, maskPurpose)
	if err != nil {
		return false, err
	}
	out := schema.NewStruct(st.Schema())
	for i, f := range st.Schema().Fields {
		fv := get(st, i, t.withDefault)
		if t.masked[f.Name] {
			if fv, err = t.mask(f.Schema, fv); err != nil {
				return false, err
			}
		}
		if err := put(out, i, fv); err != nil {
			return false, err
		}
	}
	t.side.set(r, t.side.schema(r), out)
	return true, nil
}

// mask is MaskField.masked: a value of the same class, "empty" (0, false,
// "", the epoch, an empty list or map) or the replacement converted.
func (t *maskField) mask(s *schema.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.custom {
		return maskCustom(s, v, t.replacement)
	}
	switch v.(type) {
	case bool:
		return false, nil
	case int8:
		return int8(0), nil
	case int16:
		return int16(0), nil
	case int32:
		return int32(0), nil
	case int64:
		return int64(0), nil
	case float32:
		return float32(0), nil
	case float64:
		return float64(0), nil
	case *big.Int:
		return new(big.Int), nil
	case time.Time:
		return time.UnixMilli(0).UTC(), nil
	case string:
		return "", nil
	case []any:
		return []any{}, nil
	case map[string]any, map[any]any:
		return map[string]any{}, nil
	}
	return nil, dataErr("Cannot mask value of type: %s", classOf(v))
}

// maskCustom converts MaskField's replacement to the class of v.
func maskCustom(s *schema.Schema, v any, repl string) (any, error) {
	notNumber := func() error {
		return dataErr("Unable to convert %s (class java.lang.String) to a number", repl)
	}
	switch v.(type) {
	case string:
		return repl, nil
	case int8, int16, int32, int64:
		u, scale, ok := convert.ParseBigDecimal(repl)
		if !ok {
			return nil, notNumber()
		}
		n := convert.BigDecimalLong(u, scale)
		switch v.(type) {
		case int8:
			return int8(n), nil
		case int16:
			return int16(n), nil
		case int32:
			return int32(n), nil
		}
		return n, nil
	case float32, float64:
		u, scale, ok := convert.ParseBigDecimal(repl)
		if !ok {
			return nil, notNumber()
		}
		f := convert.BigDecimalFloat(u, scale, 64)
		if _, ok := v.(float32); ok {
			return float32(f), nil
		}
		return f, nil
	case *big.Int:
		u, scale, ok := convert.ParseBigDecimal(repl)
		if !ok {
			return nil, dataErr("Unable to convert %s (class java.lang.String) to number", repl)
		}
		// Tributary's decimals carry the schema's scale: the replacement
		// must be exact in it, as Decimal.fromLogical requires later in
		// Kafka.
		want := int32(0)
		if s != nil {
			want, _ = s.Scale()
		}
		return rescale(u, scale, want)
	}
	return nil, dataErr("Cannot mask value of type %s with custom replacement.", classOf(v))
}

// rescale returns unscaled×10^-from as an unscaled value of scale to, if
// exact.
func rescale(u *big.Int, from, to int32) (*big.Int, error) {
	switch {
	case from == to:
		return u, nil
	case from < to:
		return new(big.Int).Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(to-from)), nil)), nil
	}
	d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(from-to)), nil)
	q, m := new(big.Int).QuoRem(u, d, new(big.Int))
	if m.Sign() != 0 {
		return nil, dataErr("BigDecimal has mismatching scale value for given Decimal schema")
	}
	return q, nil
}

var valueToKeyKeys = []Key{
	{Name: "fields", Type: TypeList, Default: NoDefault, Validator: anyNonDuplicateValues(false, false), Importance: "HIGH",
		Doc: "Field names on the record value to extract as the record key."},
	replaceNullWithDefaultKey,
	fieldSyntaxVersionKey,
}

// valueToKey is ValueToKey: the key becomes the listed value fields (by
// path with field.syntax.version=V2, the key field named by the path).
type valueToKey struct {
	fields      []string
	paths       []fieldPath
	withDefault bool
	cache       schemaCache
}

func newValueToKey(c Config) (Transformation, error) {
	t := &valueToKey{fields: c.List("fields"), withDefault: c.Bool("replace.null.with.default")}
	v2 := strings.ToUpper(c.String("field.syntax.version")) == "V2"
	for _, f := range t.fields {
		p, err := newFieldPath(f, v2)
		if err != nil {
			return nil, err
		}
		t.paths = append(t.paths, p)
	}
	return t, nil
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *valueToKey) Apply(r *Record) (bool, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return false, err
		}
		key := make(map[string]any, len(t.fields))
		for i, f := range t.fields {
			v, err := t.paths[i].fromMap(m)
			if err != nil {
				return false, err
			}
			key[f] = v
		}
		r.KeySchema, r.Key = nil, key
		return true, nil
	}
	st, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return false, err
	}
	ks := t.cache.get(st.Schema())
	if ks == nil {
		ks = &schema.Schema{Type: schema.TypeStruct}
		for i, f := range t.fields {
			vf, err := t.paths[i].fieldFrom(st.Schema())
			if err != nil {
				return false, err
			}
			if vf == nil {
				return false, dataErr("Field does not exist: %s", f)
			}
			if err := withField(ks, f, vf.Schema); err != nil {
				return false, err
			}
		}
		t.cache.put(st.Schema(), ks)
	}
	key := schema.NewStruct(ks)
	for i := range t.fields {
		v, err := t.paths[i].fromStruct(st, t.withDefault)
		if err != nil {
			return false, err
		}
		if err := put(key, i, v); err != nil {
			return false, err
		}
	}
	r.KeySchema, r.Key, r.ValueSchema = ks, key, st.Schema()
	return true, nil
}

var hoistFieldKeys = []Key{
	{Name: "field", Type: TypeString, Default: NoDefault, Importance: "MEDIUM",
		Doc: "Field name for the single field that will be created in the resulting Struct or Map."},
}

// hoistField is HoistField$Key/$Value: the key or value becomes the one
// field of a struct (with a schema) or map.
type hoistField struct {
	side  side
	field string
	cache schemaCache
}

func newHoistField(c Config, s side) (Transformation, error) {
	return &hoistField{side: s, field: c.String("field")}, nil
}

func (t *hoistField) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if s == nil {
		t.side.setOwned(r, map[string]any{t.field: v})
		return true, nil
	}
	ns := t.cache.get(s)
	if ns == nil {
		ns = &schema.Schema{Type: schema.TypeStruct, Fields: []schema.Field{{Name: t.field, Schema: s}}}
		t.cache.put(s, ns)
	}
	out := schema.NewStruct(ns)
	if err := put(out, 0, v); err != nil {
		return false, err
	}
	t.side.set(r, ns, out)
	return true, nil
}

var extractFieldKeys = []Key{
	{Name: "field", Type: TypeString, Default: NoDefault, Importance: "MEDIUM", Doc: "Field name to extract."},
	replaceNullWithDefaultKey,
	fieldSyntaxVersionKey,
}

// fieldSyntaxVersionKey is KIP-821's field.syntax.version.
var fieldSyntaxVersionKey = Key{Name: "field.syntax.version", Type: TypeString, Default: "V1",
	Validator: caseInsensitiveString("V1", "V2"), Importance: "HIGH",
	Doc: "Defines the version of the syntax to access fields. If set to <code>V1</code>, then the field paths are limited to access the elements at the root level of the struct or map. If set to <code>V2</code>, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield <code>baz</code> from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"<code>foo.bar</code>.baz\"."}

// extractField is ExtractField$Key/$Value.
type extractField struct {
	side        side
	path        fieldPath
	original    string
	withDefault bool
}

func newExtractField(c Config, s side) (Transformation, error) {
	p, err := newFieldPath(c.String("field"), strings.ToUpper(c.String("field.syntax.version")) == "V2")
	if err != nil {
		return nil, err
	}
	return &extractField{side: s, path: p, original: c.String("field"), withDefault: c.Bool("replace.null.with.default")}, nil
}

const extractPurpose = "field extraction"

func (t *extractField) Apply(r *Record) (bool, error) {
	s, v := t.side.schema(r), t.side.value(r)
	if s == nil {
		if v == nil {
			t.side.set(r, nil, nil)
			return true, nil
		}
		m, err := requireMap(v, extractPurpose)
		if err != nil {
			return false, err
		}
		out, err := t.path.fromMap(m)
		if err != nil {
			return false, err
		}
		t.side.set(r, nil, out)
		return true, nil
	}
	st, err := requireStructOrNull(v, extractPurpose)
	if err != nil {
		return false, err
	}
	f, err := t.path.fieldFrom(s)
	if err != nil {
		return false, err
	}
	if f == nil {
		return false, failure(IllegalArgumentException, "Unknown field: %s", t.original)
	}
	var out any
	if st != nil {
		if out, err = t.path.fromStruct(st, t.withDefault); err != nil {
			return false, err
		}
	}
	t.side.set(r, f.Schema, out)
	return true, nil
}

// fieldPath is SingleFieldPath: one field name (V1), or a dotted path with
// backtick quoting (V2).
type fieldPath []string

func newFieldPath(path string, v2 bool) (fieldPath, error) {
	if !v2 {
		return fieldPath{path}, nil
	}
	var steps []string
	idx := 0
	for idx < len(path) && idx >= 0 {
		if path[idx] != '`' {
			start := idx
			if dot := strings.IndexByte(path[idx:], '.'); dot >= 0 {
				idx += dot
				steps = append(steps, path[start:idx])
				idx++
			} else {
				steps = append(steps, path[start:])
				idx = len(path)
			}
			continue
		}
		backtickAt := idx
		idx++
		var field strings.Builder
		start := idx
		for {
			next := strings.IndexByte(path[idx:], '`')
			if next < 0 {
				return nil, incompleteBacktick(path, backtickAt)
			}
			idx += next
			escaped := path[idx-1] == '\\'
			if idx >= len(path)-1 {
				if escaped {
					return nil, incompleteBacktick(path, backtickAt)
				}
				field.WriteString(path[start:idx])
				steps = append(steps, field.String())
				idx++
				break
			}
			if path[idx+1] != '.' {
				idx++
				continue
			}
			if escaped {
				field.WriteString(path[start : idx-1])
				field.WriteByte('`')
				idx++
				start = idx
				continue
			}
			field.WriteString(path[start:idx])
			steps = append(steps, field.String())
			idx += 2
			break
		}
	}
	if path != "" && path[len(path)-1] == '.' {
		steps = append(steps, "")
	}
	return steps, nil
}

func incompleteBacktick(path string, at int) error {
	return &ConfigError{"Incomplete backtick pair in path: [" + path + "], consider adding a backslash before backtick at position " +
		strconv.Itoa(at) + " to escape it"}
}

// fieldFrom is SingleFieldPath.fieldFrom: the field, or nil; looking up a
// field of a schema that is not a struct is Kafka's DataException.
func (p fieldPath) fieldFrom(s *schema.Schema) (*schema.Field, error) {
	cur := s
	for _, step := range p[:len(p)-1] {
		if cur.Type != schema.TypeStruct {
			return nil, errNotStruct
		}
		f := cur.Field(step)
		if f == nil {
			return nil, nil
		}
		cur = f.Schema
	}
	if cur.Type != schema.TypeStruct {
		return nil, errNotStruct
	}
	return cur.Field(p[len(p)-1]), nil
}

var errNotStruct = &Error{Class: DataException, Message: "Cannot look up fields on non-struct type"}

// fromStruct is SingleFieldPath.valueFrom(Struct, withDefault).
func (p fieldPath) fromStruct(st *schema.Struct, withDefault bool) (any, error) {
	cur := st
	for _, step := range p[:len(p)-1] {
		f := cur.Schema().Field(step)
		if f == nil {
			return nil, nil
		}
		next, err := requireStructOrNull(cur.GetIndex(f.Index), "nested field access")
		if err != nil {
			return nil, err
		}
		if next == nil {
			return nil, nil
		}
		cur = next
	}
	f := cur.Schema().Field(p[len(p)-1])
	if f == nil {
		return nil, nil
	}
	return get(cur, f.Index, withDefault), nil
}

// fromMap is SingleFieldPath.valueFrom(Map).
func (p fieldPath) fromMap(m map[string]any) (any, error) {
	cur := m
	for _, step := range p[:len(p)-1] {
		v := cur[step]
		if v == nil {
			return nil, nil
		}
		next, err := requireMap(v, "nested field access")
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur[p[len(p)-1]], nil
}

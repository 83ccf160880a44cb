package convert

import (
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/sdk/schema/jackson"
)

// This file maps Connect schemas to Avro schemas as Confluent's AvroData
// (avro-data, fromConnectSchema) does, and renders them as Avro's Java
// Schema.toString does, so the registry sees the text Confluent's
// AvroConverter registers (parameters aside: Connect keeps their insertion
// order, a Go map has none, so they are sorted, with a Decimal's scale
// first as Kafka's Decimal.builder puts it).

// AvroData's names and properties.
const (
	avroNamespace        = "io.confluent.connect.avro"
	avroDefaultName      = "ConnectDefault"
	avroMapEntry         = "MapEntry"
	avroUnionName        = avroNamespace + ".Union"
	avroEnumParam        = avroNamespace + ".Enum"
	avroRecordDocParam   = avroNamespace + ".record.doc"
	avroFieldDocPrefix   = avroNamespace + ".field.doc."
	avroFieldDefaultFlag = avroNamespace + ".field.default"
	avroEnumDocPrefix    = avroNamespace + ".enum.doc."
	avroEnumDefPrefix    = avroNamespace + ".enum.default."
	connectNameProp      = "connect.name"
	connectDocProp       = "connect.doc"
	connectVersionProp   = "connect.version"
	connectDefaultProp   = "connect.default"
	connectParamsProp    = "connect.parameters"
	connectTypeProp      = "connect.type"
	connectInternalType  = "connect.internal.type"
	connectFixedSize     = "connect.fixed.size"
	connectDecPrecision  = "connect.decimal.precision"
	avroDecimalPrecision = 64 // AvroData's default precision
)

// avroOptions are AvroDataConfig's settings.
type avroOptions struct {
	connectMetaData   bool // connect.meta.data (default true)
	enhanced          bool // enhanced.avro.schema.support (default false)
	scrubInvalidNames bool // scrub.invalid.names (default false)
	allowOptionalKeys bool // allow.optional.map.keys (default false)
	flattenSingleton  bool // flatten.singleton.unions (default true)
	discardTypeDoc    bool // discard.type.doc.default (default false)
}

// anode is an Avro schema being built: Java Avro's Schema object, which
// AvroData shares between the places a Connect schema recurs, so that a
// named type recurring is written as a reference to its name.
type anode struct {
	kind            string // null boolean int long float double bytes string record enum fixed array map union
	name, namespace string // named types
	doc             string
	fields          []afield
	items           *anode // array
	values          *anode // map
	types           []*anode
	size            int
	symbols         []string
	enumDefault     string
	props           []aprop
}

type aprop struct {
	key string
	raw []byte // JSON
}

type afield struct {
	name   string
	typ    *anode
	doc    string
	def    []byte // JSON; nil when the field has no default
	params []byte // connect.parameters of a recurring named type, or nil
}

func (n *anode) addProp(key string, raw []byte) {
	for _, p := range n.props {
		if p.key == key {
			return // Avro refuses to overwrite; AvroData only re-adds the same value
		}
	}
	n.props = append(n.props, aprop{key, raw})
}

func (n *anode) fullName() string {
	if n.namespace == "" {
		return n.name
	}
	return n.namespace + "." + n.name
}

func (n *anode) named() bool { return n.kind == "record" || n.kind == "enum" || n.kind == "fixed" }

func jstr(s string) []byte { return jackson.AppendString(nil, s) }

// fromConnectCtx is AvroData's FromConnectContext.
type fromConnectCtx struct {
	opts      *avroOptions
	cache     []cachedNode // schemaMap: required Connect schemas already mapped
	cycles    map[string]*anode
	nameIndex int
	seenNames map[string]bool
}

type cachedNode struct {
	s *schema.Schema
	n *anode
}

func (c *fromConnectCtx) lookup(s *schema.Schema) *anode {
	for _, e := range c.cache {
		if e.s == s || schema.Equal(e.s, s) {
			return e.n
		}
	}
	return nil
}

// avroSchemaOf maps a Connect schema to an Avro schema (AvroData's
// fromConnectSchema) and renders it.
func avroSchemaOf(s *schema.Schema, opts *avroOptions) (string, error) {
	c := &fromConnectCtx{opts: opts, cycles: map[string]*anode{}, seenNames: map[string]bool{}}
	n, err := c.fromConnect(s, false)
	if err != nil {
		return "", err
	}
	var w avroWriter
	w.defined = map[string]bool{}
	w.write(n)
	return string(w.b), nil
}

func nonOptional(s *schema.Schema) *schema.Schema {
	if !s.Optional {
		return s
	}
	c := *s
	c.Optional = false
	return &c
}

func isAvroUnion(s *schema.Schema) bool {
	return s.Type == schema.TypeStruct && s.Name == avroUnionName
}

func (c *fromConnectCtx) nameOrDefault(name string) (ns, n string) {
	if name != "" {
		return c.splitName(name)
	}
	c.nameIndex++
	if c.nameIndex > 1 {
		return avroNamespace, avroDefaultName + strconv.Itoa(c.nameIndex)
	}
	return avroNamespace, avroDefaultName
}

func (c *fromConnectCtx) splitName(full string) (ns, name string) {
	parts := strings.Split(full, ".")
	for i := range parts {
		parts[i] = c.scrub(parts[i])
	}
	if len(parts) <= 1 {
		return "", parts[0]
	}
	return strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
}

func (c *fromConnectCtx) scrub(name string) string {
	if !c.opts.scrubInvalidNames {
		return name
	}
	return scrubAvroName(name)
}

// scrubAvroName is AvroData's doScrubName: an invalid Avro name becomes
// its URL encoding with every other character replaced by '_'.
func scrubAvroName(name string) string {
	if name == "" {
		return name
	}
	ok := name[0] < '0' || name[0] > '9'
	for i := 0; i < len(name) && ok; i++ {
		ch := name[i]
		ok = ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_'
	}
	if ok {
		return name
	}
	enc := []byte(url.QueryEscape(name))
	if enc[0] >= '0' && enc[0] <= '9' {
		enc = append([]byte{'x'}, enc...)
	}
	for i, ch := range enc {
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_') {
			enc[i] = '_'
		}
	}
	return string(enc)
}

// sortedParams lists a schema's parameters in the order this package
// writes them: a Decimal's scale first, the rest sorted.
func sortedParams(p map[string]string) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == schema.ScaleParameter) != (keys[j] == schema.ScaleParameter) {
			return keys[i] == schema.ScaleParameter
		}
		return keys[i] < keys[j]
	})
	return keys
}

func (c *fromConnectCtx) paramsJSON(p map[string]string) []byte {
	b := []byte{'{'}
	n := 0
	for _, k := range sortedParams(p) {
		if !c.opts.discardTypeDoc && k == avroFieldDefaultFlag {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = jackson.AppendString(b, k)
		b = append(b, ':')
		b = jackson.AppendString(b, p[k])
	}
	if n == 0 {
		return nil
	}
	return append(b, '}')
}

func (c *fromConnectCtx) withCycle(s *schema.Schema, ignoreOptional bool) (*anode, error) {
	if r, ok := c.cycles[s.Name]; ok && s.Name != "" {
		if !ignoreOptional {
			r = makeOptional(s, r)
		}
		return r, nil
	}
	return c.fromConnect(s, ignoreOptional)
}

func makeOptional(s *schema.Schema, base *anode) *anode {
	if !s.Optional {
		return base
	}
	if s.Default != nil {
		return &anode{kind: "union", types: []*anode{base, {kind: "null"}}}
	}
	return &anode{kind: "union", types: []*anode{{kind: "null"}, base}}
}

// fromConnect is AvroData.fromConnectSchema(schema, context, ignoreOptional).
func (c *fromConnectCtx) fromConnect(s *schema.Schema, ignoreOptional bool) (*anode, error) {
	if s == nil {
		return nil, fmt.Errorf("convert: AvroConverter needs a schema (schemaless values are not supported)")
	}
	if !isAvroUnion(s) && !s.Optional {
		if n := c.lookup(s); n != nil {
			return n, nil
		}
	}
	var connectType string
	var base *anode
	switch s.Type {
	case schema.TypeInt8:
		connectType, base = "int8", &anode{kind: "int"}
	case schema.TypeInt16:
		connectType, base = "int16", &anode{kind: "int"}
	case schema.TypeInt32:
		base = &anode{kind: "int"}
	case schema.TypeInt64:
		base = &anode{kind: "long"}
	case schema.TypeFloat32:
		base = &anode{kind: "float"}
	case schema.TypeFloat64:
		base = &anode{kind: "double"}
	case schema.TypeBoolean:
		base = &anode{kind: "boolean"}
	case schema.TypeString:
		if enumName, ok := s.Parameters[avroEnumParam]; ok && c.opts.enhanced {
			_, name := c.nameOrDefault(s.Name)
			base = &anode{kind: "enum", doc: s.Parameters[avroEnumDocPrefix+name], enumDefault: s.Parameters[avroEnumDefPrefix+name]}
			base.namespace, base.name = c.splitName(enumName)
			for _, k := range sortedParams(s.Parameters) {
				if sym, ok := strings.CutPrefix(k, avroEnumParam+"."); ok {
					base.symbols = append(base.symbols, sym)
				}
			}
		} else {
			base = &anode{kind: "string"}
		}
	case schema.TypeBytes:
		if size, ok := s.Parameters[connectFixedSize]; ok {
			n, err := strconv.Atoi(size)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("convert: invalid %s %q", connectFixedSize, size)
			}
			base = &anode{kind: "fixed", size: n}
			base.namespace, base.name = c.nameOrDefault(s.Name)
		} else {
			base = &anode{kind: "bytes"}
		}
		if strings.EqualFold(s.Name, schema.DecimalName) {
			scale, err := strconv.Atoi(s.Parameters[schema.ScaleParameter])
			if err != nil {
				return nil, fmt.Errorf("convert: decimal without a valid scale: %w", err)
			}
			base.addProp("scale", strconv.AppendInt(nil, int64(scale), 10))
			prec := avroDecimalPrecision
			if p, ok := s.Parameters[connectDecPrecision]; ok {
				if prec, err = strconv.Atoi(p); err != nil {
					return nil, fmt.Errorf("convert: invalid %s %q", connectDecPrecision, p)
				}
			}
			base.addProp("precision", strconv.AppendInt(nil, int64(prec), 10))
		}
	case schema.TypeArray:
		items, err := c.withCycle(s.ValueSchema, false)
		if err != nil {
			return nil, err
		}
		base = &anode{kind: "array", items: items}
	case schema.TypeMap:
		if s.KeySchema.Type == schema.TypeString && (!s.KeySchema.Optional || c.opts.allowOptionalKeys) {
			values, err := c.withCycle(s.ValueSchema, false)
			if err != nil {
				return nil, err
			}
			base = &anode{kind: "map", values: values}
			break
		}
		entry := &anode{kind: "record", namespace: avroNamespace, name: avroMapEntry}
		if s.Name != "" {
			entry.namespace, entry.name = c.nameOrDefault(s.Name)
			entry.addProp(connectInternalType, jstr(avroMapEntry))
		}
		for _, f := range []struct {
			name string
			s    *schema.Schema
		}{{"key", s.KeySchema}, {"value", s.ValueSchema}} {
			af, err := c.field(f.name, f.s, "")
			if err != nil {
				return nil, err
			}
			entry.fields = append(entry.fields, af)
		}
		base = &anode{kind: "array", items: entry}
	case schema.TypeStruct:
		switch {
		case isAvroUnion(s):
			base = &anode{kind: "union"}
			if s.Optional {
				base.types = append(base.types, &anode{kind: "null"})
			}
			for _, f := range s.Fields {
				t, err := c.withCycle(nonOptional(f.Schema), true)
				if err != nil {
					return nil, err
				}
				base.types = append(base.types, t)
			}
		case s.Optional:
			inner, err := c.withCycle(nonOptional(s), false)
			if err != nil {
				return nil, err
			}
			base = &anode{kind: "union", types: []*anode{{kind: "null"}, inner}}
		default:
			base = &anode{kind: "record"}
			base.namespace, base.name = c.nameOrDefault(s.Name)
			if c.opts.discardTypeDoc {
				base.doc = s.Parameters["connect.record.doc"]
			} else {
				base.doc = s.Parameters[avroRecordDocParam]
			}
			if s.Name != "" {
				c.cycles[s.Name] = base
			}
			for _, f := range s.Fields {
				doc := ""
				if !c.opts.discardTypeDoc {
					doc = s.Parameters[avroFieldDocPrefix+f.Name]
				}
				af, err := c.field(c.scrub(f.Name), f.Schema, doc)
				if err != nil {
					return nil, err
				}
				base.fields = append(base.fields, af)
			}
		}
	default:
		return nil, fmt.Errorf("convert: unknown schema type %v", s.Type)
	}

	final := base
	if base.kind != "union" {
		if c.opts.connectMetaData {
			if s.Doc != "" {
				base.addProp(connectDocProp, jstr(s.Doc))
			}
			if s.Version != 0 {
				base.addProp(connectVersionProp, strconv.AppendInt(nil, int64(s.Version), 10))
			}
			if p := c.paramsJSON(s.Parameters); s.Parameters != nil && p != nil {
				base.addProp(connectParamsProp, p)
			}
			if s.Default != nil {
				if _, flagged := s.Parameters[avroFieldDefaultFlag]; c.opts.discardTypeDoc || !flagged {
					d, err := c.defaultJSON(nil, s, s.Default)
					if err != nil {
						return nil, err
					}
					base.addProp(connectDefaultProp, d)
				}
			}
			if s.Name != "" {
				base.addProp(connectNameProp, jstr(s.Name))
			}
			if connectType != "" {
				base.addProp(connectTypeProp, jstr(connectType))
			}
		}
		legacyDecimal := false
		switch {
		case strings.EqualFold(s.Name, schema.DecimalName):
			prec := avroDecimalPrecision
			if p, ok := s.Parameters[connectDecPrecision]; ok {
				prec, _ = strconv.Atoi(p) // checked above
			}
			scale, _ := strconv.Atoi(s.Parameters[schema.ScaleParameter])
			if scale < 0 || scale > prec {
				legacyDecimal = true
			} else {
				base.addProp("logicalType", jstr("decimal"))
			}
			_, hasPrec := s.Parameters[connectDecPrecision]
			if hasPrec || legacyDecimal {
				base.addProp("logicalType", jstr("decimal"))
			}
		case strings.EqualFold(s.Name, schema.TimeName):
			base.addProp("logicalType", jstr("time-millis"))
		case strings.EqualFold(s.Name, schema.TimestampName):
			base.addProp("logicalType", jstr("timestamp-millis"))
		case strings.EqualFold(s.Name, schema.DateName):
			base.addProp("logicalType", jstr("date"))
		}
		for _, k := range sortedParams(s.Parameters) {
			if strings.HasPrefix(k, "avro") {
				base.addProp(k, jstr(s.Parameters[k]))
			}
		}
		if !ignoreOptional {
			final = makeOptional(s, base)
		}
	}
	if !s.Optional {
		c.cache = append(c.cache, cachedNode{s, final})
	}
	return final, nil
}

// field is AvroData's addAvroRecordField.
func (c *fromConnectCtx) field(name string, s *schema.Schema, doc string) (afield, error) {
	f := afield{name: name, doc: doc}
	if c.opts.discardTypeDoc {
		f.doc = s.Doc
	}
	if s.Default != nil {
		d, err := c.defaultJSON(nil, s, s.Default)
		if err != nil {
			return f, err
		}
		f.def = d
	} else if s.Optional {
		f.def = []byte("null")
	}
	seen := false
	if s.Name != "" {
		full := s.Name
		if c.opts.scrubInvalidNames {
			ns, n := c.splitName(s.Name)
			if full = n; ns != "" {
				full = ns + "." + n
			}
		}
		seen = c.seenNames[full]
		c.seenNames[full] = true
	}
	t, err := c.fromConnect(s, false)
	if err != nil {
		return f, err
	}
	f.typ = t
	if c.opts.connectMetaData && seen && len(s.Parameters) > 0 && namedOrHasNamed(t) {
		f.params = c.paramsJSON(s.Parameters)
	}
	// Avro's Field constructor refuses a default that does not match the
	// schema (a union's default must match its first branch); AvroData
	// then drops it.
	if f.def != nil && !defaultFits(t, f.def) {
		f.def = nil
	}
	return f, nil
}

func namedOrHasNamed(n *anode) bool {
	if n.named() {
		return true
	}
	if n.kind == "union" {
		for _, t := range n.types {
			if t.named() {
				return true
			}
		}
	}
	return false
}

// defaultFits is Avro's default validation, as far as AvroData's output
// can fail it: null only fits null or a union starting with null.
func defaultFits(t *anode, def []byte) bool {
	if t.kind == "union" && len(t.types) > 0 {
		t = t.types[0]
	}
	isNull := string(def) == "null"
	return isNull == (t.kind == "null")
}

// defaultJSON is AvroData's defaultValueFromConnect: a Connect value as
// the JSON of an Avro default.
func (c *fromConnectCtx) defaultJSON(b []byte, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	bad := func() ([]byte, error) {
		return nil, fmt.Errorf("convert: invalid type %T for the default value of a %v schema", v, s.Type)
	}
	switch s.Name {
	case schema.DecimalName:
		x, ok := v.(*big.Int)
		if !ok {
			return bad()
		}
		v = schema.AppendDecimal(nil, x)
	case schema.DateName:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		v = int32(t.UnixMilli() / 86400000)
	case schema.TimeName:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		v = int32(t.UnixMilli() % 86400000)
	case schema.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		v = t.UnixMilli()
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		n, ok := intOf(v)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(b, n, 10), nil
	case schema.TypeFloat32:
		f, ok := v.(float32)
		if !ok {
			return bad()
		}
		return jackson.AppendJavaFloat(b, float64(f), 32), nil
	case schema.TypeFloat64:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		return jackson.AppendJavaFloat(b, f, 64), nil
	case schema.TypeBoolean:
		t, ok := v.(bool)
		if !ok {
			return bad()
		}
		return strconv.AppendBool(b, t), nil
	case schema.TypeString:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		return jackson.AppendString(b, str), nil
	case schema.TypeBytes:
		raw, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return jackson.AppendString(b, latin1(raw)), nil
	case schema.TypeArray:
		list, ok := v.([]any)
		if !ok {
			return bad()
		}
		b = append(b, '[')
		for i, e := range list {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = c.defaultJSON(b, s.ValueSchema, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case schema.TypeMap:
		stringKeys := s.KeySchema.Type == schema.TypeString && (!s.KeySchema.Optional || c.opts.allowOptionalKeys)
		if stringKeys {
			b = append(b, '{')
		} else {
			b = append(b, '[')
		}
		i := 0
		var err error
		for k, e := range mapEntries(v) {
			if i > 0 {
				b = append(b, ',')
			}
			i++
			if stringKeys {
				ks, _ := k.(string)
				b = jackson.AppendString(b, ks)
				b = append(b, ':')
			} else {
				b = append(b, '[')
				if b, err = c.defaultJSON(b, s.KeySchema, k); err != nil {
					return nil, err
				}
				b = append(b, ',')
			}
			if b, err = c.defaultJSON(b, s.ValueSchema, e); err != nil {
				return nil, err
			}
			if !stringKeys {
				b = append(b, ']')
			}
		}
		if stringKeys {
			return append(b, '}'), nil
		}
		return append(b, ']'), nil
	case schema.TypeStruct:
		st, ok := v.(*schema.Struct)
		if !ok {
			return bad()
		}
		if isAvroUnion(s) {
			for i, f := range s.Fields {
				if e := st.GetIndex(i); e != nil {
					return c.defaultJSON(b, f.Schema, e)
				}
			}
			return c.defaultJSON(b, s.Fields[0].Schema, nil)
		}
		b = append(b, '{')
		for i, f := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = jackson.AppendString(b, c.scrub(f.Name))
			b = append(b, ':')
			var err error
			if b, err = c.defaultJSON(b, f.Schema, st.GetIndex(i)); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return bad()
}

// latin1 is Java's new String(bytes, ISO_8859_1): each byte a character.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func intOf(v any) (int64, bool) {
	switch n := v.(type) {
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// mapEntries iterates a Connect map value of either Go shape, in a stable
// order (sorted by the key's rendering) so output is deterministic.
func mapEntries(v any) func(yield func(any, any) bool) {
	type kv struct {
		k, v any
		s    string
	}
	var list []kv
	switch m := v.(type) {
	case map[string]any:
		for k, e := range m {
			list = append(list, kv{k, e, k})
		}
	case map[any]any:
		for k, e := range m {
			list = append(list, kv{k, e, fmt.Sprint(k)})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].s < list[j].s })
	return func(yield func(any, any) bool) {
		for _, e := range list {
			if !yield(e.k, e.v) {
				return
			}
		}
	}
}

// avroWriter renders an Avro schema as Java Avro's Schema.toString:
// compact JSON, a named type written in full where it first appears and by
// name afterwards, namespaces inherited from the enclosing named type.
type avroWriter struct {
	b       []byte
	defined map[string]bool
	space   string
}

func (w *avroWriter) props(n *anode) {
	for _, p := range n.props {
		w.b = append(w.b, ',')
		w.b = jackson.AppendString(w.b, p.key)
		w.b = append(w.b, ':')
		w.b = append(w.b, p.raw...)
	}
}

func (w *avroWriter) write(n *anode) {
	switch n.kind {
	case "union":
		w.b = append(w.b, '[')
		for i, t := range n.types {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.write(t)
		}
		w.b = append(w.b, ']')
		return
	case "array":
		w.b = append(w.b, `{"type":"array","items":`...)
		w.write(n.items)
		w.props(n)
		w.b = append(w.b, '}')
		return
	case "map":
		w.b = append(w.b, `{"type":"map","values":`...)
		w.write(n.values)
		w.props(n)
		w.b = append(w.b, '}')
		return
	case "record", "enum", "fixed":
		full := n.fullName()
		if w.defined[full] {
			if n.namespace == "" || n.namespace == w.space {
				w.b = jackson.AppendString(w.b, n.name)
			} else {
				w.b = jackson.AppendString(w.b, full)
			}
			return
		}
		w.defined[full] = true
		w.b = append(w.b, `{"type":`...)
		w.b = jackson.AppendString(w.b, n.kind)
		w.b = append(w.b, `,"name":`...)
		w.b = jackson.AppendString(w.b, n.name)
		if n.namespace != "" {
			if n.namespace != w.space {
				w.b = append(w.b, `,"namespace":`...)
				w.b = jackson.AppendString(w.b, n.namespace)
			}
		} else if w.space != "" {
			w.b = append(w.b, `,"namespace":""`...)
		}
		saved := w.space
		switch n.kind {
		case "record":
			w.space = n.namespace
			if n.doc != "" {
				w.b = append(w.b, `,"doc":`...)
				w.b = jackson.AppendString(w.b, n.doc)
			}
			w.b = append(w.b, `,"fields":[`...)
			for i, f := range n.fields {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.b = append(w.b, `{"name":`...)
				w.b = jackson.AppendString(w.b, f.name)
				w.b = append(w.b, `,"type":`...)
				w.write(f.typ)
				if f.doc != "" {
					w.b = append(w.b, `,"doc":`...)
					w.b = jackson.AppendString(w.b, f.doc)
				}
				if f.def != nil {
					w.b = append(w.b, `,"default":`...)
					w.b = append(w.b, f.def...)
				}
				if f.params != nil {
					w.b = append(w.b, `,"connect.parameters":`...)
					w.b = append(w.b, f.params...)
				}
				w.b = append(w.b, '}')
			}
			w.b = append(w.b, ']')
		case "enum":
			if n.doc != "" {
				w.b = append(w.b, `,"doc":`...)
				w.b = jackson.AppendString(w.b, n.doc)
			}
			w.b = append(w.b, `,"symbols":[`...)
			for i, s := range n.symbols {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.b = jackson.AppendString(w.b, s)
			}
			w.b = append(w.b, ']')
			if n.enumDefault != "" {
				w.b = append(w.b, `,"default":`...)
				w.b = jackson.AppendString(w.b, n.enumDefault)
			}
		case "fixed":
			w.b = append(w.b, `,"size":`...)
			w.b = strconv.AppendInt(w.b, int64(n.size), 10)
		}
		w.props(n)
		w.b = append(w.b, '}')
		w.space = saved
		return
	}
	if len(n.props) == 0 {
		w.b = jackson.AppendString(w.b, n.kind)
		return
	}
	w.b = append(w.b, `{"type":`...)
	w.b = jackson.AppendString(w.b, n.kind)
	w.props(n)
	w.b = append(w.b, '}')
}

package convert

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Names and parameters of Confluent's ProtobufData.
const (
	pbNamespace     = "io.confluent.connect.protobuf"
	pbDefaultName   = "ConnectDefault"
	pbEnumParam     = pbNamespace + ".Enum"
	pbUnionPrefix   = pbNamespace + ".Union."
	pbTagParam      = pbNamespace + ".Tag"
	pbTypeParam     = pbNamespace + ".Type"
	pbWrapperParam  = pbNamespace + ".Wrapper"
	pbPrecisionProp = "connect.decimal.precision"
	pbConnectType   = "connect.type"

	pbDecimalType   = "confluent.type.Decimal"
	pbDateType      = "google.type.Date"
	pbTimeType      = "google.type.TimeOfDay"
	pbTimestampType = "google.protobuf.Timestamp"
	pbDecimalFile   = "confluent/type/decimal.proto"
	pbDateFile      = "google/type/date.proto"
	pbTimeFile      = "google/type/timeofday.proto"
	pbTimestampFile = "google/protobuf/timestamp.proto"
	pbWrappersFile  = "google/protobuf/wrappers.proto"

	// pbFieldMeta is the field number of the confluent.field_meta
	// extension of google.protobuf.FieldOptions (confluent/meta.proto).
	pbFieldMeta = 1088
)

// pbWrappers are Google's wrapper messages by the Connect type a nullable
// field of that type is wrapped in (wrapper.for.nullables) and a root
// primitive is written as; the uint ones only read.
var pbWrappers = map[string]schema.Type{
	"google.protobuf.DoubleValue": schema.TypeFloat64,
	"google.protobuf.FloatValue":  schema.TypeFloat32,
	"google.protobuf.Int64Value":  schema.TypeInt64,
	"google.protobuf.UInt64Value": schema.TypeInt64,
	"google.protobuf.Int32Value":  schema.TypeInt32,
	"google.protobuf.UInt32Value": schema.TypeInt64,
	"google.protobuf.BoolValue":   schema.TypeBoolean,
	"google.protobuf.StringValue": schema.TypeString,
	"google.protobuf.BytesValue":  schema.TypeBytes,
}

// pbWrapperOf names the wrapper message of a Connect primitive type.
func pbWrapperOf(t schema.Type, protoType string) string {
	switch t {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32:
		return "google.protobuf.Int32Value"
	case schema.TypeInt64:
		switch protoType {
		case "uint32", "fixed32":
			return "google.protobuf.UInt32Value"
		case "uint64", "fixed64":
			return "google.protobuf.UInt64Value"
		}
		return "google.protobuf.Int64Value"
	case schema.TypeFloat32:
		return "google.protobuf.FloatValue"
	case schema.TypeFloat64:
		return "google.protobuf.DoubleValue"
	case schema.TypeBoolean:
		return "google.protobuf.BoolValue"
	case schema.TypeString:
		return "google.protobuf.StringValue"
	case schema.TypeBytes:
		return "google.protobuf.BytesValue"
	}
	return ""
}

// protoOptions are ProtobufDataConfig's settings.
type protoOptions struct {
	enhanced            bool // enhanced.protobuf.schema.support
	scrubInvalidNames   bool // scrub.invalid.names
	intForEnums         bool // int.for.enums
	optionalForNullable bool // optional.for.nullables
	optionalForProto2   bool // optional.for.proto2 (true)
	wrapperForNullable  bool // wrapper.for.nullables
	wrapperForRaw       bool // wrapper.for.raw.primitives (true)
	structForNulls      bool // generate.struct.for.nulls
	indexForUnions      bool // generate.index.for.unions (true)
	flattenUnions       bool // flatten.unions
}

// --- Connect schema → .proto text (ProtobufData.fromConnectSchema) ---

type pbMessage struct {
	name     string
	fields   []pbField
	oneofs   []pbOneof
	messages []*pbMessage
	enums    []pbEnum
	children map[string]bool // nested message names, ctx.contains
}

type pbField struct {
	label, typ, name string
	tag              int
	params           [][2]string // confluent.field_meta params, in order
}

type pbOneof struct {
	name   string
	fields []pbField
}

type pbEnum struct {
	name   string
	values []pbEnumValue
}

type pbEnumValue struct {
	name string
	tag  int
}

type pbGen struct {
	opts      *protoOptions
	nameIndex int
	imports   []string
}

// protoWrappersText is google/protobuf/wrappers.proto as Confluent's
// converter registers it for a primitive root schema.
const protoWrappersText = `syntax = "proto3";
package google.protobuf;

option java_package = "com.google.protobuf";
option java_outer_classname = "WrappersProto";
option java_multiple_files = true;
option go_package = "google.golang.org/protobuf/types/known/wrapperspb";
option cc_enable_arenas = true;
option objc_class_prefix = "GPB";
option csharp_namespace = "Google.Protobuf.WellKnownTypes";

message DoubleValue {
  double value = 1;
}
message FloatValue {
  float value = 1;
}
message Int64Value {
  int64 value = 1;
}
message UInt64Value {
  uint64 value = 1;
}
message Int32Value {
  int32 value = 1;
}
message UInt32Value {
  uint32 value = 1;
}
message BoolValue {
  bool value = 1;
}
message StringValue {
  string value = 1;
}
message BytesValue {
  bytes value = 1;
}
`

// protoSchemaOf returns the .proto text Confluent's ProtobufData writes for
// a Connect schema and the full name of the message that holds the value:
// a struct is a message of a proto3 file (package and name from the
// schema's name, ConnectDefault1 without one); a primitive is Google's
// wrapper message of its type.
func protoSchemaOf(s *schema.Schema, opts *protoOptions) (text, message string, err error) {
	if s.Type != schema.TypeStruct {
		if w := pbWrapperOf(s.Type, ""); w != "" {
			return protoWrappersText, w, nil
		}
		return "", "", fmt.Errorf("convert: unsupported root schema of type %v for Protobuf", s.Type)
	}
	g := &pbGen{opts: opts}
	pkg, name := g.splitName(g.nameOrDefault(s.Name))
	m, err := g.message(name, s)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\n")
	if pkg != "" {
		b.WriteString("package " + pkg + ";\n")
	}
	if len(g.imports) > 0 {
		b.WriteByte('\n')
		for _, imp := range g.imports {
			b.WriteString("import \"" + imp + "\";\n")
		}
	}
	b.WriteByte('\n')
	b.WriteString(m.String())
	message = name
	if pkg != "" {
		message = pkg + "." + name
	}
	return b.String(), message, nil
}

func (g *pbGen) nameOrDefault(name string) string {
	if name != "" {
		return name
	}
	g.nameIndex++
	return pbDefaultName + strconv.Itoa(g.nameIndex)
}

func (g *pbGen) scrub(name string) string {
	if g.opts.scrubInvalidNames {
		return scrubProtoName(name)
	}
	return name
}

// splitName splits a dotted name into package and simple name.
func (g *pbGen) splitName(full string) (pkg, name string) {
	parts := strings.Split(full, ".")
	for i := range parts {
		parts[i] = g.scrub(parts[i])
	}
	return strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
}

func (g *pbGen) unqualified(name string) string {
	full := g.nameOrDefault(name)
	return g.scrub(full[strings.LastIndexByte(full, '.')+1:])
}

func (g *pbGen) addImport(file string) {
	for _, f := range g.imports {
		if f == file {
			return
		}
	}
	g.imports = append(g.imports, file)
}

func (g *pbGen) message(name string, s *schema.Schema) (*pbMessage, error) {
	m := &pbMessage{name: name, children: map[string]bool{}}
	index := 1
	for _, f := range s.Fields {
		tag := 0
		if t, ok := f.Schema.Parameters[pbTagParam]; ok {
			n, err := strconv.Atoi(t)
			if err != nil {
				return nil, fmt.Errorf("convert: field %s: invalid %s %q", f.Name, pbTagParam, t)
			}
			tag = n
		} else {
			tag = index
			index++
		}
		fd, err := g.field(m, f.Schema, g.scrub(f.Name), tag, false)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if fd != nil {
			m.fields = append(m.fields, *fd)
		}
	}
	return m, nil
}

func (g *pbGen) label(s *schema.Schema) string {
	switch {
	case s.Type == schema.TypeArray || s.Type == schema.TypeMap:
		return "repeated"
	case g.opts.optionalForNullable && s.Optional:
		return "optional"
	}
	return ""
}

// field is fieldDefinitionFromConnectSchema: nil for a union, which
// becomes a oneof of m.
func (g *pbGen) field(m *pbMessage, s *schema.Schema, name string, tag int, oneofMember bool) (*pbField, error) {
	label := g.label(s)
	if s.Type == schema.TypeArray {
		s = s.ValueSchema
	}
	var params [][2]string
	typ, err := g.dataType(s, name, &params, oneofMember)
	if err != nil {
		return nil, err
	}
	_, isEnum := s.Parameters[pbEnumParam]
	switch {
	case s.Type == schema.TypeStruct && strings.HasPrefix(s.Name, pbUnionPrefix):
		one := pbOneof{name: g.unqualified(strings.TrimPrefix(s.Name, pbUnionPrefix))}
		for _, f := range s.Fields {
			t := 0
			if v, ok := f.Schema.Parameters[pbTagParam]; ok {
				if t, err = strconv.Atoi(v); err != nil {
					return nil, fmt.Errorf("convert: field %s: invalid %s %q", f.Name, pbTagParam, v)
				}
			}
			fd, err := g.field(m, f.Schema, g.scrub(f.Name), t, true)
			if err != nil {
				return nil, err
			}
			if fd != nil {
				fd.label = ""
				one.fields = append(one.fields, *fd)
			}
		}
		m.oneofs = append(m.oneofs, one)
		return nil, nil
	case s.Type == schema.TypeStruct:
		if typ != m.name && !m.children[typ] {
			m.children[typ] = true
			nested, err := g.message(typ, s)
			if err != nil {
				return nil, err
			}
			m.messages = append(m.messages, nested)
		}
	case s.Type == schema.TypeMap:
		entry := &pbMessage{name: typ, children: map[string]bool{}}
		for i, kv := range []*schema.Schema{s.KeySchema, s.ValueSchema} {
			fd, err := g.field(entry, kv, []string{"key", "value"}[i], i+1, false)
			if err != nil {
				return nil, err
			}
			if fd == nil {
				return nil, errors.New("convert: a map key or value cannot be a union")
			}
			entry.fields = append(entry.fields, *fd)
		}
		m.messages = append(m.messages, entry)
	case isEnum:
		enumName := g.unqualified(s.Name)
		found := false
		for _, e := range m.enums {
			found = found || e.name == enumName
		}
		if !found {
			e := pbEnum{name: enumName}
			for k, v := range s.Parameters {
				if sym, ok := strings.CutPrefix(k, pbEnumParam+"."); ok {
					n, err := strconv.Atoi(v)
					if err != nil {
						return nil, fmt.Errorf("convert: enum %s: invalid tag %q for %s", enumName, v, sym)
					}
					e.values = append(e.values, pbEnumValue{sym, n})
				}
			}
			sort.Slice(e.values, func(i, j int) bool {
				a, b := e.values[i], e.values[j]
				return a.tag < b.tag || a.tag == b.tag && a.name < b.name
			})
			m.enums = append(m.enums, e)
		}
	default:
		if file := pbWellKnownFile(typ); file != "" {
			g.addImport(file)
		}
	}
	return &pbField{label: label, typ: typ, name: name, tag: tag, params: params}, nil
}

func pbWellKnownFile(typ string) string {
	switch typ {
	case pbDecimalType:
		return pbDecimalFile
	case pbDateType:
		return pbDateFile
	case pbTimeType:
		return pbTimeFile
	case pbTimestampType:
		return pbTimestampFile
	}
	if _, ok := pbWrappers[typ]; ok {
		return pbWrappersFile
	}
	return ""
}

// dataType is dataTypeFromConnectSchema: the field's type name, and the
// confluent.field_meta params it carries.
func (g *pbGen) dataType(s *schema.Schema, fieldName string, params *[][2]string, oneofMember bool) (string, error) {
	switch s.Name {
	case schema.DecimalName:
		if p, ok := s.Parameters[pbPrecisionProp]; ok {
			*params = append(*params, [2]string{"precision", p})
		}
		if p, ok := s.Parameters[schema.ScaleParameter]; ok {
			*params = append(*params, [2]string{"scale", p})
		}
		return pbDecimalType, nil
	case schema.DateName:
		return pbDateType, nil
	case schema.TimeName:
		return pbTimeType, nil
	case schema.TimestampName:
		return pbTimestampType, nil
	}
	wrap := g.opts.wrapperForNullable && s.Optional && (!oneofMember || s.Parameters[pbWrapperParam] == "true")
	protoType := s.Parameters[pbTypeParam]
	pick := func(plain string) string {
		if wrap {
			return pbWrapperOf(s.Type, protoType)
		}
		return plain
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16:
		*params = append(*params, [2]string{pbConnectType, s.Type.String()})
		return pick("int32"), nil
	case schema.TypeInt32:
		if e, ok := s.Parameters[pbEnumParam]; ok {
			return e, nil
		}
		return pick(cmpOr(protoType, "int32")), nil
	case schema.TypeInt64:
		return pick(cmpOr(protoType, "int64")), nil
	case schema.TypeFloat32:
		return pick("float"), nil
	case schema.TypeFloat64:
		return pick("double"), nil
	case schema.TypeBoolean:
		return pick("bool"), nil
	case schema.TypeString:
		if e, ok := s.Parameters[pbEnumParam]; ok {
			return e, nil
		}
		return pick("string"), nil
	case schema.TypeBytes:
		return pick("bytes"), nil
	case schema.TypeArray:
		return "", errors.New("convert: Protobuf arrays cannot be nested")
	case schema.TypeMap:
		return pbMapEntryName(g.unqualified(s.Name)), nil
	case schema.TypeStruct:
		name := g.unqualified(s.Name)
		if name == fieldName {
			// A message type cannot have its field's name.
			name += "Message"
		}
		return name, nil
	}
	return "", fmt.Errorf("convert: unknown schema type %v", s.Type)
}

// pbMapEntryName is ProtobufSchema.toMapEntry: lower_underscore names
// become UpperCamel, then the Entry suffix.
func pbMapEntryName(s string) string {
	if strings.Contains(s, "_") {
		var b strings.Builder
		for _, w := range strings.Split(s, "_") {
			if w == "" {
				continue
			}
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		}
		s = b.String()
	}
	return s + "Entry"
}

// pbMapFieldName is ProtobufSchema.toMapField: the entry's name without
// Entry, UpperCamel to lower_underscore.
func pbMapFieldName(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	base, ok := strings.CutSuffix(s, "Entry")
	if !ok {
		return s
	}
	var b strings.Builder
	for i, r := range base {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scrubProtoName is ProtobufData.doScrubName: a name that is not a valid
// Protobuf identifier is URL-encoded, invalid characters replaced by _,
// and prefixed with x when it starts with a digit or _.
func scrubProtoName(name string) string {
	valid := name != ""
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			valid = false
		}
	}
	if name == "" || valid && !(name[0] >= '0' && name[0] <= '9') && name[0] != '_' {
		return name
	}
	enc := []byte(url.QueryEscape(name))
	if enc[0] >= '0' && enc[0] <= '9' || enc[0] == '_' {
		enc = append([]byte{'x'}, enc...)
	}
	for i, c := range enc {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			enc[i] = '_'
		}
	}
	return string(enc)
}

// String prints the message as Confluent's ProtobufSchemaUtils does.
func (m *pbMessage) String() string {
	var b strings.Builder
	b.WriteString("message " + m.name + " {")
	if len(m.fields) > 0 {
		b.WriteByte('\n')
		for _, f := range m.fields {
			appendIndented(&b, f.String())
		}
	}
	if len(m.oneofs) > 0 {
		b.WriteByte('\n')
		for _, o := range m.oneofs {
			var ob strings.Builder
			ob.WriteString("oneof " + o.name + " {")
			if len(o.fields) > 0 {
				ob.WriteByte('\n')
				for _, f := range o.fields {
					appendIndented(&ob, f.String())
				}
			}
			ob.WriteString("}\n")
			appendIndented(&b, ob.String())
		}
	}
	if len(m.messages)+len(m.enums) > 0 {
		b.WriteByte('\n')
		for _, n := range m.messages {
			appendIndented(&b, n.String())
		}
		for _, e := range m.enums {
			var eb strings.Builder
			eb.WriteString("enum " + e.name + " {")
			if len(e.values) > 0 {
				eb.WriteByte('\n')
			}
			for _, v := range e.values {
				appendIndented(&eb, v.name+" = "+strconv.Itoa(v.tag)+";\n")
			}
			eb.WriteString("}\n")
			appendIndented(&b, eb.String())
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func (f pbField) String() string {
	var b strings.Builder
	if f.label != "" {
		b.WriteString(f.label + " ")
	}
	b.WriteString(f.typ + " " + f.name + " = " + strconv.Itoa(f.tag))
	if len(f.params) > 0 {
		b.WriteString(" [(confluent.field_meta) = {\n  params: [\n")
		for i, p := range f.params {
			k, v := "key: "+strconv.Quote(p[0]), "value: "+strconv.Quote(p[1])
			if p[0] == "precision" || p[0] == "scale" {
				// Confluent writes these two value first.
				k, v = v, k
			}
			b.WriteString("    {\n      " + k + ",\n      " + v + "\n    }")
			if i < len(f.params)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  ]\n}]")
	}
	b.WriteString(";\n")
	return b.String()
}

// appendIndented indents each line of v by two spaces, as Confluent's
// appendIndented (blank lines too; a trailing newline adds no line).
func appendIndented(b *strings.Builder, v string) {
	for _, line := range strings.Split(strings.TrimRight(v, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
}

// --- message descriptor → Connect schema (ProtobufData.toConnectSchema) ---

type pbToConnect struct {
	opts  *protoOptions
	stack map[protoreflect.FullName]bool
}

// protoConnectSchema maps a message to its Connect schema; version (0 for
// none) is the registered version of the schema.
func protoConnectSchema(md protoreflect.MessageDescriptor, version int, opts *protoOptions) (*schema.Schema, error) {
	c := &pbToConnect{opts: opts, stack: map[protoreflect.FullName]bool{}}
	var s *schema.Schema
	if t, ok := pbWrappers[string(md.FullName())]; ok && opts.wrapperForRaw {
		s = &schema.Schema{Type: t}
	} else {
		var err error
		if s, err = c.message(md); err != nil {
			return nil, err
		}
	}
	s.Version = int32(version)
	return s, nil
}

func (c *pbToConnect) message(md protoreflect.MessageDescriptor) (*schema.Schema, error) {
	if c.stack[md.FullName()] {
		return nil, fmt.Errorf("convert: Protobuf message %s is recursive, which Connect schemas cannot express", md.FullName())
	}
	c.stack[md.FullName()] = true
	defer delete(c.stack, md.FullName())
	s := &schema.Schema{Type: schema.TypeStruct, Name: string(md.Name())}
	if c.opts.enhanced {
		s.Name = string(md.FullName())
	}
	add := func(name string, fs *schema.Schema) {
		s.Fields = append(s.Fields, schema.Field{Name: name, Index: len(s.Fields), Schema: fs})
	}
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		if c.opts.flattenUnions {
			for j := 0; j < od.Fields().Len(); j++ {
				fd := od.Fields().Get(j)
				fs, err := c.field(fd, true)
				if err != nil {
					return nil, err
				}
				add(string(fd.Name()), fs)
			}
			continue
		}
		u := &schema.Schema{Type: schema.TypeStruct, Optional: true, Name: pbUnionPrefix + string(od.Name())}
		if c.opts.enhanced {
			u.Name = pbUnionPrefix + string(od.FullName())
		}
		for j := 0; j < od.Fields().Len(); j++ {
			fd := od.Fields().Get(j)
			fs, err := c.field(fd, true)
			if err != nil {
				return nil, err
			}
			u.Fields = append(u.Fields, schema.Field{Name: string(fd.Name()), Index: j, Schema: fs})
		}
		add(c.unionFieldName(od), u)
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			continue
		}
		fs, err := c.field(fd, false)
		if err != nil {
			return nil, err
		}
		add(string(fd.Name()), fs)
	}
	return s, nil
}

func (c *pbToConnect) unionFieldName(od protoreflect.OneofDescriptor) string {
	if c.opts.indexForUnions {
		return string(od.Name()) + "_" + strconv.Itoa(od.Index())
	}
	return string(od.Name())
}

// pbIsMap is ProtobufData.isMapDescriptor: a repeated message named
// ...Entry with the fields key and value (a map field, or the repeated
// entry messages Confluent's converter writes for a Connect map).
func pbIsMap(fd protoreflect.FieldDescriptor) bool {
	if !fd.IsList() && !fd.IsMap() || fd.Message() == nil {
		return false
	}
	m := fd.Message()
	f := m.Fields()
	return strings.HasSuffix(string(m.Name()), "Entry") && f.Len() == 2 &&
		f.Get(0).Name() == "key" && f.Get(1).Name() == "value" && !f.Get(0).IsList() && !f.Get(1).IsList()
}

// pbFieldParams reads a field's confluent.field_meta params.
func pbFieldParams(fd protoreflect.FieldDescriptor) map[string]string {
	opts := fd.Options()
	if opts == nil {
		return nil
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	if err != nil {
		return nil
	}
	var out map[string]string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		b = b[n:]
		if num == pbFieldMeta && typ == protowire.BytesType {
			meta, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return out
			}
			b = b[n:]
			for len(meta) > 0 {
				mnum, mtyp, k := protowire.ConsumeTag(meta)
				if k < 0 {
					break
				}
				meta = meta[k:]
				if mnum == 2 && mtyp == protowire.BytesType {
					entry, k := protowire.ConsumeBytes(meta)
					if k < 0 {
						break
					}
					meta = meta[k:]
					key, value := pbEntryStrings(entry)
					if out == nil {
						out = map[string]string{}
					}
					out[key] = value
					continue
				}
				k = protowire.ConsumeFieldValue(mnum, mtyp, meta)
				if k < 0 {
					break
				}
				meta = meta[k:]
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return out
		}
		b = b[n:]
	}
	return out
}

func pbEntryStrings(b []byte) (key, value string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			b = b[n:]
			if num == 1 {
				key = string(v)
			} else {
				value = string(v)
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return
		}
		b = b[n:]
	}
	return
}

func (c *pbToConnect) field(fd protoreflect.FieldDescriptor, oneofMember bool) (*schema.Schema, error) {
	var s *schema.Schema
	params := map[string]string{}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		s = &schema.Schema{Type: schema.TypeInt32}
		switch pbFieldParams(fd)[pbConnectType] {
		case "int8":
			s.Type = schema.TypeInt8
		case "int16":
			s.Type = schema.TypeInt16
		default:
			if fd.Kind() != protoreflect.Int32Kind {
				params[pbTypeParam] = fd.Kind().String()
			}
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind,
		protoreflect.Sint64Kind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		s = &schema.Schema{Type: schema.TypeInt64}
		if fd.Kind() != protoreflect.Int64Kind {
			params[pbTypeParam] = fd.Kind().String()
		}
	case protoreflect.FloatKind:
		s = &schema.Schema{Type: schema.TypeFloat32}
	case protoreflect.DoubleKind:
		s = &schema.Schema{Type: schema.TypeFloat64}
	case protoreflect.BoolKind:
		s = &schema.Schema{Type: schema.TypeBoolean}
	case protoreflect.StringKind:
		s = &schema.Schema{Type: schema.TypeString}
	case protoreflect.BytesKind:
		s = &schema.Schema{Type: schema.TypeBytes}
	case protoreflect.EnumKind:
		ed := fd.Enum()
		s = &schema.Schema{Type: schema.TypeString, Optional: true, Name: string(ed.Name())}
		if c.opts.intForEnums {
			s.Type = schema.TypeInt32
		}
		if c.opts.enhanced {
			s.Name = string(ed.FullName())
		}
		params[pbEnumParam] = string(ed.Name())
		for i := 0; i < ed.Values().Len(); i++ {
			v := ed.Values().Get(i)
			params[pbEnumParam+"."+string(v.Name())] = strconv.Itoa(int(v.Number()))
		}
	case protoreflect.MessageKind:
		switch string(fd.Message().FullName()) {
		case pbDecimalType:
			meta := pbFieldParams(fd)
			scale, err := strconv.Atoi(meta["scale"])
			if err != nil {
				scale = 0
			}
			s = schema.Decimal(int32(scale))
			params[schema.ScaleParameter] = strconv.Itoa(scale)
			if p, err := strconv.Atoi(meta["precision"]); err == nil {
				params[pbPrecisionProp] = strconv.Itoa(p)
			}
		case pbDateType:
			s = schema.Date.WithVersion(1)
		case pbTimeType:
			s = schema.Time.WithVersion(1)
		case pbTimestampType:
			s = schema.Timestamp.WithVersion(1)
		default:
			var err error
			if s, err = c.messageField(fd); err != nil {
				return nil, err
			}
		}
		s.Optional = true
	default:
		return nil, fmt.Errorf("convert: unsupported Protobuf field kind %v of %s", fd.Kind(), fd.FullName())
	}
	if fd.IsList() && s.Type != schema.TypeMap {
		s.Optional = true
		s = &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: s}
	}
	switch {
	case oneofMember:
		s.Optional = true
		if c.opts.wrapperForNullable && fd.Kind() == protoreflect.MessageKind {
			if _, ok := pbWrappers[string(fd.Message().FullName())]; ok {
				params[pbWrapperParam] = "true"
			}
		}
	case c.opts.optionalForNullable:
		if fd.HasOptionalKeyword() {
			s.Optional = true
		}
	case !c.opts.wrapperForNullable:
		s.Optional = true
	}
	params[pbTagParam] = strconv.Itoa(int(fd.Number()))
	if s.Parameters == nil {
		s.Parameters = params
	} else {
		for k, v := range params {
			s.Parameters[k] = v
		}
	}
	return s, nil
}

// messageField maps a message-typed field: a map, an unwrapped wrapper
// (wrapper.for.nullables) or a struct.
func (c *pbToConnect) messageField(fd protoreflect.FieldDescriptor) (*schema.Schema, error) {
	md := fd.Message()
	if pbIsMap(fd) {
		k, err := c.field(md.Fields().Get(0), false)
		if err != nil {
			return nil, err
		}
		v, err := c.field(md.Fields().Get(1), false)
		if err != nil {
			return nil, err
		}
		name := string(md.Name())
		if c.opts.enhanced {
			name = string(md.FullName())
		}
		return &schema.Schema{Type: schema.TypeMap, Name: pbMapFieldName(name), KeySchema: k, ValueSchema: v}, nil
	}
	if c.opts.wrapperForNullable {
		if t, ok := pbWrappers[string(md.FullName())]; ok {
			return &schema.Schema{Type: t}, nil
		}
	}
	return c.message(md)
}

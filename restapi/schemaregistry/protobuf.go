package schemaregistry

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

type protoSchema struct {
	fd        protoreflect.FileDescriptor
	canonical string
}

func (p *protoSchema) Type() string      { return TypeProtobuf }
func (p *protoSchema) Canonical() string { return p.canonical }

// parseProtobuf compiles .proto text (or a base64-encoded
// FileDescriptorProto, as Confluent's Python and Go serializers register)
// with sr.CompileProtobuf, the references, Google's well-known types and
// the types Confluent's registry knows without references available as
// imports. The canonical text is the source without leading and trailing
// whitespace.
func parseProtobuf(text string, deps []Dep) (Parsed, error) {
	files := make(map[string]string, len(deps))
	for _, d := range deps {
		files[d.Name] = d.Schema
	}
	fd, err := sr.CompileProtobuf("", text, files)
	if err != nil {
		return nil, errInvalidSchema("Invalid schema %s with refs %s of type PROTOBUF, details: %v", text, depNames(deps), err)
	}
	return &protoSchema{fd: fd, canonical: strings.TrimSpace(text)}, nil
}

// Protobuf changes Confluent treats as incompatible (protobuf-provider
// diff/SchemaDiff.java: everything outside COMPATIBLE_CHANGES).
const (
	protoPackageChanged       = "PACKAGE_CHANGED"
	protoMessageRemoved       = "MESSAGE_REMOVED"
	protoFieldKindChanged     = "FIELD_KIND_CHANGED"
	protoFieldScalarKind      = "FIELD_SCALAR_KIND_CHANGED"
	protoFieldNamedType       = "FIELD_NAMED_TYPE_CHANGED"
	protoFieldNumericLabel    = "FIELD_NUMERIC_LABEL_CHANGED"
	protoRequiredAdded        = "REQUIRED_FIELD_ADDED"
	protoRequiredRemoved      = "REQUIRED_FIELD_REMOVED"
	protoOneofFieldRemoved    = "ONEOF_FIELD_REMOVED"
	protoMultipleMovedToOneof = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
	protoFieldMovedToExisting = "FIELD_MOVED_TO_EXISTING_ONEOF"
)

// protoDiff lists the incompatible differences from original to update,
// the way Confluent's SchemaDiff.compare(original, update) does: BACKWARD
// compares (previous, new), FORWARD (new, previous).
func protoDiff(original, update *protoSchema) []string {
	var out []string
	add := func(kind, path string) {
		out = append(out, fmt.Sprintf("{errorType:\"%s\", description:\"Found incompatible change: Difference{fullPath='%s', type=%s}\"}", kind, path, kind))
	}
	if original.fd.Package() != update.fd.Package() {
		add(protoPackageChanged, "#/")
	}
	om := protoMessages(original.fd)
	um := protoMessages(update.fd)
	names := make([]string, 0, len(om))
	for n := range om {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		u, ok := um[n]
		if !ok {
			add(protoMessageRemoved, "#/"+n)
			continue
		}
		protoMessageDiff(om[n], u, "#/"+n, string(original.fd.Package()), string(update.fd.Package()), add)
	}
	return out
}

// protoMessages maps every message of a file, nested ones too, by its name
// relative to the package (map entry messages are fields' business).
func protoMessages(fd protoreflect.FileDescriptor) map[string]protoreflect.MessageDescriptor {
	out := map[string]protoreflect.MessageDescriptor{}
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			out[localName(string(m.FullName()), string(fd.Package()))] = m
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	return out
}

func localName(full, pkg string) string {
	if pkg != "" && strings.HasPrefix(full, pkg+".") {
		return full[len(pkg)+1:]
	}
	return full
}

// scalarGroup puts wire-compatible scalar kinds in one group (Confluent's
// FieldSchemaDiff: GENERAL_NUMBER, SIGNED_NUMBER, STRING_OR_BYTES, FIXED32,
// FIXED64, FLOAT, DOUBLE).
func scalarGroup(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.BoolKind:
		return "GENERAL_NUMBER"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "SIGNED_NUMBER"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "STRING_OR_BYTES"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "FIXED32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "FIXED64"
	case protoreflect.FloatKind:
		return "FLOAT"
	case protoreflect.DoubleKind:
		return "DOUBLE"
	}
	return k.String()
}

func fieldKind(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return "MAP"
	case f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind:
		return "MESSAGE"
	case f.Kind() == protoreflect.EnumKind:
		return "ENUM"
	}
	return "SCALAR"
}

func realOneof(f protoreflect.FieldDescriptor) protoreflect.OneofDescriptor {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return o
	}
	return nil
}

func protoMessageDiff(o, u protoreflect.MessageDescriptor, path, opkg, upkg string, add func(kind, path string)) {
	of, uf := o.Fields(), u.Fields()
	for i := 0; i < of.Len(); i++ {
		f := of.Get(i)
		fpath := fmt.Sprintf("%s/%d", path, f.Number())
		g := uf.ByNumber(f.Number())
		if g == nil {
			switch {
			case f.Cardinality() == protoreflect.Required:
				add(protoRequiredRemoved, fpath)
			case realOneof(f) != nil:
				add(protoOneofFieldRemoved, fpath)
			}
			continue
		}
		ok, uk := fieldKind(f), fieldKind(g)
		switch {
		case ok != uk:
			add(protoFieldKindChanged, fpath)
		case ok == "SCALAR":
			if scalarGroup(f.Kind()) != scalarGroup(g.Kind()) {
				add(protoFieldScalarKind, fpath)
			} else if f.Kind() != protoreflect.StringKind && f.Kind() != protoreflect.BytesKind && f.IsList() != g.IsList() {
				add(protoFieldNumericLabel, fpath)
			}
		case ok == "MESSAGE":
			if localName(string(f.Message().FullName()), opkg) != localName(string(g.Message().FullName()), upkg) {
				add(protoFieldNamedType, fpath)
			}
		case ok == "ENUM":
			if localName(string(f.Enum().FullName()), opkg) != localName(string(g.Enum().FullName()), upkg) {
				add(protoFieldNamedType, fpath)
			}
		case ok == "MAP":
			if fieldKind(f.MapValue()) != fieldKind(g.MapValue()) || scalarGroup(f.MapKey().Kind()) != scalarGroup(g.MapKey().Kind()) {
				add(protoFieldKindChanged, fpath)
			}
		}
		if (f.Cardinality() == protoreflect.Required) != (g.Cardinality() == protoreflect.Required) {
			if g.Cardinality() == protoreflect.Required {
				add(protoRequiredAdded, fpath)
			} else {
				add(protoRequiredRemoved, fpath)
			}
		}
		if realOneof(f) == nil && realOneof(g) != nil {
			// Moving a field into a oneof that existed before changes
			// what the oneof's other members mean.
			if o.Oneofs().ByName(realOneof(g).Name()) != nil {
				add(protoFieldMovedToExisting, fpath)
			}
		}
	}
	for i := 0; i < uf.Len(); i++ {
		g := uf.Get(i)
		if of.ByNumber(g.Number()) == nil && g.Cardinality() == protoreflect.Required {
			add(protoRequiredAdded, fmt.Sprintf("%s/%d", path, g.Number()))
		}
	}
	// A new oneof that gathers several fields that were already there.
	uo := u.Oneofs()
	for i := 0; i < uo.Len(); i++ {
		one := uo.Get(i)
		if one.IsSynthetic() || o.Oneofs().ByName(one.Name()) != nil {
			continue
		}
		moved := 0
		for j := 0; j < one.Fields().Len(); j++ {
			if of.ByNumber(one.Fields().Get(j).Number()) != nil {
				moved++
			}
		}
		if moved > 1 {
			add(protoMultipleMovedToOneof, path+"/"+string(one.Name()))
		}
	}
}

// protoIdentity is what makes two .proto texts the same schema: the text
// without comments and without whitespace that separates nothing, so that
// the same schema formatted otherwise gets the same id (Confluent compares
// its own re-formatting of the parsed file).
func protoIdentity(text string) string {
	var b strings.Builder
	word := func(c byte) bool {
		return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	pendingSpace := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			pendingSpace = true
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 4
			}
			pendingSpace = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			pendingSpace = true
			i++
			continue
		}
		if pendingSpace && b.Len() > 0 {
			// Keep a separator where dropping it would join two words or
			// make a comment of "/ /" or "/ *".
			if prev := b.String()[b.Len()-1]; word(prev) && word(c) || prev == '/' && (c == '/' || c == '*') {
				b.WriteByte(' ')
			}
		}
		pendingSpace = false
		if c == '"' || c == '\'' {
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(text))
			b.WriteString(text[i:j])
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

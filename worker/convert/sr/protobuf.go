package sr

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// DefaultProtobufFile is the file name CompileProtobuf gives a schema
// compiled without a name.
const DefaultProtobufFile = "__schema_registry_main.proto"

// KnownProtobufFiles are the files a Protobuf schema may import without a
// reference, beside Google's well-known types (google/protobuf/*.proto):
// Confluent's registry and serializers know them (ProtobufSchema's
// KNOWN_DEPENDENCIES), and Confluent's ProtobufConverter writes imports of
// them for Connect's Decimal, Date and Time.
var KnownProtobufFiles = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;

import "google/protobuf/descriptor.proto";

option java_package = "io.confluent.protobuf";
option java_outer_classname = "MetaProto";

message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}
message Rule {
  string name = 1;
  string doc = 2;
  string expr = 3;
  string sql = 4;
}

extend google.protobuf.FileOptions {
  Meta file_meta = 1088;
}
extend google.protobuf.MessageOptions {
  Meta message_meta = 1088;
}
extend google.protobuf.FieldOptions {
  Meta field_meta = 1088;
}
extend google.protobuf.EnumOptions {
  Meta enum_meta = 1088;
}
extend google.protobuf.EnumValueOptions {
  Meta enum_value_meta = 1088;
}
`,
	"confluent/type/decimal.proto": `syntax = "proto3";

package confluent.type;

option java_package = "io.confluent.protobuf.type";
option java_multiple_files = true;
option java_outer_classname = "DecimalProto";

message Decimal {
  // The two's-complement representation of the unscaled integer value in big-endian byte order
  bytes value = 1;
  // The precision (zero indicates unlimited precision)
  uint32 precision = 2;
  // The scale
  int32 scale = 3;
}
`,
	"google/type/date.proto": `syntax = "proto3";

package google.type;

option cc_enable_arenas = true;
option go_package = "google.golang.org/genproto/googleapis/type/date;date";
option java_multiple_files = true;
option java_outer_classname = "DateProto";
option java_package = "com.google.type";
option objc_class_prefix = "GTP";

message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
`,
	"google/type/timeofday.proto": `syntax = "proto3";

package google.type;

option cc_enable_arenas = true;
option go_package = "google.golang.org/genproto/googleapis/type/timeofday;timeofday";
option java_multiple_files = true;
option java_outer_classname = "TimeOfDayProto";
option java_package = "com.google.type";
option objc_class_prefix = "GTP";

message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
`,
}

// CompileProtobuf compiles a Protobuf schema into its file descriptor,
// with bufbuild/protocompile. text is .proto source, or a base64-encoded
// FileDescriptorProto (the form Confluent's Python and Go serializers
// register); name is the file name it compiles under ("" for
// DefaultProtobufFile). deps maps the import names of the files it
// imports, transitively (a schema's references, by reference name), to
// their schema text, in either form. Google's well-known types and
// KnownProtobufFiles need no deps.
func CompileProtobuf(name, text string, deps map[string]string) (protoreflect.FileDescriptor, error) {
	if name == "" {
		name = DefaultProtobufFile
	}
	resolve := func(path string) (protocompile.SearchResult, error) {
		src, ok := deps[path]
		if path == name {
			src, ok = text, true
		}
		if !ok {
			if src, ok = KnownProtobufFiles[path]; !ok {
				return protocompile.SearchResult{}, os.ErrNotExist
			}
		}
		if fdp := protobufDescriptor(src); fdp != nil {
			fdp.Name = proto.String(path)
			return protocompile.SearchResult{Proto: fdp}, nil
		}
		return protocompile.SearchResult{Source: strings.NewReader(withMetaImport(src))}, nil
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.ResolverFunc(resolve)),
		Reporter: reporter.NewReporter(nil, func(reporter.ErrorWithPos) {}),
		// The AST tells a file compiled from source (see fromSource).
		RetainASTs: true,
	}
	out, err := c.Compile(context.Background(), name)
	if err != nil {
		return nil, fmt.Errorf("sr: compile Protobuf schema: %w", err)
	}
	return out[0], nil
}

// withMetaImport adds the import of confluent/meta.proto to .proto source
// that uses Confluent's options ((confluent.field_meta) and the like)
// without importing it, as Confluent's ProtobufConverter writes them:
// Confluent's parser knows the options without the import. The import
// goes at the end (top-level statements may come in any order), so
// positions in error messages stay right.
func withMetaImport(src string) string {
	if strings.Contains(src, "confluent.") && strings.Contains(src, "_meta)") && !strings.Contains(src, `"confluent/meta.proto"`) {
		return src + "\nimport \"confluent/meta.proto\";\n"
	}
	return src
}

// protobufDescriptor decodes a base64-encoded FileDescriptorProto, or
// returns nil when text is not one (.proto source always holds a
// character outside base64's alphabet: a space, ';' or '{').
func protobufDescriptor(text string) *descriptorpb.FileDescriptorProto {
	text = strings.TrimSpace(text)
	if text == "" || strings.ContainsAny(text, " \t\r\n;{}\"") {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if proto.Unmarshal(b, fdp) != nil {
		return nil
	}
	// protoc fills in every field's JSON name; other writers (Python's
	// descriptor_pb2) may not, and the linker takes an absent one for a
	// custom "".
	var fill func(ms []*descriptorpb.DescriptorProto)
	fillFields := func(fs []*descriptorpb.FieldDescriptorProto) {
		for _, f := range fs {
			if f.JsonName == nil {
				f.JsonName = proto.String(jsonName(f.GetName()))
			}
		}
	}
	fill = func(ms []*descriptorpb.DescriptorProto) {
		for _, m := range ms {
			fillFields(m.Field)
			fillFields(m.Extension)
			fill(m.NestedType)
		}
	}
	fill(fdp.MessageType)
	fillFields(fdp.Extension)
	return fdp
}

// jsonName is protoc's default JSON name of a field: underscores dropped,
// the letter after each one upper-cased.
func jsonName(name string) string {
	var b strings.Builder
	upper := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			upper = false
		default:
			b.WriteByte(c)
			upper = false
		}
	}
	return b.String()
}

// ErrNoProtobufMessage is wrapped when message indexes point at no
// message of a schema.
var ErrNoProtobufMessage = errors.New("sr: no such Protobuf message")

// ProtobufMessage returns the message of fd that Confluent's message
// indexes name: the first index counts fd's top-level messages, each next
// one the messages declared in the one before. Empty indexes are [0].
// As in Confluent's ProtobufSchema.toMessageName, the map entry messages
// of a schema given as .proto source are not counted (the source does
// not declare them), those of a schema given as a FileDescriptorProto
// are (it does, and Confluent's Python serializer counts them).
func ProtobufMessage(fd protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	var md protoreflect.MessageDescriptor
	ms := fd.Messages()
	source := fromSource(fd)
	for _, index := range indexes {
		md = declaredMessage(ms, index, source)
		if md == nil {
			return nil, fmt.Errorf("%w: indexes %v in %s", ErrNoProtobufMessage, indexes, fd.Path())
		}
		ms = md.Messages()
	}
	return md, nil
}

// ProtobufIndexes returns the message indexes of md within its file, the
// reverse of ProtobufMessage.
func ProtobufIndexes(md protoreflect.MessageDescriptor) []int {
	var out []int
	source := fromSource(md.ParentFile())
	for d := protoreflect.Descriptor(md); ; {
		parent := d.Parent()
		var ms protoreflect.MessageDescriptors
		switch p := parent.(type) {
		case protoreflect.MessageDescriptor:
			ms = p.Messages()
		case protoreflect.FileDescriptor:
			ms = p.Messages()
		default:
			return out
		}
		i := 0
		for j := 0; j < ms.Len(); j++ {
			m := ms.Get(j)
			if source && m.IsMapEntry() {
				continue
			}
			if m.FullName() == d.FullName() {
				break
			}
			i++
		}
		out = append([]int{i}, out...)
		if _, ok := parent.(protoreflect.FileDescriptor); ok {
			return out
		}
		d = parent
	}
}

// fromSource reports whether fd was compiled from .proto source rather
// than from a FileDescriptorProto.
func fromSource(fd protoreflect.FileDescriptor) bool {
	r, ok := fd.(parser.Result)
	return ok && r.AST() != nil
}

// declaredMessage is the index-th message of ms, map entries left out when
// source is set, or nil.
func declaredMessage(ms protoreflect.MessageDescriptors, index int, source bool) protoreflect.MessageDescriptor {
	if index < 0 {
		return nil
	}
	for j := 0; j < ms.Len(); j++ {
		m := ms.Get(j)
		if source && m.IsMapEntry() {
			continue
		}
		if index == 0 {
			return m
		}
		index--
	}
	return nil
}

package sr

import (
	"encoding/base64"
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

const protoAddress = `syntax = "proto3";
package ex.common;
message Address { string city = 1; }
`

const protoOrder = `syntax = "proto3";
package ex;
import "common/address.proto";
import "google/protobuf/timestamp.proto";
import "google/type/date.proto";
import "confluent/type/decimal.proto";

message Order {
  map<string, int32> counts = 1;
  message Line {
    message Tax { string code = 1; }
    map<string, string> labels = 1;
    Tax tax = 2;
  }
  repeated Line lines = 2;
  ex.common.Address ship_to = 3;
  google.protobuf.Timestamp at = 4;
  google.type.Date day = 5;
  confluent.type.Decimal total = 6;
}
message Customer { string name = 1; }
`

func TestCompileProtobufIndexes(t *testing.T) {
	deps := map[string]string{"common/address.proto": protoAddress}
	fd, err := CompileProtobuf("order.proto", protoOrder, deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		indexes []int
		name    string
	}{
		{nil, "ex.Order"},
		{[]int{0}, "ex.Order"},
		{[]int{1}, "ex.Customer"},
		// The map entry of counts is not counted: Line is Order's first.
		{[]int{0, 0}, "ex.Order.Line"},
		{[]int{0, 0, 0}, "ex.Order.Line.Tax"},
	} {
		md, err := ProtobufMessage(fd, c.indexes)
		if err != nil {
			t.Fatalf("%v: %v", c.indexes, err)
		}
		if string(md.FullName()) != c.name {
			t.Errorf("%v: got %s, want %s", c.indexes, md.FullName(), c.name)
		}
		want := c.indexes
		if len(want) == 0 {
			want = []int{0}
		}
		if got := ProtobufIndexes(md); !slices.Equal(got, want) {
			t.Errorf("ProtobufIndexes(%s) = %v, want %v", md.FullName(), got, want)
		}
	}
	for _, bad := range [][]int{{2}, {0, 1}, {-1}, {0, 0, 0, 0}} {
		if _, err := ProtobufMessage(fd, bad); !errors.Is(err, ErrNoProtobufMessage) {
			t.Errorf("%v: got %v, want ErrNoProtobufMessage", bad, err)
		}
	}
}

func TestCompileProtobufDescriptorForm(t *testing.T) {
	deps := map[string]string{"common/address.proto": protoAddress}
	fd, err := CompileProtobuf("order.proto", protoOrder, deps)
	if err != nil {
		t.Fatal(err)
	}
	// The same schema as Confluent's Python serializer registers it: a
	// base64-encoded FileDescriptorProto, its dependency too.
	enc := func(fdp proto.Message) string {
		b, err := proto.Marshal(fdp)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	// Without JSON names, as Python's descriptor_pb2 leaves them.
	addr := protodesc.ToFileDescriptorProto(fd.Imports().Get(0).FileDescriptor)
	for _, f := range addr.MessageType[0].Field {
		f.JsonName = nil
	}
	b64deps := map[string]string{"common/address.proto": enc(addr)}
	fd2, err := CompileProtobuf("", enc(protodesc.ToFileDescriptorProto(fd)), b64deps)
	if err != nil {
		t.Fatal(err)
	}
	// In the descriptor form the map entry messages are declared, and
	// count (Order's CountsEntry comes before Line).
	md, err := ProtobufMessage(fd2, []int{0, 1, 0})
	if err != nil || md.FullName() != "ex.Order.Line.Tax" {
		t.Fatalf("got %v, %v", md, err)
	}
	if got := ProtobufIndexes(md); !slices.Equal(got, []int{0, 1, 0}) {
		t.Fatalf("ProtobufIndexes = %v", got)
	}
	if f := fd2.Messages().Get(0).Fields().ByName("ship_to"); f == nil || f.Message().FullName() != "ex.common.Address" {
		t.Fatalf("ship_to: %v", f)
	}
}

func TestCompileProtobufErrors(t *testing.T) {
	for name, text := range map[string]string{
		"syntax":         `syntax = "proto3"; message {`,
		"missing import": `syntax = "proto3"; import "nope.proto"; message A { string a = 1; }`,
		"unknown type":   `syntax = "proto3"; message A { B b = 1; }`,
		"bad base64":     `AAAA`,
	} {
		if _, err := CompileProtobuf("", text, nil); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

// TestCompileProtobufMetaWithoutImport compiles a schema as Confluent's
// ProtobufConverter writes it: (confluent.field_meta) without importing
// confluent/meta.proto.
func TestCompileProtobufMetaWithoutImport(t *testing.T) {
	text := `syntax = "proto3";

message ConnectDefault1 {
  int32 small = 1 [(confluent.field_meta) = {
    params: [
      {
        key: "connect.type",
        value: "int8"
      }
    ]
  }];
}
`
	fd, err := CompileProtobuf("", text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fd.Imports().Len() != 1 || fd.Imports().Get(0).Path() != "confluent/meta.proto" {
		t.Fatalf("imports %v", fd.Imports())
	}
	opts, err := proto.Marshal(fd.Messages().Get(0).Fields().Get(0).Options())
	if err != nil || len(opts) == 0 {
		t.Fatalf("the field's options did not compile: %x, %v", opts, err)
	}
}

func TestJSONName(t *testing.T) {
	for in, want := range map[string]string{"city": "city", "ship_to": "shipTo", "a__b": "aB", "x_1": "x1", "_lead": "Lead"} {
		if got := jsonName(in); got != want {
			t.Errorf("jsonName(%q) = %q, want %q", in, got, want)
		}
	}
}

package schemaregistry

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestProtobufSerializedFormat checks ?format=serialized, which
// Confluent's Python deserializer sends: a Protobuf schema comes back as a
// base64-encoded FileDescriptorProto whose imports are the reference
// names; a schema registered in that form reads back as registered.
func TestProtobufSerializedFormat(t *testing.T) {
	reg, _ := newMemRegistry()
	hs := httptest.NewServer(Handler(reg, nil))
	t.Cleanup(hs.Close)
	addr := "syntax = \"proto3\";\npackage ex;\nmessage Address { string city = 1; }\n"
	user := "syntax = \"proto3\";\npackage ex;\nimport \"ex/address.proto\";\nimport \"google/type/date.proto\";\n" +
		"message User { Address home = 1; google.type.Date born = 2; int32 small = 3 [(confluent.field_meta) = { params: [ { key: \"connect.type\", value: \"int8\" } ] }]; }\n"
	for _, step := range []struct {
		path string
		body map[string]any
		want string
	}{
		{"/subjects/ex%2Faddress.proto/versions", map[string]any{"schema": addr, "schemaType": "PROTOBUF"}, `{"id":1}`},
		{"/subjects/users-value/versions", map[string]any{"schema": user, "schemaType": "PROTOBUF",
			"references": []map[string]any{{"name": "ex/address.proto", "subject": "ex/address.proto", "version": 1}}}, `{"id":2}`},
	} {
		if got := call(t, "POST", hs.URL+step.path, step.body); got.status != 200 || got.body != step.want {
			t.Fatalf("POST %s: %+v", step.path, got)
		}
	}
	decode := func(path string) *descriptorpb.FileDescriptorProto {
		t.Helper()
		got := call(t, "GET", hs.URL+path, nil)
		var body struct {
			Schema string `json:"schema"`
		}
		if got.status != 200 || json.Unmarshal([]byte(got.body), &body) != nil {
			t.Fatalf("GET %s: %+v", path, got)
		}
		b, err := base64.StdEncoding.DecodeString(body.Schema)
		if err != nil {
			t.Fatalf("GET %s: not base64: %v", path, err)
		}
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fdp); err != nil {
			t.Fatal(err)
		}
		return fdp
	}
	fdp := decode("/schemas/ids/2?format=serialized")
	if fdp.GetPackage() != "ex" || fdp.MessageType[0].GetName() != "User" || len(fdp.MessageType[0].Field) != 3 {
		t.Fatalf("descriptor: %v", fdp)
	}
	if deps := fdp.GetDependency(); len(deps) != 3 || deps[0] != "ex/address.proto" || deps[1] != "google/type/date.proto" {
		t.Fatalf("dependencies %v", deps)
	}
	if got := decode("/subjects/users-value/versions/1?format=serialized"); !proto.Equal(got, fdp) {
		t.Fatal("the version's serialized form differs from the id's")
	}
	// The descriptor form registers as a schema of its own, and reads back
	// as it was sent (Confluent's Python serializer compares).
	b64 := base64.StdEncoding.EncodeToString(must(proto.Marshal(decode("/schemas/ids/1?format=serialized"))))
	got := call(t, "POST", hs.URL+"/subjects/addr-b64/versions", map[string]any{"schema": b64, "schemaType": "PROTOBUF"})
	if got.status != 200 || got.body != `{"id":3}` {
		t.Fatalf("register base64: %+v", got)
	}
	for id, want := range map[string]string{"3": b64, "1": strings.TrimSpace(addr)} {
		got := call(t, "GET", hs.URL+"/schemas/ids/"+id, nil)
		var body struct {
			Type   string `json:"schemaType"`
			Schema string `json:"schema"`
		}
		if err := json.Unmarshal([]byte(got.body), &body); err != nil || body.Type != "PROTOBUF" || body.Schema != want {
			t.Fatalf("schema %s in its plain format: %s", id, got.body)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package schemaregistry

import "fmt"

// Schema types, as the REST API and the _schemas values spell them.
const (
	TypeAvro     = "AVRO"
	TypeJSON     = "JSON"
	TypeProtobuf = "PROTOBUF"
)

// Parsed is a schema that parsed: its type and the canonical text the
// registry stores and compares (the same schema written with other
// whitespace has the same canonical text, so it gets the same id).
type Parsed interface {
	Type() string
	Canonical() string
}

// Dep is a resolved reference: the name the referring schema uses for it
// and the referenced schema's text. Deps are given dependencies first.
type Dep struct {
	Name   string
	Schema string
}

// Parse parses schema text of a type ("" is AVRO) with its references
// resolved; a bad schema is a *Error with code 42201.
func Parse(typ, text string, deps []Dep) (Parsed, error) {
	switch normType(typ) {
	case TypeAvro:
		return parseAvro(text, deps)
	case TypeJSON:
		return parseJSONSchema(text, deps)
	case TypeProtobuf:
		return parseProtobuf(text, deps)
	}
	return nil, errInvalidSchema("Invalid schema type %s", typ)
}

// CanRead lists why data written with writer could not be read with
// reader: empty means it can. Both must be of the same type.
func CanRead(reader, writer Parsed) []string {
	if reader.Type() != writer.Type() {
		return []string{fmt.Sprintf("Incompatible because of different schema type (%s and %s)", writer.Type(), reader.Type())}
	}
	switch r := reader.(type) {
	case *avroSchema:
		return avroCanRead(r.s, writer.(*avroSchema).s)
	case *jsonSchema:
		return jsonCanRead(r, writer.(*jsonSchema))
	case *protoSchema:
		return protoDiff(writer.(*protoSchema), r)
	}
	return nil
}

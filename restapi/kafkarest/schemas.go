package kafkarest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// Confluent's codes of a schema that cannot be used.
const codeInvalidSchema = 42205

// schemaSide is where the schema of the keys or the values of a produce
// request comes from: given inline (registered under its subject), by id,
// by a version of its subject (v3), or its subject's latest version (v3,
// latest).
type schemaSide struct {
	schema  *string
	id      *int
	version *int
	latest  bool
}

// naming names the subject of a key or value schema: subject when the
// request gives one, else the strategy's name for the topic and the
// schema's record name.
type naming struct {
	topic    string
	isKey    bool
	subject  string
	strategy string // TOPIC_NAME (""), RECORD_NAME or TOPIC_RECORD_NAME
}

// strategies are the v3 subject_name_strategy values and the
// serializers' strategies they stand for.
var strategies = map[string]string{
	"TOPIC_NAME":        sr.TopicNameStrategy,
	"RECORD_NAME":       sr.RecordNameStrategy,
	"TOPIC_RECORD_NAME": sr.TopicRecordNameStrategy,
}

// subjectOf is n's subject for schema s; s is nil when the schema is not
// known yet (a version or the latest of a subject), which only a strategy
// that does not use its name can name.
func (n naming) subjectOf(s *parsedSchema) (string, *Error) {
	if n.subject != "" {
		return n.subject, nil
	}
	strategy, err := sr.Strategy(strategies[n.strategy])
	if err != nil {
		return "", badRequest("subject_name_strategy: %v", err)
	}
	record := ""
	if n.strategy != "" && n.strategy != "TOPIC_NAME" {
		if s == nil {
			return "", badRequest("Cannot use schema_subject_strategy=%s without schema_id or schema.", n.strategy)
		}
		if record = s.recordName(); record == "" {
			return "", badRequest("subject_name_strategy=%s: the %s schema has no name (a JSON Schema's is its title)", n.strategy, s.format.v3Type())
		}
	}
	return strategy(n.topic, n.isKey, record), nil
}

// parsedSchema is a registry schema ready to encode and decode with.
type parsedSchema struct {
	format  format
	avro    avro.Schema
	json    any // the JSON Schema, decoded with UseNumber
	proto   protoreflect.FileDescriptor
	message protoreflect.MessageDescriptor // the first message: what produce requests encode
}

// recordName is the schema's name for the record name strategies: an Avro
// named type's full name, the first Protobuf message's full name, a JSON
// Schema's title ("" when it has none).
func (s *parsedSchema) recordName() string {
	switch s.format {
	case formatProtobuf:
		return string(s.message.FullName())
	case formatJSONSchema:
		if m, ok := s.json.(map[string]any); ok {
			if t, ok := m["title"].(string); ok {
				return t
			}
		}
		return ""
	}
	if n, ok := s.avro.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.avro.Type())
}

// inlineKey is a schema given in a request: its format and text.
type inlineKey struct {
	format format
	text   string
}

// resolved is a schema ready to encode with: its registry id, subject and
// (when asked for) version.
type resolved struct {
	*parsedSchema
	id      int
	subject string
	version int // 0: not looked up
}

// parseSchema parses s, a schema of format f; its references are fetched
// from the registry.
func (p *Proxy) parseSchema(ctx context.Context, f format, s sr.Schema) (*parsedSchema, error) {
	ps := &parsedSchema{format: f}
	var err error
	switch f {
	case formatAvro:
		ps.avro, err = avro.ParseBytes([]byte(s.Schema))
	case formatJSONSchema:
		if !json.Valid([]byte(s.Schema)) {
			return nil, errors.New("not JSON")
		}
		ps.json, err = decodeNumbers([]byte(s.Schema))
	case formatProtobuf:
		var deps map[string]string
		if deps, err = p.sr.References(ctx, s.References); err != nil {
			return nil, err
		}
		if ps.proto, err = sr.CompileProtobuf("", s.Schema, deps); err != nil {
			return nil, err
		}
		ps.message, err = sr.ProtobufMessage(ps.proto, nil)
	default:
		err = fmt.Errorf("%s has no schema", f)
	}
	if err != nil {
		return nil, err
	}
	return ps, nil
}

// maxInline bounds the inline schemas kept parsed: past it the cache
// starts over.
const maxInline = 1024

// inlineSchema parses a schema a request gives inline, once for requests
// that give the same (a stream of v3 records carrying their schema).
func (p *Proxy) inlineSchema(ctx context.Context, f format, s sr.Schema) (*parsedSchema, error) {
	key := inlineKey{f, s.Schema}
	p.schemaMu.Lock()
	ps, ok := p.inline[key]
	p.schemaMu.Unlock()
	if ok {
		return ps, nil
	}
	ps, err := p.parseSchema(ctx, f, s)
	if err != nil {
		return nil, err
	}
	p.schemaMu.Lock()
	if len(p.inline) >= maxInline {
		clear(p.inline)
	}
	p.inline[key] = ps
	p.schemaMu.Unlock()
	return ps, nil
}

// schemaByID is the registry's schema id, parsed once; want is the format
// it must have, formatNone for any.
func (p *Proxy) schemaByID(ctx context.Context, id int, want format) (*parsedSchema, *Error) {
	p.schemaMu.Lock()
	ps, ok := p.schemas[id]
	p.schemaMu.Unlock()
	if !ok {
		s, err := p.sr.SchemaByID(ctx, id)
		if err != nil {
			return nil, registryError(err)
		}
		f, known := formatOfRegistryType(s.Type)
		if !known {
			return nil, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: schema %d is of the unknown type %s", id, s.Type)
		}
		if ps, err = p.parseSchema(ctx, f, s); err != nil {
			return nil, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: schema %d: %v", id, err)
		}
		p.schemaMu.Lock()
		p.schemas[id] = ps
		p.schemaMu.Unlock()
	}
	if want != formatNone && ps.format != want {
		return nil, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: schema %d is %s, not %s", id, ps.format.registryType(), want.registryType())
	}
	return ps, nil
}

// resolveSchema registers or fetches side's schema of format f
// (formatNone: whatever the registry's schema is) under the subject n
// names; ok is false when side gives none. withVersion looks the schema's
// version under its subject up too (v3 reports it).
func (p *Proxy) resolveSchema(ctx context.Context, f format, n naming, side schemaSide, withVersion bool) (r resolved, ok bool, perr *Error) {
	switch {
	case side.schema != nil:
		if f == formatNone {
			return r, false, badRequest("type: give the schema's type (AVRO, JSONSCHEMA or PROTOBUF) with the schema")
		}
		s := sr.Schema{Schema: *side.schema}
		if f != formatAvro {
			s.Type = f.registryType()
		}
		ps, err := p.inlineSchema(ctx, f, s)
		if err != nil {
			return r, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: %v", err)
		}
		if r.subject, perr = n.subjectOf(ps); perr != nil {
			return r, false, perr
		}
		if r.id, err = p.sr.Register(ctx, r.subject, s, false); err != nil {
			return r, false, registryError(err)
		}
		p.schemaMu.Lock()
		p.schemas[r.id] = ps
		p.schemaMu.Unlock()
		r.parsedSchema = ps
	case side.id != nil:
		if r.parsedSchema, perr = p.schemaByID(ctx, *side.id, f); perr != nil {
			return r, false, perr
		}
		r.id = *side.id
		if r.subject, perr = n.subjectOf(r.parsedSchema); perr != nil {
			return r, false, perr
		}
	case side.version != nil || side.latest:
		if r.subject, perr = n.subjectOf(nil); perr != nil {
			return r, false, perr
		}
		version := -1
		if side.version != nil {
			version = *side.version
		}
		ss, err := p.sr.Version(ctx, r.subject, version)
		if err != nil {
			if version > 0 && (sr.HasCode(err, sr.CodeSubjectNotFound) || sr.HasCode(err, sr.CodeVersionNotFound)) {
				// Confluent's SchemaManagerImpl answers a missing version so.
				return r, false, badRequest("Schema does not exist for subject: %s, version: %d", r.subject, version)
			}
			return r, false, registryError(err)
		}
		if r.parsedSchema, perr = p.schemaByID(ctx, ss.ID, f); perr != nil {
			return r, false, perr
		}
		r.id, r.version = ss.ID, ss.Version
		return r, true, nil
	default:
		return r, false, nil
	}
	if withVersion {
		// Confluent reports the version of the schema under its subject;
		// a schema given by id need not be one of the subject's.
		s, err := p.sr.SchemaByID(ctx, r.id)
		if err == nil {
			if ss, err := p.sr.Lookup(ctx, r.subject, s, false); err == nil && ss.ID == r.id {
				r.version = ss.Version
			}
		}
	}
	return r, true, nil
}

// registryError maps a registry answer: its own 4xx codes as a 422 with
// the registry's code and message (a schema it refuses), else a 500.
func registryError(err error) *Error {
	var e *sr.Error
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 {
		return errorf(http.StatusUnprocessableEntity, e.Code, "%s", e.Message)
	}
	return errorf(http.StatusInternalServerError, http.StatusInternalServerError, "Schema registry: %v", err)
}

// parseSchemaProduce decodes a v2 produce body in a schema format (Avro,
// Protobuf, JSON Schema): it resolves the key and value schemas
// (registering inline ones under <topic>-key and <topic>-value) and encodes
// every record in Confluent's wire format. Nothing is produced unless all
// records encode.
func (p *Proxy) parseSchemaProduce(ctx context.Context, f format, topic string, body []byte) (recs []v2Record, keyID, valueID *int, perr *Error) {
	if p.sr == nil {
		return nil, nil, nil, errRegistryMissing
	}
	req, perr := decodeV2Produce(body)
	if perr != nil {
		return nil, nil, nil, perr
	}
	var hasKeys, hasValues bool
	for _, r := range req.Records {
		hasKeys = hasKeys || !isNull(r.Key)
		hasValues = hasValues || !isNull(r.Value)
	}
	key, keyOK, err := p.resolveSchema(ctx, f, naming{topic: topic, isKey: true}, schemaSide{schema: req.KeySchema, id: req.KeySchemaID}, false)
	if err != nil {
		return nil, nil, nil, err
	}
	if hasKeys && !keyOK {
		return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeKeySchemaMissing, "Request includes keys but does not include key schema")
	}
	val, valOK, err := p.resolveSchema(ctx, f, naming{topic: topic}, schemaSide{schema: req.ValueSchema, id: req.ValueSchemaID}, false)
	if err != nil {
		return nil, nil, nil, err
	}
	if hasValues && !valOK {
		return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeValueSchemaMissing, "Request includes values but does not include value schema")
	}
	out := make([]v2Record, len(req.Records))
	for i, r := range req.Records {
		out[i].Partition = -1
		if r.Partition != nil {
			if *r.Partition < 0 {
				return nil, nil, nil, unprocessable("records[%d].partition: must be >= 0", i)
			}
			out[i].Partition = *r.Partition
		}
		var e error
		if out[i].Key, e = encodeSchema(key, r.Key, fmt.Sprintf("records[%d].key", i)); e != nil {
			return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeConversion, "Conversion of JSON to %s failed: %v", f, e)
		}
		if out[i].Value, e = encodeSchema(val, r.Value, fmt.Sprintf("records[%d].value", i)); e != nil {
			return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeConversion, "Conversion of JSON to %s failed: %v", f, e)
		}
	}
	if keyOK {
		keyID = &key.id
	}
	if valOK {
		valueID = &val.id
	}
	return out, keyID, valueID, nil
}

// firstMessage are the message indexes of a schema's first message, the
// one a produce request's records are, as Confluent's proxy writes them.
var firstMessage = []int{0}

// encodeSchema is one key or value in Confluent's wire format: the magic
// byte, the schema id, then the Avro binary, the Protobuf message indexes
// and message (from its JSON mapping), or the JSON; null stays null.
func encodeSchema(s resolved, raw json.RawMessage, path string) ([]byte, error) {
	if isNull(raw) {
		return nil, nil
	}
	dst := sr.AppendHeader(nil, s.id)
	if s.format == formatProtobuf {
		m := dynamicpb.NewMessage(s.message)
		if err := protojson.Unmarshal(raw, m); err != nil {
			return nil, fmt.Errorf("%s%s: %s", path, protoFieldPath(s.message, raw), protoError(err))
		}
		dst = sr.AppendIndexes(dst, firstMessage)
		return proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
	}
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if s.format == formatJSONSchema {
		if err := validateJSON(s.json, v, path); err != nil {
			return nil, err
		}
		c, err := compact(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return append(dst, c...), nil
	}
	return avroFromJSON(dst, s.avro, v, path)
}

// protoError is the message of a protobuf-go error without its "proto:"
// prefix (which protobuf-go spells with a random kind of space) and
// without the position in the record's JSON, which the field path names.
func protoError(err error) string {
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	msg = strings.TrimPrefix(msg, "proto: ")
	return jsonPosition.ReplaceAllString(msg, "")
}

var jsonPosition = regexp.MustCompile(` ?\(line \d+:\d+\)`)

// protoFieldPath finds the member of raw, a JSON object that protojson
// refuses as a message md, that is to blame, by decoding its members one
// at a time (and those of a nested message, depth first): ".name" or
// ".line.qty", "" when no single member is.
func protoFieldPath(md protoreflect.MessageDescriptor, raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		one, _ := json.Marshal(map[string]json.RawMessage{k: obj[k]})
		if protojson.Unmarshal(one, dynamicpb.NewMessage(md)) == nil {
			continue
		}
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByTextName(k)
		}
		if fd != nil && fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			return "." + k + protoFieldPath(fd.Message(), obj[k])
		}
		return "." + k
	}
	return ""
}

// decodeNumbers decodes one JSON value, numbers as json.Number.
func decodeNumbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// protoJSON is how records of the protobuf format are shown: Protobuf's
// JSON mapping with the fields at their default values, as Confluent's
// ProtobufSchemaUtils.toJson prints them.
var protoJSON = protojson.MarshalOptions{EmitDefaultValues: true}

// decodeSchema is a record's key or value in Confluent's wire format as the
// JSON a v2 consumer instance of format f returns.
func (p *Proxy) decodeSchema(ctx context.Context, f format, b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	id, payload, err := sr.ParseHeader(b)
	if err != nil {
		return nil, err
	}
	s, perr := p.schemaByID(ctx, id, f)
	if perr != nil {
		return nil, errors.New(perr.Message)
	}
	switch f {
	case formatJSONSchema:
		if !json.Valid(payload) {
			return nil, errors.New("the record is not JSON")
		}
		return payload, nil
	case formatProtobuf:
		indexes, rest, err := sr.ParseIndexes(payload)
		if err != nil {
			return nil, err
		}
		md, err := sr.ProtobufMessage(s.proto, indexes)
		if err != nil {
			return nil, err
		}
		m := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(rest, m); err != nil {
			return nil, fmt.Errorf("the record is not a %s: %s", md.FullName(), protoError(err))
		}
		return protoJSON.Marshal(m)
	}
	v, rest, err := avroToJSON(s.avro, payload)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the Avro value", len(rest))
	}
	return json.Marshal(v)
}

// embedRecord is a record's key or value as a consumer instance of format f
// returns it.
func (p *Proxy) embedRecord(ctx context.Context, f format, b []byte) (json.RawMessage, error) {
	if f.needsRegistry() && p.sr != nil {
		return p.decodeSchema(ctx, f, b)
	}
	return embed(f, b)
}

// v3SchemaData encodes a v3 key or value of a schema type (AVRO, PROTOBUF
// or JSONSCHEMA, or none with data: the registry's schema decides) in
// Confluent's wire format; handled is false for the other types, left to
// decodeV3Data. The schema is schema_id's, or schema registered under the
// subject, or the subject's schema_version, or its latest; the subject is
// subject, or subject_name_strategy's (TOPIC_NAME by default) for the
// topic and the schema's record name.
func (p *Proxy) v3SchemaData(ctx context.Context, topic, field string, d *v3Data) (pl v3Payload, handled bool, perr *Error) {
	if p.sr == nil || d == nil {
		return v3Payload{}, false, nil
	}
	f := formatNone
	if d.Type != nil {
		var ok bool
		if f, ok = formatOfV3Type(*d.Type); !ok {
			return v3Payload{}, false, nil
		}
	} else if d.Data == nil {
		return v3Payload{}, false, nil
	}
	if d.Subject != nil && d.SubjectNameStrategy != nil {
		return v3Payload{}, true, badRequest("%s: Only one of 'subject_name_strategy' or 'subject' can be used.", field)
	}
	given := 0
	for _, set := range []bool{d.SchemaID != nil, d.SchemaVersion != nil, d.Schema != nil} {
		if set {
			given++
		}
	}
	if given > 1 {
		return v3Payload{}, true, badRequest("%s: Only one of 'schema_id', 'schema_version' or 'schema' can be used.", field)
	}
	n := naming{topic: topic, isKey: field == "key"}
	if d.Subject != nil {
		if *d.Subject == "" {
			return v3Payload{}, true, badRequest("%s.subject may not be empty", field)
		}
		n.subject = *d.Subject
	}
	if d.SubjectNameStrategy != nil {
		n.strategy = strings.ToUpper(*d.SubjectNameStrategy)
		if _, ok := strategies[n.strategy]; !ok {
			return v3Payload{}, true, badRequest("%s.subject_name_strategy: %q is not TOPIC_NAME, RECORD_NAME or TOPIC_RECORD_NAME", field, *d.SubjectNameStrategy)
		}
	}
	side := schemaSide{schema: d.Schema, id: d.SchemaID, version: d.SchemaVersion, latest: given == 0}
	s, _, rerr := p.resolveSchema(ctx, f, n, side, true)
	if rerr != nil {
		return v3Payload{}, true, rerr
	}
	b, err := encodeSchema(s, d.Data, field+".data")
	if err != nil {
		return v3Payload{}, true, badRequest("Conversion of JSON to %s failed: %v", s.format, err)
	}
	return v3Payload{Bytes: b, Type: s.format.v3Type(), SchemaID: s.id, SchemaVersion: s.version, Subject: s.subject}, true, nil
}

// prepareSchemas encodes req's schema-typed key and value, taking them out
// of req for decodeV3Record; nil payloads when req has none.
func (p *Proxy) prepareSchemas(topic string, req *v3Produce) (key, value *v3Payload, perr *Error) {
	ctx := context.Background()
	if k, ok, err := p.v3SchemaData(ctx, topic, "key", req.Key); err != nil {
		return nil, nil, err
	} else if ok {
		key, req.Key = &k, nil
	}
	if v, ok, err := p.v3SchemaData(ctx, topic, "value", req.Value); err != nil {
		return nil, nil, err
	} else if ok {
		value, req.Value = &v, nil
	}
	return key, value, nil
}

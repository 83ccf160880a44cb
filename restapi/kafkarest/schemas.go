package kafkarest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// Confluent's codes of a schema that cannot be used.
const codeInvalidSchema = 42205

// schemaSide is the schema of the keys or the values of a v2 produce
// request: given inline (registered under the topic's subject) or by id.
type schemaSide struct {
	schema *string
	id     *int
}

// resolved is a schema ready to encode with: its registry id and, for
// Avro, the parsed schema.
type resolved struct {
	id   int
	avro avro.Schema
	json any // the JSON Schema, decoded with UseNumber
}

// resolveSchema registers or fetches side's schema for subject; ok is false
// when the request gives none.
func (p *Proxy) resolveSchema(ctx context.Context, f format, subject string, side schemaSide) (resolved, bool, *Error) {
	typ := "AVRO"
	if f == formatJSONSchema {
		typ = "JSON"
	}
	var s sr.Schema
	var id int
	switch {
	case side.schema != nil:
		s = sr.Schema{Schema: *side.schema}
		if typ != "AVRO" {
			s.Type = typ
		}
		if f == formatAvro {
			if _, err := avro.ParseBytes([]byte(*side.schema)); err != nil {
				return resolved{}, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: %v", err)
			}
		} else if !json.Valid([]byte(*side.schema)) {
			return resolved{}, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: not JSON")
		}
		var err error
		if id, err = p.sr.Register(ctx, subject, s, false); err != nil {
			return resolved{}, false, registryError(err)
		}
	case side.id != nil:
		var err error
		if s, err = p.sr.SchemaByID(ctx, *side.id); err != nil {
			return resolved{}, false, registryError(err)
		}
		st := s.Type
		if st == "" {
			st = "AVRO"
		}
		if st != typ {
			return resolved{}, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: schema %d is %s, not %s", *side.id, st, typ)
		}
		id = *side.id
	default:
		return resolved{}, false, nil
	}
	r := resolved{id: id}
	if f == formatJSONSchema {
		var err error
		if r.json, err = decodeNumbers([]byte(s.Schema)); err != nil {
			return resolved{}, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: %v", err)
		}
	}
	if f == formatAvro {
		var err error
		if r.avro, err = p.avroSchema(id, s.Schema); err != nil {
			return resolved{}, false, errorf(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema: %v", err)
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

// parseSchemaProduce decodes a v2 produce body in Avro or JSON Schema
// format: it resolves the key and value schemas (registering inline ones
// under <topic>-key and <topic>-value) and encodes every record in
// Confluent's wire format. Nothing is produced unless all records encode.
func (p *Proxy) parseSchemaProduce(ctx context.Context, f format, topic string, body []byte) (recs []v2Record, keyID, valueID *int, perr *Error) {
	if p.sr == nil {
		return nil, nil, nil, errRegistryMissing
	}
	var req struct {
		KeySchema     *string `json:"key_schema"`
		KeySchemaID   *int    `json:"key_schema_id"`
		ValueSchema   *string `json:"value_schema"`
		ValueSchemaID *int    `json:"value_schema_id"`
		Records       []struct {
			Key       json.RawMessage `json:"key"`
			Value     json.RawMessage `json:"value"`
			Partition *int32          `json:"partition"`
		} `json:"records"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, nil, nil, err
	}
	if req.Records == nil {
		return nil, nil, nil, unprocessable("records may not be null")
	}
	if len(req.Records) == 0 {
		return nil, nil, nil, unprocessable("records may not be empty")
	}
	var hasKeys, hasValues bool
	for _, r := range req.Records {
		hasKeys = hasKeys || !isNull(r.Key)
		hasValues = hasValues || !isNull(r.Value)
	}
	key, keyOK, err := p.resolveSchema(ctx, f, topic+"-key", schemaSide{req.KeySchema, req.KeySchemaID})
	if err != nil {
		return nil, nil, nil, err
	}
	if hasKeys && !keyOK {
		return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeKeySchemaMissing, "Request includes keys but does not include key schema")
	}
	val, valOK, err := p.resolveSchema(ctx, f, topic+"-value", schemaSide{req.ValueSchema, req.ValueSchemaID})
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
		if out[i].Key, e = encodeSchema(f, key, r.Key, fmt.Sprintf("records[%d].key", i)); e != nil {
			return nil, nil, nil, errorf(http.StatusUnprocessableEntity, codeConversion, "Conversion of JSON to %s failed: %v", f, e)
		}
		if out[i].Value, e = encodeSchema(f, val, r.Value, fmt.Sprintf("records[%d].value", i)); e != nil {
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

// encodeSchema is one key or value in Confluent's wire format: the magic
// byte, the schema id, then the Avro binary or the JSON; null stays null.
func encodeSchema(f format, s resolved, raw json.RawMessage, path string) ([]byte, error) {
	if isNull(raw) {
		return nil, nil
	}
	dst := sr.AppendHeader(nil, s.id)
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if f == formatJSONSchema {
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
	s, err := p.sr.SchemaByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	if f == formatJSONSchema {
		if !json.Valid(payload) {
			return nil, errors.New("the record is not JSON")
		}
		return payload, nil
	}
	as, err := p.avroSchema(id, s.Schema)
	if err != nil {
		return nil, err
	}
	v, rest, err := avroToJSON(as, payload)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the Avro value", len(rest))
	}
	return json.Marshal(v)
}

// avroSchema parses the registry's schema id, once.
func (p *Proxy) avroSchema(id int, text string) (avro.Schema, error) {
	p.avroMu.Lock()
	defer p.avroMu.Unlock()
	if s, ok := p.avroByID[id]; ok {
		return s, nil
	}
	s, err := avro.ParseBytes([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	p.avroByID[id] = s
	return s, nil
}

// embedRecord is a record's key or value as a consumer instance of format f
// returns it.
func (p *Proxy) embedRecord(ctx context.Context, f format, b []byte) (json.RawMessage, error) {
	if (f == formatAvro || f == formatJSONSchema) && p.sr != nil {
		return p.decodeSchema(ctx, f, b)
	}
	return embed(f, b)
}

// v3SchemaData encodes a v3 key or value of a schema type (AVRO or
// JSONSCHEMA, or none with data: the subject's latest schema decides) in
// Confluent's wire format; handled is false for the other types, left to
// decodeV3Data. The schema is schema_id's, or schema registered under the
// subject, or the subject's latest; the subject is subject, or the
// topic's (TopicNameStrategy).
func (p *Proxy) v3SchemaData(ctx context.Context, topic, field string, d *v3Data) (pl v3Payload, handled bool, perr *Error) {
	if p.sr == nil || d == nil {
		return v3Payload{}, false, nil
	}
	typ := ""
	if d.Type != nil {
		typ = strings.ToUpper(*d.Type)
	}
	if typ != "AVRO" && typ != "JSONSCHEMA" && (typ != "" || d.Data == nil) {
		return v3Payload{}, false, nil
	}
	subject := topic + "-" + field
	if d.SubjectNameStrategy != nil && !strings.EqualFold(*d.SubjectNameStrategy, "TOPIC_NAME") {
		return v3Payload{}, true, badRequest("%s.subject_name_strategy: only TOPIC_NAME is supported", field)
	}
	if d.Subject != nil {
		subject = *d.Subject
	}
	if d.SchemaVersion != nil {
		return v3Payload{}, true, badRequest("%s.schema_version: not supported; give schema_id or schema", field)
	}
	var f format
	var side schemaSide
	switch {
	case d.SchemaID != nil || d.Schema != nil:
		side = schemaSide{schema: d.Schema, id: d.SchemaID}
	default:
		latest, err := p.sr.Latest(ctx, subject)
		if err != nil {
			return v3Payload{}, true, registryError(err)
		}
		side = schemaSide{id: &latest.ID}
		if typ == "" {
			typ = "AVRO"
			if latest.Type == "JSON" {
				typ = "JSONSCHEMA"
			} else if latest.Type != "" && latest.Type != "AVRO" {
				return v3Payload{}, true, errRegistryMissing
			}
		}
	}
	f = formatAvro
	if typ == "JSONSCHEMA" {
		f = formatJSONSchema
	}
	s, _, rerr := p.resolveSchema(ctx, f, subject, side)
	if rerr != nil {
		return v3Payload{}, true, rerr
	}
	b, err := encodeSchema(f, s, d.Data, field+".data")
	if err != nil {
		return v3Payload{}, true, badRequest("Conversion of JSON to %s failed: %v", f, err)
	}
	return v3Payload{Bytes: b, Type: typ, SchemaID: s.id, Subject: subject}, true, nil
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

package convert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hamba/avro/v2"

	"github.com/tributary-dev/tributary/sdk/protocol/wire"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// Class names of the schema-registry converters.
const (
	AvroClass = "io.confluent.connect.avro.AvroConverter"
)

// AvroConverter is Confluent's io.confluent.connect.avro.AvroConverter:
// Avro binary in Confluent's wire format (magic byte 0, the 4-byte schema
// id), the schema registered in or looked up from a schema registry, and
// Connect ⇄ Avro schemas mapped as Confluent's AvroData maps them.
type AvroConverter struct {
	registrySettings
	opts       avroOptions
	cacheLimit int

	mu      sync.Mutex
	written map[*schema.Schema]*avroWritten // FromConnect: Avro schema text by Connect schema
	// byText is written by the schema's text: the records of each batch
	// from a plugin carry new Connect schemas, most of them equal to the
	// last batch's.
	byText map[string]*avroWritten
	read   map[readKey]*avroRead // ToConnect: by schema id and subject
	parsed map[int]avro.Schema   // ToConnect: the writer's schema by id
}

type avroWritten struct {
	text       string
	recordName string
	// ids is the schema's id by topic: the subject is a function of the
	// topic, the record name and isKey, the last two fixed here, and
	// naming it for every record cost a string concatenation.
	ids map[string]int
}

type readKey struct {
	id      int
	subject string
}

type avroRead struct {
	avro    avro.Schema
	connect *schema.Schema
}

// NewAvro returns an AvroConverter configured with Confluent's settings
// (the converter's own, with the key.converter./value.converter. prefix
// removed): schema.registry.url and the client settings of sr.NewFromConfig,
// auto.register.schemas (true), use.latest.version (false), use.schema.id
// (-1), normalize.schemas (false), key.subject.name.strategy /
// value.subject.name.strategy (TopicNameStrategy), and AvroDataConfig's
// connect.meta.data (true), enhanced.avro.schema.support (false),
// scrub.invalid.names (false), allow.optional.map.keys (false),
// flatten.singleton.unions (true), discard.type.doc.default (false),
// schemas.cache.config (1000). It does not contact the registry.
func NewAvro(isKey bool, config map[string]string, logger *slog.Logger) (*AvroConverter, error) {
	r := &configReader{config: config}
	c := &AvroConverter{cacheLimit: 1000,
		opts:    avroOptions{connectMetaData: true, flattenSingleton: true},
		written: map[*schema.Schema]*avroWritten{}, byText: map[string]*avroWritten{}, read: map[readKey]*avroRead{}, parsed: map[int]avro.Schema{}}
	c.registrySettings = r.registry(isKey, logger)
	r.boolean("connect.meta.data", &c.opts.connectMetaData)
	r.boolean("enhanced.avro.schema.support", &c.opts.enhanced)
	r.boolean("scrub.invalid.names", &c.opts.scrubInvalidNames)
	r.boolean("allow.optional.map.keys", &c.opts.allowOptionalKeys)
	r.boolean("flatten.singleton.unions", &c.opts.flattenSingleton)
	r.boolean("discard.type.doc.default", &c.opts.discardTypeDoc)
	r.integer("schemas.cache.config", &c.cacheLimit)
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("convert: AvroConverter: %w", errors.Join(r.errs...))
	}
	return c, nil
}

// ctx bounds one registry exchange: Kafka's Converter interface carries
// no context, so the converter makes its own (the client's timeout bounds
// each request).
func registryCtx() context.Context { return context.Background() }

func (c *AvroConverter) writtenFor(s *schema.Schema) (*avroWritten, error) {
	c.mu.Lock()
	w, ok := c.written[s]
	c.mu.Unlock()
	if ok {
		return w, nil
	}
	text, err := avroSchemaOf(s, &c.opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	w, ok = c.byText[text]
	c.mu.Unlock()
	if !ok {
		parsed, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
		if err != nil {
			return nil, fmt.Errorf("convert: the Avro schema of %v is invalid: %w", s, err)
		}
		w = &avroWritten{text: text, recordName: recordName(parsed), ids: map[string]int{}}
	}
	c.mu.Lock()
	if len(c.written) >= c.cacheLimit {
		clear(c.written)
	}
	if len(c.byText) >= c.cacheLimit {
		clear(c.byText)
	}
	c.written[s] = w
	c.byText[text] = w
	c.mu.Unlock()
	return w, nil
}

// recordName is the name a subject name strategy sees: a named type's full
// name, another type's name ("string", "array"...).
func recordName(s avro.Schema) string {
	if n, ok := derefSchema(s).(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

func (c *AvroConverter) schemaID(topic string, w *avroWritten) (int, error) {
	c.mu.Lock()
	id, ok := w.ids[topic]
	c.mu.Unlock()
	if ok && !c.byLatest() {
		return id, nil
	}
	subject := c.subject(topic, c.isKey, w.recordName)
	if ok {
		still, err := c.stillWriter(subject, id)
		if err != nil {
			return 0, err
		}
		if still {
			return id, nil
		}
	}
	id, used, err := c.writerSchema(subject, sr.Schema{Schema: w.text})
	if err != nil {
		return 0, err
	}
	if c.useID < 0 && c.useLatest && !c.autoReg && !sameAvro(used.Schema, w.text) {
		return 0, fmt.Errorf("convert: use.latest.version: the latest schema of subject %s (id %d) is not the record's schema %s", subject, id, w.text)
	}
	c.mu.Lock()
	w.ids[topic] = id
	c.mu.Unlock()
	return id, nil
}

// sameAvro reports whether two Avro schema texts have the same Parsing
// Canonical Form.
func sameAvro(a, b string) bool {
	sa, err1 := avro.ParseWithCache(a, "", &avro.SchemaCache{})
	sb, err2 := avro.ParseWithCache(b, "", &avro.SchemaCache{})
	return err1 == nil && err2 == nil && sa.Fingerprint() == sb.Fingerprint()
}

// FromConnect serializes v in Confluent's wire format, registering (or
// looking up) its schema first; the registry is asked once per schema and
// subject (with use.latest.version, again as latest.cache.ttl.sec says).
func (c *AvroConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	out, null, err := c.AppendFromConnect(nil, topic, s, v)
	if null {
		return nil, err
	}
	return out, err
}

// AppendFromConnect is FromConnect appending to dst (see Appender).
func (c *AvroConverter) AppendFromConnect(dst []byte, topic string, s *schema.Schema, v any) ([]byte, bool, error) {
	if v == nil {
		if s != nil && !s.Optional {
			return dst, true, fmt.Errorf("convert: failed to serialize Avro data from topic %s: found null value for non-optional schema", topic)
		}
		return dst, true, nil
	}
	if s == nil {
		return dst, false, fmt.Errorf("convert: failed to serialize Avro data from topic %s: AvroConverter needs a schema (schemaless values are not supported)", topic)
	}
	w, err := c.writtenFor(s)
	if err != nil {
		return dst, false, fmt.Errorf("convert: failed to serialize Avro data from topic %s: %w", topic, err)
	}
	id, err := c.schemaID(topic, w)
	if err != nil {
		return dst, false, err
	}
	start := len(dst)
	dst = sr.AppendHeader(dst, id)
	var out []byte
	if raw, ok := v.(*wire.Raw); ok {
		out, err = c.appendRaw(dst, s, raw)
	} else {
		out, err = appendAvro(dst, s, v, &c.opts, true)
	}
	if err != nil {
		return dst[:start], false, fmt.Errorf("convert: failed to serialize Avro data from topic %s: %w", topic, err)
	}
	return out, false, nil
}

// ToConnect deserializes Confluent's wire format: it fetches the writer's
// schema by id (once), maps it to a Connect schema whose version is the
// schema's version under the record's subject (as Confluent's converter
// does), and decodes the value.
func (c *AvroConverter) ToConnect(topic string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	id, payload, err := sr.ParseHeader(b)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to Avro: %w", topic, err)
	}
	rd, err := c.readerFor(topic, id)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to Avro: %w", topic, err)
	}
	r := avroReader{b: payload}
	v, err := r.read(rd.avro, rd.connect, &c.opts)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to Avro: schema id %d: %w", topic, id, err)
	}
	return rd.connect, v, nil
}

func (c *AvroConverter) readerFor(topic string, id int) (*avroRead, error) {
	c.mu.Lock()
	parsed, ok := c.parsed[id]
	c.mu.Unlock()
	ctx := registryCtx()
	var s sr.Schema
	if !ok {
		var err error
		if s, err = c.client.SchemaByID(ctx, id); err != nil {
			return nil, fmt.Errorf("fetching schema id %d: %w", id, err)
		}
		if s.Type != "" && s.Type != "AVRO" {
			return nil, fmt.Errorf("schema id %d is a %s schema, not Avro", id, s.Type)
		}
		if len(s.References) > 0 {
			return nil, fmt.Errorf("schema id %d has references, which AvroConverter does not resolve yet", id)
		}
		if parsed, err = avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{}); err != nil {
			return nil, fmt.Errorf("schema id %d is not a valid Avro schema: %w", id, err)
		}
		c.mu.Lock()
		if len(c.parsed) >= c.cacheLimit {
			clear(c.parsed)
		}
		c.parsed[id] = parsed
		c.mu.Unlock()
	}
	subject := c.subject(topic, c.isKey, recordName(parsed))
	key := readKey{id, subject}
	c.mu.Lock()
	rd, ok := c.read[key]
	c.mu.Unlock()
	if ok {
		return rd, nil
	}
	if s.Schema == "" {
		var err error
		if s, err = c.client.SchemaByID(ctx, id); err != nil {
			return nil, fmt.Errorf("fetching schema id %d: %w", id, err)
		}
	}
	got, err := c.client.Lookup(ctx, subject, s, false)
	if err != nil {
		return nil, fmt.Errorf("looking up the version of schema id %d under subject %s: %w", id, subject, err)
	}
	cs, err := toConnectSchema(parsed, got.Version, &c.opts)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	rd = &avroRead{avro: parsed, connect: cs}
	c.mu.Lock()
	if len(c.read) >= c.cacheLimit {
		clear(c.read)
	}
	c.read[key] = rd
	c.mu.Unlock()
	return rd, nil
}

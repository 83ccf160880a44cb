package convert

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// ProtobufClass is Confluent's Protobuf converter.
const ProtobufClass = "io.confluent.connect.protobuf.ProtobufConverter"

// ProtobufConverter is Confluent's
// io.confluent.connect.protobuf.ProtobufConverter: a Protobuf message in
// Confluent's wire format (magic byte 0, the 4-byte schema id, the message
// indexes of the message in its schema), the schema registered in or read
// from a schema registry, and Connect ⇄ Protobuf mapped as Confluent's
// ProtobufData maps them. Any registered Protobuf schema reads, references
// included; the registry is asked once per schema.
type ProtobufConverter struct {
	registrySettings
	opts       protoOptions
	cacheLimit int

	mu       sync.Mutex
	written  map[*schema.Schema]*protoWritten       // FromConnect: by Connect schema
	ids      map[protoWrittenKey]*protoTarget       // FromConnect: by schema and subject
	files    map[int]protoreflect.FileDescriptor    // ToConnect: compiled schemas by id
	read     map[protoReadKey]*protoRead            // ToConnect: messages and Connect schemas
	compiled map[string]protoreflect.FileDescriptor // registry schemas without references, by text
}

// protoWritten is the Protobuf schema of a Connect schema.
type protoWritten struct {
	text    string
	message string // full name of the value's message
	md      protoreflect.MessageDescriptor
	fast    protoreflect.MessageDescriptor // md rebuilt by fastMessage
}

type protoWrittenKey struct {
	w       *protoWritten
	subject string
}

// protoTarget is what a value is written as under a subject: the schema
// id, the message and its indexes.
type protoTarget struct {
	id      int
	md      protoreflect.MessageDescriptor // fast (see fastMessage)
	indexes []int
}

type protoRead struct {
	md      protoreflect.MessageDescriptor // fast (see fastMessage)
	connect *schema.Schema
}

type protoReadKey struct {
	id      int
	subject string
	message protoreflect.FullName
}

// NewProtobuf returns a ProtobufConverter configured with Confluent's
// settings: those of the registry (see registrySettings), and
// ProtobufDataConfig's enhanced.protobuf.schema.support (false),
// scrub.invalid.names (false), int.for.enums (false),
// optional.for.nullables (false), optional.for.proto2 (true),
// wrapper.for.nullables (false), wrapper.for.raw.primitives (true),
// generate.struct.for.nulls (false), generate.index.for.unions (true),
// flatten.unions (false) and schemas.cache.config (1000). It does not
// contact the registry.
func NewProtobuf(isKey bool, config map[string]string, logger *slog.Logger) (*ProtobufConverter, error) {
	r := &configReader{config: config}
	c := &ProtobufConverter{cacheLimit: 1000,
		opts:    protoOptions{optionalForProto2: true, wrapperForRaw: true, indexForUnions: true},
		written: map[*schema.Schema]*protoWritten{}, ids: map[protoWrittenKey]*protoTarget{},
		files: map[int]protoreflect.FileDescriptor{}, read: map[protoReadKey]*protoRead{},
		compiled: map[string]protoreflect.FileDescriptor{}}
	c.registrySettings = r.registry(isKey, logger)
	r.boolean("enhanced.protobuf.schema.support", &c.opts.enhanced)
	r.boolean("scrub.invalid.names", &c.opts.scrubInvalidNames)
	r.boolean("int.for.enums", &c.opts.intForEnums)
	r.boolean("optional.for.nullables", &c.opts.optionalForNullable)
	r.boolean("optional.for.proto2", &c.opts.optionalForProto2)
	r.boolean("wrapper.for.nullables", &c.opts.wrapperForNullable)
	r.boolean("wrapper.for.raw.primitives", &c.opts.wrapperForRaw)
	r.boolean("generate.struct.for.nulls", &c.opts.structForNulls)
	r.boolean("generate.index.for.unions", &c.opts.indexForUnions)
	r.boolean("flatten.unions", &c.opts.flattenUnions)
	r.integer("schemas.cache.config", &c.cacheLimit)
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("convert: ProtobufConverter: %w", errors.Join(r.errs...))
	}
	return c, nil
}

// cachePut stores v under k, emptying the cache when it is full.
func cachePut[K comparable, V any](m map[K]V, limit int, k K, v V) {
	if len(m) >= limit {
		clear(m)
	}
	m[k] = v
}

func (c *ProtobufConverter) writtenFor(s *schema.Schema) (*protoWritten, error) {
	c.mu.Lock()
	w, ok := c.written[s]
	c.mu.Unlock()
	if ok {
		return w, nil
	}
	text, message, err := protoSchemaOf(s, &c.opts)
	if err != nil {
		return nil, err
	}
	fd, err := sr.CompileProtobuf("", text, nil)
	if err != nil {
		return nil, fmt.Errorf("convert: the Protobuf schema of %v is invalid: %w\n%s", s, err, text)
	}
	md, err := protoMessageNamed(fd, message)
	if err != nil {
		return nil, err
	}
	w = &protoWritten{text: text, message: message, md: md}
	if w.fast, err = fastMessage(md); err != nil {
		return nil, err
	}
	c.mu.Lock()
	cachePut(c.written, c.cacheLimit, s, w)
	c.mu.Unlock()
	return w, nil
}

// protoMessageNamed finds a message of fd by full name.
func protoMessageNamed(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	d := fd.Messages().ByName(protoreflect.FullName(name).Name())
	if d != nil && string(d.FullName()) == name {
		return d, nil
	}
	// Nested, or the schema's package differs: search all messages.
	var found protoreflect.MessageDescriptor
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len() && found == nil; i++ {
			if string(ms.Get(i).FullName()) == name {
				found = ms.Get(i)
				return
			}
			walk(ms.Get(i).Messages())
		}
	}
	walk(fd.Messages())
	if found == nil {
		return nil, fmt.Errorf("convert: the Protobuf schema has no message %s", name)
	}
	return found, nil
}

// compile compiles a registry schema with its references (once per text).
func (c *ProtobufConverter) compile(s sr.Schema) (protoreflect.FileDescriptor, error) {
	if s.Type != "PROTOBUF" {
		return nil, fmt.Errorf("a %s schema, not Protobuf", cmpOr(s.Type, "AVRO"))
	}
	c.mu.Lock()
	fd, ok := c.compiled[s.Schema]
	c.mu.Unlock()
	if ok && len(s.References) == 0 {
		return fd, nil
	}
	deps, err := c.client.References(registryCtx(), s.References)
	if err != nil {
		return nil, err
	}
	if fd, err = sr.CompileProtobuf("", s.Schema, deps); err != nil {
		return nil, err
	}
	if len(s.References) == 0 {
		c.mu.Lock()
		cachePut(c.compiled, c.cacheLimit, s.Schema, fd)
		c.mu.Unlock()
	}
	return fd, nil
}

func (c *ProtobufConverter) target(topic string, w *protoWritten) (*protoTarget, error) {
	subject := c.subject(topic, c.isKey, w.message)
	key := protoWrittenKey{w, subject}
	c.mu.Lock()
	t, ok := c.ids[key]
	c.mu.Unlock()
	if ok {
		still, err := c.stillWriter(subject, t.id)
		if err != nil {
			return nil, err
		}
		if still {
			return t, nil
		}
	}
	ours := sr.Schema{Schema: w.text, Type: "PROTOBUF"}
	id, used, err := c.writerSchema(subject, ours)
	if err != nil {
		return nil, err
	}
	if c.useID >= 0 {
		// The message and its indexes come from the schema of the id.
		if used, err = c.client.SchemaByID(registryCtx(), id); err != nil {
			return nil, fmt.Errorf("convert: fetching schema id %d (use.schema.id): %w", id, err)
		}
	}
	t = &protoTarget{id: id, md: w.fast, indexes: sr.ProtobufIndexes(w.md)}
	if used.Schema != ours.Schema || len(used.References) > 0 {
		// use.schema.id or use.latest.version: the registry's schema,
		// and the message of the record's name in it.
		fd, err := c.compile(used)
		if err != nil {
			return nil, fmt.Errorf("convert: schema id %d: %w", id, err)
		}
		md, err := protoMessageNamed(fd, w.message)
		if err != nil {
			return nil, fmt.Errorf("convert: schema id %d: %w", id, err)
		}
		t.indexes = sr.ProtobufIndexes(md)
		if t.md, err = fastMessage(md); err != nil {
			return nil, fmt.Errorf("convert: schema id %d: %w", id, err)
		}
	}
	c.mu.Lock()
	cachePut(c.ids, c.cacheLimit, key, t)
	c.mu.Unlock()
	return t, nil
}

// FromConnect serializes v in Confluent's wire format, registering (or
// looking up) its schema first; the registry is asked once per schema and
// subject (with use.latest.version, again as latest.cache.ttl.sec says).
func (c *ProtobufConverter) FromConnect(topic string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if s == nil {
		return nil, fmt.Errorf("convert: failed to serialize Protobuf data from topic %s: ProtobufConverter needs a schema (schemaless values are not supported)", topic)
	}
	w, err := c.writtenFor(s)
	if err != nil {
		return nil, fmt.Errorf("convert: failed to serialize Protobuf data from topic %s: %w", topic, err)
	}
	t, err := c.target(topic, w)
	if err != nil {
		return nil, err
	}
	msg, err := pbWriter{&c.opts}.root(t.md, s, v)
	if err != nil {
		return nil, fmt.Errorf("convert: failed to serialize Protobuf data from topic %s: %w", topic, err)
	}
	out := sr.AppendIndexes(sr.AppendHeader(nil, t.id), t.indexes)
	out, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(out, msg.Interface())
	if err != nil {
		return nil, fmt.Errorf("convert: failed to serialize Protobuf data from topic %s: %w", topic, err)
	}
	return out, nil
}

// ToConnect deserializes Confluent's wire format: it fetches the writer's
// schema by id and its references (once), picks the message of the
// indexes, maps it to a Connect schema whose version is the schema's
// version under the record's subject (as Confluent's converter does), and
// decodes the message.
func (c *ProtobufConverter) ToConnect(topic string, b []byte) (*schema.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	fail := func(err error) (*schema.Schema, any, error) {
		return nil, nil, fmt.Errorf("convert: failed to deserialize data for topic %s to Protobuf: %w", topic, err)
	}
	id, payload, err := sr.ParseHeader(b)
	if err != nil {
		return fail(err)
	}
	indexes, payload, err := sr.ParseIndexes(payload)
	if err != nil {
		return fail(err)
	}
	md, s, err := c.readerFor(topic, id, indexes)
	if err != nil {
		return fail(err)
	}
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(payload, msg); err != nil {
		return fail(fmt.Errorf("schema id %d: %w", id, err))
	}
	v, err := pbReader{&c.opts}.root(msg, s)
	if err != nil {
		return fail(fmt.Errorf("schema id %d: %w", id, err))
	}
	return s, v, nil
}

func (c *ProtobufConverter) readerFor(topic string, id int, indexes []int) (protoreflect.MessageDescriptor, *schema.Schema, error) {
	c.mu.Lock()
	fd, ok := c.files[id]
	c.mu.Unlock()
	ctx := registryCtx()
	if !ok {
		s, err := c.client.SchemaByID(ctx, id)
		if err != nil {
			return nil, nil, fmt.Errorf("fetching schema id %d: %w", id, err)
		}
		if fd, err = c.compile(s); err != nil {
			return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
		}
		c.mu.Lock()
		cachePut(c.files, c.cacheLimit, id, fd)
		c.mu.Unlock()
	}
	md, err := sr.ProtobufMessage(fd, indexes)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	subject := c.subject(topic, c.isKey, string(md.FullName()))
	key := protoReadKey{id, subject, md.FullName()}
	c.mu.Lock()
	rd, ok := c.read[key]
	c.mu.Unlock()
	if ok {
		return rd.md, rd.connect, nil
	}
	s, err := c.client.SchemaByID(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("fetching schema id %d: %w", id, err)
	}
	got, err := c.client.Lookup(ctx, subject, s, false)
	if err != nil {
		return nil, nil, fmt.Errorf("looking up the version of schema id %d under subject %s: %w", id, subject, err)
	}
	fast, err := fastMessage(md)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	cs, err := protoConnectSchema(fast, got.Version, &c.opts)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	c.mu.Lock()
	cachePut(c.read, c.cacheLimit, key, &protoRead{fast, cs})
	c.mu.Unlock()
	return fast, cs, nil
}

// fastMessage rebuilds md's file, and the files it imports, as
// protobuf-go's own descriptors (protodesc), and returns md's message
// there: dynamicpb reads the compiler's descriptors several times slower
// (their field presence resolves editions features on every call).
func fastMessage(md protoreflect.MessageDescriptor) (protoreflect.MessageDescriptor, error) {
	files := &protoregistry.Files{}
	var add func(f protoreflect.FileDescriptor) error
	add = func(f protoreflect.FileDescriptor) error {
		if _, err := files.FindFileByPath(f.Path()); err == nil {
			return nil
		}
		imps := f.Imports()
		for i := 0; i < imps.Len(); i++ {
			if err := add(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		d, err := protodesc.NewFile(protodesc.ToFileDescriptorProto(f), files)
		if err != nil {
			return fmt.Errorf("convert: rebuilding %s: %w", f.Path(), err)
		}
		return files.RegisterFile(d)
	}
	if err := add(md.ParentFile()); err != nil {
		return nil, err
	}
	d, err := files.FindDescriptorByName(md.FullName())
	if err != nil {
		return nil, fmt.Errorf("convert: rebuilding %s: %w", md.FullName(), err)
	}
	fast, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("convert: %s is not a message", md.FullName())
	}
	return fast, nil
}

package transform

import (
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Debezium's MongoDB unwrap,
// io.debezium.connector.mongodb.transforms.ExtractNewDocumentState: the
// MongoDB connector's change events (after and before as extended JSON
// strings, updateDescription) become rows whose Connect schema is inferred
// from each document, keyed by the document's _id, typed.

const mongoUnwrapClass = "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState"

var extractNewDocumentStateKeys = append(append([]Key{}, extractNewRecordStateKeys[:6]...),
	Key{Name: "array.encoding", Type: TypeString, Default: "array", Importance: "MEDIUM",
		Doc:   "The arrays can be encoded using 'array' schema type (the default) or as a 'document' (similar to how BSON encodes arrays). 'array' is easier to consume but requires all elements in the array to be of the same type. Use 'document' if the arrays in data source mix different types together.",
		Order: 1, Width: "SHORT", Display: "Array encoding"},
	Key{Name: "flatten.struct", Type: TypeBoolean, Default: false, Importance: "LOW",
		Doc:   "Flattening structs by concatenating the fields into plain properties, using a (configurable) delimiter.",
		Order: 1, Width: "SHORT", Display: "Flatten struct"},
	Key{Name: "flatten.struct.delimiter", Type: TypeString, Default: "_", Importance: "LOW",
		Doc:   "Delimiter to concat between field names from the input record when generating field names for theoutput record.",
		Order: 1, Width: "SHORT", Display: "Delimiter for flattened struct"},
	// Read by the transformation, not in its definition.
	Key{Name: "delete.tombstone.handling.mode.rewrite-with-id", Type: TypeBoolean, Default: false, Hidden: true},
	Key{Name: "field.name.adjustment.mode", Type: TypeString, Default: "none", Hidden: true},
	Key{Name: "replace.null.with.default", Type: TypeBoolean, Default: true, Hidden: true},
	// Debezium 2's delete handling, before delete.tombstone.handling.mode.
	Key{Name: "delete.handling.mode", Type: TypeString, Default: "none", Validator: debeziumEnum("drop", "rewrite", "none"), Hidden: true},
	Key{Name: "drop.tombstones", Type: TypeBoolean, Default: true, Hidden: true},
)

// extractNewDocumentState is ExtractNewDocumentState.
type extractNewDocumentState struct {
	mode string
	// legacy: Debezium 2's delete.handling.mode and drop.tombstones, as
	// for ExtractNewRecordState.
	legacy         bool
	legacyDeletes  string
	dropTombstones bool
	rewriteWithID  bool

	addFields, addHeaders []fieldRef
	flattenStruct         bool
	delimiter             string
	flattener             *flatten
	conv                  *mongoConverter
	schemaNames           *nameAdjuster // the value schema name's segments
	keyID, after, before  *extractField
	updateDescription     *extractField
	// interned gives equal inferred schemas one pointer, so that the
	// converters and sinks downstream, which cache by schema, see the
	// same schema for documents of the same shape.
	interned map[string]*schema.Schema
	fp       []byte
	// shapes caches the inferred schemas by the documents' shapes; sig is
	// a record's key into it; envSig the part of the value schemas' keys
	// that comes from the envelope's schema envSchema.
	shapes    map[string]*schema.Schema
	sig       []byte
	envSchema *schema.Schema
	envSig    []byte
	json      extReader
}

func newExtractNewDocumentState(c Config) (Transformation, error) {
	// Debezium validates its fields in configure(): array.encoding (whose
	// ConfigDef has no validator) included.
	enc := strings.ToLower(strings.TrimSpace(c.String("array.encoding")))
	if enc != "array" && enc != "document" {
		return nil, failure(ConnectException, "Unable to validate config.")
	}
	fieldMode := strings.ToLower(strings.TrimSpace(c.String("field.name.adjustment.mode")))
	if fieldMode != "none" && fieldMode != "avro" && fieldMode != "avro_unicode" {
		return nil, failure(NullPointerException, "Cannot invoke \"io.debezium.config.CommonConnectorConfig$FieldNameAdjustmentMode.createAdjuster()\" because \"fieldNameAdjustmentMode\" is null")
	}
	t := &extractNewDocumentState{mode: strings.ToLower(strings.TrimSpace(c.String("delete.tombstone.handling.mode"))),
		rewriteWithID: c.Bool("delete.tombstone.handling.mode.rewrite-with-id"),
		flattenStruct: c.Bool("flatten.struct"), delimiter: c.String("flatten.struct.delimiter"),
		conv:        &mongoConverter{documentArrays: enc == "document", namer: newNameAdjuster(fieldMode, true), sanitize: fieldMode != "none"},
		schemaNames: newNameAdjuster(fieldMode, false), interned: map[string]*schema.Schema{}, shapes: map[string]*schema.Schema{}}
	var err error
	if t.addFields, err = parseFieldRefs(c.String("add.fields.prefix"), c.List("add.fields")); err != nil {
		return nil, err
	}
	if t.addHeaders, err = parseFieldRefs(c.String("add.headers.prefix"), c.List("add.headers")); err != nil {
		return nil, err
	}
	if !c.Explicit("delete.tombstone.handling.mode") && (c.Explicit("delete.handling.mode") || c.Explicit("drop.tombstones")) {
		t.legacy = true
		t.legacyDeletes = strings.ToLower(strings.TrimSpace(c.String("delete.handling.mode")))
		t.dropTombstones = c.Bool("drop.tombstones")
	}
	t.flattener = &flatten{side: valueSide, delimiter: t.delimiter}
	t.keyID = &extractField{side: keySide, path: fieldPath{"id"}, original: "id", withDefault: true}
	t.after = &extractField{side: valueSide, path: fieldPath{fieldAfter}, original: fieldAfter, withDefault: true}
	t.before = &extractField{side: valueSide, path: fieldPath{fieldBefore}, original: fieldBefore, withDefault: true}
	t.updateDescription = &extractField{side: valueSide, path: fieldPath{"updateDescription"}, original: "updateDescription", withDefault: true}
	return t, nil
}

// deleteMode is the delete handling in delete.tombstone.handling.mode's
// terms.
func (t *extractNewDocumentState) deleteMode() string {
	if t.legacy {
		return map[string]string{"drop": modeDrop, "none": modeTombstone, "rewrite": modeRewrite}[t.legacyDeletes]
	}
	return t.mode
}

func (t *extractNewDocumentState) rewrites() bool {
	m := t.deleteMode()
	return m == modeRewrite || (!t.legacy && m == modeRewriteWithTombstone)
}

func (t *extractNewDocumentState) keepTombstones() bool {
	if t.legacy {
		return !t.dropTombstones
	}
	return t.mode == modeRewriteWithTombstone
}

// field is the value of one field of the envelope (ExtractField$Value).
func field(x *extractField, r *Record) (any, error) {
	out := *r
	if _, err := x.Apply(&out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

func (t *extractNewDocumentState) Apply(r *Record) (bool, error) {
	// SmtManager.isValidKey: the key of a change event.
	if r.KeySchema == nil || !strings.HasSuffix(r.KeySchema.Name, ".Key") {
		return true, nil
	}
	if len(t.addHeaders) > 0 {
		var envelope *schema.Struct
		if r.Value != nil {
			st, ok := r.Value.(*schema.Struct)
			if !ok {
				return false, classCast(javaClass(r.Value), "org.apache.kafka.connect.data.Struct")
			}
			envelope = st
		}
		hs, err := envelopeHeaders(t.addHeaders, envelope)
		if err != nil {
			return false, err
		}
		r.Headers = r.withHeader(hs...)
	}
	keyRec := *r
	if _, err := t.keyID.Apply(&keyRec); err != nil {
		return false, err
	}
	if keyRec.Key == nil {
		return false, failure(NullPointerException, "Cannot invoke \"Object.toString()\" because the return value of \"org.apache.kafka.connect.connector.ConnectRecord.key()\" is null")
	}
	t.json.begin()
	keyDoc, err := t.json.keyDocument(objectString(keyRec.Key))
	if err != nil {
		return false, err
	}
	if r.Value == nil {
		if !t.keepTombstones() {
			return false, nil
		}
		return t.newRecord(r, keyDoc, nil)
	}
	if !isEnvelope(r.ValueSchema) {
		return true, nil
	}
	after, err := field(t.after, r)
	if err != nil {
		return false, err
	}
	ud, err := field(t.updateDescription, r)
	if err != nil {
		return false, err
	}
	deletion := after == nil && ud == nil
	var value any // the strategy's record value
	if deletion {
		switch t.deleteMode() {
		case modeDrop:
			return false, nil
		case modeTombstone, modeDeleteToTombstone:
		case modeRewrite, modeRewriteWithTombstone:
			if value, err = field(t.before, r); err != nil {
				return false, err
			}
		default:
			return false, failure(DebeziumException, "Unknown delete handling mode: %s", t.deleteMode())
		}
	} else {
		value = after
	}
	var doc bdoc
	if value != nil {
		if doc, err = t.json.document(objectString(value)); err != nil {
			return false, err
		}
	}
	if value == nil && ud != nil {
		if doc, err = t.partialUpdate(ud, keyDoc); err != nil {
			return false, err
		}
	}
	if t.rewrites() {
		doc = doc.put(deletedField, boolValue(deletion))
		if t.rewriteWithID && doc.index("_id") < 0 {
			if i := keyDoc.index("id"); i >= 0 {
				doc = doc.put("_id", keyDoc[i].v)
			}
		}
	}
	return t.newRecord(r, keyDoc, doc)
}

func boolValue(b bool) *bval {
	data := []byte{0}
	if b {
		data[0] = 1
	}
	return &bval{t: bson.TypeBoolean, raw: bson.RawValue{Type: bson.TypeBoolean, Value: data}}
}

// objectString is Object.toString of a key or value the transformation
// parses (a string in the MongoDB connector's events).
func objectString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// partialUpdate is getPartialUpdateDocument: an update event with only its
// updateDescription: the updated fields, without the removed ones, and the
// key's _id.
func (t *extractNewDocumentState) partialUpdate(ud any, keyDoc bdoc) (bdoc, error) {
	st, err := requireStruct(ud, "updateDescription")
	if err != nil {
		return nil, err
	}
	updated, err := stringField(st, "updatedFields")
	if err != nil {
		return nil, err
	}
	var removed []any
	if f := st.Schema().Field("removedFields"); f == nil {
		return nil, dataErr("removedFields is not a valid field name")
	} else if f.Schema.Type != schema.TypeArray {
		return nil, dataErr("Field 'removedFields' is not of type ARRAY")
	} else {
		removed, _ = st.GetIndexWithoutDefault(f.Index).([]any)
	}
	var doc bdoc
	if st.Get("updatedFields") != nil {
		u, err := t.json.document(updated)
		if err != nil {
			return nil, err
		}
		for _, f := range u {
			doc = doc.put(f.name, f.v)
		}
	}
	for _, x := range removed {
		if s, ok := x.(string); ok {
			doc = doc.remove(s)
		}
	}
	if doc.index("_id") < 0 {
		if i := keyDoc.index("id"); i >= 0 {
			doc = doc.put("_id", keyDoc[i].v)
		}
	}
	if t.flattenStruct {
		out := make(bdoc, 0, len(doc))
		for _, f := range doc {
			out = out.put(strings.ReplaceAll(f.name, ".", t.delimiter), f.v)
		}
		doc = out
	}
	return doc, nil
}

// newRecord is the event as a row: key {id: _id typed}, value the
// document's struct with add.fields (null for an empty document),
// flattened with flatten.struct.
func (t *extractNewDocumentState) newRecord(r *Record, keyDoc, valueDoc bdoc) (bool, error) {
	ks, err := t.keySchema(keyDoc)
	if err != nil {
		return false, err
	}
	key := schema.NewStruct(ks)
	for _, f := range keyDoc {
		if err := t.conv.buildStruct(f.name, f.v, ks, key); err != nil {
			return false, err
		}
	}
	var vs *schema.Schema
	var value *schema.Struct
	if len(valueDoc) > 0 {
		if vs, err = t.valueSchema(r, valueDoc); err != nil {
			return false, err
		}
		value = schema.NewStruct(vs)
		for _, f := range valueDoc {
			if err := t.conv.buildStruct(f.name, f.v, vs, value); err != nil {
				return false, err
			}
		}
		if len(t.addFields) > 0 {
			envelope, _ := r.Value.(*schema.Struct)
			for i := range t.addFields {
				var v any
				if envelope != nil {
					v = t.addFields[i].valueIn(envelope)
				}
				if err := putName(value, t.addFields[i].newField, v); err != nil {
					return false, err
				}
			}
		}
	}
	out := *r
	out.KeySchema, out.Key, out.ownKey = ks, key, false
	out.ValueSchema, out.ownValue = vs, false
	if value != nil {
		out.Value = value
	} else {
		out.Value = nil
	}
	if t.flattenStruct {
		if _, err := t.flattener.Apply(&out); err != nil {
			return false, err
		}
	}
	*r = out
	return true, nil
}

// The schemas inferred from documents are cached by the documents' shapes
// (appendShape): documents of one shape, the common case, have their
// schema built once. shapes maps 'k' + a key document's shape, and 'v' +
// the envelope's part (envelopeSignature) + a value document's shape, to
// the schema.
const shapeCacheSize = 1024

func (t *extractNewDocumentState) cached() (*schema.Schema, bool) {
	s, ok := t.shapes[string(t.sig)]
	return s, ok
}

func (t *extractNewDocumentState) remember(s *schema.Schema) {
	if len(t.shapes) >= shapeCacheSize {
		clear(t.shapes)
	}
	t.shapes[string(t.sig)] = s
}

// keySchema is the key's schema: {id: the _id's type}.
func (t *extractNewDocumentState) keySchema(keyDoc bdoc) (*schema.Schema, error) {
	var cacheable bool
	t.sig, cacheable = t.conv.appendShape(append(t.sig[:0], 'k'), keyDoc)
	if cacheable {
		if s, ok := t.cached(); ok {
			return s, nil
		}
	}
	keyMap, err := t.conv.describe(keyDoc)
	if err != nil {
		return nil, err
	}
	ks := &schema.Schema{Type: schema.TypeStruct}
	if err := t.conv.buildSchema(keyMap, ks); err != nil {
		return nil, err
	}
	ks = t.intern(ks)
	if cacheable {
		t.remember(ks)
	}
	return ks, nil
}

// valueSchema is the schema of a value document of r with the add.fields.
func (t *extractNewDocumentState) valueSchema(r *Record, doc bdoc) (*schema.Schema, error) {
	cacheable := t.envelopeSignature(r.ValueSchema)
	if cacheable {
		t.sig = append(append(t.sig[:0], 'v'), t.envSig...)
		t.sig, cacheable = t.conv.appendShape(t.sig, doc)
	}
	if cacheable {
		if s, ok := t.cached(); ok {
			return s, nil
		}
	}
	vs, err := t.buildValueSchema(r, doc)
	if err != nil {
		return nil, err
	}
	if cacheable {
		t.remember(vs)
	}
	return vs, nil
}

// envelopeSignature sets envSig to what a value schema takes from the
// envelope's schema: the schema's name and the add.fields' schemas. It is
// false when those fail (the uncached path reports the failure in
// Debezium's order).
func (t *extractNewDocumentState) envelopeSignature(envelope *schema.Schema) bool {
	if envelope == t.envSchema && t.envSchema != nil {
		return true
	}
	t.envSchema = nil
	name, err := t.valueSchemaName(envelope)
	if err != nil {
		return false
	}
	b := strconv.AppendInt(t.envSig[:0], int64(len(name)), 10)
	b = append(append(b, ':'), name...)
	for i := range t.addFields {
		fs, err := t.addFieldSchema(envelope, i)
		if err != nil {
			return false
		}
		b = appendFingerprint(b, fs)
	}
	t.envSig, t.envSchema = b, envelope
	return true
}

// valueSchemaName is the value schema's name: the envelope's without
// .Envelope, its segments adjusted.
func (t *extractNewDocumentState) valueSchemaName(envelope *schema.Schema) (string, error) {
	name := strings.TrimSuffix(envelope.Name, envelopeSuffix)
	if t.schemaNames.mode == "none" {
		return name, nil
	}
	parts := javaSplit(name, ".")
	for i, p := range parts {
		var err error
		if parts[i], err = t.schemaNames.adjust(p); err != nil {
			return "", err
		}
	}
	return strings.Join(parts, "."), nil
}

// addFieldSchema is the schema of the i-th add.fields field (nil when the
// envelope has no such field).
func (t *extractNewDocumentState) addFieldSchema(envelope *schema.Schema, i int) (*schema.Schema, error) {
	fs, err := t.addFields[i].schemaIn(envelope)
	if err != nil || fs == nil {
		return nil, err
	}
	// SchemaUtil.copySchemaBasics: a struct or map without its fields or
	// key and value schemas.
	if fs.Type == schema.TypeStruct || fs.Type == schema.TypeMap {
		c := *fs
		c.Fields, c.KeySchema, c.ValueSchema = nil, nil, nil
		fs = &c
	}
	return fs, nil
}

// buildValueSchema infers a value document's schema, as Debezium does for
// every record.
func (t *extractNewDocumentState) buildValueSchema(r *Record, doc bdoc) (*schema.Schema, error) {
	name, err := t.valueSchemaName(r.ValueSchema)
	if err != nil {
		return nil, err
	}
	valueMap, err := t.conv.describe(doc)
	if err != nil {
		return nil, err
	}
	vs := &schema.Schema{Type: schema.TypeStruct, Name: name}
	if err := t.conv.buildSchema(valueMap, vs); err != nil {
		return nil, err
	}
	for i := range t.addFields {
		fs, err := t.addFieldSchema(r.ValueSchema, i)
		if err != nil {
			return nil, err
		}
		if fs != nil {
			if err := addField(vs, t.addFields[i].newField, fs); err != nil {
				return nil, err
			}
		}
	}
	return t.intern(vs), nil
}

// intern returns the schema equal to s seen before, or s.
func (t *extractNewDocumentState) intern(s *schema.Schema) *schema.Schema {
	t.fp = appendFingerprint(t.fp[:0], s)
	if x, ok := t.interned[string(t.fp)]; ok {
		return x
	}
	if len(t.interned) >= schemaCacheSize {
		clear(t.interned)
	}
	t.interned[string(t.fp)] = s
	return s
}

// appendFingerprint writes what identifies a schema: its type, name,
// optionality, version, doc, parameters, fields and element schemas (a
// default by the schema's identity: the converter's schemas have none).
func appendFingerprint(b []byte, s *schema.Schema) []byte {
	if s == nil {
		return append(b, '-')
	}
	b = append(b, byte('a'+s.Type))
	if s.Optional {
		b = append(b, '?')
	}
	b = strconv.AppendInt(append(b, '"'), int64(len(s.Name)), 10)
	b = append(append(b, ':'), s.Name...)
	if s.Version != 0 || s.Doc != "" || len(s.Parameters) > 0 || s.Default != nil {
		b = fmt.Appendf(b, "|%d|%q|%v|", s.Version, s.Doc, s.Parameters)
		if s.Default != nil {
			b = fmt.Appendf(b, "%p", s)
		}
	}
	switch s.Type {
	case schema.TypeStruct:
		b = append(b, '{')
		for _, f := range s.Fields {
			b = strconv.AppendInt(b, int64(len(f.Name)), 10)
			b = append(append(b, ':'), f.Name...)
			b = appendFingerprint(b, f.Schema)
		}
		b = append(b, '}')
	case schema.TypeArray:
		b = appendFingerprint(append(b, '['), s.ValueSchema)
	case schema.TypeMap:
		b = appendFingerprint(append(b, '<'), s.KeySchema)
		b = appendFingerprint(b, s.ValueSchema)
	}
	return b
}

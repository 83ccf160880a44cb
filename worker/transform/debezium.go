package transform

import (
	"fmt"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// Debezium's transformations: ExtractNewRecordState (the "unwrap" of
// change events into rows) and ByLogicalTableRouter.

// Debezium's change event envelope (io.debezium.data.Envelope).
const (
	envelopeSuffix = ".Envelope"
	fieldBefore    = "before"
	fieldAfter     = "after"
	fieldOp        = "op"
	fieldSource    = "source"
	deletedField   = "__deleted"
)

func isEnvelope(s *schema.Schema) bool {
	return s != nil && s.Name != "" && strings.HasSuffix(s.Name, envelopeSuffix)
}

// The delete.tombstone.handling.mode values.
const (
	modeDrop                 = "drop"
	modeTombstone            = "tombstone"
	modeRewrite              = "rewrite"
	modeRewriteWithTombstone = "rewrite-with-tombstone"
	modeDeleteToTombstone    = "delete-to-tombstone"
)

var extractNewRecordStateKeys = []Key{
	{Name: "delete.tombstone.handling.mode", Type: TypeString, Default: modeTombstone, Validator: debeziumEnum(modeDrop, modeTombstone, modeRewriteWithTombstone, modeRewrite, modeDeleteToTombstone), Importance: "MEDIUM",
		Doc:   "How to handle delete records. Options are: drop - Remove the delete event and tombstone from the stream.tombstone (default) - For each delete event, leave only a tombstone in the stream.rewrite - Remove tombstone from the record, and add a `__deleted` field with the value `true`.rewrite-with-tombstone - Retain tombstone in record and add a `__deleted` field with the value `true`.delete-to-tombstone - Convert delete events to tombstone events and drop tombstone events.",
		Order: 1, Width: "MEDIUM", Display: "Handle delete and tombstone records"},
	{Name: "route.by.field", Type: TypeString, Default: "", Importance: "LOW",
		Doc:   "The column which determines how the events will be routed, the value will replace the topic name.",
		Order: 1, Width: "LONG", Display: "Route by field name"},
	{Name: "add.fields.prefix", Type: TypeString, Default: "__", Importance: "LOW",
		Doc: "Adds this prefix to each field listed.", Order: 1, Width: "SHORT", Display: "Field prefix to be added to each field."},
	{Name: "add.fields", Type: TypeList, Default: []string{}, Importance: "LOW",
		Doc:   "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP.Please note that the new field name is case-sensitive.",
		Order: 1, Width: "LONG", Display: "Adds the specified field(s) to the message if they exist."},
	{Name: "add.headers.prefix", Type: TypeString, Default: "__", Importance: "LOW",
		Doc: "Adds this prefix listed to each header.", Order: 1, Width: "SHORT", Display: "Header prefix to be added to each header."},
	{Name: "add.headers", Type: TypeList, Default: []string{}, Importance: "LOW",
		Doc:   "Adds each field listed to the header,  __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP.Please note that the new field name is case-sensitive.",
		Order: 1, Width: "LONG", Display: "Adds the specified fields to the header if they exist."},
	{Name: "drop.fields.header.name", Type: TypeString, Default: nil, Importance: "LOW",
		Doc:   "Specifies the name of a header that contains a list of fields to be removed from the event value.",
		Order: 1, Width: "SHORT", Display: "Specifies a header that contains a list of field names to be removed"},
	{Name: "drop.fields.from.key", Type: TypeBoolean, Default: false, Importance: "LOW",
		Doc:   "Specifies whether to apply the drop fields behavior to the event key as well as the value. Default behavior is to only remove fields from the event value, not the key.",
		Order: 1, Width: "SHORT", Display: "Specifies whether the fields to be dropped should also be omitted from the key"},
	{Name: "drop.fields.keep.schema.compatible", Type: TypeBoolean, Default: true, Importance: "LOW",
		Doc:   "Controls the output event's schema compatibility when using the drop fields feature. `true`: dropped fields are removed if the schema indicates its optional leaving the schemas unchanged, `false`: dropped fields are removed from the key/value schemas, regardless of optionality.",
		Order: 1, Width: "SHORT", Display: "Specifies if fields are dropped, will the event's schemas be compatible"},
	// Read by the transformation, not in its definition.
	{Name: "replace.null.with.default", Type: TypeBoolean, Default: true, Hidden: true},
	// Debezium 2's delete handling, before delete.tombstone.handling.mode.
	{Name: "delete.handling.mode", Type: TypeString, Default: "none", Validator: debeziumEnum("drop", "rewrite", "none"), Hidden: true},
	{Name: "drop.tombstones", Type: TypeBoolean, Default: true, Hidden: true},
}

// debeziumEnum is the validator of Debezium's enumerated settings:
// case-insensitive, surrounding spaces ignored; valid in the order Debezium
// lists them in its message.
func debeziumEnum(valid ...string) Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		for _, x := range valid {
			if strings.EqualFold(strings.TrimSpace(s), x) {
				return nil
			}
		}
		return invalid(name, v, "Value must be one of "+strings.Join(valid, ", "))
	}
}

// fieldRef is one entry of add.fields or add.headers: a field of the
// envelope (op, ts_ms, …) or of its source or transaction struct, and the
// name it is added under.
type fieldRef struct {
	parent   string // "" for the envelope itself
	field    string
	newField string
}

func parseFieldRefs(prefix string, list []string) ([]fieldRef, error) {
	var out []fieldRef
	for _, raw := range list {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		parts := javaSplit(raw, ":")
		if len(parts) == 0 {
			parts = []string{""}
		}
		splits := javaSplit(parts[0], ".")
		if len(splits) == 0 {
			splits = []string{""}
		}
		var r fieldRef
		if len(splits) == 1 {
			r.field = splits[0]
			switch r.field {
			case "id", "total_order", "data_collection_order":
				r.parent = "transaction"
			case "op", "ts_ms", "ts_us", "ts_ns":
			case "updateDescription":
				r.parent = "updateDescription"
			default:
				r.parent = fieldSource
			}
		} else {
			r.parent, r.field = splits[0], splits[1]
		}
		switch len(parts) {
		case 1:
			if len(splits) == 1 {
				r.newField = prefix + r.field
			} else {
				r.newField = prefix + r.parent + "_" + r.field
			}
		case 2:
			r.newField = prefix + parts[1]
		default:
			return nil, failure(IllegalArgumentException, "Unexpected field name: %s", raw)
		}
		out = append(out, r)
	}
	return out, nil
}

// schemaIn is FieldReference.getSchema: the optional schema the field is
// added with, nil when the envelope has no such field.
func (f *fieldRef) schemaIn(envelope *schema.Schema) (*schema.Schema, error) {
	parent := envelope
	if f.parent != "" {
		pf := envelope.Field(f.parent)
		if pf == nil {
			return nil, failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
		}
		parent = pf.Schema
	}
	sf := parent.Field(f.field)
	if sf == nil {
		if sf = envelope.Field(f.field); sf == nil {
			return nil, nil
		}
	}
	out := copyBasics(sf.Schema, sf.Schema.Type)
	out.Optional = true
	if sf.Schema.Type == schema.TypeStruct {
		out.Fields = sf.Schema.Fields
	}
	if sf.Schema.Type == schema.TypeMap {
		out.KeySchema, out.ValueSchema = sf.Schema.KeySchema, sf.Schema.ValueSchema
	}
	return out, nil
}

// valueIn is FieldReference.getValue.
func (f *fieldRef) valueIn(envelope *schema.Struct) any {
	parent := envelope
	if f.parent != "" {
		pf := envelope.Schema().Field(f.parent)
		if pf == nil {
			return nil
		}
		p, _ := envelope.GetIndexWithoutDefault(pf.Index).(*schema.Struct)
		if p == nil {
			return nil
		}
		parent = p
	}
	if sf := parent.Schema().Field(f.field); sf != nil {
		return parent.GetIndexWithoutDefault(sf.Index)
	}
	if sf := envelope.Schema().Field(f.field); sf != nil {
		return envelope.GetIndexWithoutDefault(sf.Index)
	}
	return nil
}

// extractNewRecordState is io.debezium.transforms.ExtractNewRecordState.
type extractNewRecordState struct {
	mode string
	// legacy is Debezium 2's delete.handling.mode (drop, none, rewrite)
	// and drop.tombstones, used when delete.tombstone.handling.mode is
	// not set but one of them is.
	legacy         bool
	legacyDeletes  string
	dropTombstones bool

	routeByField         string
	addFields            []fieldRef
	addHeaders           []fieldRef
	dropFieldsHeader     string
	dropFromKey          bool
	keepCompatible       bool
	after, before        *extractField
	markDeleted, markNot *insertField
	// cache maps an unwrapped value schema and the event's op to the
	// schema with add.fields.
	cache map[addFieldsKey]*schema.Schema
}

type addFieldsKey struct {
	s  *schema.Schema
	op string
}

func newExtractNewRecordState(c Config) (Transformation, error) {
	t := &extractNewRecordState{mode: strings.ToLower(strings.TrimSpace(c.String("delete.tombstone.handling.mode"))),
		routeByField: c.String("route.by.field"), dropFieldsHeader: c.String("drop.fields.header.name"),
		dropFromKey: c.Bool("drop.fields.from.key"), keepCompatible: c.Bool("drop.fields.keep.schema.compatible"),
		cache: map[addFieldsKey]*schema.Schema{}}
	var err error
	if t.addFields, err = parseFieldRefs(c.String("add.fields.prefix"), c.List("add.fields")); err != nil {
		return nil, err
	}
	if t.addHeaders, err = parseFieldRefs(c.String("add.headers.prefix"), c.List("add.headers")); err != nil {
		return nil, err
	}
	withDefault := c.Bool("replace.null.with.default")
	// Debezium 2's settings, when the newer one is not given.
	if !c.Explicit("delete.tombstone.handling.mode") && (c.Explicit("delete.handling.mode") || c.Explicit("drop.tombstones")) {
		t.legacy = true
		t.legacyDeletes = strings.ToLower(strings.TrimSpace(c.String("delete.handling.mode")))
		t.dropTombstones = c.Bool("drop.tombstones")
	}
	t.after = &extractField{side: valueSide, path: fieldPath{fieldAfter}, original: fieldAfter, withDefault: true}
	t.before = &extractField{side: valueSide, path: fieldPath{fieldBefore}, original: fieldBefore, withDefault: true}
	t.markDeleted = &insertField{side: valueSide, staticFld: insertion{deletedField, true, true}, staticValue: "true", withDefault: withDefault}
	t.markNot = &insertField{side: valueSide, staticFld: insertion{deletedField, true, true}, staticValue: "false", withDefault: withDefault}
	return t, nil
}

func (t *extractNewRecordState) rewrites() bool {
	if t.legacy {
		return t.legacyDeletes == "rewrite"
	}
	return t.mode == modeRewrite || t.mode == modeRewriteWithTombstone
}

func (t *extractNewRecordState) Apply(r *Record) (bool, error) {
	tombstone := r.Value == nil
	valid := isEnvelope(r.ValueSchema)
	if (valid || tombstone) && len(t.addHeaders) > 0 {
		envelope, _ := r.Value.(*schema.Struct)
		hs, err := envelopeHeaders(t.addHeaders, envelope)
		if err != nil {
			return false, err
		}
		r.Headers = r.withHeader(hs...)
	}
	if tombstone {
		if t.legacy {
			return !t.dropTombstones, nil
		}
		return t.mode == modeRewriteWithTombstone, nil
	}
	if !valid {
		return true, nil
	}
	envelope, ok := r.Value.(*schema.Struct)
	if !ok {
		return false, dataErr("Only Struct objects supported for [field extraction], found: %s", javaClass(r.Value))
	}
	unwrapped := *r
	if _, err := t.after.Apply(&unwrapped); err != nil {
		return false, err
	}
	if unwrapped.Value == nil {
		old := *r
		if _, err := t.before.Apply(&old); err != nil {
			return false, err
		}
		if old.Value == nil {
			// A truncate (or message) event: dropped.
			if t.legacy && !t.dropTombstones {
				return true, nil
			}
			return false, nil
		}
		return t.deleted(r, envelope)
	}
	// Create, update or read.
	if t.rewrites() {
		if _, ok := unwrapped.Value.(*schema.Struct); ok {
			if _, err := t.markNot.Apply(&unwrapped); err != nil {
				return false, err
			}
		}
	}
	if t.routeByField != "" {
		st, err := requireStruct(unwrapped.Value, "Read record to set topic routing for CREATE / UPDATE")
		if err != nil {
			return false, err
		}
		topic, err := stringField(st, t.routeByField)
		if err != nil {
			return false, err
		}
		setTopic(&unwrapped, topic)
	}
	if err := t.addFieldsTo(&unwrapped, envelope); err != nil {
		return false, err
	}
	if t.dropFieldsHeader != "" {
		if err := t.dropFields(&unwrapped); err != nil {
			return false, err
		}
	}
	*r = unwrapped
	return true, nil
}

// deleted handles a delete event per the delete handling mode.
func (t *extractNewRecordState) deleted(r *Record, envelope *schema.Struct) (bool, error) {
	out := *r
	mode := t.mode
	if t.legacy {
		mode = map[string]string{"drop": modeDrop, "none": modeTombstone, "rewrite": modeRewrite}[t.legacyDeletes]
	}
	switch mode {
	case modeDrop:
		return false, nil
	case modeTombstone:
		if _, err := t.after.Apply(&out); err != nil {
			return false, err
		}
	case modeDeleteToTombstone:
		out.ValueSchema, out.Value = nil, nil
	case modeRewrite, modeRewriteWithTombstone:
		if _, err := t.before.Apply(&out); err != nil {
			return false, err
		}
		if _, ok := out.Value.(*schema.Struct); ok {
			if _, err := t.markDeleted.Apply(&out); err != nil {
				return false, err
			}
		}
	default:
		return false, failure(DebeziumException, "Unknown delete handling mode: %s", mode)
	}
	if t.routeByField != "" {
		before, _ := envelope.Get(fieldBefore).(*schema.Struct)
		if before == nil {
			return false, failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Struct.getString(String)\" because the return value of \"org.apache.kafka.connect.data.Struct.getStruct(String)\" is null")
		}
		topic, err := stringField(before, t.routeByField)
		if err != nil {
			return false, err
		}
		setTopic(&out, topic)
	}
	if strings.TrimSpace(t.dropFieldsHeader) != "" {
		if err := t.dropFields(&out); err != nil {
			return false, err
		}
	}
	if out.Value != nil {
		if err := t.addFieldsTo(&out, envelope); err != nil {
			return false, err
		}
	}
	*r = out
	return true, nil
}

// stringField is Struct.getString.
func stringField(st *schema.Struct, name string) (string, error) {
	f := st.Schema().Field(name)
	if f == nil {
		return "", dataErr("%s is not a valid field name", name)
	}
	if f.Schema.Type != schema.TypeString {
		return "", dataErr("Field '%s' is not of type STRING", name)
	}
	s, _ := st.GetIndexWithoutDefault(f.Index).(string)
	return s, nil
}

// setTopic is AbstractExtractNewRecordState.setTopic: a blank topic keeps
// the record's.
func setTopic(r *Record, topic string) {
	if strings.TrimSpace(topic) != "" {
		r.Topic = topic
	}
}

// envelopeHeaders is Debezium's makeHeaders, shared by both unwraps: the
// add.headers of an event envelope (of a tombstone, nil, only its op "d").
func envelopeHeaders(refs []fieldRef, envelope *schema.Struct) ([]sdk.Header, error) {
	var out []sdk.Header
	for i := range refs {
		f := &refs[i]
		if envelope == nil {
			if f.field == fieldOp {
				out = append(out, sdk.Header{Key: f.newField, Schema: schema.String, Value: "d"})
			}
			continue
		}
		s, err := f.schemaIn(envelope.Schema())
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, sdk.Header{Key: f.newField, Schema: s, Value: f.valueIn(envelope)})
		}
	}
	return out, nil
}

// addFieldsTo is addFields: the unwrapped struct copied with each
// add.fields field of the envelope appended.
func (t *extractNewRecordState) addFieldsTo(r *Record, envelope *schema.Struct) error {
	value, err := requireStruct(r.Value, "source field insertion")
	if err != nil {
		return err
	}
	op, _ := stringField(envelope, fieldOp)
	key := addFieldsKey{value.Schema(), op}
	ns := t.cache[key]
	if ns == nil {
		ns = copyBasics(value.Schema(), schema.TypeStruct)
		for _, f := range value.Schema().Fields {
			if err := withField(ns, f.Name, f.Schema); err != nil {
				return err
			}
		}
		for i := range t.addFields {
			fs, err := t.addFields[i].schemaIn(envelope.Schema())
			if err != nil {
				return err
			}
			if fs != nil {
				if err := withField(ns, t.addFields[i].newField, fs); err != nil {
					return err
				}
			}
		}
		if len(t.cache) >= schemaCacheSize {
			clear(t.cache)
		}
		t.cache[key] = ns
	}
	out := schema.NewStruct(ns)
	for i, f := range value.Schema().Fields {
		if err := putName(out, f.Name, value.GetIndexWithoutDefault(i)); err != nil {
			return err
		}
	}
	for i := range t.addFields {
		f := &t.addFields[i]
		fs, err := f.schemaIn(envelope.Schema())
		if err != nil {
			return err
		}
		if fs != nil {
			if err := putName(out, f.newField, f.valueIn(envelope)); err != nil {
				return err
			}
		}
	}
	r.ValueSchema, r.Value = ns, out
	return nil
}

// dropFields removes the fields a header lists (drop.fields.header.name)
// from the value, and the key with drop.fields.from.key.
func (t *extractNewRecordState) dropFields(r *Record) error {
	var names []string
	found := false
	for _, h := range r.Headers {
		if h.Key != t.dropFieldsHeader {
			continue
		}
		found = true
		if h.Value == nil {
			return nil
		}
		l, ok := h.Value.([]any)
		if !ok {
			return failure(ClassCastException, "class %s cannot be cast to class java.util.List", javaClass(h.Value))
		}
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return failure(ClassCastException, "class %s cannot be cast to class java.lang.String", javaClass(e))
			}
			names = append(names, s)
		}
		break
	}
	if !found || len(names) == 0 {
		return nil
	}
	drop := func(s *schema.Schema) []string {
		if !t.keepCompatible {
			return names
		}
		var out []string
		for _, f := range s.Fields {
			if f.Schema.Optional && contains(names, f.Name) {
				out = append(out, f.Name)
			}
		}
		return out
	}
	if t.dropFromKey && r.Key != nil {
		if fields := drop(r.KeySchema); len(fields) > 0 {
			if _, err := (&replaceField{side: keySide, exclude: set(fields), include: map[string]bool{}, withDefault: true}).Apply(r); err != nil {
				return err
			}
		}
	}
	if fields := drop(r.ValueSchema); len(fields) > 0 {
		if _, err := (&replaceField{side: valueSide, exclude: set(fields), include: map[string]bool{}, withDefault: true}).Apply(r); err != nil {
			return err
		}
	}
	return nil
}

var byLogicalTableRouterKeys = []Key{
	{Name: "topic.regex", Type: TypeString, Default: nil, Importance: "LOW",
		Doc:   "The regex used for extracting the name of the logical table from the original topic name.",
		Order: 1, Width: "LONG", Display: "Topic regex"},
	{Name: "topic.replacement", Type: TypeString, Default: nil, Importance: "LOW",
		Doc:   "The replacement string used in conjunction with topic.regex. This will be used to create the new topic name.",
		Order: 1, Width: "LONG", Display: "Topic replacement"},
	{Name: "key.enforce.uniqueness", Type: TypeBoolean, Default: true, Importance: "LOW",
		Doc:   "Augment each record's key with a field denoting the source topic. This field distinguishes records coming from different physical tables which may otherwise have primary/unique key conflicts. If the source tables are guaranteed to have globally unique keys then this may be set to false to disable key rewriting.",
		Order: 1, Width: "SHORT", Display: "Add source topic name into key"},
	{Name: "key.field.regex", Type: TypeString, Default: nil, Importance: "LOW",
		Doc:   "The regex used for extracting the physical table identifier from the original topic name. Now that multiple physical tables can share a topic, the event's key may need to be augmented to include fields other than just those for the record's primary/unique key, since these are not guaranteed to be unique across tables. We need some identifier added to the key that distinguishes the different physical tables.",
		Order: 1, Width: "LONG", Display: "Key field regex"},
	{Name: "key.field.replacement", Type: TypeString, Default: nil, Importance: "LOW",
		Doc:   "The replacement string used in conjunction with key.field.regex. This will be used to create the physical table identifier in the record's key.",
		Order: 1, Width: "LONG", Display: "Key field replacement"},
	{Name: "logical.table.cache.size", Type: TypeInt, Default: int32(16), Importance: "LOW",
		Doc:   "The size used for holding the max entries in LRUCache. The cache will keep the old/new schema for logical table key and value, also cache the derived key and topic regex result for improving the source record transformation.",
		Order: 1, Width: "LONG", Display: "Logical table cache size"},
	// Read by the transformation, not in its definition.
	{Name: "key.field.name", Type: TypeString, Default: "__dbz__physicalTableIdentifier", Hidden: true},
	{Name: "schema.name.adjustment.mode", Type: TypeString, Default: "none", Validator: debeziumEnum("none", "avro", "avro_unicode"), Hidden: true},
}

// debeziumRegex is Debezium's Field.isRegex, which its configure() checks
// (its ConfigDef does not).
func debeziumRegex(name, v string) (*javaRegexp, error) {
	re, err := compileJava(v)
	if err != nil {
		return nil, &ConfigError{fmt.Sprintf("The '%s' value is invalid: A valid regular expressions is expected, but %v", name, err)}
	}
	return re, nil
}

// byLogicalTableRouter is io.debezium.transforms.ByLogicalTableRouter:
// tables matching topic.regex share the topic topic.replacement makes of
// their own; keys gain a field naming the physical table.
type byLogicalTableRouter struct {
	topicRegex       *javaRegexp
	topicReplacement string
	keyRegex         *javaRegexp
	keyReplacement   string
	keyFieldName     string
	enforce          bool
	adjust           func(string) string
	keyCache         map[*schema.Schema]*schema.Schema
	envelopeCache    map[*schema.Schema]*schema.Schema
	topics           map[string]string
}

func newByLogicalTableRouter(c Config) (Transformation, error) {
	t := &byLogicalTableRouter{topicReplacement: c.String("topic.replacement"), enforce: c.Bool("key.enforce.uniqueness"),
		keyFieldName: c.String("key.field.name"), keyCache: map[*schema.Schema]*schema.Schema{},
		envelopeCache: map[*schema.Schema]*schema.Schema{}, topics: map[string]string{}}
	// Debezium's required settings are not required in its ConfigDef:
	// its configure() refuses them missing.
	for _, k := range []string{"topic.regex", "topic.replacement"} {
		if c.IsNull(k) {
			return nil, &ConfigError{fmt.Sprintf("The '%s' value is invalid: A value is required", k)}
		}
	}
	var err error
	if t.topicRegex, err = debeziumRegex("topic.regex", c.String("topic.regex")); err != nil {
		return nil, err
	}
	if kr := strings.TrimSpace(c.String("key.field.regex")); kr != "" {
		if strings.TrimSpace(c.String("key.field.replacement")) == "" {
			return nil, &ConfigError{"The 'key.field.replacement' value is invalid: key.field.replacement must be non-empty if key.field.regex is set."}
		}
		if t.keyRegex, err = debeziumRegex("key.field.regex", c.String("key.field.regex")); err != nil {
			return nil, err
		}
		t.keyReplacement = c.String("key.field.replacement")
	}
	switch strings.ToLower(strings.TrimSpace(c.String("schema.name.adjustment.mode"))) {
	case "avro":
		t.adjust = func(s string) string { return avroName(s, false) }
	case "avro_unicode":
		t.adjust = func(s string) string { return avroName(s, true) }
	default:
		t.adjust = func(s string) string { return s }
	}
	return t, nil
}

// avroName replaces the characters Avro does not allow in a full name
// (Debezium's SchemaNameAdjuster): by _ or, with unicode, by _uXXXX; a
// first character that may only follow others gets a _ in front.
func avroName(s string, unicode bool) string {
	var b strings.Builder
	for i, r := range s {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		later := r >= '0' && r <= '9' || r == '.'
		if i == 0 && !letter && later {
			b.WriteByte('_')
		}
		switch {
		case letter || later:
			b.WriteRune(r)
		case unicode:
			fmt.Fprintf(&b, "_u%04x", r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (t *byLogicalTableRouter) newTopic(old string) (string, bool, error) {
	if n, ok := t.topics[old]; ok {
		return n, true, nil
	}
	if !t.topicRegex.matches(old) {
		return "", false, nil
	}
	n, err := t.topicRegex.replaceFirst(old, t.topicReplacement)
	if err != nil {
		return "", false, err
	}
	if len(t.topics) >= schemaCacheSize {
		clear(t.topics)
	}
	t.topics[old] = n
	return n, true, nil
}

func (t *byLogicalTableRouter) Apply(r *Record) (bool, error) {
	oldTopic := r.Topic
	topic, ok, err := t.newTopic(oldTopic)
	if err != nil {
		return false, err
	}
	if !ok || topic == "" {
		return true, nil
	}
	var keySchema *schema.Schema
	var key any
	if r.Key != nil {
		old, err := requireStruct(r.Key, "Updating schema")
		if err != nil {
			return false, err
		}
		if keySchema, err = t.keySchema(old.Schema(), topic); err != nil {
			return false, err
		}
		nk := schema.NewStruct(keySchema)
		for i, f := range old.Schema().Fields {
			if err := putName(nk, f.Name, old.GetIndexWithoutDefault(i)); err != nil {
				return false, err
			}
		}
		if t.enforce {
			id := oldTopic
			if t.keyRegex != nil && t.keyRegex.matches(oldTopic) {
				if id, err = t.keyRegex.replaceFirst(oldTopic, t.keyReplacement); err != nil {
					return false, err
				}
			}
			if err := putName(nk, t.keyFieldName, id); err != nil {
				return false, err
			}
		}
		key = nk
	}
	r.Topic, r.KeySchema, r.Key = topic, keySchema, key
	if r.Value == nil || !isEnvelope(r.ValueSchema) {
		return true, nil
	}
	env, err := requireStruct(r.Value, "Updating schema")
	if err != nil {
		return false, err
	}
	es, err := t.envelopeSchema(env.Schema(), topic)
	if err != nil {
		return false, err
	}
	rowSchema := es.Field(fieldBefore).Schema
	out := schema.NewStruct(es)
	for i, f := range env.Schema().Fields {
		v := env.GetIndex(i)
		if (f.Name == fieldBefore || f.Name == fieldAfter) && v != nil {
			row, err := requireStruct(v, "Updating schema")
			if err != nil {
				return false, err
			}
			nr := schema.NewStruct(rowSchema)
			for j, rf := range row.Schema().Fields {
				if err := putName(nr, rf.Name, row.GetIndexWithoutDefault(j)); err != nil {
					return false, err
				}
			}
			v = nr
		}
		if err := putName(out, f.Name, v); err != nil {
			return false, err
		}
	}
	r.ValueSchema, r.Value = es, out
	return true, nil
}

// copyExcludingName is copySchemaExcludingName: version, doc, parameters,
// optionality and (with fields) the fields.
func copyExcludingName(src *schema.Schema, fields bool) *schema.Schema {
	out := &schema.Schema{Type: schema.TypeStruct, Version: src.Version, Doc: src.Doc, Parameters: src.Parameters, Optional: src.Optional}
	if fields {
		out.Fields = append([]schema.Field(nil), src.Fields...)
	}
	return out
}

func (t *byLogicalTableRouter) keySchema(old *schema.Schema, topic string) (*schema.Schema, error) {
	if s := t.keyCache[old]; s != nil {
		return s, nil
	}
	s := copyExcludingName(old, true)
	s.Name = t.adjust(topic + ".Key")
	if t.enforce {
		if err := withField(s, t.keyFieldName, schema.String); err != nil {
			return nil, err
		}
	}
	if len(t.keyCache) >= schemaCacheSize {
		clear(t.keyCache)
	}
	t.keyCache[old] = s
	return s, nil
}

func (t *byLogicalTableRouter) envelopeSchema(old *schema.Schema, topic string) (*schema.Schema, error) {
	if s := t.envelopeCache[old]; s != nil {
		return s, nil
	}
	bf := old.Field(fieldBefore)
	if bf == nil {
		return nil, failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
	}
	row := copyExcludingName(bf.Schema, true)
	row.Name = t.adjust(topic + ".Value")
	s := copyExcludingName(old, false)
	for _, f := range old.Fields {
		fs := f.Schema
		if f.Name == fieldBefore || f.Name == fieldAfter {
			fs = row
		}
		if err := withField(s, f.Name, fs); err != nil {
			return nil, err
		}
	}
	s.Name = t.adjust(topic + envelopeSuffix)
	if len(t.envelopeCache) >= schemaCacheSize {
		clear(t.envelopeCache)
	}
	t.envelopeCache[old] = s
	return s, nil
}

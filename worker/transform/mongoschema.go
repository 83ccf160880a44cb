package transform

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// This file is Debezium's MongoDataConverter: the Connect schema inferred
// from one BSON document, and the document as a Struct of it. It follows
// Debezium 3.6.1 step by step, quirks included, because a lake table's
// columns come from it: the inference first describes the document as
// nested oneEntry-entry maps (parseBsonDocument, traverseArray), then builds
// a schema from that description (buildSchema), then fills a Struct by the
// document (buildStruct). The description's Java maps are modelled by the
// types below; "a Map" in the comments is any of docSchema, unified,
// wrapper and oneEntry.

// oneEntry is Map.of(obj, type): what the description holds for one value.
// obj is a *bval (a scalar), a docSchema (a document) or a unified (an
// array).
type oneEntry struct {
	obj any
	typ bson.Type
}

// docSchema is a document's description: field name → oneEntry.
type docSchema []docField

type docField struct {
	name string
	v    oneEntry
}

func (d docSchema) index(name string) int {
	for i := range d {
		if d[i].name == name {
			return i
		}
	}
	return -1
}

// unified is an array's description (traverseArray): entries keyed by a
// nested array's unified, the merged document schema (array encoding) or
// one wrapper per document (document encoding), and the list of scalars.
type unified []oneEntry

// wrapper is the document encoding's {index: docSchema}.
type wrapper struct {
	index int
	doc   docSchema
}

// primList is the list of an array's scalars.
type primList []*bval

// mentry is one entry of a Map: its key and value (a bson.Type or a Map).
type mentry struct {
	key, val any
}

// isMap is Java's instanceof Map.
func isMap(x any) bool {
	switch x.(type) {
	case docSchema, unified, wrapper, oneEntry:
		return true
	}
	return false
}

func mapLen(x any) int {
	switch m := x.(type) {
	case docSchema:
		return len(m)
	case unified:
		return len(m)
	case wrapper, oneEntry:
		return 1
	}
	return 0
}

// nonEmptyMap is isNestedMapObject.
func nonEmptyMap(x any) bool { return isMap(x) && mapLen(x) > 0 }

func entries(x any) []mentry {
	switch m := x.(type) {
	case docSchema:
		out := make([]mentry, len(m))
		for i, f := range m {
			out[i] = mentry{f.name, f.v}
		}
		return out
	case unified:
		out := make([]mentry, len(m))
		for i, e := range m {
			out[i] = mentry{e.obj, e.typ}
		}
		return out
	case wrapper:
		return []mentry{{m.index, m.doc}}
	case oneEntry:
		return []mentry{{m.obj, m.typ}}
	}
	return nil
}

// keyString is a description key's toString (a field name, an index).
func keyString(x any) string {
	switch k := x.(type) {
	case string:
		return k
	case int:
		return strconv.Itoa(k)
	case *bval:
		return k.String()
	case primList:
		parts := make([]string, len(k))
		for i, e := range k {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(x)
}

// keyEqual is Java's equals between two keys of a unified (HashMap keys:
// an equal key replaces the entry's value in place). Maps compare by
// their entries regardless of order.
func keyEqual(a, b any) bool {
	if isMap(a) && isMap(b) {
		ea, eb := entries(a), entries(b)
		if len(ea) != len(eb) {
			return false
		}
	next:
		for _, x := range ea {
			for _, y := range eb {
				if keyEqual(x.key, y.key) && keyEqual(x.val, y.val) {
					continue next
				}
			}
			return false
		}
		return true
	}
	switch x := a.(type) {
	case bson.Type:
		y, ok := b.(bson.Type)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case *bval:
		y, ok := b.(*bval)
		return ok && bvalEqual(x, y)
	case primList:
		y, ok := b.(primList)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !bvalEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func bvalEqual(a, b *bval) bool {
	if a.t != b.t {
		return false
	}
	switch a.t {
	case bson.TypeRegex:
		return a.pattern == b.pattern && sortedOptions(a.options) == sortedOptions(b.options)
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return a.String() == b.String()
	}
	return string(a.raw.Value) == string(b.raw.Value)
}

// mongoConverter is MongoDataConverter with its settings.
type mongoConverter struct {
	documentArrays bool // array.encoding=document
	namer          *nameAdjuster
	sanitize       bool // field.name.adjustment.mode other than none
}

func (c *mongoConverter) name(n string) (string, error) { return c.namer.adjust(n) }

// describe is parseBsonDocument.
func (c *mongoConverter) describe(d bdoc) (docSchema, error) {
	out := make(docSchema, 0, len(d))
	for _, f := range d {
		var s oneEntry
		switch f.v.t {
		case bson.TypeArray:
			u, err := c.traverseArray(f.v.arr)
			if err != nil {
				return nil, err
			}
			s = oneEntry{u, bson.TypeArray}
		case bson.TypeEmbeddedDocument:
			sub, err := c.describe(f.v.doc)
			if err != nil {
				return nil, err
			}
			s = oneEntry{sub, bson.TypeEmbeddedDocument}
		default:
			s = oneEntry{f.v, f.v.t}
		}
		out = append(out, docField{f.name, s})
	}
	return out, nil
}

func (u unified) put(key any, t bson.Type) unified {
	for i := range u {
		if keyEqual(u[i].obj, key) {
			u[i].typ = t
			return u
		}
	}
	return append(u, oneEntry{key, t})
}

// schemaSet is an insertion-ordered set of schemas (LinkedHashSet<Schema>).
type schemaSet []*schema.Schema

func (s schemaSet) add(x *schema.Schema) schemaSet {
	for _, e := range s {
		if schemaKindEqual(e, x) {
			return s
		}
	}
	return append(s, x)
}

// schemaKindEqual is ConnectSchema.equals for the schemas getSchema makes.
func schemaKindEqual(a, b *schema.Schema) bool {
	if a.Type != b.Type || a.Name != b.Name || a.Optional != b.Optional || len(a.Fields) != len(b.Fields) {
		return false
	}
	if (a.ValueSchema == nil) != (b.ValueSchema == nil) {
		return false
	}
	return a.ValueSchema == nil || schemaKindEqual(a.ValueSchema, b.ValueSchema)
}

func (s schemaSet) String() string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = schemaString(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// traverseArray describes an array.
func (c *mongoConverter) traverseArray(arr []*bval) (unified, error) {
	var u unified
	var prims primList
	var merged docSchema
	var fieldSchemas []struct {
		name string
		set  schemaSet
	}
	docIndex := 0
	for _, v := range arr {
		switch v.t {
		case bson.TypeArray:
			sub, err := c.traverseArray(v.arr)
			if err != nil {
				return nil, err
			}
			u = u.put(sub, bson.TypeArray)
		case bson.TypeEmbeddedDocument:
			ds, err := c.describe(v.doc)
			if err != nil {
				return nil, err
			}
			if c.documentArrays {
				u = u.put(wrapper{docIndex, ds}, bson.TypeEmbeddedDocument)
				docIndex++
				continue
			}
			// mergeSchemas: the fields of all the documents in one schema.
			for _, f := range ds {
				fs, err := c.getSchema(f.v.typ)
				if err != nil {
					return nil, err
				}
				j := -1
				for k := range fieldSchemas {
					if fieldSchemas[k].name == f.name {
						j = k
					}
				}
				if j < 0 {
					fieldSchemas = append(fieldSchemas, struct {
						name string
						set  schemaSet
					}{name: f.name})
					j = len(fieldSchemas) - 1
				}
				fieldSchemas[j].set = fieldSchemas[j].set.add(fs)
				if !(nonEmptyMap(f.v.obj) && f.v.typ == bson.TypeEmbeddedDocument) && len(fieldSchemas[j].set) > 1 {
					parts := make([]string, len(fieldSchemas))
					for k, e := range fieldSchemas {
						parts[k] = e.name + "=" + e.set.String()
					}
					return nil, failure(DebeziumException, "Array elements with different Bson types are not supported: {%s}", strings.Join(parts, ", "))
				}
				if i := merged.index(f.name); i >= 0 {
					merged[i].v = f.v
				} else {
					merged = append(merged, f)
				}
			}
		default:
			prims = append(prims, v)
		}
	}
	if len(merged) > 0 {
		u = u.put(merged, bson.TypeEmbeddedDocument)
	}
	if len(prims) > 0 {
		t := prims[0].t
		for _, p := range prims[1:] {
			if p.t != t {
				t = bson.TypeArray
				break
			}
		}
		u = u.put(prims, t)
	}
	return u, nil
}

var (
	regexSchema = &schema.Schema{Type: schema.TypeStruct, Name: "io.debezium.mongodb.regex", Optional: true,
		Fields: []schema.Field{{Name: "regex", Index: 0, Schema: schema.OptionalString}, {Name: "options", Index: 1, Schema: schema.OptionalString}}}
	optionalStringArray = &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: schema.OptionalString}
)

func optionalStruct(name string) *schema.Schema {
	return &schema.Schema{Type: schema.TypeStruct, Name: name, Optional: true}
}

// getSchema is the schema of an array element or merged field of a type.
func (c *mongoConverter) getSchema(t bson.Type) (*schema.Schema, error) {
	switch t {
	case bson.TypeNull, bson.TypeString, bson.TypeJavaScript, bson.TypeObjectID, bson.TypeDecimal128:
		return schema.OptionalString, nil
	case bson.TypeDouble:
		return schema.OptionalFloat64, nil
	case bson.TypeBinary:
		return schema.OptionalBytes, nil
	case bson.TypeInt32:
		return schema.OptionalInt32, nil
	case bson.TypeInt64:
		return schema.OptionalInt64, nil
	case bson.TypeTimestamp, bson.TypeDateTime:
		return optionalTimestamp, nil
	case bson.TypeBoolean:
		return schema.OptionalBoolean, nil
	case bson.TypeArray:
		if !c.documentArrays {
			return optionalStringArray, nil
		}
		return optionalStruct(""), nil
	case bson.TypeEmbeddedDocument:
		return optionalStruct(""), nil
	}
	return nil, failure(IllegalArgumentException, "The value type %s is not supported for sub schema", bsonTypeName(t))
}

// builderName is SchemaBuilder.name() in a string concatenation ("null"
// for none).
func builderName(b *schema.Schema) string {
	if b.Name == "" {
		return "null"
	}
	return b.Name
}

// addField is SchemaBuilder.field(name, schema).
func addField(b *schema.Schema, name string, fs *schema.Schema) error {
	if name == "" {
		return failure("org.apache.kafka.connect.errors.SchemaBuilderException", "fieldName cannot be null.")
	}
	return withField(b, name, fs)
}

// buildSchema adds the fields of a document's description to a struct
// schema under construction.
func (c *mongoConverter) buildSchema(d docSchema, b *schema.Schema) error {
	for _, f := range d {
		key, err := c.name(f.name)
		if err != nil {
			return err
		}
		if err := c.schemaOf(key, f.v, b); err != nil {
			return err
		}
	}
	return nil
}

func classCast(from, to string) error {
	return failure(ClassCastException, "class %s cannot be cast to class %s", from, to)
}

// schemaOf is MongoDataConverter.schema: the field key of b for one
// described value.
func (c *mongoConverter) schemaOf(key string, e oneEntry, b *schema.Schema) error {
	if b.Field(key) != nil {
		return nil
	}
	switch e.typ {
	case bson.TypeNull, bson.TypeString, bson.TypeJavaScript, bson.TypeObjectID, bson.TypeDecimal128,
		bson.TypeDouble, bson.TypeBinary, bson.TypeInt32, bson.TypeInt64, bson.TypeDateTime, bson.TypeTimestamp, bson.TypeBoolean:
		s, _ := c.getSchema(e.typ)
		return addField(b, key, s)
	case bson.TypeCodeWithScope:
		return classCast("org.bson.BsonJavaScriptWithScope", "java.util.Map (org.bson.BsonJavaScriptWithScope is in unnamed module of loader 'app'; java.util.Map is in module java.base of loader 'bootstrap')")
	case bson.TypeRegex:
		return addField(b, key, regexSchema)
	case bson.TypeEmbeddedDocument:
		if !isMap(e.obj) {
			return nil
		}
		if mapLen(e.obj) == 0 {
			return addField(b, key, optionalStruct(""))
		}
		db := optionalStruct(builderName(b) + "." + key)
		for _, en := range entries(e.obj) {
			name, err := c.name(keyString(en.key))
			if err != nil {
				return err
			}
			if isMap(en.val) {
				for _, ne := range entries(en.val) {
					t, _ := ne.val.(bson.Type)
					if err := c.schemaOf(name, oneEntry{ne.key, t}, db); err != nil {
						return err
					}
				}
			}
		}
		return addField(b, key, db)
	case bson.TypeArray:
		if !nonEmptyMap(e.obj) {
			if !c.documentArrays {
				return addField(b, key, optionalStringArray)
			}
			return addField(b, key, optionalStruct(builderName(b)+"."+key))
		}
		if !c.documentArrays {
			for _, en := range entries(e.obj) {
				switch x := en.key.(type) {
				case primList:
					if err := c.simpleArray(key, x, b, false); err != nil {
						return err
					}
				default:
					if isMap(x) {
						nb := optionalStruct(builderName(b) + "." + key)
						if err := c.nestedArray(key, x, b, nb, false); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
		// createDocumentBuilder
		if b.Name == "" {
			return failure(NullPointerException, "Cannot invoke \"String.endsWith(String)\" because the return value of \"org.apache.kafka.connect.data.SchemaBuilder.name()\" is null")
		}
		db := optionalStruct(b.Name + "." + key)
		if strings.HasSuffix(b.Name, key) {
			db.Name = b.Name
		}
		fieldIndex := 0
		for _, en := range entries(e.obj) {
			switch x := en.key.(type) {
			case primList:
				if err := c.arrayLists(db, x); err != nil {
					return err
				}
			case wrapper:
				dmb := optionalStruct(db.Name + "._" + strconv.Itoa(x.index))
				if err := c.mapLists(dmb, db, x.doc, builderName(b)+"."+key, x.index); err != nil {
					return err
				}
				if len(dmb.Fields) > 0 {
					if err := addField(db, "_"+strconv.Itoa(x.index), dmb); err != nil {
						return err
					}
				}
			default:
				if nonEmptyMap(x) {
					dmb := optionalStruct(db.Name + "._" + strconv.Itoa(fieldIndex))
					if err := c.mapLists(dmb, db, x, builderName(b)+"."+key, fieldIndex); err != nil {
						return err
					}
					if len(dmb.Fields) > 0 {
						if err := addField(db, "_"+strconv.Itoa(fieldIndex), dmb); err != nil {
							return err
						}
						fieldIndex++
					}
				}
			}
		}
		if db.Name != b.Name {
			return addField(b, key, db)
		}
		for _, f := range db.Fields {
			if err := addField(b, f.Name, f.Schema); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapLists is parseMapLists (document encoding).
func (c *mongoConverter) mapLists(dmb, db *schema.Schema, m any, parentKey string, fieldIndex int) error {
	for _, en := range entries(m) {
		if nonEmptyMap(en.val) {
			entryKey, err := c.name(keyString(en.key))
			if err != nil {
				return err
			}
			subs := entries(en.val)
			for _, sub := range subs {
				st, _ := sub.val.(bson.Type)
				if len(subs) != 1 {
					deb := optionalStruct(parentKey + "._" + strconv.Itoa(fieldIndex))
					if err := c.schemaOf(entryKey, oneEntry{sub.key, st}, deb); err != nil {
						return err
					}
					if err := addField(db, "_"+strconv.Itoa(fieldIndex), deb); err != nil {
						return err
					}
					fieldIndex++
					continue
				}
				switch {
				case isMap(sub.key) && mapLen(sub.key) == 0 && st == bson.TypeArray,
					isMap(sub.key) && mapLen(sub.key) == 0 && st == bson.TypeEmbeddedDocument:
					name, err := c.name(dmb.Name + "." + entryKey)
					if err != nil {
						return err
					}
					if err := addField(dmb, entryKey, optionalStruct(name)); err != nil {
						return err
					}
				case nonEmptyMap(sub.key) && st == bson.TypeArray:
					dab := optionalStruct(dmb.Name + "." + entryKey)
					if err := c.schemaOf(entryKey, oneEntry{sub.key, st}, dab); err != nil {
						return err
					}
					if err := addField(dmb, entryKey, dab); err != nil {
						return err
					}
				case nonEmptyMap(sub.key) && st == bson.TypeEmbeddedDocument:
					if err := c.schemaOf(entryKey, oneEntry{sub.key, st}, dmb); err != nil {
						return err
					}
				default:
					v, ok := sub.key.(*bval)
					if !ok {
						return classCast("java.util.LinkedHashMap", "org.bson.BsonValue")
					}
					s, err := c.getSchema(v.t)
					if err != nil {
						return err
					}
					if err := addField(dmb, entryKey, s); err != nil {
						return err
					}
				}
			}
			continue
		}
		if l, ok := en.key.(primList); ok && len(l) > 0 {
			if err := c.arrayLists(dmb, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrayLists is parseArrayLists: the scalars of an array as _0, _1, …
func (c *mongoConverter) arrayLists(dmb *schema.Schema, l primList) error {
	for i, v := range l {
		s, err := c.getSchema(v.t)
		if err != nil {
			return err
		}
		if err := addField(dmb, "_"+strconv.Itoa(i), s); err != nil {
			return err
		}
	}
	return nil
}

// nestedArray is handleNestedArray (array encoding).
func (c *mongoConverter) nestedArray(key string, m any, b, nb *schema.Schema, nested bool) error {
	for _, en := range entries(m) {
		switch {
		case isPrimList(en.key):
			if err := c.simpleArray(key, en.key.(primList), b, true); err != nil {
				return err
			}
		case isMap(en.key):
			switch en.val {
			case bson.TypeArray:
				// Debezium passes the map's values (types, not values)
				// as the array's elements.
				if b.Field(key) != nil {
					continue
				}
				if mapLen(en.key) == 0 {
					return failure("java.lang.IndexOutOfBoundsException", "Index 0 out of bounds for length 0")
				}
				return classCast("org.bson.BsonType", "org.bson.BsonValue (org.bson.BsonType and org.bson.BsonValue are in unnamed module of loader 'app')")
			case bson.TypeEmbeddedDocument:
				if err := c.nestedArray(key, en.key, b, optionalStruct(""), true); err != nil {
					return err
				}
			}
		case isMap(en.val):
			name, err := c.name(keyString(en.key))
			if err != nil {
				return err
			}
			for _, sub := range entries(en.val) {
				st, _ := sub.val.(bson.Type)
				if err := c.schemaOf(name, oneEntry{sub.key, st}, nb); err != nil {
					return err
				}
			}
		}
	}
	if len(nb.Fields) > 0 && b.Field(key) == nil {
		arr := &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: nb}
		if nested {
			arr = &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: arr}
		}
		return addField(b, key, arr)
	}
	return nil
}

func isPrimList(x any) bool {
	_, ok := x.(primList)
	return ok
}

// simpleArray is handleSimpleArray: an array of scalars of one type.
func (c *mongoConverter) simpleArray(key string, l primList, b *schema.Schema, nested bool) error {
	if b.Field(key) != nil {
		return nil
	}
	var set schemaSet
	for _, v := range l {
		s, err := c.getSchema(v.t)
		if err != nil {
			return err
		}
		set = set.add(s)
	}
	if len(set) > 1 {
		return failure(DebeziumException, "Array elements with different Bson types are not supported: %s", keyString(l))
	}
	if len(l) == 0 {
		return failure("java.lang.IndexOutOfBoundsException", "Index 0 out of bounds for length 0")
	}
	es, _ := c.getSchema(l[0].t)
	arr := &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: es}
	if nested {
		arr = &schema.Schema{Type: schema.TypeArray, Optional: true, ValueSchema: arr}
	}
	return addField(b, key, arr)
}

func missingField() error {
	return failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
}

// newStruct is new Struct(schema).
func newStruct(s *schema.Schema) (*schema.Struct, error) {
	if s == nil {
		return nil, failure(NullPointerException, "Cannot invoke \"org.apache.kafka.connect.data.Schema.type()\" because \"schema\" is null")
	}
	if s.Type != schema.TypeStruct {
		return nil, dataErr("Not a struct schema: %s", schemaString(s))
	}
	return schema.NewStruct(s), nil
}

// buildStruct puts one field of a document into st (of schema s).
func (c *mongoConverter) buildStruct(name string, v *bval, s *schema.Schema, st *schema.Struct) error {
	key, err := c.name(name)
	if err != nil {
		return err
	}
	var col any
	switch v.t {
	case bson.TypeCodeWithScope:
		return classCast("org.bson.BsonJavaScriptWithScope", "java.util.Map")
	case bson.TypeRegex:
		f := s.Field(key)
		if f == nil {
			return missingField()
		}
		rs, err := newStruct(f.Schema)
		if err != nil {
			return err
		}
		if err := putName(rs, "regex", v.pattern); err != nil {
			return err
		}
		if err := putName(rs, "options", sortedOptions(v.options)); err != nil {
			return err
		}
		col = rs
	case bson.TypeArray:
		if len(v.arr) == 0 {
			if c.sanitize {
				return nil
			}
			if !c.documentArrays {
				col = []any{}
				break
			}
			f := s.Field(key)
			if f == nil {
				return missingField()
			}
			if col, err = newStruct(f.Schema); err != nil {
				return err
			}
			break
		}
		f := s.Field(key)
		if f == nil {
			return missingField()
		}
		if !c.documentArrays {
			as := f.Schema
			if as.Type == schema.TypeArray {
				as = as.ValueSchema
			}
			if col, err = c.buildArray(v.arr, as); err != nil {
				return err
			}
			break
		}
		as, err := newStruct(f.Schema)
		if err != nil {
			return err
		}
		for i, e := range v.arr {
			if err := c.buildStruct("_"+strconv.Itoa(i), e, f.Schema, as); err != nil {
				return err
			}
		}
		col = as
	case bson.TypeEmbeddedDocument:
		f := s.Field(key)
		if f == nil {
			return failure(DebeziumException, "Can't find field: %s in schema %s", key, schemaString(s))
		}
		ds, err := newStruct(f.Schema)
		if err != nil {
			return err
		}
		for _, e := range v.doc {
			if err := c.buildStruct(e.name, e.v, f.Schema, ds); err != nil {
				return err
			}
		}
		col = ds
	default:
		col = v.javaObject()
	}
	if v.t == bson.TypeUndefined {
		return nil
	}
	return putName(st, key, col)
}

// buildArray is the array encoding's list of an array's elements.
func (c *mongoConverter) buildArray(arr []*bval, s *schema.Schema) ([]any, error) {
	values := make([]any, 0, len(arr))
	for _, v := range arr {
		switch v.t {
		case bson.TypeArray:
			var sub []any
			for _, av := range v.arr {
				switch av.t {
				case bson.TypeArray:
					x, err := c.buildArray(av.arr, s)
					if err != nil {
						return nil, err
					}
					sub = append(sub, x)
				case bson.TypeEmbeddedDocument:
					if s.Type != schema.TypeArray && s.Type != schema.TypeMap {
						return nil, dataErr("Cannot look up value schema on non-array and non-map type")
					}
					ns, err := newStruct(s.ValueSchema)
					if err != nil {
						return nil, err
					}
					for _, e := range av.doc {
						if err := c.buildStruct(e.name, e.v, s.ValueSchema, ns); err != nil {
							return nil, err
						}
					}
					sub = append(sub, ns)
				default:
					sub = append(sub, av.javaObject())
				}
			}
			if len(sub) > 0 {
				values = append(values, sub)
			}
		case bson.TypeEmbeddedDocument:
			ns, err := newStruct(s)
			if err != nil {
				return nil, err
			}
			for _, e := range v.doc {
				if err := c.buildStruct(e.name, e.v, s, ns); err != nil {
					return nil, err
				}
			}
			values = append(values, ns)
		default:
			values = append(values, v.javaObject())
		}
	}
	return values, nil
}

// appendShape writes what the schema inferred from d depends on: its field
// names and value types, its documents' shapes and its arrays' element
// types (with the array encoding a run of equal element shapes as one: the
// inference merges them to the same result). ok is false when the schema
// may depend on the values too: an array within an array, whose
// descriptions the inference compares by value.
func (c *mongoConverter) appendShape(b []byte, d bdoc) (_ []byte, ok bool) {
	b = append(b, '{')
	for _, f := range d {
		b = strconv.AppendInt(b, int64(len(f.name)), 10)
		b = append(append(b, ':'), f.name...)
		if b, ok = c.appendValueShape(b, f.v); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func (c *mongoConverter) appendValueShape(b []byte, v *bval) (_ []byte, ok bool) {
	switch v.t {
	case bson.TypeEmbeddedDocument:
		return c.appendShape(b, v.doc)
	case bson.TypeArray:
		b = append(b, '[')
		prev := -1 // where the previous element's shape starts
		for _, e := range v.arr {
			if e.t == bson.TypeArray {
				return b, false
			}
			start := len(b)
			if b, ok = c.appendValueShape(b, e); !ok {
				return b, false
			}
			if !c.documentArrays && prev >= 0 && bytes.Equal(b[prev:start], b[start:]) {
				b = b[:start]
				continue
			}
			prev = start
		}
		return append(b, ']'), true
	}
	return append(b, byte(v.t)), true
}

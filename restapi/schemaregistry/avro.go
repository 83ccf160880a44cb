package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hamba/avro/v2"
)

type avroSchema struct {
	s         avro.Schema
	canonical string
}

func (a *avroSchema) Type() string      { return TypeAvro }
func (a *avroSchema) Canonical() string { return a.canonical }

// parseAvro parses an Avro schema with hamba/avro in a cache of its own
// (named types of one registration never leak into another), the
// referenced schemas first. The canonical text is the schema's JSON without
// insignificant whitespace.
func parseAvro(text string, deps []Dep) (Parsed, error) {
	cache := &avro.SchemaCache{}
	for _, d := range deps {
		if _, err := avro.ParseWithCache(d.Schema, "", cache); err != nil {
			return nil, errInvalidSchema("Invalid schema %s with refs %s of type AVRO, details: reference %s: %v", text, depNames(deps), d.Name, err)
		}
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, errInvalidSchema("Invalid schema %s with refs %s of type AVRO, details: %v", text, depNames(deps), err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, errInvalidSchema("Invalid schema %s, details: %v", text, err)
	}
	return &avroSchema{s: s, canonical: b.String()}, nil
}

func depNames(deps []Dep) string {
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.Name
	}
	return bracket(names)
}

// avroCanRead is Avro's schema resolution check: it lists why data written
// with writer could not be read with reader (the rules of the Avro
// specification's "Schema Resolution", as Avro's SchemaCompatibility and
// Confluent apply them), in Confluent's message form.
func avroCanRead(reader, writer avro.Schema) []string {
	c := avroChecker{seen: map[[2]avro.Schema]bool{}}
	c.check(deref(reader), deref(writer), "")
	return c.problems
}

type avroChecker struct {
	seen     map[[2]avro.Schema]bool
	problems []string
}

func deref(s avro.Schema) avro.Schema {
	for {
		r, ok := s.(*avro.RefSchema)
		if !ok {
			return s
		}
		s = r.Schema()
	}
}

func (c *avroChecker) fail(kind, path, desc, info string) {
	if path == "" {
		path = "/"
	}
	c.problems = append(c.problems, fmt.Sprintf("{errorType:'%s', description:'%s', additionalInfo:'%s'}", kind, strings.ReplaceAll(desc, "%PATH%", path), info))
}

func (c *avroChecker) check(r, w avro.Schema, path string) {
	r, w = deref(r), deref(w)
	pair := [2]avro.Schema{r, w}
	if c.seen[pair] {
		return // a recursive type: assume compatible, as Avro does
	}
	c.seen[pair] = true
	// A writer union: every branch must be readable.
	if wu, ok := w.(*avro.UnionSchema); ok {
		for i, b := range wu.Types() {
			if ru, ok := r.(*avro.UnionSchema); ok {
				if avroUnionMatch(ru, b) < 0 {
					c.fail("MISSING_UNION_BRANCH", fmt.Sprintf("%s/%d", path, i),
						fmt.Sprintf("The old schema has a union branch %s at path '%%PATH%%' that the new schema does not have", typeName(b)), fmt.Sprintf("reader union lacking writer type: %s", strings.ToUpper(string(deref(b).Type()))))
				}
				continue
			}
			sub := avroChecker{seen: c.seen}
			sub.check(r, b, fmt.Sprintf("%s/%d", path, i))
			c.problems = append(c.problems, sub.problems...)
		}
		return
	}
	if ru, ok := r.(*avro.UnionSchema); ok {
		if avroUnionMatch(ru, w) < 0 {
			c.fail("MISSING_UNION_BRANCH", path, fmt.Sprintf("The new schema union at path '%%PATH%%' has no branch for the old schema's %s", typeName(w)), fmt.Sprintf("reader union lacking writer type: %s", strings.ToUpper(string(w.Type()))))
			return
		}
		c.check(ru.Types()[avroUnionMatch(ru, w)], w, path)
		return
	}
	if r.Type() != w.Type() {
		if !avroPromotable(w.Type(), r.Type()) {
			c.fail("TYPE_MISMATCH", path, fmt.Sprintf("The type (path '%%PATH%%') of a field in the new schema does not match with the old schema"),
				fmt.Sprintf("reader type: %s not compatible with writer type: %s", strings.ToUpper(string(r.Type())), strings.ToUpper(string(w.Type()))))
		}
		return
	}
	switch rs := r.(type) {
	case *avro.RecordSchema:
		ws := w.(*avro.RecordSchema)
		if !avroNameMatch(rs, ws) {
			c.fail("NAME_MISMATCH", path+"/name", fmt.Sprintf("The name of the schema has changed (path '%%PATH%%')"), fmt.Sprintf("expected: %s", ws.FullName()))
		}
		for i, rf := range rs.Fields() {
			wf := avroWriterField(ws, rf)
			fpath := fmt.Sprintf("%s/fields/%d", path, i)
			if wf == nil {
				if !rf.HasDefault() {
					c.fail("READER_FIELD_MISSING_DEFAULT_VALUE", fpath,
						fmt.Sprintf("The field '%s' at path '%%PATH%%' in the new schema has no default value and is missing in the old schema", rf.Name()), rf.Name())
				}
				continue
			}
			c.check(rf.Type(), wf.Type(), fpath+"/type")
		}
	case *avro.EnumSchema:
		ws := w.(*avro.EnumSchema)
		if !avroNameMatch(rs, ws) {
			c.fail("NAME_MISMATCH", path+"/name", "The name of the schema has changed (path '%PATH%')", fmt.Sprintf("expected: %s", ws.FullName()))
		}
		var missing []string
		for _, sym := range ws.Symbols() {
			if !slices.Contains(rs.Symbols(), sym) {
				missing = append(missing, sym)
			}
		}
		if len(missing) > 0 && !rs.HasDefault() {
			c.fail("MISSING_ENUM_SYMBOLS", path+"/symbols",
				fmt.Sprintf("The new schema is missing enum symbols '%s' at path '%%PATH%%' in the old schema", bracket(missing)), bracket(missing))
		}
	case *avro.FixedSchema:
		ws := w.(*avro.FixedSchema)
		if !avroNameMatch(rs, ws) {
			c.fail("NAME_MISMATCH", path+"/name", "The name of the schema has changed (path '%PATH%')", fmt.Sprintf("expected: %s", ws.FullName()))
		}
		if rs.Size() != ws.Size() {
			c.fail("FIXED_SIZE_MISMATCH", path+"/size",
				fmt.Sprintf("The size of FIXED type field at path '%%PATH%%' in the new schema does not match with the old schema"), fmt.Sprintf("expected: %d, found: %d", ws.Size(), rs.Size()))
		}
	case *avro.ArraySchema:
		c.check(rs.Items(), w.(*avro.ArraySchema).Items(), path+"/items")
	case *avro.MapSchema:
		c.check(rs.Values(), w.(*avro.MapSchema).Values(), path+"/values")
	}
}

// typeName names a schema for a message: a named type's full name, else
// its type.
func typeName(s avro.Schema) string {
	s = deref(s)
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

// avroUnionMatch is the index of the first reader branch that can read w,
// preferring an exact match as the Avro specification says; -1 if none.
func avroUnionMatch(ru *avro.UnionSchema, w avro.Schema) int {
	w = deref(w)
	for i, b := range ru.Types() {
		b = deref(b)
		if b.Type() != w.Type() {
			continue
		}
		rn, ok1 := b.(avro.NamedSchema)
		wn, ok2 := w.(avro.NamedSchema)
		if !ok1 || !ok2 || avroNameMatch(rn, wn) {
			return i
		}
	}
	for i, b := range ru.Types() {
		if avroPromotable(w.Type(), deref(b).Type()) {
			return i
		}
	}
	// A named type of the same kind under another name still resolves
	// when it is the only one (Avro's unqualified-name rule).
	for i, b := range ru.Types() {
		if deref(b).Type() == w.Type() {
			return i
		}
	}
	return -1
}

type aliased interface {
	avro.NamedSchema
	Aliases() []string
}

// avroNameMatch says whether a reader named type resolves the writer's:
// same full name, or the writer's full name among the reader's aliases.
func avroNameMatch(r, w avro.NamedSchema) bool {
	if r.FullName() == w.FullName() || r.Name() == w.Name() && (r.Namespace() == "" || w.Namespace() == "") {
		return true
	}
	if ra, ok := r.(aliased); ok {
		for _, a := range ra.Aliases() {
			if a == w.FullName() || a == w.Name() {
				return true
			}
		}
	}
	return false
}

// avroWriterField finds the writer field a reader field reads: by name,
// else by one of the reader field's aliases.
func avroWriterField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, wf := range w.Fields() {
		if wf.Name() == rf.Name() {
			return wf
		}
	}
	for _, wf := range w.Fields() {
		if slices.Contains(rf.Aliases(), wf.Name()) {
			return wf
		}
	}
	return nil
}

// avroPromotable reports the Avro specification's promotions of a writer
// type to a reader type.
func avroPromotable(w, r avro.Type) bool {
	switch w {
	case avro.Int:
		return r == avro.Long || r == avro.Float || r == avro.Double
	case avro.Long:
		return r == avro.Float || r == avro.Double
	case avro.Float:
		return r == avro.Double
	case avro.String:
		return r == avro.Bytes
	case avro.Bytes:
		return r == avro.String
	}
	return false
}

package iceberg

import (
	"fmt"
	"strings"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// deletedField is the field ExtractNewRecordState and
// ExtractNewDocumentState add with delete.handling.mode=rewrite.
const deletedField = "__deleted"

// input reads changes from records: Debezium envelopes (op, before, after)
// or flat rows, with the operation in a CDC field for keyed tables.
type input struct {
	cdcField string
	keyed    bool // changes need keys: upsert mode or a CDC field
}

// isEnvelope tells a Debezium change event's schema: op, before and after.
func isEnvelope(s *schema.Schema) bool {
	if s == nil || s.Type != schema.TypeStruct {
		return false
	}
	op, before, after := s.Field("op"), s.Field("before"), s.Field("after")
	return op != nil && op.Schema.Type == schema.TypeString && before != nil && after != nil &&
		before.Schema.Type == schema.TypeStruct && after.Schema.Type == schema.TypeStruct
}

// dropped names the columns of flat rows that describe the change rather
// than the row: the CDC field and __deleted (keyed tables only).
func (in input) dropped() map[string]bool {
	if !in.keyed {
		return nil
	}
	d := map[string]bool{deletedField: true}
	if in.cdcField != "" {
		d[in.cdcField] = true
	}
	return d
}

// opOf maps an operation code: Debezium's c, r, u, d, t and Tabular's I,
// U, D.
func opOf(code string) (Op, bool) {
	switch code {
	case "c", "r", "I", "i":
		return OpInsert, true
	case "u", "U":
		return OpUpdate, true
	case "d", "D":
		return OpDelete, true
	case "t", "T":
		return OpTruncate, true
	}
	return 0, false
}

// change reads a record's operation and row. skip is true for a record
// that changes nothing: a tombstone (Debezium's follow-up of a delete) or
// a logical decoding message. A record that cannot be read is an error
// naming its position.
func (in input) change(rec *sdk.SinkRecord) (op Op, row *schema.Struct, skip bool, err error) {
	fail := func(format string, a ...any) (Op, *schema.Struct, bool, error) {
		return 0, nil, false, fmt.Errorf("iceberg: record %s@%d: %s", rec.TopicPartition(), rec.Offset, fmt.Sprintf(format, a...))
	}
	if rec.Value == nil {
		return 0, nil, true, nil
	}
	st, ok := rec.Value.(*schema.Struct)
	if !ok || rec.ValueSchema == nil || rec.ValueSchema.Type != schema.TypeStruct {
		return fail("the Iceberg sink needs struct values with a schema (e.g. JsonConverter with schemas.enable=true, or Avro), got %T", rec.Value)
	}
	if isEnvelope(rec.ValueSchema) {
		code, _ := st.Get("op").(string)
		if code == "m" {
			return 0, nil, true, nil
		}
		op, ok := opOf(code)
		if !ok {
			return fail("unknown Debezium op %q", code)
		}
		switch op {
		case OpTruncate:
			return op, nil, false, nil
		case OpDelete:
			if b, ok := st.Get("before").(*schema.Struct); ok {
				return op, b, false, nil
			}
			if k, ok := rec.Key.(*schema.Struct); ok {
				return op, k, false, nil
			}
			return fail("a delete without before nor a struct key")
		}
		a, ok := st.Get("after").(*schema.Struct)
		if !ok {
			return fail("op %q without after", code)
		}
		return op, a, false, nil
	}
	op = OpInsert
	if in.cdcField != "" {
		f := rec.ValueSchema.Field(in.cdcField)
		if f == nil {
			return fail("no CDC field %q in the value (%s)", in.cdcField, rec.ValueSchema)
		}
		code, _ := st.GetIndex(f.Index).(string)
		if op, ok = opOf(code); !ok {
			return fail("CDC field %q holds %q, not one of I, U, D (c, r, u, d, t)", in.cdcField, code)
		}
	}
	if in.keyed {
		if f := rec.ValueSchema.Field(deletedField); f != nil {
			switch v := st.GetIndex(f.Index).(type) {
			case string:
				if strings.EqualFold(v, "true") {
					op = OpDelete
				}
			case bool:
				if v {
					op = OpDelete
				}
			}
		}
	}
	return op, st, false, nil
}

// keyOf encodes the id columns of a row; a row without one of them is an
// error (it could replace or delete no row reliably).
func keyOf(row *schema.Struct, idColumns []string) (string, error) {
	var buf []byte
	for _, col := range idColumns {
		f := row.Schema().Field(col)
		if f == nil {
			return "", fmt.Errorf("no id column %q in %s", col, row.Schema())
		}
		v := row.GetIndex(f.Index)
		if v == nil {
			return "", fmt.Errorf("id column %q is null", col)
		}
		var err error
		if buf, err = encodeKey(buf, v); err != nil {
			return "", err
		}
	}
	return string(buf), nil
}

// valueAt follows a dotted path of struct fields in a record value (the
// route field).
func valueAt(v any, path string) (any, bool) {
	for _, name := range strings.Split(path, ".") {
		st, ok := v.(*schema.Struct)
		if !ok || st.Schema().Field(name) == nil {
			return nil, false
		}
		v = st.Get(name)
	}
	return v, true
}

package iceberg

import (
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// Debezium's semantic types (io.debezium.time.*, io.debezium.data.*), named
// in the Connect schema of the values they describe.
const (
	dbzDate            = "io.debezium.time.Date"
	dbzTime            = "io.debezium.time.Time"
	dbzMicroTime       = "io.debezium.time.MicroTime"
	dbzNanoTime        = "io.debezium.time.NanoTime"
	dbzTimestamp       = "io.debezium.time.Timestamp"
	dbzMicroTimestamp  = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp   = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp  = "io.debezium.time.ZonedTimestamp"
	dbzVariableDecimal = "io.debezium.data.VariableScaleDecimal"
)

// icebergType maps a Connect schema to an Iceberg type. Integers narrower
// than 32 bits widen to int; Connect's and Debezium's dates, times and
// timestamps become date, time (microseconds), timestamp (Debezium's
// zoneless ones) and timestamptz (Connect Timestamp, an instant, and
// ZonedTimestamp); Decimal becomes decimal(precision, scale) with
// Debezium's connect.decimal.precision or 38; a VariableScaleDecimal, whose
// scale changes from row to row, becomes its exact decimal text. ids hands
// out the field ids of nested fields.
func icebergType(s *schema.Schema, ids *int) (iceberg.Type, error) {
	next := func() int { *ids++; return *ids }
	switch s.Name {
	case schema.DecimalName:
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		prec := 38
		if p, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil && p > 0 && p <= 38 {
			prec = p
		}
		if int(scale) > prec || scale < 0 {
			return nil, fmt.Errorf("decimal scale %d does not fit precision %d", scale, prec)
		}
		return iceberg.DecimalTypeOf(prec, int(scale)), nil
	case schema.DateName, dbzDate:
		return iceberg.PrimitiveTypes.Date, nil
	case schema.TimeName, dbzTime, dbzMicroTime, dbzNanoTime:
		return iceberg.PrimitiveTypes.Time, nil
	case schema.TimestampName, dbzZonedTimestamp:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case dbzTimestamp, dbzMicroTimestamp, dbzNanoTimestamp:
		return iceberg.PrimitiveTypes.Timestamp, nil
	case dbzVariableDecimal:
		return iceberg.PrimitiveTypes.String, nil
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32:
		return iceberg.PrimitiveTypes.Int32, nil
	case schema.TypeInt64:
		return iceberg.PrimitiveTypes.Int64, nil
	case schema.TypeFloat32:
		return iceberg.PrimitiveTypes.Float32, nil
	case schema.TypeFloat64:
		return iceberg.PrimitiveTypes.Float64, nil
	case schema.TypeBoolean:
		return iceberg.PrimitiveTypes.Bool, nil
	case schema.TypeString:
		return iceberg.PrimitiveTypes.String, nil
	case schema.TypeBytes:
		return iceberg.PrimitiveTypes.Binary, nil
	case schema.TypeArray:
		id := next()
		et, err := icebergType(s.ValueSchema, ids)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: et, ElementRequired: !s.ValueSchema.Optional}, nil
	case schema.TypeMap:
		kid, vid := next(), next()
		kt, err := icebergType(s.KeySchema, ids)
		if err != nil {
			return nil, err
		}
		vt, err := icebergType(s.ValueSchema, ids)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: kid, KeyType: kt, ValueID: vid, ValueType: vt, ValueRequired: !s.ValueSchema.Optional}, nil
	case schema.TypeStruct:
		fields, err := structFields(s, ids, false)
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fields}, nil
	}
	return nil, fmt.Errorf("unsupported Connect type %s", s.Type)
}

// structFields maps the fields of a Connect struct, ids first for this
// level then depth first, as Iceberg assigns them.
func structFields(s *schema.Schema, ids *int, forceOptional bool) ([]iceberg.NestedField, error) {
	fields := make([]iceberg.NestedField, len(s.Fields))
	for i, f := range s.Fields {
		*ids++
		fields[i] = iceberg.NestedField{ID: *ids, Name: f.Name, Required: !f.Schema.Optional && !forceOptional}
	}
	for i, f := range s.Fields {
		t, err := icebergType(f.Schema, ids)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields[i].Type = t
	}
	return fields, nil
}

// tableSchema is the Iceberg schema of a table made from a row's Connect
// schema, less the columns dropped (the CDC field), with the id columns as
// its identifier fields. Identifier fields must be required: an id column
// the Connect schema marks optional is made required (a row without its
// key cannot be upserted).
func tableSchema(row *schema.Schema, drop map[string]bool, idColumns []string, forceOptional bool) (*iceberg.Schema, error) {
	if row == nil || row.Type != schema.TypeStruct {
		return nil, fmt.Errorf("iceberg: a table needs struct rows with a schema, got %v", row)
	}
	kept := &schema.Schema{Type: schema.TypeStruct, Name: row.Name}
	for _, f := range row.Fields {
		if !drop[f.Name] {
			kept.Fields = append(kept.Fields, f)
		}
	}
	ids := 0
	fields, err := structFields(kept, &ids, forceOptional)
	if err != nil {
		return nil, fmt.Errorf("iceberg: %w", err)
	}
	var identifiers []int
	for _, col := range idColumns {
		found := false
		for i := range fields {
			if fields[i].Name == col {
				if err := checkIdentifierType(col, fields[i].Type); err != nil {
					return nil, err
				}
				fields[i].Required = true
				identifiers = append(identifiers, fields[i].ID)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("iceberg: id column %q is not a field of the rows (%s)", col, row)
		}
	}
	return iceberg.NewSchemaWithIdentifiers(0, identifiers, fields...), nil
}

// checkIdentifierType enforces Iceberg's rule for identifier fields:
// primitive, and neither float nor double.
func checkIdentifierType(col string, t iceberg.Type) error {
	switch t.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return fmt.Errorf("iceberg: id column %q is a floating point column, which Iceberg refuses as an identifier", col)
	case iceberg.PrimitiveType:
		return nil
	}
	return fmt.Errorf("iceberg: id column %q is a %s, not a primitive column", col, t)
}

// newColumns lists the top-level fields of row (less drop) that sc does
// not have, with their Iceberg types (schema evolution: columns added at
// the source).
func newColumns(sc *iceberg.Schema, row *schema.Schema, drop map[string]bool) ([]schema.Field, error) {
	var out []schema.Field
	for _, f := range row.Fields {
		if drop[f.Name] {
			continue
		}
		if _, ok := sc.FindFieldByName(f.Name); !ok {
			out = append(out, f)
		}
	}
	return out, nil
}

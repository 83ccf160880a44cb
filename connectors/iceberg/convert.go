package iceberg

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// rowBuilder builds Arrow record batches of a table's (or a delete file's)
// Arrow schema from Connect rows of one Connect schema: each top-level
// column is matched by name, and a column the rows lack is null.
type rowBuilder struct {
	rb   *array.RecordBuilder
	cols []appender
	idx  []int // the Connect field of each column, -1 if none
	rows int
}

// appender appends one Connect value (nil for null) to a column.
type appender func(v any) error

func newRowBuilder(mem memory.Allocator, as *arrow.Schema, row *schema.Schema) (*rowBuilder, error) {
	rb := array.NewRecordBuilder(mem, as)
	w := &rowBuilder{rb: rb, cols: make([]appender, len(as.Fields())), idx: make([]int, len(as.Fields()))}
	for i, af := range as.Fields() {
		w.idx[i] = -1
		var fs *schema.Schema
		if f := row.Field(af.Name); f != nil {
			w.idx[i], fs = f.Index, f.Schema
		}
		a, err := newAppender(rb.Field(i), af, fs)
		if err != nil {
			rb.Release()
			return nil, fmt.Errorf("iceberg: column %s: %w", af.Name, err)
		}
		w.cols[i] = a
	}
	return w, nil
}

// add appends a row. On error the builder holds a partial row: the caller
// discards the builder.
func (w *rowBuilder) add(st *schema.Struct) error {
	for i, a := range w.cols {
		var v any
		if w.idx[i] >= 0 {
			v = st.GetIndex(w.idx[i])
		}
		if err := a(v); err != nil {
			return fmt.Errorf("iceberg: column %s: %w", w.rb.Schema().Field(i).Name, err)
		}
	}
	w.rows++
	return nil
}

// batch returns the rows added since the last call.
func (w *rowBuilder) batch() arrow.RecordBatch {
	w.rows = 0
	return w.rb.NewRecordBatch()
}

func (w *rowBuilder) release() { w.rb.Release() }

// newAppender returns the appender of values of Connect schema s (nil: the
// rows lack the column) into b, a builder of Arrow field af.
func newAppender(b array.Builder, af arrow.Field, s *schema.Schema) (appender, error) {
	if s == nil {
		return func(any) error {
			if !af.Nullable {
				return fmt.Errorf("the rows have no value for required column %s", af.Name)
			}
			b.AppendNull()
			return nil
		}, nil
	}
	put, err := valueAppender(b, af.Type, s)
	if err != nil {
		return nil, err
	}
	return func(v any) error {
		if v == nil {
			v = s.Default
		}
		if v == nil {
			if !af.Nullable {
				return fmt.Errorf("null for required column %s", af.Name)
			}
			b.AppendNull()
			return nil
		}
		return put(v)
	}, nil
}

// valueAppender is newAppender for non-null values.
func valueAppender(b array.Builder, at arrow.DataType, s *schema.Schema) (appender, error) {
	mismatch := func(v any) error { return fmt.Errorf("cannot write %T (%s) as %s", v, s, at) }
	switch bb := b.(type) {
	case *array.Int32Builder:
		return func(v any) error {
			n, ok := asInt64(v)
			if !ok || n < math.MinInt32 || n > math.MaxInt32 {
				return mismatch(v)
			}
			bb.Append(int32(n))
			return nil
		}, nil
	case *array.Int64Builder:
		return func(v any) error {
			n, ok := asInt64(v)
			if !ok {
				return mismatch(v)
			}
			bb.Append(n)
			return nil
		}, nil
	case *array.Float32Builder:
		return func(v any) error {
			x, ok := v.(float32)
			if !ok {
				return mismatch(v)
			}
			bb.Append(x)
			return nil
		}, nil
	case *array.Float64Builder:
		return func(v any) error {
			switch x := v.(type) {
			case float64:
				bb.Append(x)
			case float32:
				bb.Append(float64(x))
			default:
				return mismatch(v)
			}
			return nil
		}, nil
	case *array.BooleanBuilder:
		return func(v any) error {
			x, ok := v.(bool)
			if !ok {
				return mismatch(v)
			}
			bb.Append(x)
			return nil
		}, nil
	case *array.StringBuilder:
		if s.Name == dbzVariableDecimal {
			return func(v any) error {
				txt, err := variableDecimal(v)
				if err != nil {
					return err
				}
				bb.Append(txt)
				return nil
			}, nil
		}
		return func(v any) error {
			x, ok := v.(string)
			if !ok {
				return mismatch(v)
			}
			bb.Append(x)
			return nil
		}, nil
	case *array.BinaryBuilder:
		return func(v any) error {
			x, ok := v.([]byte)
			if !ok {
				return mismatch(v)
			}
			bb.Append(x)
			return nil
		}, nil
	case *array.Decimal128Builder:
		dt := at.(*arrow.Decimal128Type)
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		if scale != dt.Scale {
			return nil, fmt.Errorf("decimal of scale %d into a column of scale %d", scale, dt.Scale)
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dt.Precision)), nil)
		return func(v any) error {
			x, ok := v.(*big.Int)
			if !ok {
				return mismatch(v)
			}
			if new(big.Int).Abs(x).Cmp(limit) >= 0 {
				return fmt.Errorf("decimal %s (scale %d) does not fit precision %d", x, scale, dt.Precision)
			}
			bb.Append(decimal128.FromBigInt(x))
			return nil
		}, nil
	case *array.Date32Builder:
		return func(v any) error {
			switch x := v.(type) {
			case time.Time:
				bb.Append(arrow.Date32(floorDiv(x.Unix(), 86400)))
			default:
				n, ok := asInt64(v)
				if !ok || s.Name != dbzDate {
					return mismatch(v)
				}
				bb.Append(arrow.Date32(n))
			}
			return nil
		}, nil
	case *array.Time64Builder:
		return func(v any) error {
			us, ok := micros(s.Name, v, true)
			if !ok {
				return mismatch(v)
			}
			bb.Append(arrow.Time64(us))
			return nil
		}, nil
	case *array.TimestampBuilder:
		unit := at.(*arrow.TimestampType).Unit
		return func(v any) error {
			us, ok := micros(s.Name, v, false)
			if !ok {
				return mismatch(v)
			}
			if unit == arrow.Nanosecond {
				us *= 1000
			}
			bb.Append(arrow.Timestamp(us))
			return nil
		}, nil
	case *array.ListBuilder:
		if s.Type != schema.TypeArray {
			return nil, fmt.Errorf("a %s into a list column", s)
		}
		lt := at.(*arrow.ListType)
		elem, err := newAppender(bb.ValueBuilder(), lt.ElemField(), s.ValueSchema)
		if err != nil {
			return nil, err
		}
		return func(v any) error {
			x, ok := v.([]any)
			if !ok {
				return mismatch(v)
			}
			bb.Append(true)
			for _, e := range x {
				if err := elem(e); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case *array.MapBuilder:
		if s.Type != schema.TypeMap {
			return nil, fmt.Errorf("a %s into a map column", s)
		}
		mt := at.(*arrow.MapType)
		key, err := newAppender(bb.KeyBuilder(), mt.KeyField(), s.KeySchema)
		if err != nil {
			return nil, err
		}
		item, err := newAppender(bb.ItemBuilder(), mt.ItemField(), s.ValueSchema)
		if err != nil {
			return nil, err
		}
		return func(v any) error {
			add := func(k, e any) error {
				if err := key(k); err != nil {
					return err
				}
				return item(e)
			}
			switch x := v.(type) {
			case map[string]any:
				bb.Append(true)
				for k, e := range x {
					if err := add(k, e); err != nil {
						return err
					}
				}
			case map[any]any:
				bb.Append(true)
				for k, e := range x {
					if err := add(k, e); err != nil {
						return err
					}
				}
			default:
				return mismatch(v)
			}
			return nil
		}, nil
	case *array.StructBuilder:
		if s.Type != schema.TypeStruct {
			return nil, fmt.Errorf("a %s into a struct column", s)
		}
		st := at.(*arrow.StructType)
		fields := make([]appender, st.NumFields())
		idx := make([]int, st.NumFields())
		for i, af := range st.Fields() {
			idx[i] = -1
			var fs *schema.Schema
			if f := s.Field(af.Name); f != nil {
				idx[i], fs = f.Index, f.Schema
			}
			a, err := newAppender(bb.FieldBuilder(i), af, fs)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", af.Name, err)
			}
			fields[i] = a
		}
		return func(v any) error {
			x, ok := v.(*schema.Struct)
			if !ok {
				return mismatch(v)
			}
			bb.Append(true)
			for i, a := range fields {
				var fv any
				if idx[i] >= 0 {
					fv = x.GetIndex(idx[i])
				}
				if err := a(fv); err != nil {
					return fmt.Errorf("field %s: %w", st.Field(i).Name, err)
				}
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("unsupported Arrow column type %s", at)
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// micros converts a Connect or Debezium time value (time of day if
// ofDay) to microseconds.
func micros(name string, v any, ofDay bool) (int64, bool) {
	if t, ok := v.(time.Time); ok {
		if ofDay {
			t = t.UTC()
			return int64(t.Hour())*3600e6 + int64(t.Minute())*60e6 + int64(t.Second())*1e6 + int64(t.Nanosecond()/1000), true
		}
		return t.UnixMicro(), true
	}
	if s, ok := v.(string); ok && name == dbzZonedTimestamp {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, false
		}
		return t.UnixMicro(), true
	}
	n, ok := asInt64(v)
	if !ok {
		return 0, false
	}
	switch name {
	case dbzTime, dbzTimestamp:
		return n * 1000, true
	case dbzMicroTime, dbzMicroTimestamp:
		return n, true
	case dbzNanoTime, dbzNanoTimestamp:
		return floorDiv(n, 1000), true
	}
	return 0, false
}

// variableDecimal renders Debezium's VariableScaleDecimal{scale, value} as
// exact decimal text.
func variableDecimal(v any) (string, error) {
	st, ok := v.(*schema.Struct)
	if !ok {
		return "", fmt.Errorf("VariableScaleDecimal value is %T", v)
	}
	scale, ok := asInt64(st.Get("scale"))
	raw, ok2 := st.Get("value").([]byte)
	if !ok || !ok2 {
		return "", fmt.Errorf("VariableScaleDecimal without scale or value")
	}
	x := schema.DecimalFromBytes(raw)
	return formatDecimal(x, int(scale)), nil
}

func formatDecimal(x *big.Int, scale int) string {
	s := new(big.Int).Abs(x).String()
	neg := x.Sign() < 0
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	} else if scale < 0 {
		for range -scale {
			s += "0"
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}

// encodeKey appends the canonical encoding of id column values: a type
// tag and a length per value, so that distinct keys never encode alike.
func encodeKey(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, 'n'), nil
	case bool:
		if x {
			return append(dst, 'T'), nil
		}
		return append(dst, 'F'), nil
	case string:
		dst = append(dst, 's')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...), nil
	case []byte:
		dst = append(dst, 'b')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...), nil
	case *big.Int:
		b := x.Bytes()
		dst = append(dst, 'd', byte(x.Sign()+1))
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...), nil
	case time.Time:
		return binary.AppendVarint(append(dst, 't'), x.UnixNano()), nil
	}
	if n, ok := asInt64(v); ok {
		return binary.AppendVarint(append(dst, 'i'), n), nil
	}
	return nil, fmt.Errorf("id column value of type %T", v)
}

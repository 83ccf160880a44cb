package s3

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// parquetFormat is Confluent's ParquetFormat written with apache/arrow-go
// (pqarrow): a typed column per field of the Connect struct schema (nested
// structs, lists, maps, optional fields; Decimal, Date, Time, Timestamp as
// Parquet logical types).
type parquetFormat struct {
	codec compress.Compression
	name  string
}

func newParquetFormat(codec string) (format, error) {
	switch codec {
	case "snappy":
		return parquetFormat{compress.Codecs.Snappy, ".snappy"}, nil
	case "gzip":
		return parquetFormat{compress.Codecs.Gzip, ".gz"}, nil
	case "zstd":
		return parquetFormat{compress.Codecs.Zstd, ".zstd"}, nil
	case "none", "uncompressed":
		return parquetFormat{compress.Codecs.Uncompressed, ""}, nil
	}
	return nil, fmt.Errorf("s3: unsupported parquet.codec %q", codec)
}

// ext is parquet-mr's codec extension followed by .parquet, as Confluent
// names its files (e.g. .snappy.parquet).
func (f parquetFormat) ext() string { return f.name + ".parquet" }

// parquetBatch is the number of rows built before they go to the row
// group writer.
const parquetBatch = 4096

type parquetWriter struct {
	s      *schema.Schema
	fw     *pqarrow.FileWriter
	rb     *array.RecordBuilder
	rows   int
	approx int // bytes appended to the builder since the last batch
}

// arrowSchema derives the Arrow schema of a Connect struct schema.
func arrowSchema(s *schema.Schema) (*arrow.Schema, error) {
	if s == nil || s.Type != schema.TypeStruct {
		return nil, fmt.Errorf("s3: ParquetFormat needs struct values with a schema, got %v", s)
	}
	fields := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		t, err := arrowType(f.Schema)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Schema.Optional}
	}
	return arrow.NewSchema(fields, nil), nil
}

func arrowType(s *schema.Schema) (arrow.DataType, error) {
	switch s.Name {
	case schema.DecimalName:
		scale, err := s.Scale()
		if err != nil {
			return nil, err
		}
		prec := int32(38)
		if p, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil && p > 0 && p <= 38 {
			prec = int32(p)
		}
		return &arrow.Decimal128Type{Precision: prec, Scale: scale}, nil
	case schema.DateName:
		return arrow.FixedWidthTypes.Date32, nil
	case schema.TimeName:
		return arrow.FixedWidthTypes.Time32ms, nil
	case schema.TimestampName:
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, nil
	}
	switch s.Type {
	case schema.TypeInt8:
		return arrow.PrimitiveTypes.Int8, nil
	case schema.TypeInt16:
		return arrow.PrimitiveTypes.Int16, nil
	case schema.TypeInt32:
		return arrow.PrimitiveTypes.Int32, nil
	case schema.TypeInt64:
		return arrow.PrimitiveTypes.Int64, nil
	case schema.TypeFloat32:
		return arrow.PrimitiveTypes.Float32, nil
	case schema.TypeFloat64:
		return arrow.PrimitiveTypes.Float64, nil
	case schema.TypeBoolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case schema.TypeString:
		return arrow.BinaryTypes.String, nil
	case schema.TypeBytes:
		return arrow.BinaryTypes.Binary, nil
	case schema.TypeArray:
		et, err := arrowType(s.ValueSchema)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: s.ValueSchema.Optional}), nil
	case schema.TypeMap:
		kt, err := arrowType(s.KeySchema)
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(s.ValueSchema)
		if err != nil {
			return nil, err
		}
		m := arrow.MapOf(kt, vt)
		m.SetItemNullable(s.ValueSchema.Optional)
		return m, nil
	case schema.TypeStruct:
		fields := make([]arrow.Field, len(s.Fields))
		for i, f := range s.Fields {
			t, err := arrowType(f.Schema)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Schema.Optional}
		}
		return arrow.StructOf(fields...), nil
	}
	return nil, fmt.Errorf("s3: parquet: unsupported schema type %s", s.Type)
}

func (f parquetFormat) newWriter(w io.Writer, s *schema.Schema) (recordWriter, error) {
	as, err := arrowSchema(s)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(f.codec), parquet.WithMaxRowGroupLength(1<<30))
	fw, err := pqarrow.NewFileWriter(as, nopCloser{w}, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		return nil, fmt.Errorf("s3: parquet writer: %w", err)
	}
	return &parquetWriter{s: s, fw: fw, rb: array.NewRecordBuilder(memory.DefaultAllocator, as)}, nil
}

// nopCloser keeps pqarrow from closing the spool: the sink finishes it.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (w *parquetWriter) write(v any) error {
	st, ok := v.(*schema.Struct)
	if !ok {
		return fmt.Errorf("s3: ParquetFormat needs struct values, got %T", v)
	}
	for i, f := range w.s.Fields {
		n, err := appendArrow(w.rb.Field(i), f.Schema, st.GetIndex(i))
		if err != nil {
			return fmt.Errorf("s3: parquet: field %s: %w", f.Name, err)
		}
		w.approx += n
	}
	w.rows++
	if w.rows >= parquetBatch {
		return w.writeBatch()
	}
	return nil
}

// writeBatch hands the built rows to the current (buffered) row group.
func (w *parquetWriter) writeBatch() error {
	if w.rows == 0 {
		return nil
	}
	rec := w.rb.NewRecordBatch()
	defer rec.Release()
	w.rows, w.approx = 0, 0
	if err := w.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("s3: parquet write: %w", err)
	}
	return nil
}

func (w *parquetWriter) buffered() int {
	return w.approx + int(w.fw.RowGroupTotalBytesWritten())
}

// flushBuffered closes the row group so that its pages go to the spool.
func (w *parquetWriter) flushBuffered() error {
	if err := w.writeBatch(); err != nil {
		return err
	}
	if n, _ := w.fw.RowGroupNumRows(); n > 0 {
		if err := w.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("s3: parquet row group: %w", err)
		}
	}
	return nil
}

func (w *parquetWriter) close() error {
	defer w.rb.Release()
	if err := w.writeBatch(); err != nil {
		return err
	}
	if err := w.fw.Close(); err != nil {
		return fmt.Errorf("s3: parquet close: %w", err)
	}
	return nil
}

// appendArrow appends v to b and returns about how many bytes it added.
func appendArrow(b array.Builder, s *schema.Schema, v any) (int, error) {
	if v == nil && s.Default != nil {
		v = s.Default
	}
	if v == nil {
		if !s.Optional {
			return 0, fmt.Errorf("null for required %s", s)
		}
		b.AppendNull()
		return 1, nil
	}
	switch s.Name {
	case schema.DecimalName:
		x, ok := v.(*big.Int)
		if !ok {
			return 0, fmt.Errorf("decimal value is %T", v)
		}
		if x.BitLen() > 126 {
			return 0, fmt.Errorf("decimal %s does not fit 38 digits", x)
		}
		b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(x))
		return 16, nil
	case schema.DateName:
		b.(*array.Date32Builder).Append(arrow.Date32(v.(time.Time).Unix() / 86400))
		return 4, nil
	case schema.TimeName:
		t := v.(time.Time).UTC()
		ms := t.Hour()*3600000 + t.Minute()*60000 + t.Second()*1000 + t.Nanosecond()/1e6
		b.(*array.Time32Builder).Append(arrow.Time32(ms))
		return 4, nil
	case schema.TimestampName:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(time.Time).UnixMilli()))
		return 8, nil
	}
	switch x := v.(type) {
	case int8:
		b.(*array.Int8Builder).Append(x)
		return 1, nil
	case int16:
		b.(*array.Int16Builder).Append(x)
		return 2, nil
	case int32:
		b.(*array.Int32Builder).Append(x)
		return 4, nil
	case int64:
		b.(*array.Int64Builder).Append(x)
		return 8, nil
	case float32:
		b.(*array.Float32Builder).Append(x)
		return 4, nil
	case float64:
		b.(*array.Float64Builder).Append(x)
		return 8, nil
	case bool:
		b.(*array.BooleanBuilder).Append(x)
		return 1, nil
	case string:
		b.(*array.StringBuilder).Append(x)
		return len(x) + 4, nil
	case []byte:
		b.(*array.BinaryBuilder).Append(x)
		return len(x) + 4, nil
	case []any:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		n := 4
		for _, e := range x {
			m, err := appendArrow(lb.ValueBuilder(), s.ValueSchema, e)
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	case map[string]any:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		n := 4
		for k, e := range x {
			mb.KeyBuilder().(*array.StringBuilder).Append(k)
			m, err := appendArrow(mb.ItemBuilder(), s.ValueSchema, e)
			if err != nil {
				return 0, err
			}
			n += m + len(k)
		}
		return n, nil
	case map[any]any:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		n := 4
		for k, e := range x {
			kn, err := appendArrow(mb.KeyBuilder(), s.KeySchema, k)
			if err != nil {
				return 0, err
			}
			m, err := appendArrow(mb.ItemBuilder(), s.ValueSchema, e)
			if err != nil {
				return 0, err
			}
			n += m + kn
		}
		return n, nil
	case *schema.Struct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		n := 0
		for i, f := range s.Fields {
			m, err := appendArrow(sb.FieldBuilder(i), f.Schema, x.GetIndex(i))
			if err != nil {
				return 0, fmt.Errorf("field %s: %w", f.Name, err)
			}
			n += m
		}
		return n, nil
	}
	return 0, fmt.Errorf("cannot write %T as %s", v, s)
}

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
	pool  *bufPool
}

// parquetPoolKept is how many bytes of freed Arrow buffers a task keeps
// for its next batches and files.
const parquetPoolKept = 16 << 20

func (f parquetFormat) mem() memory.Allocator {
	if f.pool == nil {
		return memory.DefaultAllocator
	}
	return f.pool
}

func newParquetFormat(codec string) (format, error) {
	pool := newBufPool(parquetPoolKept)
	switch codec {
	case "snappy":
		return parquetFormat{compress.Codecs.Snappy, ".snappy", pool}, nil
	case "gzip":
		return parquetFormat{compress.Codecs.Gzip, ".gz", pool}, nil
	case "zstd":
		return parquetFormat{compress.Codecs.Zstd, ".zstd", pool}, nil
	case "none", "uncompressed":
		return parquetFormat{compress.Codecs.Uncompressed, "", pool}, nil
	}
	return nil, fmt.Errorf("s3: unsupported parquet.codec %q", codec)
}

// ext is parquet-mr's codec extension followed by .parquet, as Confluent
// names its files (e.g. .snappy.parquet).
func (f parquetFormat) ext() string { return f.name + ".parquet" }

// parquetPageSize is the data page size Confluent's sink gives parquet-mr.
const parquetPageSize = 64 << 10

// parquetBatch is the number of rows built before they go to the row
// group writer.
const parquetBatch = 4096

type parquetWriter struct {
	s      *schema.Schema
	fw     *pqarrow.FileWriter
	rb     *array.RecordBuilder
	cols   []appender
	rows   int
	approx int // bytes appended to the builder since the last batch
	// perRow is the data bytes per row of each top-level binary or string
	// column in the last batch (-1 for other columns). After a full batch
	// the next one reserves its room at once instead of growing by copies
	// (a file with few records, or one the memory bound flushed, grows as
	// it goes: reserved room is memory); reserved is that room in bytes.
	perRow   []int
	full     bool
	reserved int
}

// dataBuilder is a string or binary builder.
type dataBuilder interface {
	DataLen() int
	ReserveData(int)
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
	mem := f.mem()
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
	opts := []parquet.WriterProperty{parquet.WithCompression(f.codec), parquet.WithMaxRowGroupLength(1 << 30),
		parquet.WithAllocator(mem), parquet.WithDataPageSize(parquetPageSize)}
	// As parquet-mr (under Confluent's sink) does whatever the codec: a
	// column whose dictionary does not make its first page smaller than
	// plain values (unique ids, timestamps) goes plain, which also saves
	// hashing every value into the dictionary.
	ps, err := pqarrow.ToParquet(as, parquet.NewWriterProperties(opts...), aprops)
	if err != nil {
		return nil, fmt.Errorf("s3: parquet schema: %w", err)
	}
	for _, c := range ps.Columns() {
		opts = append(opts, parquet.WithDictionaryCostFallbackFor(c.Path(), true))
	}
	fw, err := pqarrow.NewFileWriter(as, nopCloser{w}, parquet.NewWriterProperties(opts...), aprops)
	if err != nil {
		return nil, fmt.Errorf("s3: parquet writer: %w", err)
	}
	pw := &parquetWriter{s: s, fw: fw, rb: array.NewRecordBuilder(mem, as), perRow: make([]int, len(s.Fields))}
	pw.cols = make([]appender, len(s.Fields))
	for i, fd := range s.Fields {
		pw.cols[i] = newAppender(pw.rb.Field(i), fd.Schema)
	}
	return pw, nil
}

// nopCloser keeps pqarrow from closing the spool: the sink finishes it.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (w *parquetWriter) write(v any) error {
	st, ok := v.(*schema.Struct)
	if !ok {
		return fmt.Errorf("s3: ParquetFormat needs struct values, got %T", v)
	}
	if w.rows == 0 && w.full {
		w.reserve()
	}
	for i, add := range w.cols {
		n, err := add(st.GetIndex(i))
		if err != nil {
			return fmt.Errorf("s3: parquet: field %s: %w", w.s.Fields[i].Name, err)
		}
		w.approx += n
	}
	w.rows++
	if w.rows >= parquetBatch {
		w.measure()
		err := w.writeBatch()
		w.full = true
		return err
	}
	return nil
}

// measure records the data bytes per row of the variable-width columns
// built so far.
func (w *parquetWriter) measure() {
	for i := range w.perRow {
		w.perRow[i] = -1
		if b, ok := w.rb.Field(i).(dataBuilder); ok {
			w.perRow[i] = max(1, b.DataLen()/w.rows)
		}
	}
}

// reserve makes room for a batch in every top-level column (nested ones
// grow as they go).
func (w *parquetWriter) reserve() {
	w.rb.Reserve(parquetBatch)
	w.reserved = parquetBatch * 8 * len(w.perRow) // at most, for fixed widths and offsets
	for i, per := range w.perRow {
		if per > 0 {
			n := parquetBatch * per * 9 / 8
			w.rb.Field(i).(dataBuilder).ReserveData(n)
			w.reserved += n
		}
	}
}

// writeBatch hands the built rows to the current (buffered) row group.
func (w *parquetWriter) writeBatch() error {
	if w.rows == 0 {
		return nil
	}
	rec := w.rb.NewRecordBatch()
	defer rec.Release()
	w.rows, w.approx, w.reserved, w.full = 0, 0, 0, false
	if err := w.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("s3: parquet write: %w", err)
	}
	return nil
}

func (w *parquetWriter) buffered() int {
	return max(w.approx, w.reserved) + int(w.fw.RowGroupTotalBytesWritten())
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

// appender appends one value of a column to its Arrow builder and returns
// about how many bytes it added. Appenders are made once per file from the
// schema, with the builder's concrete type, so that a record costs no
// lookups or type switches beyond the value's own.
type appender func(v any) (int, error)

// newAppender returns the appender of values of s into b (a builder of
// arrowType(s)).
func newAppender(b array.Builder, s *schema.Schema) appender {
	put := valueAppender(b, s)
	return func(v any) (int, error) {
		if v == nil {
			v = s.Default
		}
		if v == nil {
			if !s.Optional {
				return 0, fmt.Errorf("null for required %s", s)
			}
			b.AppendNull()
			return 1, nil
		}
		return put(v)
	}
}

// typed appends a value of Go type T with add, or refuses another type.
func typed[T any](s *schema.Schema, size int, add func(T)) appender {
	return func(v any) (int, error) {
		x, ok := v.(T)
		if !ok {
			return 0, fmt.Errorf("cannot write %T as %s", v, s)
		}
		add(x)
		return size, nil
	}
}

// valueAppender is newAppender for non-null values.
func valueAppender(b array.Builder, s *schema.Schema) appender {
	switch s.Name {
	case schema.DecimalName:
		db := b.(*array.Decimal128Builder)
		return func(v any) (int, error) {
			x, ok := v.(*big.Int)
			if !ok {
				return 0, fmt.Errorf("decimal value is %T", v)
			}
			if x.BitLen() > 126 {
				return 0, fmt.Errorf("decimal %s does not fit 38 digits", x)
			}
			db.Append(decimal128.FromBigInt(x))
			return 16, nil
		}
	case schema.DateName:
		db := b.(*array.Date32Builder)
		return typed(s, 4, func(t time.Time) { db.Append(arrow.Date32(t.Unix() / 86400)) })
	case schema.TimeName:
		tb := b.(*array.Time32Builder)
		return typed(s, 4, func(t time.Time) {
			t = t.UTC()
			tb.Append(arrow.Time32(t.Hour()*3600000 + t.Minute()*60000 + t.Second()*1000 + t.Nanosecond()/1e6))
		})
	case schema.TimestampName:
		tb := b.(*array.TimestampBuilder)
		return typed(s, 8, func(t time.Time) { tb.Append(arrow.Timestamp(t.UnixMilli())) })
	}
	switch s.Type {
	case schema.TypeInt8:
		return typed(s, 1, b.(*array.Int8Builder).Append)
	case schema.TypeInt16:
		return typed(s, 2, b.(*array.Int16Builder).Append)
	case schema.TypeInt32:
		return typed(s, 4, b.(*array.Int32Builder).Append)
	case schema.TypeInt64:
		return typed(s, 8, b.(*array.Int64Builder).Append)
	case schema.TypeFloat32:
		return typed(s, 4, b.(*array.Float32Builder).Append)
	case schema.TypeFloat64:
		return typed(s, 8, b.(*array.Float64Builder).Append)
	case schema.TypeBoolean:
		return typed(s, 1, b.(*array.BooleanBuilder).Append)
	case schema.TypeString:
		sb := b.(*array.StringBuilder)
		return func(v any) (int, error) {
			x, ok := v.(string)
			if !ok {
				return 0, fmt.Errorf("cannot write %T as %s", v, s)
			}
			sb.Append(x)
			return len(x) + 4, nil
		}
	case schema.TypeBytes:
		bb := b.(*array.BinaryBuilder)
		return func(v any) (int, error) {
			x, ok := v.([]byte)
			if !ok {
				return 0, fmt.Errorf("cannot write %T as %s", v, s)
			}
			bb.Append(x)
			return len(x) + 4, nil
		}
	case schema.TypeArray:
		lb := b.(*array.ListBuilder)
		elem := newAppender(lb.ValueBuilder(), s.ValueSchema)
		return func(v any) (int, error) {
			x, ok := v.([]any)
			if !ok {
				return 0, fmt.Errorf("cannot write %T as %s", v, s)
			}
			lb.Append(true)
			n := 4
			for _, e := range x {
				m, err := elem(e)
				if err != nil {
					return 0, err
				}
				n += m
			}
			return n, nil
		}
	case schema.TypeMap:
		mb := b.(*array.MapBuilder)
		key, item := newAppender(mb.KeyBuilder(), s.KeySchema), newAppender(mb.ItemBuilder(), s.ValueSchema)
		return func(v any) (int, error) {
			n := 4
			add := func(k, e any) error {
				kn, err := key(k)
				if err != nil {
					return err
				}
				m, err := item(e)
				n += kn + m
				return err
			}
			switch x := v.(type) {
			case map[string]any:
				mb.Append(true)
				for k, e := range x {
					if err := add(k, e); err != nil {
						return 0, err
					}
				}
			case map[any]any:
				mb.Append(true)
				for k, e := range x {
					if err := add(k, e); err != nil {
						return 0, err
					}
				}
			default:
				return 0, fmt.Errorf("cannot write %T as %s", v, s)
			}
			return n, nil
		}
	case schema.TypeStruct:
		sb := b.(*array.StructBuilder)
		fields := make([]appender, len(s.Fields))
		for i, f := range s.Fields {
			fields[i] = newAppender(sb.FieldBuilder(i), f.Schema)
		}
		return func(v any) (int, error) {
			x, ok := v.(*schema.Struct)
			if !ok {
				return 0, fmt.Errorf("cannot write %T as %s", v, s)
			}
			sb.Append(true)
			n := 0
			for i, add := range fields {
				m, err := add(x.GetIndex(i))
				if err != nil {
					return 0, fmt.Errorf("field %s: %w", s.Fields[i].Name, err)
				}
				n += m
			}
			return n, nil
		}
	}
	return func(v any) (int, error) { return 0, fmt.Errorf("cannot write %T as %s", v, s) }
}

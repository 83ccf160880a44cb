package s3

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// BenchSchema is the benchmark's record: ten fields, about 1 KiB.
var BenchSchema = schema.StructOf("bench.Event").Version(1).
	Field("id", schema.Int64).
	Field("ts", schema.Timestamp).
	Field("user_id", schema.Int64).
	Field("session", schema.String).
	Field("country", schema.String).
	Field("event", schema.String).
	Field("score", schema.Float64).
	Field("active", schema.Boolean).
	Field("count", schema.Int32).
	Field("payload", schema.String).
	Build()

// BenchValue returns the i-th benchmark record (1 KiB of JSON).
func BenchValue(i int64) *schema.Struct {
	countries := []string{"FR", "DE", "US", "JP", "BR"}
	events := []string{"view", "click", "purchase", "signup"}
	pl := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 24))
	pl[i%int64(len(pl))] = 'X'
	return schema.NewStruct(BenchSchema).Set("id", i).Set("ts", time.UnixMilli(1_700_000_000_000+i)).
		Set("user_id", i*7919%100000).Set("session", "sess-"+strings.Repeat("s", int(i%8))).
		Set("country", countries[i%5]).Set("event", events[i%4]).Set("score", float64(i%1000)/7).
		Set("active", i%3 == 0).Set("count", int32(i%500)).Set("payload", string(pl))
}

// parquetGoWriter writes the benchmark records with parquet-go, the
// alternative to arrow-go measured by BenchmarkParquetWriters.
type parquetGoWriter struct {
	w    *parquet.GenericWriter[any]
	cols []int // struct field index of each leaf column, in schema order
	rows []parquet.Row
}

func newParquetGoWriter(out *bytes.Buffer) *parquetGoWriter {
	g := parquet.Group{
		"id": parquet.Int(64), "ts": parquet.Timestamp(parquet.Millisecond), "user_id": parquet.Int(64),
		"session": parquet.String(), "country": parquet.String(), "event": parquet.String(),
		"score": parquet.Leaf(parquet.DoubleType), "active": parquet.Leaf(parquet.BooleanType),
		"count": parquet.Int(32), "payload": parquet.String(),
	}
	sch := parquet.NewSchema("event", g)
	pw := &parquetGoWriter{w: parquet.NewGenericWriter[any](out, sch, parquet.Compression(&snappy.Codec{}))}
	for _, path := range sch.Columns() {
		pw.cols = append(pw.cols, BenchSchema.Field(path[0]).Index)
	}
	return pw
}

func (pw *parquetGoWriter) write(st *schema.Struct) error {
	row := make(parquet.Row, len(pw.cols))
	for c, fi := range pw.cols {
		var v parquet.Value
		switch x := st.GetIndex(fi).(type) {
		case int64:
			v = parquet.Int64Value(x)
		case int32:
			v = parquet.Int32Value(x)
		case float64:
			v = parquet.DoubleValue(x)
		case bool:
			v = parquet.BooleanValue(x)
		case string:
			v = parquet.ByteArrayValue([]byte(x))
		case time.Time:
			v = parquet.Int64Value(x.UnixMilli())
		}
		row[c] = v.Level(0, 0, c)
	}
	pw.rows = append(pw.rows, row)
	if len(pw.rows) >= parquetBatch {
		return pw.flush()
	}
	return nil
}

func (pw *parquetGoWriter) flush() error {
	_, err := pw.w.WriteRows(pw.rows)
	pw.rows = pw.rows[:0]
	return err
}

func (pw *parquetGoWriter) close() error {
	if err := pw.flush(); err != nil {
		return err
	}
	return pw.w.Close()
}

// BenchmarkParquetWriters compares apache/arrow-go (pqarrow, what the sink
// uses) with parquet-go/parquet-go writing the same files: 10,000 records
// of the 10-field 1 KiB schema per file, snappy.
func BenchmarkParquetWriters(b *testing.B) {
	const perFile = 10000
	vals := make([]*schema.Struct, perFile)
	for i := range vals {
		vals[i] = BenchValue(int64(i))
	}
	b.Run("lib=arrow-go", func(b *testing.B) {
		f, _ := newParquetFormat("snappy")
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			w, err := f.newWriter(&buf, BenchSchema)
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range vals {
				if err := w.write(v); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(perFile)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(buf.Len()), "file-bytes")
	})
	b.Run("lib=parquet-go", func(b *testing.B) {
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			w := newParquetGoWriter(&buf)
			for _, v := range vals {
				if err := w.write(v); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(perFile)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(buf.Len()), "file-bytes")
	})
}

package s3

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// parquetTestSchema has a column of every kind the Parquet writer maps.
var parquetTestSchema = schema.StructOf("test.Order").Version(1).
	Field("id", schema.Int64).
	Field("name", schema.String).
	Field("note", schema.OptionalString).
	Field("raw", schema.OptionalBytes).
	Field("small", schema.Int8).
	Field("medium", schema.Int16).
	Field("count", schema.OptionalInt32).
	Field("ratio", schema.Float32).
	Field("score", schema.Float64).
	Field("active", schema.Boolean).
	Field("amount", schema.Decimal(2)).
	Field("day", schema.Date).
	Field("at", schema.Time).
	Field("ts", schema.Timestamp).
	Field("tags", schema.ArrayOf(schema.String)).
	Field("attrs", schema.MapOf(schema.String, schema.OptionalInt32)).
	Field("addr", schema.StructOf("test.Address").Field("city", schema.String).Field("zip", schema.OptionalInt32).Build()).
	Build()

func parquetTestValue(i int64) *schema.Struct {
	addr := schema.NewStruct(parquetTestSchema.Field("addr").Schema).Set("city", fmt.Sprint("city-", i%7))
	if i%2 == 0 {
		addr.Set("zip", int32(69000+i))
	}
	v := schema.NewStruct(parquetTestSchema).
		Set("id", i).Set("name", "order-"+strings.Repeat("x", int(i%50))).
		Set("small", int8(i%100)).Set("medium", int16(i*3)).
		Set("ratio", float32(i)/4).Set("score", float64(i%1000)/7).Set("active", i%3 == 0).
		Set("amount", big.NewInt(12345+i)).
		Set("day", time.Date(2026, 3, 4+int(i%20), 0, 0, 0, 0, time.UTC)).
		Set("at", time.Date(1970, 1, 1, 13, 14, 15, 16_000_000, time.UTC)).
		Set("ts", time.UnixMilli(1_700_000_000_000+i*1000)).
		Set("tags", []any{"a", "b" + strings.Repeat("c", int(i%3))}).
		Set("attrs", map[string]any{fmt.Sprint("k", i%3): int32(i)}). // one key: maps iterate in any order

		Set("addr", addr)
	if i%4 != 0 {
		v.Set("note", fmt.Sprint("n", i)).Set("count", int32(i*7))
	}
	if i%6 == 0 {
		v.Set("attrs", map[string]any{"n": nil})
	}
	if i%5 == 0 {
		v.Set("raw", []byte(strings.Repeat("r", int(i%300))))
	}
	return v
}

// writeParquetFiles writes files of rows records each with f, closing the
// row group early (as the memory bound does) in the middle of odd files.
func writeParquetFiles(t *testing.T, f parquetFormat, s *schema.Schema, value func(int64) *schema.Struct, files, rows int) [][]byte {
	t.Helper()
	var out [][]byte
	for n := range files {
		var buf bytes.Buffer
		w, err := f.newWriter(&buf, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if err := w.write(value(int64(n*rows + i))); err != nil {
				t.Fatal(err)
			}
			if n%2 == 1 && i == rows/3 {
				if err := w.flushBuffered(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// TestParquetPooledBuffers checks that the writer's recycled Arrow buffers
// change nothing: files written one after the other through one pool are
// byte for byte those written with Arrow's own allocator.
func TestParquetPooledBuffers(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     *schema.Schema
		value func(int64) *schema.Struct
	}{{"all-types", parquetTestSchema, parquetTestValue}, {"bench", BenchSchema, BenchValue}} {
		t.Run(c.name, func(t *testing.T) {
			f, err := newParquetFormat("snappy")
			if err != nil {
				t.Fatal(err)
			}
			pooled := f.(parquetFormat)
			plain := pooled
			plain.pool = nil
			want := writeParquetFiles(t, plain, c.s, c.value, 4, 2*parquetBatch+777)
			got := writeParquetFiles(t, pooled, c.s, c.value, 4, 2*parquetBatch+777)
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("file %d: %d bytes with pooled buffers, %d with Arrow's allocator, contents differ", i, len(got[i]), len(want[i]))
				}
			}
			if pooled.pool.kept == 0 || pooled.pool.kept > parquetPoolKept {
				t.Fatalf("pool keeps %d bytes, want some and at most %d", pooled.pool.kept, parquetPoolKept)
			}
		})
	}
}

// TestParquetRefusesWrongTypes checks that a value of the wrong Go type for
// its column is an error naming the field, not a panic.
func TestParquetRefusesWrongTypes(t *testing.T) {
	f, _ := newParquetFormat("snappy")
	for _, field := range []string{"id", "name", "day", "ts", "amount", "tags", "attrs", "addr"} {
		var buf bytes.Buffer
		w, err := f.newWriter(&buf, parquetTestSchema)
		if err != nil {
			t.Fatal(err)
		}
		v := parquetTestValue(1)
		v.SetIndex(parquetTestSchema.Field(field).Index, struct{}{})
		if err := w.write(v); err == nil || !strings.Contains(err.Error(), "field "+field) {
			t.Errorf("%s: error %v, want one naming the field", field, err)
		}
	}
}

// TestParquetReservationCounted checks that the room a file reserves for
// its next batch counts as buffered memory (what memory.buffer.max.bytes
// bounds), and that a file the bound flushed early reserves nothing.
func TestParquetReservationCounted(t *testing.T) {
	f, _ := newParquetFormat("snappy")
	var buf bytes.Buffer
	w, err := f.newWriter(&buf, BenchSchema)
	if err != nil {
		t.Fatal(err)
	}
	pw := w.(*parquetWriter)
	for i := range parquetBatch + 1 {
		if err := w.write(BenchValue(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := w.buffered(), parquetBatch*900; got < want {
		t.Fatalf("after a full batch and one row: %d bytes buffered, want at least %d (a batch of ~1 KiB rows reserved)", got, want)
	}
	if err := w.flushBuffered(); err != nil {
		t.Fatal(err)
	}
	if err := w.write(BenchValue(1)); err != nil {
		t.Fatal(err)
	}
	if pw.reserved != 0 || w.buffered() > 4096 {
		t.Fatalf("after an early flush: %d bytes reserved, %d buffered; want none reserved", pw.reserved, w.buffered())
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
}

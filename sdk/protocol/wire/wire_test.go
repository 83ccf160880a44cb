package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/tributary-dev/tributary/sdk/schema"
)

var (
	address = schema.StructOf("example.Address").
		Field("street", schema.String).
		Field("zip", schema.OptionalInt32).
		Build()
	everything = schema.StructOf("example.Everything").Version(3).Doc("all types").
			Field("i8", schema.Int8).
			Field("i16", schema.Int16).
			Field("i32", schema.Int32).
			Field("i64", schema.Int64).
			Field("f32", schema.Float32).
			Field("f64", schema.Float64).
			Field("b", schema.Boolean).
			Field("s", schema.String).
			Field("raw", schema.Bytes).
			Field("arr", schema.ArrayOf(schema.OptionalString)).
			Field("smap", schema.MapOf(schema.String, schema.Int64)).
			Field("imap", schema.MapOf(schema.Int32, address)).
			Field("addr", address).
			Field("opt", address.AsOptional()).
			Field("dflt", schema.Int32.WithDefault(int32(42))).
			Field("dec", schema.Decimal(2)).
			Field("date", schema.Date).
			Field("time", schema.Time).
			Field("ts", schema.Timestamp).
			Build()
)

func sampleRecords(t testing.TB) []Record {
	addr := schema.NewStruct(address).Set("street", "Main St").Set("zip", int32(12345))
	v := schema.NewStruct(everything).
		Set("i8", int8(-8)).Set("i16", int16(-1600)).Set("i32", int32(math.MinInt32)).
		Set("i64", int64(math.MaxInt64)).Set("f32", float32(1.5)).Set("f64", math.Inf(-1)).
		Set("b", true).Set("s", "héllo").Set("raw", []byte{0, 1, 2}).
		Set("arr", []any{"a", nil, "c"}).
		Set("smap", map[string]any{"x": int64(1), "y": int64(-2)}).
		Set("imap", map[any]any{int32(7): addr}).
		Set("addr", addr).
		Set("dec", big.NewInt(-12345)).
		Set("date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)).
		Set("time", time.Date(1970, 1, 1, 13, 14, 15, 16e6, time.UTC)).
		Set("ts", time.UnixMilli(1_700_000_000_123).UTC())
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	return []Record{
		{
			Partition: map[string]any{"filename": "/tmp/x"}, Offset: map[string]any{"position": int64(1) << 60},
			Topic: "t", KafkaPartition: 3, KafkaOffset: 99, Timestamp: 1_700_000_000_000,
			KeySchema: schema.String, Key: "k1", ValueSchema: everything, Value: v,
			Headers: []Header{{Key: "h", Schema: schema.Int64, Value: int64(5)}, {Key: "free", Value: map[string]any{"a": []any{int32(1), "b", nil, 2.5}}}},
		},
		{
			Topic: "t2", KafkaPartition: NoPartition, Timestamp: NoTimestamp,
			Value: map[any]any{int64(1): []byte("x"), "s": float32(2)},
		},
		{
			Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp,
			KeySchema: schema.String, Key: "k2", ValueSchema: everything, Value: v,
		},
	}
}

// encodeBatch encodes recs into one batch.
func encodeBatch(t testing.TB, recs []Record) []byte {
	t.Helper()
	return encodeBatchWith(t, &Encoder{}, recs)
}

// encodeBatchWith encodes recs into one batch with e.
func encodeBatchWith(t testing.TB, e *Encoder, recs []Record) []byte {
	t.Helper()
	for i := range recs {
		if err := e.Append(&recs[i]); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	return e.Bytes()
}

func TestRoundTrip(t *testing.T) {
	recs := sampleRecords(t)
	got, err := Decode(encodeBatch(t, recs), len(recs))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("decoded %d records, want %d", len(got), len(recs))
	}
	for i := range recs {
		assertRecordEqual(t, &recs[i], &got[i])
	}
	// The second use of the schema is a reference: the repeated record must
	// cost far less than the first.
	if got[0].ValueSchema != got[2].ValueSchema {
		t.Error("schema shared in the batch decoded as two schemas")
	}
	// Decoded default is returned for the unset field.
	if d := got[0].Value.(*schema.Struct).Get("dflt"); d != int32(42) {
		t.Errorf("default field = %v, want 42", d)
	}
}

func assertRecordEqual(t *testing.T, want, got *Record) {
	t.Helper()
	if !schema.ValueEqual(want.Partition, got.Partition) && !(len(want.Partition) == 0 && len(got.Partition) == 0) {
		t.Errorf("partition %v, want %v", got.Partition, want.Partition)
	}
	if !schema.ValueEqual(want.Offset, got.Offset) && !(len(want.Offset) == 0 && len(got.Offset) == 0) {
		t.Errorf("offset %v, want %v", got.Offset, want.Offset)
	}
	if want.Topic != got.Topic || want.KafkaPartition != got.KafkaPartition || want.KafkaOffset != got.KafkaOffset || want.Timestamp != got.Timestamp {
		t.Errorf("envelope %+v, want %+v", got, want)
	}
	if !schema.Equal(want.KeySchema, got.KeySchema) || !schema.Equal(want.ValueSchema, got.ValueSchema) {
		t.Errorf("schemas %v %v, want %v %v", got.KeySchema, got.ValueSchema, want.KeySchema, want.ValueSchema)
	}
	if !schema.ValueEqual(want.Key, got.Key) {
		t.Errorf("key %v, want %v", got.Key, want.Key)
	}
	if !schema.ValueEqual(want.Value, got.Value) {
		t.Errorf("value %v, want %v", got.Value, want.Value)
	}
	if len(want.Headers) != len(got.Headers) {
		t.Fatalf("headers %v, want %v", got.Headers, want.Headers)
	}
	for i := range want.Headers {
		if want.Headers[i].Key != got.Headers[i].Key || !schema.ValueEqual(want.Headers[i].Value, got.Headers[i].Value) {
			t.Errorf("header %d %v, want %v", i, got.Headers[i], want.Headers[i])
		}
	}
}

func TestAppendRejectsInvalidAndRollsBack(t *testing.T) {
	var e Encoder
	good := Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: schema.String, Value: "ok"}
	if err := e.Append(&good); err != nil {
		t.Fatal(err)
	}
	size := e.Len()
	cases := map[string]Record{
		"wrong type":         {ValueSchema: schema.Int64, Value: "x"},
		"null required":      {ValueSchema: address, Value: nil},
		"struct field type":  {ValueSchema: everything, Value: schema.NewStruct(everything)},
		"bad schemaless":     {Value: struct{}{}},
		"int offset is fine": {Offset: map[string]any{"x": make(chan int)}},
	}
	for name, r := range cases {
		r.KafkaPartition, r.Timestamp = NoPartition, NoTimestamp
		if err := e.Append(&r); err == nil {
			t.Errorf("%s: no error", name)
		}
		if e.Len() != size || e.Count() != 1 {
			t.Fatalf("%s: batch not rolled back", name)
		}
	}
	got, err := Decode(e.Bytes(), 1)
	if err != nil || len(got) != 1 || got[0].Value != "ok" {
		t.Fatalf("batch after failed appends: %v %v", got, err)
	}
}

func TestOffsetsRoundTrip(t *testing.T) {
	offs := []PartitionOffset{
		{Partition: map[string]any{"filename": "a"}, Offset: map[string]any{"position": int64(math.MaxInt64)}},
		{Partition: map[string]any{"slot": "s", "n": int32(2)}, Offset: nil},
	}
	b, err := AppendOffsets(nil, offs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeOffsets(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Offset["position"] != int64(math.MaxInt64) || got[1].Offset != nil || got[1].Partition["n"] != int32(2) {
		t.Fatalf("got %+v", got)
	}
	pb, _ := AppendPartitions(nil, []map[string]any{{"a": "b"}})
	parts, err := DecodePartitions(pb)
	if err != nil || len(parts) != 1 || parts[0]["a"] != "b" {
		t.Fatalf("partitions %v %v", parts, err)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	recs := sampleRecords(t)
	full := encodeBatch(t, recs)
	// Every strict prefix is corrupt (records are not self-delimiting at
	// arbitrary cut points, but the decoder must never panic).
	for n := 1; n < len(full); n++ {
		_, _ = Decode(full[:n], 3)
	}
	// A huge count must be rejected without allocating it.
	bad := []byte{0, tagArray, 0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := Decode(bad, 1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "count") {
		t.Fatalf("huge count: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	recs := sampleRecords(f)
	f.Add(encodeBatch(f, recs))
	f.Add([]byte{0, tagArray, 5, tagNull})
	optMap := schema.MapOf(schema.String, schema.Int64).AsOptional()
	var om Encoder
	if err := om.Append(&Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: optMap,
		Value: map[string]any{"a": int64(1), "b": int64(2)}}); err != nil {
		f.Fatal(err)
	}
	f.Add(om.Bytes())
	f.Add([]byte{0, 0, 0, 0, 0, 1, byte(schema.TypeStruct), 0, 1, 1, 'a', 2})
	f.Add(encodeBatchWith(f, &Encoder{ValueLengths: true}, recs))
	f.Add(encodeBatchWith(f, &Encoder{ValueLengths: true}, []Record{{Topic: "t", KafkaPartition: NoPartition,
		Timestamp: NoTimestamp, ValueSchema: optMap, Value: map[string]any{"a": int64(1)}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(data, 10)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			dec := Decoder{RawValues: true}
			if raws, rawErr := dec.Decode(data, 10); rawErr == nil {
				// Only a value cut by its length may hide the corruption,
				// which reading it must then find.
				checkCorruptRaw(t, raws, err)
			} else if !errors.Is(rawErr, ErrCorrupt) {
				t.Fatalf("RawValues decoding of a corrupt batch: %v", rawErr)
			}
			dec = Decoder{RawOffsets: true}
			if _, err := dec.Decode(data, 10); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("RawOffsets decoding of a corrupt batch: %v", err)
			}
			return
		}
		// Whatever decodes must re-encode and decode to equal records.
		var e Encoder
		for i := range got {
			if err := e.Append(&got[i]); err != nil {
				// Decoded structs may hold values that are valid by the
				// decoder's rules; the encoder must accept them.
				t.Fatalf("re-encode record %d: %v", i, err)
			}
		}
		again, err := Decode(e.Bytes(), len(got))
		if err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		for i := range got {
			assertRecordEqual(t, &got[i], &again[i])
		}
		// And so with value lengths.
		el := Encoder{ValueLengths: true}
		for i := range got {
			if err := el.Append(&got[i]); err != nil {
				t.Fatalf("re-encode record %d with its value length: %v", i, err)
			}
		}
		again, err = Decode(el.Bytes(), len(got))
		if err != nil {
			t.Fatalf("decode re-encoded with value lengths: %v", err)
		}
		for i := range got {
			assertRecordEqual(t, &got[i], &again[i])
		}
		checkRawValues(t, data, got)
		checkRawOffsets(t, data, got)
		_, _ = DecodeOffsets(data)
		_, _ = DecodePartitions(data)
	})
}

// checkCorruptRaw checks a batch that decodes with RawValues but not
// without (plainErr): one of its values was cut by its length and left
// unchecked, and reading it (Decode, a ValueReader's walk, an Encoder's
// copy) finds the corruption. Or the plain decoding ran out of the batch's
// element budget, which values cut by their length do not draw on (each
// has its own, see valueSlack).
func checkCorruptRaw(t *testing.T, recs []Record, plainErr error) {
	t.Helper()
	for i := range recs {
		raw, ok := recs[i].Value.(*Raw)
		if !ok || raw.Checked() {
			continue
		}
		_, decErr := raw.Decode()
		checkErr := raw.check()
		if (decErr == nil) != (checkErr == nil) {
			t.Fatalf("record %d: Raw.Decode error %v, walk error %v", i, decErr, checkErr)
		}
		if decErr == nil {
			continue
		}
		if !errors.Is(decErr, ErrCorrupt) || !errors.Is(checkErr, ErrCorrupt) {
			t.Fatalf("record %d: errors not ErrCorrupt: %v, %v", i, decErr, checkErr)
		}
		var e Encoder
		if err := e.Append(&recs[i]); err == nil || e.Len() != 0 || e.Count() != 0 {
			t.Fatalf("record %d: encoder copied a corrupt value: %v (%d bytes)", i, err, e.Len())
		}
		return
	}
	if !strings.Contains(plainErr.Error(), "exceeds what the batch can hold") {
		t.Fatalf("a corrupt batch (%v) decoded with RawValues, and every value reads well", plainErr)
	}
}

// checkRawValues decodes data with RawValues and checks it against want,
// the records the plain decoding returned: same records, each value left
// as a *Raw (nil for null values) that decodes to the same value.
func checkRawValues(t *testing.T, data []byte, want []Record) {
	t.Helper()
	for _, alias := range []bool{false, true} {
		dec := Decoder{RawValues: true, AliasInput: alias}
		got, err := dec.Decode(data, len(want))
		if err != nil {
			t.Fatalf("RawValues (alias %v): %v; the plain decoding succeeded", alias, err)
		}
		if len(got) != len(want) {
			t.Fatalf("RawValues (alias %v): %d records, want %d", alias, len(got), len(want))
		}
		for i := range got {
			raw, isRaw := got[i].Value.(*Raw)
			if want[i].Value == nil {
				if got[i].Value != nil {
					t.Fatalf("record %d: null value came back as %#v", i, got[i].Value)
				}
			} else {
				if !isRaw || raw.Schema() != got[i].ValueSchema {
					t.Fatalf("record %d: value %#v is not a Raw of its schema", i, got[i].Value)
				}
				v, err := raw.Decode()
				if err != nil {
					t.Fatalf("record %d: Raw.Decode: %v", i, err)
				}
				got[i].Value = v
			}
			assertRecordEqual(t, &want[i], &got[i])
		}
	}
}

// TestRawValues: every value of the sample records left encoded decodes
// to the value the plain decoding returns, and a corrupt value fails the
// batch as it does without RawValues.
func TestRawValues(t *testing.T) {
	recs := sampleRecords(t)
	value := func(s *schema.Schema, v any) Record {
		return Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: s, Value: v}
	}
	optMap := schema.MapOf(schema.String, schema.Int64).AsOptional()
	optAnyMap := schema.MapOf(schema.Int32, schema.String).AsOptional()
	withMap := schema.StructOf("withMap").Field("m", optMap).Field("n", schema.OptionalInt32).Build()
	empty := schema.StructOf("empty").Build()
	recs = append(recs, value(schema.OptionalString, nil), value(nil, nil),
		// Optional maps, absent and with 0, 1 and 3 entries, alone, in
		// an array and in a struct.
		value(optMap, nil), value(optMap, map[string]any{}), value(optMap, map[string]any{"a": int64(1)}),
		value(optMap, map[string]any{"a": int64(1), "b": int64(2), "c": int64(3)}),
		value(optAnyMap, map[any]any{int32(1): "x", int32(2): "y"}),
		value(schema.ArrayOf(optMap), []any{nil, map[string]any{"k": int64(9), "l": int64(8)}, map[string]any{}}),
		value(withMap, schema.NewStruct(withMap).Set("m", map[string]any{"a": int64(1), "b": int64(2)})),
		value(withMap, schema.NewStruct(withMap).Set("n", int32(4))),
		// Elements of no bytes: many of them in a small value.
		value(schema.ArrayOf(empty), func() []any {
			a := make([]any, 1500)
			for i := range a {
				a[i] = schema.NewStruct(empty)
			}
			return a
		}()),
		// A value of no bytes, last in the batch.
		value(empty, schema.NewStruct(empty)))
	for _, lengths := range []bool{false, true} {
		data := encodeBatchWith(t, &Encoder{ValueLengths: lengths}, recs)
		want, err := Decode(data, len(recs))
		if err != nil {
			t.Fatal(err)
		}
		checkRawValues(t, data, want)
		for cut := range len(data) {
			_, plainErr := Decode(data[:cut], 10)
			dec := Decoder{RawValues: true}
			_, rawErr := dec.Decode(data[:cut], 10)
			if (plainErr == nil) != (rawErr == nil) {
				t.Fatalf("value lengths %v, batch cut at %d: plain decoding error %v, RawValues error %v",
					lengths, cut, plainErr, rawErr)
			}
		}
	}
}

func BenchmarkEncodeDecode1KiB(b *testing.B) {
	val := schema.StructOf("bench").Field("id", schema.Int64).Field("payload", schema.String).Build()
	payload := strings.Repeat("x", 1000)
	rec := Record{Partition: map[string]any{"task": int32(0)}, Offset: map[string]any{"seq": int64(1)}, Topic: "bench",
		KafkaPartition: NoPartition, Timestamp: 1, KeySchema: schema.Int64, Key: int64(1), ValueSchema: val,
		Value: schema.NewStruct(val).Set("id", int64(1)).Set("payload", payload)}
	var e Encoder
	b.ReportAllocs()
	b.SetBytes(1024)
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			e.Reset()
		}
		if err := e.Append(&rec); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if _, err := Decode(e.Bytes(), 1000); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestDecoderMatchesDecode(t *testing.T) {
	var e Encoder
	for i := range 3 {
		r := Record{Partition: map[string]any{"p": int64(1)}, Offset: map[string]any{"seq": int64(i)}, Topic: "t",
			KafkaPartition: NoPartition, Timestamp: NoTimestamp, Key: "k", Value: []any{"s", []byte("b"), map[string]any{"x": "y"}},
			Headers: []Header{{Key: "h", Value: "v"}}}
		if err := e.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Decode(e.Bytes(), e.Count())
	if err != nil {
		t.Fatal(err)
	}
	for _, alias := range []bool{false, true} {
		dec := Decoder{AliasInput: alias}
		for range 2 { // the second call reuses the decoder's memory
			data := append([]byte(nil), e.Bytes()...)
			got, err := dec.Decode(data, e.Count())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("alias=%v: got %#v, want %#v", alias, got, want)
			}
		}
	}
}

// TestDecimalRoundTrip: decimals of every size around the byte
// boundaries, both signs and past one machine word, come back equal
// (schema.AppendDecimal's bytes are checked against Java's in sdk/schema).
func TestDecimalRoundTrip(t *testing.T) {
	dec := schema.Decimal(2)
	var vals []*big.Int
	for bitsN := 0; bitsN <= 80; bitsN++ {
		p := new(big.Int).Lsh(big.NewInt(1), uint(bitsN))
		for _, d := range []int64{-1, 0, 1} {
			v := new(big.Int).Add(p, big.NewInt(d))
			vals = append(vals, v, new(big.Int).Neg(v))
		}
	}
	vals = append(vals, big.NewInt(0))
	for _, v := range vals {
		var e Encoder
		enc, err := e.typed(nil, dec, v, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := binary.AppendUvarint(nil, uint64(schema.DecimalLen(v)))
		if want = schema.AppendDecimal(want, v); !bytes.Equal(enc, want) {
			t.Fatalf("%v encodes as %x, want %x", v, enc, want)
		}
		d := newDecoder(enc)
		got, err := d.typed(dec, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.(*big.Int).Cmp(v) != 0 {
			t.Fatalf("%v decodes as %v", v, got)
		}
	}
}

// TestEncoderReusePartitions checks that reusing the encoding of a shared
// partition map writes the same bytes as encoding it each time, that a
// map with equal contents but another identity is encoded anew, and that
// after ForgetPartition a modified map is encoded as it now is.
func TestEncoderReusePartitions(t *testing.T) {
	shared := map[string]any{"table": "public.users", "slot": "s1", "n": int64(7)}
	equal := map[string]any{"table": "public.users", "slot": "s1", "n": int64(7)}
	other := map[string]any{"table": "public.orders"}
	parts := []map[string]any{shared, shared, equal, shared, other, nil, shared, shared}
	recs := make([]Record, len(parts))
	for i, p := range parts {
		recs[i] = Record{Partition: p, Offset: map[string]any{"lsn": int64(i)}, Topic: "t",
			KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: schema.Int64, Value: int64(i)}
	}
	encode := func(e *Encoder) []byte {
		e.Reset()
		for i := range recs {
			if err := e.Append(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return append([]byte(nil), e.Bytes()...)
	}
	var plain Encoder
	reuse := Encoder{ReusePartitions: true}
	want, got := encode(&plain), encode(&reuse)
	if !bytes.Equal(got, want) {
		t.Fatal("ReusePartitions changed the encoding")
	}
	dec, err := Decode(got, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range dec {
		if parts[i] == nil && r.Partition != nil || parts[i] != nil && !reflect.DeepEqual(r.Partition, parts[i]) {
			t.Fatalf("record %d: partition %v, want %v", i, r.Partition, parts[i])
		}
	}

	// The next group of records: the shared map was modified in between.
	shared["n"] = int64(8)
	reuse.ForgetPartition()
	dec, err = Decode(encode(&reuse), len(recs))
	if err != nil {
		t.Fatal(err)
	}
	if n := dec[0].Partition["n"]; n != int64(8) {
		t.Fatalf("after ForgetPartition: n = %v, want 8", n)
	}
	// Without it, the encoder is told nothing changed and keeps the old
	// encoding: the documented contract, shown here.
	shared["n"] = int64(9)
	dec, err = Decode(encode(&reuse), len(recs))
	if err != nil {
		t.Fatal(err)
	}
	if n := dec[0].Partition["n"]; n != int64(8) {
		t.Fatalf("without ForgetPartition: n = %v, want the kept 8", n)
	}
}

// TestEncoderReuseOffsets checks the same for offsets: records sharing an
// offset map (and records whose offsets are equal maps, or another map in
// between) encode as without ReusePartitions, and ForgetPartition makes a
// modified shared map encode as it now is.
func TestEncoderReuseOffsets(t *testing.T) {
	shared := map[string]any{"lsn": int64(7), "txId": int64(3), "snapshot": "INITIAL", "ts_usec": int64(1e15)}
	equal := map[string]any{"lsn": int64(7), "txId": int64(3), "snapshot": "INITIAL", "ts_usec": int64(1e15)}
	other := map[string]any{"lsn": int64(8)}
	offs := []map[string]any{shared, shared, equal, shared, other, nil, shared, shared}
	part := map[string]any{"server": "p"}
	recs := make([]Record, len(offs))
	for i, o := range offs {
		recs[i] = Record{Partition: part, Offset: o, Topic: "t",
			KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: schema.Int64, Value: int64(i)}
	}
	encode := func(e *Encoder) []byte {
		e.Reset()
		for i := range recs {
			if err := e.Append(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return append([]byte(nil), e.Bytes()...)
	}
	var plain Encoder
	reuse := Encoder{ReusePartitions: true}
	if !bytes.Equal(encode(&reuse), encode(&plain)) {
		t.Fatal("reusing offset encodings changed the encoding")
	}
	shared["lsn"] = int64(9)
	reuse.ForgetPartition()
	dec, err := Decode(encode(&reuse), len(recs))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 3, 6, 7} {
		if n := dec[i].Offset["lsn"]; n != int64(9) {
			t.Fatalf("after ForgetPartition: record %d has lsn %v, want 9", i, n)
		}
	}
	if n := dec[4].Offset["lsn"]; n != int64(8) || dec[5].Offset != nil {
		t.Fatalf("records 4 and 5: offsets %v and %v", dec[4].Offset, dec[5].Offset)
	}
}

// checkRawOffsets decodes data with RawOffsets and checks that every raw
// offset decodes to the offset plain decoding gave (want).
func checkRawOffsets(t *testing.T, data []byte, want []Record) {
	t.Helper()
	dec := Decoder{RawOffsets: true}
	got, err := dec.Decode(data, len(want))
	if err != nil {
		t.Fatalf("RawOffsets decoding failed where decoding did not: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("RawOffsets decoding: %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Offset != nil {
			t.Fatalf("record %d: Offset set with RawOffsets", i)
		}
		if (got[i].RawOffset == nil) != (want[i].Offset == nil) {
			t.Fatalf("record %d: raw offset %x for offset %v", i, got[i].RawOffset, want[i].Offset)
		}
		if got[i].RawOffset == nil {
			continue
		}
		off, err := DecodeOffset(got[i].RawOffset)
		if err != nil {
			t.Fatalf("record %d: DecodeOffset: %v", i, err)
		}
		if !reflect.DeepEqual(off, want[i].Offset) {
			t.Fatalf("record %d: raw offset decodes to %v, want %v", i, off, want[i].Offset)
		}
		if off, err = dec.DecodeOffset(got[i].RawOffset); err != nil || !reflect.DeepEqual(off, want[i].Offset) {
			t.Fatalf("record %d: Decoder.DecodeOffset: %v, %v; want %v", i, off, err, want[i].Offset)
		}
	}
}

// TestDecoderDecodeOffset: a Decoder's DecodeOffset decodes as the
// function does, shares the keys of the offsets it decoded before, and
// refuses what the function refuses.
func TestDecoderDecodeOffset(t *testing.T) {
	var dec Decoder
	var keys []string
	for i := range 3 {
		raw, err := (&Encoder{}).schemaless(nil, map[string]any{"position": int64(i) << 40}, 0)
		if err != nil {
			t.Fatal(err)
		}
		off, err := dec.DecodeOffset(raw)
		if err != nil || off["position"] != int64(i)<<40 || len(off) != 1 {
			t.Fatalf("offset %d: %v, %v", i, off, err)
		}
		for k := range off {
			keys = append(keys, k)
		}
		if _, err := dec.DecodeOffset(append(raw, 0)); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
			t.Fatalf("offset %d with a byte after it: %v", i, err)
		}
		if _, err := DecodeOffset(append(raw, 0)); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
			t.Fatalf("offset %d with a byte after it, function: %v", i, err)
		}
	}
	if unsafe.StringData(keys[0]) != unsafe.StringData(keys[2]) {
		t.Error("the offsets' equal keys were allocated each time")
	}
	if _, err := dec.DecodeOffset([]byte{tagInt64, 2}); err == nil {
		t.Error("an integer decoded as an offset")
	}
}

// TestRawOffsets checks RawOffsets on the sample records and that raw
// offsets do not alias the batch.
func TestRawOffsets(t *testing.T) {
	recs := sampleRecords(t)
	data := encodeBatch(t, recs)
	want, err := Decode(data, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	checkRawOffsets(t, data, want)
	dec := Decoder{RawOffsets: true, AliasInput: true}
	got, err := dec.Decode(data, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	clear(data) // the batch's memory is reused
	n := 0
	for i := range got {
		if got[i].RawOffset == nil {
			continue
		}
		n++
		off, err := DecodeOffset(got[i].RawOffset)
		if err != nil || !reflect.DeepEqual(off, want[i].Offset) {
			t.Fatalf("record %d after the batch was overwritten: %v %v, want %v", i, off, err, want[i].Offset)
		}
	}
	if n == 0 {
		t.Fatal("the sample records have no offsets")
	}
	if _, err := DecodeOffset([]byte{tagInt64, 2}); err == nil {
		t.Fatal("DecodeOffset accepted a number")
	}
	if _, err := DecodeOffset([]byte{tagStringMap, 0, 0}); err == nil {
		t.Fatal("DecodeOffset accepted trailing bytes")
	}
}

// TestOneEntryMapsAndTopics: offsets of one entry whose key changes from
// record to record, and topics that change, decode as they were (the
// encoder looks the last key up, the decoder compares the last topic).
func TestOneEntryMapsAndTopics(t *testing.T) {
	offsets := []map[string]any{{"a": int64(1)}, {"a": int64(2)}, {"b": "x"}, {"": int64(4)}, {"b": nil},
		{"a": int64(5), "b": int64(6)}, {"a": int64(7)}, {}, nil, {"a": []any{int64(8)}}}
	topics := []string{"t", "t", "u", "", "", "t", strings.Repeat("long", 40), strings.Repeat("long", 40), "t", "tt"}
	recs := make([]Record, len(offsets))
	for i := range recs {
		recs[i] = Record{Offset: offsets[i], Topic: topics[i], KafkaPartition: NoPartition, Timestamp: NoTimestamp}
	}
	// A record whose one-entry offset fails to encode leaves the batch
	// as it was, and the next record encodes as ever.
	var e Encoder
	for i := range recs {
		if i == 3 {
			bad := Record{Offset: map[string]any{"a": struct{}{}}, Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp}
			n := e.Len()
			if err := e.Append(&bad); err == nil || e.Len() != n {
				t.Fatalf("bad offset: error %v, length %d -> %d", err, n, e.Len())
			}
		}
		if err := e.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	data := e.Bytes()
	if !bytes.Equal(data, encodeBatch(t, recs)) {
		t.Fatal("a failed Append changed how the records after it encode")
	}
	for _, raw := range []bool{false, true} {
		got, err := (&Decoder{RawOffsets: raw}).Decode(data, len(recs))
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			off := got[i].Offset
			if raw && got[i].RawOffset != nil {
				if off, err = DecodeOffset(got[i].RawOffset); err != nil {
					t.Fatal(err)
				}
			}
			if got[i].Topic != topics[i] || !reflect.DeepEqual(off, offsets[i]) && (len(off) > 0 || len(offsets[i]) > 0) {
				t.Errorf("record %d (raw offsets %v): topic %q offset %v, want %q %v", i, raw, got[i].Topic, off, topics[i], offsets[i])
			}
		}
	}
}

// TestValueLengths: values written with their length decode as without
// it; with RawValues they are cut by it, unchecked, and a corrupt one is
// found when read: by Decode, by a walk, by an Encoder copying it.
func TestValueLengths(t *testing.T) {
	recs := sampleRecords(t)
	data := encodeBatchWith(t, &Encoder{ValueLengths: true}, recs)
	want, err := Decode(encodeBatch(t, recs), len(recs))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		assertRecordEqual(t, &want[i], &got[i])
	}
	checkRawValues(t, data, want)
	dec := Decoder{RawValues: true}
	raws, err := dec.Decode(data, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	if r := raws[0].Value.(*Raw); r.Checked() {
		t.Fatal("a value cut by its length is marked checked")
	}
	// An Encoder copies a good unchecked value as it is (without its
	// length: it does not count a Raw's elements).
	again := Decoder{RawValues: true}
	copies, err := again.Decode(encodeBatchWith(t, &Encoder{ValueLengths: true}, raws), len(raws))
	if err != nil {
		t.Fatal(err)
	}
	for i := range copies {
		if a, b := copies[i].Value.(*Raw), raws[i].Value.(*Raw); !a.Checked() || !bytes.Equal(a.data, b.data) {
			t.Fatalf("record %d: value re-encoded as %x (checked %v), was %x", i, a.data, a.Checked(), b.data)
		}
	}

	// A value with more elements than its length allows (valueSlack) is
	// written without its length; one within keeps it.
	emptyStruct := schema.StructOf("empty").Build()
	empties := func(n int) []any {
		a := make([]any, n)
		for i := range a {
			a[i] = schema.NewStruct(emptyStruct)
		}
		return a
	}
	arr := schema.ArrayOf(emptyStruct)
	many := []Record{
		{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: arr, Value: empties(2 + valueSlack)},
		{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: arr, Value: empties(1000)},
		{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, ValueSchema: arr, Value: empties(1 + valueSlack)},
	}
	dec = Decoder{RawValues: true}
	raws, err = dec.Decode(encodeBatchWith(t, &Encoder{ValueLengths: true}, many), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, cut := range []bool{false, false, true} {
		raw := raws[i].Value.(*Raw)
		v, err := raw.Decode()
		if err != nil || len(v.([]any)) != len(many[i].Value.([]any)) {
			t.Fatalf("array %d: %v, %v", i, v, err)
		}
		if raw.Checked() == cut {
			t.Errorf("array of %d empty structs: cut by its length %v, want %v", len(many[i].Value.([]any)), !raw.Checked(), cut)
		}
	}

	// One record whose value, an optional string, ends the batch.
	one := func(v any, s *schema.Schema) []byte {
		return encodeBatchWith(t, &Encoder{ValueLengths: true}, []Record{{Topic: "t", KafkaPartition: NoPartition,
			Timestamp: NoTimestamp, ValueSchema: s, Value: v}})
	}
	good := one("abc", schema.OptionalString) // ... len:u32 1 3 'a' 'b' 'c'
	setLen := func(b []byte, at, n int) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[len(b)-at:], uint32(n))
		return b
	}
	huge := one([]any{}, arr)                                                     // ... len:u32 0 (no elements)
	huge = append(setLen(huge[:len(huge)-1], 4, 5), 0xff, 0xff, 0xff, 0xff, 0x0f) // 2^32-1 elements of no bytes
	// Within the batch's budget, but more elements than a value of one
	// byte may hold.
	tooMany := append(setLen(huge[:len(huge)-5], 4, 1), 2+valueSlack)
	nullTail := append(setLen(one(nil, schema.OptionalString), 5, 2), 7)
	for _, c := range []struct {
		name     string
		data     []byte
		plain    string // the plain decoding's error
		raw      string // the RawValues decoding's error, "" if it decodes
		whenRead string // reading the unchecked value's error
	}{
		{"bad presence byte", func() []byte { b := append([]byte(nil), good...); b[len(b)-5] = 2; return b }(),
			"bad presence byte", "", "bad presence byte"},
		{"length past the value", append(setLen(good, 9, 6), 'x'),
			"not the 6 of its length", "", "1 bytes left after the value"},
		{"length past the end", setLen(good, 9, 100), "past end", "past end", ""},
		{"length short of the value", setLen(good, 9, 3), "length 3 past end", "unknown record flags", ""},
		{"null with bytes after it", nullTail, "not the 2 of its length", "null value followed by 1 bytes", ""},
		{"huge count of nothing", huge, "exceeds what the batch can hold", "", "exceeds what the batch can hold"},
		{"more elements than the length allows", tooMany, "count 18 exceeds", "", "count 18 exceeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Decode(c.data, 1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.plain) {
				t.Fatalf("plain decoding: %v, want %q", err, c.plain)
			}
			dec := Decoder{RawValues: true}
			recs, err := dec.Decode(c.data, 1)
			if c.raw != "" {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.raw) {
					t.Fatalf("RawValues decoding: %v, want %q", err, c.raw)
				}
				return
			}
			if err != nil {
				t.Fatalf("RawValues decoding: %v, want the value left unchecked", err)
			}
			raw := recs[len(recs)-1].Value.(*Raw)
			if _, err := raw.Decode(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.whenRead) {
				t.Fatalf("Raw.Decode: %v, want %q", err, c.whenRead)
			}
			if err := raw.check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.whenRead) {
				t.Fatalf("walk: %v, want %q", err, c.whenRead)
			}
			var e Encoder
			e.ResetWith([]byte("kept"))
			if err := e.Append(&recs[len(recs)-1]); err == nil || e.Len() != 0 {
				t.Fatalf("Encoder copied the corrupt value: %v, %d bytes", err, e.Len())
			}
			checkCorruptRaw(t, recs, errors.New("plain"))
		})
	}
}

// TestDecoderSharesSchemas: batch after batch, a Decoder returns the same
// schema for a record schema defined the same way (also when its
// definition refers to a schema the key defined before it), and a new one
// for a schema that differs in anything, or refers to a different schema.
func TestDecoderSharesSchemas(t *testing.T) {
	id := &schema.Schema{Type: schema.TypeInt64}
	keyS := &schema.Schema{Type: schema.TypeStruct, Name: "k", Fields: []schema.Field{{Name: "id", Schema: id}}}
	row := func(name string) *schema.Schema {
		return &schema.Schema{Type: schema.TypeStruct, Name: name, Optional: true, Fields: []schema.Field{
			{Name: "id", Schema: id}, {Name: "s", Schema: &schema.Schema{Type: schema.TypeString, Optional: true}}}}
	}
	env := func(name string) *schema.Schema {
		r := row(name)
		return &schema.Schema{Type: schema.TypeStruct, Name: "env", Fields: []schema.Field{{Name: "before", Schema: r}, {Name: "after", Schema: r}}}
	}
	batch := func(valS *schema.Schema, n int) []byte {
		var e Encoder
		for i := range n {
			r := Record{Topic: "t", KafkaPartition: NoPartition, Timestamp: NoTimestamp, KeySchema: keyS,
				Key: schema.NewStruct(keyS).Set("id", int64(i)), ValueSchema: valS, Value: schema.NewStruct(valS)}
			if err := e.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		return append([]byte(nil), e.Bytes()...)
	}
	var dec Decoder
	decode := func(data []byte) []Record {
		recs, err := dec.Decode(data, 4)
		if err != nil {
			t.Fatal(err)
		}
		return append([]Record(nil), recs...)
	}
	a := decode(batch(env("r"), 2))
	b := decode(batch(env("r"), 3))
	c := decode(batch(env("other"), 1))
	if a[0].ValueSchema != a[1].ValueSchema || b[0].ValueSchema != a[0].ValueSchema || b[2].KeySchema != a[0].KeySchema {
		t.Fatal("the same schemas in two batches decoded as different schemas")
	}
	if a[0].ValueSchema.Fields[0].Schema != b[0].ValueSchema.Fields[1].Schema ||
		a[0].ValueSchema.Fields[0].Schema.Fields[0].Schema != a[0].KeySchema.Fields[0].Schema {
		t.Fatal("the parts of a shared schema are not shared")
	}
	if c[0].ValueSchema == a[0].ValueSchema || c[0].ValueSchema.Fields[0].Schema.Name != "other" {
		t.Fatalf("a different schema decoded as the earlier one: %v", c[0].ValueSchema.Fields[0].Schema.Name)
	}
	if c[0].KeySchema != a[0].KeySchema {
		t.Fatal("the key schema, unchanged, is not shared")
	}
	if got := a[0].ValueSchema.Fields[1].Schema; got.Name != "r" || !got.Optional || len(got.Fields) != 2 || got.Fields[1].Name != "s" {
		t.Fatalf("decoded %#v", got)
	}
}

package postgres

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

func TestDecoders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		dec  decodeFunc
		in   string
		want any
	}{
		{"bool", decodeBool, "t", true},
		{"int16", decodeInt16, "-32768", int16(-32768)},
		{"int32", decodeInt32, "2147483647", int32(math.MaxInt32)},
		{"int64", decodeInt64, "-9223372036854775808", int64(math.MinInt64)},
		{"float32", decodeFloat32, "3.25", float32(3.25)},
		{"float64 inf", decodeFloat64, "Infinity", math.Inf(1)},
		{"date", decodeEpochDays, "2024-02-29", int32(19782)},
		{"date epoch", decodeEpochDays, "1970-01-01", int32(0)},
		{"date BC", decodeEpochDays, "0044-03-15 BC", int32(-735160)},
		{"date BC as Debezium's snapshot reads it", decodeEpochDaysNoEra, "0044-03-15 BC", int32(-703383)},
		{"date infinity", decodeEpochDays, "infinity", int32(math.MaxInt32)},
		{"time micros", decodeTimeMicros, "13:14:15.123456", int64(47655123456)},
		{"time millis", decodeTimeMillis, "23:59:59.999", int32(86399999)},
		{"time 24h", decodeTimeMicros, "24:00:00", int64(86400000000)},
		{"timestamp micros", decodeTimestampMicros, "2024-05-06 07:08:09.123456", int64(1714979289123456)},
		{"timestamp millis", decodeTimestampMillis, "1999-12-31 23:59:59.5", int64(946684799500)},
		{"timestamp before epoch", decodeTimestampMillis, "1900-01-01 00:00:00.001", int64(-2208988799999)},
		{"timestamptz", decodeZonedTimestamp, "2024-05-06 05:08:09.1+00", "2024-05-06T05:08:09.100000Z"},
		{"timestamptz offset", decodeZonedTimestamp, "2024-05-06 07:08:09+02", "2024-05-06T05:08:09.000000Z"},
		{"timestamptz year 1", decodeZonedTimestamp, "0001-01-01 00:00:00+00", "0001-01-01T00:00:00.000000Z"},
		{"timetz", decodeZonedTime, "10:11:12.5+02:30", "07:41:12.5Z"},
		{"timetz wraps", decodeZonedTime, "01:00:00+02", "23:00:00Z"},
		{"interval", decodeMicroDuration, "P1Y2M3DT4H5M6.789S", int64(37091106789000)},
		{"interval negative", decodeMicroDuration, "P-1DT-2H", int64(-93600000000)},
		{"interval zero", decodeMicroDuration, "PT0S", int64(0)},
		{"bytea", decodeBytea, `\x00ff10`, []byte{0, 0xff, 0x10}},
		{"bits", decodeBits, "1000000001", []byte{0x01, 0x02}},
	} {
		got, err := c.dec([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %q: %v", c.name, c.in, err)
			continue
		}
		if !schema.ValueEqual(got, c.want) {
			t.Errorf("%s: %q = %#v, want %#v", c.name, c.in, got, c.want)
		}
	}
}

func TestDecodersRefuseBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		dec  decodeFunc
		in   string
	}{
		{"bool", decodeBool, "yes"},
		{"int16 range", decodeInt16, "40000"},
		{"int32", decodeInt32, "1x"},
		{"date", decodeEpochDays, "2024/01/01"},
		{"time", decodeTimeMicros, "12:00"},
		{"timestamp", decodeTimestampMicros, "2024-01-01T00:00:00"},
		{"interval", decodeMicroDuration, "1 day"},
		{"bytea escape", decodeBytea, `abc`},
		{"numeric NaN", func(b []byte) (any, error) { return decodeDecimal(b, 2) }, "NaN"},
		{"array", func(b []byte) (any, error) { return decodeArray(b, ',', decodeInt32) }, "{1,2"},
		{"array quote", func(b []byte) (any, error) { return decodeArray(b, ',', decodeString) }, `{"a`},
	} {
		if v, err := c.dec([]byte(c.in)); err == nil {
			t.Errorf("%s: %q accepted as %#v", c.name, c.in, v)
		}
	}
}

func TestDecimals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		scale int32
		want  string
	}{
		{"123456789.125", 3, "123456789125"},
		{"-1.5", 3, "-1500"},
		{"99999999", 0, "99999999"},
		{"0.000", 3, "0"},
	} {
		v, err := decodeDecimal([]byte(c.in), c.scale)
		if err != nil || v.(*big.Int).String() != c.want {
			t.Errorf("decimal %q scale %d = %v, %v; want %s", c.in, c.scale, v, err, c.want)
		}
	}
	v, err := decodeVarDecimal([]byte("-0.000123"))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*schema.Struct)
	if st.GetIndex(0) != int32(6) || schema.DecimalFromBytes(st.GetIndex(1).([]byte)).Int64() != -123 {
		t.Errorf("variable-scale decimal = %v", st)
	}
	if err := schema.Validate(varDecimalSchema, v); err != nil {
		t.Error(err)
	}
}

func TestArrays(t *testing.T) {
	t.Parallel()
	got, err := decodeArray([]byte(`{"a b","c\"d",NULL,"",plain,"NULL"}`), ',', decodeString)
	want := []any{"a b", `c"d`, nil, "", "plain", "NULL"}
	if err != nil || !schema.ValueEqual(got, want) {
		t.Errorf("text array = %#v, %v; want %#v", got, err, want)
	}
	got, err = decodeArray([]byte(`{}`), ',', decodeInt32)
	if err != nil || len(got.([]any)) != 0 {
		t.Errorf("empty array = %#v, %v", got, err)
	}
	got, err = decodeArray([]byte(`[0:1]={1,-4}`), ',', decodeInt32)
	if err != nil || !schema.ValueEqual(got, []any{int32(1), int32(-4)}) {
		t.Errorf("array with bounds = %#v, %v", got, err)
	}
	if _, err := decodeArray([]byte(`{{1},{2}}`), ',', decodeInt32); err == nil {
		t.Error("a two-dimensional array was accepted")
	}
}

func TestCopyRows(t *testing.T) {
	t.Parallel()
	fields, _, err := splitCopyRow([]byte("1\t\\N\ta\\tb\\\\c\\n\t\\x41\\101\t\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "<nil>", "a\tb\\c\n", "AA", ""}
	if len(fields) != len(want) {
		t.Fatalf("fields %q", fields)
	}
	for i, f := range fields {
		s := string(f)
		if f == nil {
			s = "<nil>"
		}
		if s != want[i] {
			t.Errorf("field %d = %q, want %q", i, s, want[i])
		}
	}
	if _, _, err := splitCopyRow([]byte("a\\"), nil, nil); err == nil {
		t.Error("a row ending in a backslash was accepted")
	}
}

func TestOffsets(t *testing.T) {
	t.Parallel()
	pos := position{lsn: 100, commit: 200, txID: 7, n: 2}
	o := streamOffset(&pos, int64(pos.lsn), "INSERT")
	st, rp, err := readOffset(o)
	if err != nil || st != offsetStreaming || !rp.inTx || rp.commit != 200 || rp.lsn != 100 || rp.n != 3 {
		t.Fatalf("stream offset %v read as %v %+v %v", o, st, rp, err)
	}
	if f, ok := flushLSN(o); !ok || f != 200 {
		t.Errorf("flush LSN of %v = %d", o, f)
	}
	// From JSON, as the offsets topic gives it back.
	st, rp, _ = readOffset(sdk.Offset{"lsn": float64(300), "lsn_commit": float64(300), "lsn_proc": float64(300)})
	if st != offsetStreaming || rp.inTx || rp.commit != 300 {
		t.Errorf("heartbeat offset read as %v %+v", st, rp)
	}
	st, _, _ = readOffset(snapshotOffset(5, 1, pgTime(0), false))
	if st != offsetSnapshotIncomplete {
		t.Errorf("snapshot offset read as %v", st)
	}
	if _, ok := flushLSN(snapshotOffset(5, 1, pgTime(0), false)); ok {
		t.Error("a snapshot offset moves the slot")
	}
	st, rp, _ = readOffset(snapshotOffset(5, 1, pgTime(0), true))
	if st != offsetStreaming || rp.commit != 5 || rp.inTx {
		t.Errorf("last snapshot offset read as %v %+v", st, rp)
	}
	if _, _, err := readOffset(sdk.Offset{"lsn": "x"}); err == nil {
		t.Error("an offset without an integer lsn was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	c := Config{TableInclude: []string{"a"}, TableExclude: []string{"b"}, ColumnInclude: []string{"("}, SkippedOperations: []string{"none", "t"}}
	got := map[string]string{}
	for _, e := range c.Validate() {
		got[e.Key] = e.Message
	}
	for _, k := range []string{"table.exclude.list", "column.include.list", "skipped.operations"} {
		if got[k] == "" {
			t.Errorf("no error on %s: %v", k, got)
		}
	}
	f, err := newFilters(&Config{SchemaExclude: []string{"secret"}, TableInclude: []string{"public\\.t.*", "s.x"}, ColumnExclude: []string{"public.t1.pw"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		schema, table string
		want          bool
	}{{"public", "t1", true}, {"PUBLIC", "T2", true}, {"public", "u", false}, {"s", "x", true}, {"secret", "t1", false}, {"pg_catalog", "t1", false}} {
		if f.table(c.schema, c.table) != c.want {
			t.Errorf("table %s.%s captured = %v", c.schema, c.table, !c.want)
		}
	}
	if f.column("public", "t1", "pw") || !f.column("public", "t1", "name") {
		t.Error("column filter")
	}
	un := unknownKeys(map[string]string{"name": "x", "topic.prefix": "p", "snapshot.lock.timeout.ms": "1", "transforms.a.type": "b"}, Connector().Spec())
	if strings.Join(un, ",") != "snapshot.lock.timeout.ms" {
		t.Errorf("unknown keys %v", un)
	}
}

func TestSourceSequence(t *testing.T) {
	t.Parallel()
	src := newSourceSchemas()
	tb := &table{id: tableID{"s", "t"}, boxedPrefix: "p", boxedDB: "db", boxedSchema: "s", boxedTable: "t"}
	for _, c := range []struct {
		last uint64
		want string
	}{{0, `[null,"123"]`}, {5, `["5","123"]`}} {
		pos := position{lsn: 123, lastCommit: c.last, txID: 9, commitTs: pgTime(1_000_000)}
		st := src.sourceStruct(&Config{}, tb, &pos, int64(123), snapFalse)
		if got := st.GetIndex(srcSequence); got != c.want {
			t.Errorf("sequence %v, want %s", got, c.want)
		}
		if err := st.Validate(); err != nil {
			t.Error(err)
		}
		if st.GetIndex(srcTsMs) != int64(946684801000) || st.GetIndex(srcTxID) != int64(9) {
			t.Errorf("source %v", st)
		}
	}
}

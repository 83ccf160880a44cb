package postgres

import (
	"context"
	"encoding/binary"
	"log/slog"
	"testing"
)

// BenchmarkStreamInsert measures the plugin's cost per streamed insert of
// a 10-column row (decoding the pgoutput message, converting the values,
// building the Debezium event), without I/O.
func BenchmarkStreamInsert(b *testing.B) {
	cfg := &Config{TopicPrefix: "p", DBName: "db", DecimalMode: "precise", TimePrecisionMode: "adaptive", BinaryMode: "bytes",
		IntervalMode: "numeric", TombstonesOnDelete: true, Placeholder: "__p"}
	types := map[uint32]*pgType{20: {oid: 20, name: "int8", typtype: 'b'}, 23: {oid: 23, name: "int4", typtype: 'b'},
		25: {oid: 25, name: "text", typtype: 'b'}, 1700: {oid: 1700, name: "numeric", typtype: 'b'},
		1114: {oid: 1114, name: "timestamp", typtype: 'b'}, 16: {oid: 16, name: "bool", typtype: 'b'}}
	f, _ := newFilters(cfg)
	cat := newCatalog(cfg, f, slog.New(slog.DiscardHandler))
	cat.types, cat.mapper = types, newTypeMapper(cfg, types)
	cols := []struct {
		name   string
		typ    uint32
		typmod int32
		val    string
	}{{"id", 20, -1, "123456"}, {"a", 23, -1, "456"}, {"b", 23, -1, "864192"}, {"c", 20, -1, "123456370368"},
		{"d", 1700, 4 + 12<<16 + 2, "1234.56"}, {"e", 25, -1, "c4ca4238a0b923820dcc509a6f75849bc81e728d9d4c2f636f067f89cc14862c"},
		{"f", 25, -1, "eccbc87e4b5ce2fe28308fd9f2a7baf3a87ff679a2f3e71d9181a67b7542122c"}, {"g", 1114, -1, "2024-01-02 10:17:36"},
		{"h", 16, -1, "t"}, {"i", 25, -1, "e4da3b7fbbce2345d7772b0674a318d5"}}
	tb := &table{id: tableID{"public", "bench"}}
	for i, c := range cols {
		tb.columns = append(tb.columns, &column{name: c.name, typ: c.typ, typmod: c.typmod, pk: i == 0, notNull: i < 2})
	}
	if err := cat.build(tb, make([]int, len(cols))); err != nil {
		b.Fatal(err)
	}
	msg := []byte{'I', 0, 0, 0, 1, 'N', 0, byte(len(cols))}
	for _, c := range cols {
		msg = append(msg, 't')
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(c.val)))
		msg = append(msg, c.val...)
	}
	s := &streamer{cfg: cfg, cat: cat, logger: cat.logger, rels: map[uint32]*relState{1: {t: tb}}}
	s.pos = position{commit: 1 << 30, txID: 7, commitTs: pgTime(0)}
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for i := 0; b.Loop(); i++ {
		if err := s.message(context.Background(), uint64(i), msg); err != nil {
			b.Fatal(err)
		}
		if len(s.batch) >= streamBatch {
			s.batch = s.batch[:0]
		}
	}
}

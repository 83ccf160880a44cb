package postgres

import (
	"context"
	"log/slog"
	"testing"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// FuzzCopyRow feeds arbitrary COPY rows to the row splitter: it returns
// fields or an error, never panics, and no field is longer than its row.
func FuzzCopyRow(f *testing.F) {
	for _, s := range []string{"1\t\\N\ta\\tb\n", "\\x41\\101\\", "\\", "\t\t", "\\777\\xZ"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, row []byte) {
		fields, _, err := splitCopyRow(row, nil, nil)
		if err != nil {
			return
		}
		for _, fl := range fields {
			if len(fl) > len(row) {
				t.Fatalf("field %q longer than row %q", fl, row)
			}
		}
	})
}

// FuzzValues feeds arbitrary text to the value decoders (the text the
// server's output functions would give): each returns a value valid for
// its schema, or an error.
func FuzzValues(f *testing.F) {
	for _, s := range []string{"{1,2,NULL}", `{"a\"b",c}`, "2024-02-29 10:00:00.5+02", "P1Y-2M3DT4H5M6.5S", "-12.340", `\x00ff`, "24:00:00", "0044-03-15 BC", "1010"} {
		f.Add([]byte(s))
	}
	cfg := &Config{DecimalMode: "precise", TimePrecisionMode: "adaptive", BinaryMode: "bytes", IntervalMode: "numeric", Placeholder: "__p"}
	types := map[uint32]*pgType{}
	names := []string{"bool", "int2", "int4", "int8", "float4", "float8", "numeric", "money", "text", "json", "uuid", "bytea",
		"date", "time", "timestamp", "timestamptz", "timetz", "interval", "bit", "varbit"}
	for i, n := range names {
		types[uint32(i+1)] = &pgType{oid: uint32(i + 1), name: n, typtype: 'b'}
		types[uint32(i+101)] = &pgType{oid: uint32(i + 101), name: "_" + n, typtype: 'b', category: 'A', elem: uint32(i + 1)}
	}
	m := newTypeMapper(cfg, types)
	var convs []*converter
	for oid := range types {
		for _, typmod := range []int32{-1, 3, 4 + 10<<16 + 2} {
			if c, err := m.converter(oid, typmod); err == nil {
				convs = append(convs, c)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, c := range convs {
			v, err := c.decode(in)
			if err != nil {
				continue
			}
			if err := schema.Validate(c.schema, v); err != nil {
				t.Fatalf("%q decoded as %#v, invalid for %v: %v", in, v, c.schema, err)
			}
		}
	})
}

// FuzzPgoutput feeds arbitrary pgoutput messages to the stream's message
// handler, after a relation message for one table: it returns an error or
// handles the message, never panics.
func FuzzPgoutput(f *testing.F) {
	rel := []byte{'R', 0, 0, 0, 1, 'p', 0, 't', 0, 'd', 0, 2, 1, 'i', 'd', 0, 0, 0, 0, 23, 0xff, 0xff, 0xff, 0xff, 0, 'v', 0, 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff}
	f.Add([]byte{'I', 0, 0, 0, 1, 'N', 0, 2, 't', 0, 0, 0, 1, '7', 'n'})
	f.Add([]byte{'U', 0, 0, 0, 1, 'K', 0, 2, 't', 0, 0, 0, 1, '7', 'n', 'N', 0, 2, 't', 0, 0, 0, 1, '8', 'u'})
	f.Add([]byte{'D', 0, 0, 0, 1, 'O', 0, 1, 'x'})
	f.Add([]byte{'T', 0, 0, 0, 1, 0, 0, 0, 0, 1})
	f.Add([]byte{'B', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5})
	f.Add([]byte{'M', 0, 0, 0, 0, 0, 0, 0, 0, 9, 'x', 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 0 && msg[0] == 'R' {
			return // a relation message reads the catalog: it needs a database
		}
		cfg := &Config{TopicPrefix: "p", DBName: "db", DecimalMode: "precise", TimePrecisionMode: "adaptive", BinaryMode: "bytes",
			IntervalMode: "numeric", TombstonesOnDelete: true, HeartbeatInterval: 1}
		s := fuzzStreamer(t, cfg, rel)
		_ = s.message(context.Background(), 100, msg)
		for _, rec := range s.batch {
			if err := rec.Validate(); err != nil {
				t.Fatalf("message %q made an invalid record: %v", msg, err)
			}
		}
	})
}

// FuzzPgoutputStreaming feeds arbitrary sequences of protocol-2 messages
// (each preceded by its length, one byte) to a streaming message handler:
// Stream Start/Stop/Commit/Abort and the changes inside stream blocks.
// It returns an error or handles them, never panics, and makes valid
// records only.
func FuzzPgoutputStreaming(f *testing.F) {
	rel := []byte{'R', 0, 0, 0, 1, 'p', 0, 't', 0, 'd', 0, 2, 1, 'i', 'd', 0, 0, 0, 0, 23, 0xff, 0xff, 0xff, 0xff, 0, 'v', 0, 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff}
	seq := func(msgs ...[]byte) []byte {
		var b []byte
		for _, m := range msgs {
			b = append(b, byte(len(m)))
			b = append(b, m...)
		}
		return b
	}
	start := []byte{'S', 0, 0, 0, 5, 1}
	ins := []byte{'I', 0, 0, 0, 5, 0, 0, 0, 1, 'N', 0, 2, 't', 0, 0, 0, 1, '7', 'n'}
	sub := []byte{'I', 0, 0, 0, 6, 0, 0, 0, 1, 'N', 0, 2, 't', 0, 0, 0, 1, '8', 'n'}
	stop := []byte{'E'}
	abortSub := []byte{'A', 0, 0, 0, 5, 0, 0, 0, 6}
	commit := []byte{'c', 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 1}
	f.Add(seq(start, ins, sub, stop, abortSub, commit))
	f.Add(seq(start, ins, stop, []byte{'A', 0, 0, 0, 5, 0, 0, 0, 5}, commit))
	f.Add(seq(start, ins, start, stop, commit, commit))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := &Config{TopicPrefix: "p", DBName: "db", DecimalMode: "precise", TimePrecisionMode: "adaptive", BinaryMode: "bytes",
			IntervalMode: "numeric", TombstonesOnDelete: true, StreamBufferBytes: 64}
		s := fuzzStreamer(t, cfg, rel)
		s.v2 = true
		s.stx = newStreamedTxs(cfg.StreamBufferBytes, "") // spill files are unlinked at once
		defer s.stx.close()
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			msg := data[1 : 1+n]
			data = data[1+n:]
			if len(msg) > 0 && msg[0] == 'R' {
				continue // a relation message reads the catalog: it needs a database
			}
			if err := s.message(context.Background(), 100, msg); err != nil {
				return
			}
		}
		for _, rec := range s.batch {
			if err := rec.Validate(); err != nil {
				t.Fatalf("made an invalid record: %v", err)
			}
		}
	})
}

// fuzzStreamer is a streamer of the one table described by rel, a
// relation message: 'd'.'t' (id int4 key, v text).
func fuzzStreamer(t *testing.T, cfg *Config, rel []byte) *streamer {
	types := map[uint32]*pgType{23: {oid: 23, name: "int4", typtype: 'b'}, 25: {oid: 25, name: "text", typtype: 'b'}}
	fl, _ := newFilters(cfg)
	cat := newCatalog(cfg, fl, slog.New(slog.DiscardHandler))
	cat.types, cat.mapper = types, newTypeMapper(cfg, types)
	s := &streamer{cfg: cfg, cat: cat, logger: cat.logger, rels: map[uint32]*relState{}}
	r, err := parseRelation(rel[1:])
	if err != nil {
		t.Fatal(err)
	}
	tb := &table{id: r.table}
	for _, c := range r.columns {
		tb.columns = append(tb.columns, &column{name: c.name, typ: c.typ, typmod: c.typmod, pk: c.key, notNull: c.key})
	}
	if err := cat.build(tb, []int{1, 0}); err != nil {
		t.Fatal(err)
	}
	s.rels[1] = &relState{rel: r, t: tb}
	return s
}
